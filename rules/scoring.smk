# Predictions -> per-item decisions + metrics.json -> results/all.tsv (one row per run x metric).
# With the top-level `judge:` block, the MCQ tasks it covers are scored with the LLM-judge fallback
# (lalmbench/scoring/judge_mcq.py), in the judge model's env: score_hf / score_vllm are the same job there.
from lalmbench.workflow import rulegrid


rule score:
    input:
        rulegrid.per_task(MCQ_TASKS, lambda t: env_ready("core") + env_ready(rulegrid.scoring_env(config, t))),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        predictions="results/predictions/{model}/{dataset}/{task}/{condition}/{prompt}.parquet",
    output:
        decisions="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/decisions.parquet",
        metrics="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/metrics.json",
    log:
        f"{LOGS}/score/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    wildcard_constraints:
        task=one_of(rulegrid.mcq_tasks_scored_in(config, "core")),
    params:
        py=rulegrid.per_task(MCQ_TASKS, lambda t: env_python(rulegrid.scoring_env(config, t))),
        parser=parser_param,
        scorer=SCORER,
        judge=rulegrid.per_task(MCQ_TASKS, lambda t: rulegrid.mcq_judge_json(config, t)),
        official=rulegrid.per_task(MCQ_TASKS, lambda t: rulegrid.official_json(config, t)),
        missing=lambda w: imported.missing_mode(model_cfg(w.model)),
        run_hash=score_run_hash,
        tracking=TRACKING,
    conda:
        conda_file("core")
    group:
        run_group
    resources:
        mem_mb=rulegrid.per_task(MCQ_TASKS, lambda t: rulegrid.judge_resource(config, t, "mem_mb", 2000)),
        runtime=rulegrid.per_task(MCQ_TASKS, score_minutes),
        gpu=rulegrid.per_task(MCQ_TASKS, lambda t: rulegrid.judge_resource(config, t, "gpus", 0)),
    shell:
        "{params.py:q} scripts/score.py --items {input.tasks_jsonl} --predictions {input.predictions} "
        "--parser-json {params.parser:q} --judge-json {params.judge:q} --official-json {params.official:q} "
        "--missing={params.missing:q} --config-hash {params.run_hash} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} "
        "--decisions {output.decisions} --metrics {output.metrics} --tracking-json {params.tracking:q} > {log} 2>&1"


# an MCQ judge whose model lives in another env: the same job in that env
use rule score as score_hf with:
    conda:
        conda_file("hf")
    wildcard_constraints:
        task=one_of(rulegrid.mcq_tasks_scored_in(config, "hf")),


use rule score as score_vllm with:
    conda:
        conda_file("vllm")
    wildcard_constraints:
        task=one_of(rulegrid.mcq_tasks_scored_in(config, "vllm")),


rule listening_check:
    input:
        env_ready("core"),
        decisions=listening_files,
    output:
        "results/checks/listening/{model}.json",
    log:
        f"{LOGS}/listening_check/{{model}}.log",
    wildcard_constraints:
        model=one_of(listening_models()),
    params:
        py=env_python("core"),
        paths=lambda w: canonical(listening_inputs(w)),
        settings=canonical(config["checks"]["listening"]),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/check_listening.py --model {wildcards.model} --paths-json {params.paths:q} "
        "--settings-json {params.settings:q} --out {output} > {log} 2>&1"


rule item_version_check:
    input:
        env_ready("core"),
        imported=lambda w: str(imported.predictions_path(model_cfg(w.model))),
        tasks_jsonl=model_dataset_items,
    output:
        "results/checks/item_versions/{model}/{dataset}.json",
    log:
        f"{LOGS}/item_version_check/{{model}}/{{dataset}}.log",
    wildcard_constraints:
        model=one_of(IMPORTED_MODELS),
    params:
        py=env_python("core"),
        model=lambda w: canonical(model_cfg(w.model)),
        # the imported file's content digest (in the fingerprint): a file replaced with its old mtime reruns
        fingerprint=model_fp,
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/check_item_versions.py --model {wildcards.model} --dataset {wildcards.dataset} "
        "--model-json {params.model:q} --out {output} {input.tasks_jsonl} > {log} 2>&1"


rule agreement:
    input:
        env_ready("core"),
        decisions=[r[k] for p in agreement_pairs().values() for r in p["runs"] for k in ("file_a", "file_b")],
    output:
        in_report("results/tables/agreement.tsv", "Model comparisons", "Answer agreement", "agreement"),
    log:
        f"{LOGS}/agreement.log",
    params:
        py=env_python("core"),
        pairs=canonical(agreement_pairs()),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/check_agreement.py --pairs-json {params.pairs:q} --out {output} > {log} 2>&1"


rule aggregate:
    input:
        env_ready("core"),
        metrics=lambda w: [f"results/scores/{r.key}/metrics.json" for r in RUNS] + SWEEP_METRICS,
        checks=[f"results/checks/listening/{m}.json" for m in listening_models()],
        task_stats=sorted({f"results/tasks/{r.dataset}/{r.task}.stats.json" for r in RUNS}),
        item_versions=ITEM_VERSION_CHECKS,
        # each generate job's wall time, outputs and GPUs: cost.tsv's items/s and GPU-seconds per 1,000 items
        jobs=lambda w: sorted({p for r in RUNS for p in unit_summaries(r.model, r.dataset)}),
    output:
        table="results/all.tsv",
        flags=in_report("results/tables/flags.tsv", "Checks", "Flags", "flags"),
        cost=in_report("results/tables/cost.tsv", "Results", "Cost", "cost"),
    log:
        f"{LOGS}/aggregate.log",
    params:
        py=env_python("core"),
        notes=canonical(IMPORTED_SKIPS),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/aggregate.py --out {output.table} --flags {output.flags} --cost {output.cost} "
        "--checks {input.checks} "
        "--task-stats {input.task_stats} --item-versions {input.item_versions} --model-notes-json {params.notes:q} "
        "--jobs {input.jobs} -- {input.metrics} > {log} 2>&1"
