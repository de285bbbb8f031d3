# Real datasets -> results/data/{dataset}/{clips,events}.parquet (+ items.jsonl for datasets that
# ship their own questions), AIR-Bench-style mixtures, and tasks of family "import".
# A dataset's config (adapter + params) is the rule param, so editing it reruns only that dataset;
# the user's files it names (annotations, items, label maps, split files) are inputs, so editing one does too,
# and their content digest is a param, so an edit whose old mtime came back (tar, rsync -a, touch -r) does as well.
from lalmbench.core.digests import files_digest


REAL_DATASETS = [d for d, c in config["datasets"].items() if adapters.reads_files(c["adapter"])]
MIX_DATASETS = datasets_with("mix")
IMPORT_TASKS = tasks_where(lambda t, c: c["family"] == "import")


rule adapt_dataset:
    input:
        env_ready("core"),
        user_files=lambda w: adapter_user_files(dataset_cfg(w.dataset)),
    output:
        clips="results/data/{dataset}/clips.parquet",
        events="results/data/{dataset}/events.parquet",
        items_jsonl="results/data/{dataset}/items.jsonl",
        stats="results/data/{dataset}/adapt.stats.json",
    log:
        f"{LOGS}/adapt/{{dataset}}.log",
    wildcard_constraints:
        dataset=one_of(REAL_DATASETS),
    params:
        py=lambda w: env_python("core"),
        cfg=lambda w: canonical(adapt_cfg(w.dataset)),
        user_files_digest=lambda w: files_digest(adapter_user_files(dataset_cfg(w.dataset))),
    conda:
        conda_file("core")
    resources:
        **DATA_JOB,
    shell:
        "{params.py:q} scripts/adapt_dataset.py --config-json {params.cfg:q} --dataset {wildcards.dataset} "
        "--clips {output.clips} --events {output.events} --items {output.items_jsonl} --stats {output.stats} "
        "> {log} 2>&1"


rule mix_dataset:
    input:
        env_ready("core"),
        clips=lambda w: f"results/data/{dataset_cfg(w.dataset)['params']['from']}/clips.parquet",
        events=lambda w: f"results/data/{dataset_cfg(w.dataset)['params']['from']}/events.parquet",
    output:
        clips="results/data/{dataset}/clips.parquet",
        events="results/data/{dataset}/events.parquet",
        plan="results/data/{dataset}/mixtures.parquet",
        audio=directory("results/data/{dataset}/audio"),
    log:
        f"{LOGS}/mix/{{dataset}}.log",
    wildcard_constraints:
        dataset=one_of(MIX_DATASETS),
    params:
        py=lambda w: env_python("core"),
        cfg=lambda w: canonical({"dataset": dataset_cfg(w.dataset), "seed": config["seed"]}),
    conda:
        conda_file("core")
    resources:
        **DATA_JOB,
    shell:
        "{params.py:q} scripts/adapt_mix.py --config-json {params.cfg:q} --dataset {wildcards.dataset} "
        "--source-clips {input.clips} --source-events {input.events} --clips {output.clips} "
        "--events {output.events} --plan {output.plan} --audio-dir {output.audio} > {log} 2>&1"


rule import_task:
    input:
        env_ready("core"),
        clips="results/data/{dataset}/clips.parquet",
        source_items="results/data/{dataset}/items.jsonl",
        adapt_stats="results/data/{dataset}/adapt.stats.json",
    output:
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        stats="results/tasks/{dataset}/{task}.stats.json",
    log:
        f"{LOGS}/tasks/{{dataset}}/{{task}}.log",
    wildcard_constraints:
        task=one_of(IMPORT_TASKS),
    params:
        py=lambda w: env_python("core"),
        cfg=task_params,
    conda:
        conda_file("core")
    resources:
        runtime=30,
    shell:
        "{params.py:q} scripts/adapt_import_task.py --config-json {params.cfg:q} --dataset {wildcards.dataset} "
        "--task {wildcards.task} --clips {input.clips} --source-items {input.source_items} "
        "--items {output.tasks_jsonl} --stats {output.stats} --adapt-stats {input.adapt_stats} > {log} 2>&1"


ruleorder: import_task > build_task
