# Side analyses (issue 6), only when the config has `analyses:`; target: `snakemake analyses`.
# Sentence embeddings run offline (HF_HUB_OFFLINE=1): the bundled all-MiniLM-L6-v2 by default.


rule analyses:
    input:
        analysis_targets(),


rule analysis_similarity:
    input:
        env_ready("core"),
        a="results/scores/{model}/{dataset}/{task}/{cond_a}/{prompt}/decisions.parquet",
        b="results/scores/{model}/{dataset}/{task}/{cond_b}/{prompt}/decisions.parquet",
    output:
        json="results/analysis/similarity/{model}/{dataset}/{task}/{prompt}/{cond_a}-vs-{cond_b}.json",
        tsv="results/analysis/similarity/{model}/{dataset}/{task}/{prompt}/{cond_a}-vs-{cond_b}.tsv",
    log:
        f"{LOGS}/analysis_similarity/{{model}}/{{dataset}}/{{task}}/{{prompt}}/{{cond_a}}-vs-{{cond_b}}.log",
    wildcard_constraints:
        cond_a=one_of(["audio", "no-audio", "silence", "noise", "shuffled"]),
        cond_b=one_of(["audio", "no-audio", "silence", "noise", "shuffled"]),
    params:
        py=env_python("core"),
        model=embedding_model(SIMILARITY),
        category=f"--category {shlex.quote(SIMILARITY['category'])}" if SIMILARITY.get("category") else "",
        batch_size=SIMILARITY.get("batch_size", 64),
    conda:
        conda_file("core")
    threads: 2
    resources:
        **DATA_JOB,
    shell:
        "HF_HUB_OFFLINE=${{HF_HUB_OFFLINE:-1}} {params.py:q} scripts/analysis_similarity.py run --a {input.a} "
        "--b {input.b} --labels {wildcards.cond_a} {wildcards.cond_b} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.prompt} --model {params.model:q} "
        "{params.category} --batch-size {params.batch_size} --json {output.json} --tsv {output.tsv} > {log} 2>&1"


rule analysis_similarity_table:
    input:
        env_ready("core"),
        jsons=similarity_targets(),
    output:
        "results/analysis/similarity.tsv",
    log:
        f"{LOGS}/analysis_similarity_table.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/analysis_similarity.py table --out {output} {input.jsons} > {log} 2>&1"


rule analysis_reference_agreement:
    input:
        env_ready("core"),
        task_items="results/tasks/{dataset}/{task}.jsonl",
    output:
        summary="results/analysis/reference_agreement/{dataset}/{task}/summary.json",
        pairs="results/analysis/reference_agreement/{dataset}/{task}/pairs.csv",
        clips="results/analysis/reference_agreement/{dataset}/{task}/clips.csv",
        outliers="results/analysis/reference_agreement/{dataset}/{task}/outliers.csv",
    log:
        f"{LOGS}/analysis_reference_agreement/{{dataset}}/{{task}}.log",
    params:
        py=env_python("core"),
        model=embedding_model(REFERENCE_AGREEMENT),
        z=REFERENCE_AGREEMENT.get("z_threshold", 2.0),
        batch_size=REFERENCE_AGREEMENT.get("batch_size", 64),
    conda:
        conda_file("core")
    threads: 2
    resources:
        **DATA_JOB,
    shell:
        "HF_HUB_OFFLINE=${{HF_HUB_OFFLINE:-1}} {params.py:q} scripts/analysis_reference_agreement.py "
        "--items {input.task_items} --out-dir results/analysis/reference_agreement/{wildcards.dataset}/{wildcards.task} "
        "--model {params.model:q} --z {params.z} --batch-size {params.batch_size} > {log} 2>&1"
