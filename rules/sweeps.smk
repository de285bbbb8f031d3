# Robustness sweeps (issue 5): option-order permutations (CircularEval), prompt-variant spread,
# batch-size determinism, LLM-judge audits; statistics over scored runs (breakdowns, paired tests).
# Off unless `sweeps:` is in the config; targets: `snakemake sweeps`, `snakemake stats`.
# Outputs under results/sweeps/ and results/stats/; the sweep metrics files (SWEEP_METRICS) use
# the all.tsv format, so rule aggregate can take them as extra inputs. Grid logic: lalmbench/workflow/rulegrid.py.
from lalmbench.workflow import rulegrid

SWEEPS = config.get("sweeps") or {}
CIRCULAR = SWEEPS.get("circular") or {}
CIRCULAR_RUNS = rulegrid.sweep_grid(RUNS, CIRCULAR, IMPORTED_MODELS)
DETERMINISM = SWEEPS.get("determinism") or {}
DETERMINISM_RUNS = rulegrid.sweep_grid(RUNS, DETERMINISM, IMPORTED_MODELS)
JUDGE_AUDIT = SWEEPS.get("judge_audit") or {}
JUDGE_AUDIT_RUNS = rulegrid.sweep_grid(RUNS, JUDGE_AUDIT)
SWEEP_METRICS = [f"results/sweeps/circular/scores/{r.key}/k{CIRCULAR['k']}/metrics.json" for r in CIRCULAR_RUNS] + [
    f"results/sweeps/determinism/scores/{r.key}/bs{DETERMINISM['batch_sizes'][0]}-vs-bs{DETERMINISM['batch_sizes'][1]}.json"
    for r in DETERMINISM_RUNS
]
SWEEP_TARGETS = (
    SWEEP_METRICS
    + [f"results/stats/judge_audit/{r.key}.json" for r in JUDGE_AUDIT_RUNS]
    + (["results/sweeps/circular.tsv"] if CIRCULAR_RUNS else [])
    + (["results/sweeps/prompt_spread.tsv"] if SWEEPS.get("prompt_spread") else [])
)
MCQ_RUNS = rulegrid.mcq_runs(config, RUNS)
PAIRED_GROUPS = rulegrid.paired_groups(MCQ_RUNS)


rule sweeps:
    input:
        SWEEP_TARGETS,


rule sweep_circular_items:
    input:
        env_ready("core"),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
    output:
        "results/sweeps/circular/tasks/{dataset}/{task}.k{k}.jsonl",
    log:
        f"{LOGS}/sweep_circular_items/{{dataset}}/{{task}}.k{{k}}.log",
    wildcard_constraints:
        k=r"\d+",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    group:
        DATA_GROUP
    shell:
        "{params.py:q} scripts/sweep_circular.py items --items {input.tasks_jsonl} --k {wildcards.k} --out {output} "
        "> {log} 2>&1"


use rule infer as sweep_circular_infer with:
    input:
        env_ready("core"),
        # shifted items keep their audio paths: the base task's decoded-audio cache serves them
        **infer_inputs("circular", "results/sweeps/circular/tasks/{dataset}/{task}.k{k}.jsonl"),
    output:
        "results/sweeps/circular/predictions/{model}/{dataset}/{task}/{condition}/{prompt}/k{k}.parquet",
    log:
        f"{LOGS}/sweep_circular_infer/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}/k{{k}}.log",
    wildcard_constraints:
        k=r"\d+",
    params:
        **infer_params("circular"),


rule sweep_circular_score:
    input:
        env_ready("core"),
        shifted="results/sweeps/circular/tasks/{dataset}/{task}.k{k}.jsonl",
        predictions="results/sweeps/circular/predictions/{model}/{dataset}/{task}/{condition}/{prompt}/k{k}.parquet",
    output:
        decisions="results/sweeps/circular/scores/{model}/{dataset}/{task}/{condition}/{prompt}/k{k}/decisions.parquet",
        metrics="results/sweeps/circular/scores/{model}/{dataset}/{task}/{condition}/{prompt}/k{k}/metrics.json",
        tables="results/sweeps/circular/scores/{model}/{dataset}/{task}/{condition}/{prompt}/k{k}/tables.tsv",
    log:
        f"{LOGS}/sweep_circular_score/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}/k{{k}}.log",
    wildcard_constraints:
        k=r"\d+",
    params:
        **sweep_score_params(lambda w: {"circular_k": int(w.k)}),
    conda:
        conda_file("core")
    group:
        run_group
    resources:
        runtime=RUN_FILE_MINUTES,
    shell:
        "{params.py:q} scripts/sweep_circular.py score --items {input.shifted} --predictions {input.predictions} "
        "--k {wildcards.k} --parser-json {params.parser:q} --config-hash {params.run_hash} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} "
        "--decisions {output.decisions} --metrics {output.metrics} --tables {output.tables} > {log} 2>&1"


rule sweep_circular_table:
    input:
        env_ready("core"),
        metrics=[f"results/sweeps/circular/scores/{r.key}/k{CIRCULAR.get('k', 0)}/metrics.json" for r in CIRCULAR_RUNS],
    output:
        "results/sweeps/circular.tsv",
    log:
        f"{LOGS}/sweep_circular_table.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/aggregate.py --out {output} {input.metrics} > {log} 2>&1"


rule sweep_prompt_spread:
    input:
        env_ready("core"),
        metrics=[f"results/scores/{r.key}/metrics.json" for r in RUNS],
    output:
        "results/sweeps/prompt_spread.tsv",
    log:
        f"{LOGS}/sweep_prompt_spread.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/sweep_prompt_spread.py --out {output} {input.metrics} > {log} 2>&1"


use rule infer as sweep_determinism_infer with:
    input:
        env_ready("core"),
        **infer_inputs("determinism", "results/tasks/{dataset}/{task}.jsonl"),
    output:
        "results/sweeps/determinism/predictions/{model}/{dataset}/{task}/{condition}/{prompt}/bs{bs}.parquet",
    log:
        f"{LOGS}/sweep_determinism_infer/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}/bs{{bs}}.log",
    wildcard_constraints:
        bs=r"\d+",
    params:
        **infer_params("determinism"),


rule sweep_determinism:
    input:
        env_ready("core"),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        a=lambda w: rulegrid.determinism_predictions(config, **{k: w[k] for k in ("model", "dataset", "task", "condition", "prompt")}, batch_size=int(w.bs_a)),
        b=lambda w: rulegrid.determinism_predictions(config, **{k: w[k] for k in ("model", "dataset", "task", "condition", "prompt")}, batch_size=int(w.bs_b)),
    output:
        "results/sweeps/determinism/scores/{model}/{dataset}/{task}/{condition}/{prompt}/bs{bs_a}-vs-bs{bs_b}.json",
    log:
        f"{LOGS}/sweep_determinism/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}/bs{{bs_a}}-vs-bs{{bs_b}}.log",
    wildcard_constraints:
        bs_a=r"\d+",
        bs_b=r"\d+",
    params:
        **sweep_score_params(lambda w: {"batch_sizes": [int(w.bs_a), int(w.bs_b)]}),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/sweep_determinism.py --items {input.tasks_jsonl} --a {input.a} --b {input.b} "
        "--batch-sizes {wildcards.bs_a} {wildcards.bs_b} --parser-json {params.parser:q} "
        "--config-hash {params.run_hash} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} "
        "--out {output} > {log} 2>&1"


# --- statistics over scored runs: per-meta breakdowns, paired model comparisons (target: stats) ---
rule stats:
    input:
        [f"results/stats/breakdown/{r.key}.tsv" for r in MCQ_RUNS],
        [f"results/stats/paired/{d}/{t}/{c}/{p}.tsv" for d, t, c, p in PAIRED_GROUPS],


rule stats_breakdown:
    input:
        env_ready("core"),
        decisions="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/decisions.parquet",
    output:
        "results/stats/breakdown/{model}/{dataset}/{task}/{condition}/{prompt}.tsv",
    log:
        f"{LOGS}/stats_breakdown/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/score_breakdown.py --decisions {input.decisions} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} "
        "--out {output} > {log} 2>&1"


rule stats_paired:
    input:
        unpack(lambda w: {m: f"results/scores/{m}/{w.dataset}/{w.task}/{w.condition}/{w.prompt}/decisions.parquet"
                          for m in PAIRED_GROUPS[(w.dataset, w.task, w.condition, w.prompt)]}),
        env=env_ready("core"),
    output:
        "results/stats/paired/{dataset}/{task}/{condition}/{prompt}.tsv",
    log:
        f"{LOGS}/stats_paired/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    params:
        py=env_python("core"),
        pairs=lambda w: " ".join(f"{m}=results/scores/{m}/{w.dataset}/{w.task}/{w.condition}/{w.prompt}/decisions.parquet"
                                 for m in PAIRED_GROUPS[(w.dataset, w.task, w.condition, w.prompt)]),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/score_paired.py --out {output} "
        "--run {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} {params.pairs} "
        "> {log} 2>&1"


# --- LLM-judge audit (sweeps.judge_audit: judge_model, prompt, + the usual grid filters) ---------
rule judge_audits:
    input:
        [f"results/stats/judge_audit/{r.key}.json" for r in JUDGE_AUDIT_RUNS],


rule judge_audit:
    input:
        unpack(lambda w: {"env": env_ready(model_cfg(JUDGE_AUDIT["judge_model"])["env"])}),
        tasks_jsonl="results/tasks/{dataset}/{task}.jsonl",
        predictions="results/predictions/{model}/{dataset}/{task}/{condition}/{prompt}.parquet",
        decisions="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/decisions.parquet",
    output:
        "results/stats/judge_audit/{model}/{dataset}/{task}/{condition}/{prompt}.json",
    log:
        f"{LOGS}/judge_audit/{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}.log",
    params:
        py=lambda w: env_python(model_cfg(JUDGE_AUDIT["judge_model"])["env"]),
        judge=lambda w: canonical({"judge_model": JUDGE_AUDIT["judge_model"],
                                   "judge_model_cfg": model_cfg(JUDGE_AUDIT["judge_model"]),
                                   "prompt": JUDGE_AUDIT.get("prompt", "mcq_answer"),
                                   "cache_dir": JUDGE_AUDIT.get("cache_dir", "results/cache/judge")}),
    conda:
        # the judge model runs in-process: its env (one judge per config, so a plain file path)
        conda_file(model_cfg(JUDGE_AUDIT["judge_model"])["env"] if JUDGE_AUDIT else "core")
    resources:
        gpu=lambda w: model_cfg(JUDGE_AUDIT["judge_model"])["resources"].get("gpus", 0),
        mem_mb=lambda w: model_cfg(JUDGE_AUDIT["judge_model"])["resources"].get("mem_mb", 4000),
        runtime=lambda w: model_cfg(JUDGE_AUDIT["judge_model"])["resources"].get("runtime", 60),
    shell:
        "{params.py:q} scripts/score_judge_audit.py --items {input.tasks_jsonl} --predictions {input.predictions} "
        "--decisions {input.decisions} --judge-json {params.judge:q} "
        "--run {wildcards.model} {wildcards.dataset} {wildcards.task} {wildcards.condition} {wildcards.prompt} "
        "--out {output} > {log} 2>&1"
