# Task items: results/tasks/{dataset}/{task}.jsonl + {task}.stats.json.
# A task's params (and only its params) are a rule param, so editing one task reruns only it.




rule synth_trivial_task:
    output:
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        stats="results/tasks/{dataset}/{task}.stats.json",
        audio=directory("results/data/{dataset}/{task}"),
    log:
        f"{LOGS}/tasks/{{dataset}}/{{task}}.log",
    wildcard_constraints:
        task=one_of(SYNTH_TRIVIAL_TASKS),
    params:
        py=lambda w: env_python("core"),
        cfg=task_params,
    input:
        env_ready("core"),
    conda:
        conda_file("core")
    group:
        DATA_GROUP
    resources:
        runtime=30,
    shell:
        "{params.py:q} scripts/synth_trivial.py --config-json {params.cfg:q} --dataset {wildcards.dataset} "
        "--task {wildcards.task} --items {output.tasks_jsonl} --stats {output.stats} --audio-dir {output.audio} "
        "> {log} 2>&1"


rule build_task:
    input:
        env_ready("core"),
        clips="results/data/{dataset}/clips.parquet",
        events="results/data/{dataset}/events.parquet",
    output:
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        stats="results/tasks/{dataset}/{task}.stats.json",
    log:
        f"{LOGS}/tasks/{{dataset}}/{{task}}.log",
    wildcard_constraints:
        task=one_of(tasks_where(lambda t, c: c["family"] not in SYNTH_FAMILIES)),
    params:
        py=lambda w: env_python("core"),
        cfg=task_params,
    conda:
        conda_file("core")
    group:
        DATA_GROUP
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{params.py:q} scripts/build_task.py --config-json {params.cfg:q} --dataset {wildcards.dataset} "
        "--task {wildcards.task} --clips {input.clips} --events {input.events} "
        "--items {output.tasks_jsonl} --stats {output.stats} > {log} 2>&1"
