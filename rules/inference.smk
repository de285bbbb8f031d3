# Predictions in two steps:
#   generate_<env>: one job per model, dataset and shard (`shards:` in the model entry), in the model's
#     env (the only jobs that ask for GPUs). It loads the model once and fills its own file of the
#     content-addressed prediction cache for every file of that dataset the target needs from the
#     model (tasks x conditions x prompts, sweep runs); items any file of the cache already holds are
#     not generated again. Output: a summary JSON (items generated / read from the cache per file).
#     One job per dataset: a dataset that fails to build never keeps the others from being predicted.
#   infer: one job per predictions file, read back from the cache (no model, no GPU).
#   model_fingerprint: one tiny local job per model, rewritten when the model's fingerprint changes;
#     every infer job of the model depends on it, so a fingerprint change reruns them all.
#   infer reads the generate summaries for ordering only (ancient) while its file is current, and as
#     plain inputs when its file is missing or older than its items, audio manifest or prompt: a
#     generate rerun for other files leaves current files alone (rules/common.smk: generated_summary).
#   group: a model's generate, infer and score jobs of one dataset form one job group, so
#     `--profile slurm` submits them as one sbatch job (rules/common.smk: run_group).
# Tracked params are what changes predictions (the model fingerprint, which files); batch size, shards
# and resources reach the jobs untracked, so raising a runtime or a batch size reruns nothing.
# Layout, trade-offs and the cache: docs/inference.md.


rule cache_audio:
    input:
        env_ready("core"),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
    output:
        audio=directory("results/audio/{dataset}/{task}"),
        manifest="results/audio/{dataset}/{task}.manifest.json",
    log:
        f"{LOGS}/cache_audio/{{dataset}}/{{task}}.log",
    params:
        py=lambda w: env_python("core"),
        sample_rate=config["sample_rate"],
    conda:
        conda_file("core")
    group:
        DATA_GROUP
    resources:
        **DATA_JOB,
    shell:
        "{params.py:q} scripts/cache_audio.py --items {input.tasks_jsonl} --out-dir {output.audio} "
        "--manifest {output.manifest} --sample-rate {params.sample_rate} > {log} 2>&1"


for _env in MODEL_ENVS:

    rule:
        name:
            f"generate_{_env}"
        input:
            unpack(generate_inputs),
        output:
            "results/predictions/{model}/generate/{unit}.json",
        log:
            f"{LOGS}/generate/{{model}}/{{unit}}.log",
        wildcard_constraints:
            model=one_of(models_in_env(_env)),
            unit=r"[^/]+",
        group:
            generate_group
        params:
            py=env_python(_env),
            fingerprint=model_fp,
            specs=lambda w: canonical(unit_specs_of(w.model, w.unit)),
            shard=lambda w: Untracked("{1}/{2}".format(*generate_units_of(w.model)[w.unit])),
            model=model_entry_untracked,
            cache=config["prediction_cache"],
            sample_rate=config["sample_rate"],
            max_error_rate=lambda w: model_max_error_rate(config, w.model),
            tracking=TRACKING,
        conda:
            conda_file(_env)
        container:
            config["containers"].get(_env)
        threads: inference_threads
        resources:
            **model_job_resources(),
        retries: config["inference_retries"]
        shell:
            "{params.py:q} scripts/generate.py --model {wildcards.model} --model-json {params.model:q} "
            "--specs-json {params.specs:q} --unit {wildcards.unit} --shard {params.shard} --cache-root {params.cache:q} "
            "--summary {output} "
            "--sample-rate {params.sample_rate} --max-error-rate {params.max_error_rate} "
            "--tracking-json {params.tracking:q} > {log} 2>&1"


rule model_fingerprint:
    input:
        env_ready("core"),
    output:
        "results/predictions/{model}/fingerprint.json",
    log:
        f"{LOGS}/model_fingerprint/{{model}}.log",
    params:
        py=env_python("core"),
        fingerprint=model_fp,
    conda:
        conda_file("core")
    localrule: True
    shell:
        "{params.py:q} scripts/write_fingerprint.py --model {wildcards.model} --fingerprint {params.fingerprint} "
        "--out {output} > {log} 2>&1"


rule infer:
    input:
        env_ready("core"),
        # generated: ordering only while current, so a generate rerun for other files leaves it alone
        **infer_inputs("main", "results/tasks/{dataset}/{task}.jsonl"),
    output:
        "results/predictions/{model}/{dataset}/{task}/{condition}/{prompt}.parquet",
    log:
        f"{LOGS}/infer/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    params:
        **infer_params("main"),
    conda:
        conda_file("core")
    group:
        run_group
    resources:
        mem_mb=1000,
        runtime=RUN_FILE_MINUTES,
    shell:
        "{params.py:q} scripts/infer.py --model {wildcards.model} --model-json {params.model:q} "
        "--spec-json {params.spec:q} --cache-root {params.cache:q} --out {output} "
        "--sample-rate {params.sample_rate} > {log} 2>&1"
