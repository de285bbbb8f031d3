# Attention capture (models.<name>.attention, hf backend only; off unless a model entry sets it).
# Target: `snakemake attention` (not part of rule all: it loads each model again, on a GPU).
#   attention_capture_<env>: one job per model in the model's env: loads it once with eager attention
#     and writes results/attention/<model>/<dataset>/<task>/<condition>/<item>/{attn.npy,tokens.json,meta.json}
#     for the first max_items items of each captured run, then capture.json (the list of item folders).
#   attention_model_figures: heatmaps per item + the per-item, per-layer audio share of one model.
#   attention_share: the audio share per model and layer, conditions side by side (figure + table).
# Helpers live in rules/common.smk ("attention" section); logic in lalmbench/attention and lalmbench/report/plots/attention.py.


rule attention:
    input:
        attention_targets(),


for _env in MODEL_ENVS:

    rule:
        name:
            f"attention_capture_{_env}"
        input:
            unpack(attention_capture_inputs),
        output:
            "results/attention/{model}/capture.json",
        log:
            f"{LOGS}/attention/{{model}}.log",
        wildcard_constraints:
            model=one_of(attention_models_in_env(_env)),
        params:
            py=env_python(_env),
            fingerprint=model_fp,
            attention=lambda w: canonical(model_cfg(w.model)["attention"]),
            specs=lambda w: canonical(attention_specs(w.model)),
            model=model_entry_untracked,
            sample_rate=config["sample_rate"],
        conda:
            conda_file(_env)
        container:
            config["containers"].get(_env)
        threads: inference_threads
        resources:
            **model_job_resources(),
        shell:
            "{params.py:q} scripts/attention_capture.py --model {wildcards.model} --model-json {params.model:q} "
            "--specs-json {params.specs:q} --manifest {output} --sample-rate {params.sample_rate} > {log} 2>&1"


rule attention_model_figures:
    input:
        env_ready("core"),
        manifest="results/attention/{model}/capture.json",
    output:
        heatmaps=directory("results/figures/attention/{model}"),
        tsv="results/tables/attention/{model}.tsv",
    log:
        f"{LOGS}/attention_figures/{{model}}.log",
    wildcard_constraints:
        model=one_of(ATTENTION_MODELS),
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{params.py:q} scripts/plot_attention.py model --manifest {input.manifest} --heatmaps {output.heatmaps} "
        "--tsv {output.tsv} > {log} 2>&1"


rule attention_share:
    input:
        env_ready("core"),
        tables=expand("results/tables/attention/{model}.tsv", model=ATTENTION_MODELS),
    output:
        png=in_report("results/figures/attention_audio_share.png", "Attention", "Figure", "attention"),
        svg="results/figures/attention_audio_share.svg",
        tsv=in_report("results/tables/attention_audio_share.tsv", "Attention", "Table", "attention"),
    log:
        f"{LOGS}/attention_share.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/plot_attention.py share {input.tables} --png {output.png} --svg {output.svg} "
        "--tsv {output.tsv} > {log} 2>&1"
