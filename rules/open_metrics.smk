# Open-ended scoring: tasks whose config has `scoring: {kind: ...}` (captioning, asr, pi_asr,
# translation, grounding, judge) are scored here instead of by the MCQ rule `score`; same output
# paths, so results/all.tsv picks them up unchanged. Captioning metrics run in their own env in
# every mode (rule caption_metrics: conda envs/captioning.yaml, or the venv venv_root/captioning),
# never in the driver: caption_request (core) writes the worker's input, score_open reads its output.
from lalmbench.workflow import rulegrid


CAPTION_TASKS = [t for t in OPEN_TASKS if rulegrid.scoring_kind(config, t) == "captioning"]


rule caption_request:
    input:
        env_ready("core"),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        predictions="results/predictions/{model}/{dataset}/{task}/{condition}/{prompt}.parquet",
    output:
        "results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/captioning.request.json",
    log:
        f"{LOGS}/caption_request/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    wildcard_constraints:
        task=one_of(CAPTION_TASKS),
    params:
        py=env_python("core"),
        scoring=lambda w: rulegrid.open_scoring_json(config, w.task),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/caption_request.py --items {input.tasks_jsonl} --predictions {input.predictions} "
        "--scoring-json {params.scoring:q} --out {output} > {log} 2>&1"


rule caption_metrics:
    input:
        env_ready("captioning"),
        request="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/captioning.request.json",
    output:
        "results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/captioning.json",
    log:
        f"{LOGS}/caption_metrics/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    wildcard_constraints:
        task=one_of(CAPTION_TASKS),
    params:
        py=env_python("captioning"),
    conda:
        conda_file("captioning")
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    shell:
        "HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "
        "{params.py:q} lalmbench/scoring/metrics/aac_worker.py {input.request} {output} > {log} 2>&1"


rule score_open:
    input:
        env=lambda w: env_ready("core") + env_ready(rulegrid.scoring_env(config, w.task)),
        captioning=lambda w: (
            [f"results/scores/{w.model}/{w.dataset}/{w.task}/{w.condition}/{w.prompt}/captioning.json"]
            if w.task in CAPTION_TASKS
            else []
        ),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        predictions="results/predictions/{model}/{dataset}/{task}/{condition}/{prompt}.parquet",
        prompt=prompt_path("{prompt}"),
    output:
        decisions="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/decisions.parquet",
        metrics="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/metrics.json",
    log:
        f"{LOGS}/score_open/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    wildcard_constraints:
        task=one_of(rulegrid.open_tasks_scored_in(config, "core")),
    params:
        # a judge runs its backend in-process: use the judge model's env; otherwise core
        py=lambda w: env_python(rulegrid.scoring_env(config, w.task)),
        captioning=lambda w, input: f"--captioning-result {input.captioning}" if input.captioning else "",
        scoring=lambda w: rulegrid.open_scoring_json(config, w.task),
        official=lambda w: rulegrid.official_json(config, w.task),
        run_hash=lambda w: score_run_hash(w),
        tracking=TRACKING,
    conda:
        conda_file("core")
    resources:
        mem_mb=lambda w: rulegrid.judge_resource(config, w.task, "mem_mb", 4000),
        runtime=lambda w: rulegrid.judge_resource(config, w.task, "runtime", 60),
        gpu=lambda w: rulegrid.judge_resource(config, w.task, "gpus", 0),
    shell:
        "{params.py:q} scripts/score_open.py --items {input.tasks_jsonl} --predictions {input.predictions} "
        "--scoring-json {params.scoring:q} --official-json {params.official:q} --config-hash {params.run_hash} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} "
        "--decisions {output.decisions} --metrics {output.metrics} {params.captioning} "
        "--tracking-json {params.tracking:q} > {log} 2>&1"


# LLM judges whose model lives in another env: the same job in that env (plain conda file paths,
# so --containerize keeps working)
use rule score_open as score_open_hf with:
    conda:
        conda_file("hf")
    wildcard_constraints:
        task=one_of(rulegrid.open_tasks_scored_in(config, "hf")),


use rule score_open as score_open_vllm with:
    conda:
        conda_file("vllm")
    wildcard_constraints:
        task=one_of(rulegrid.open_tasks_scored_in(config, "vllm")),
