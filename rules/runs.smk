# run_jobs: per-dataset -- one job per model and dataset writes every predictions file, decisions and
# metrics of the dataset's MCQ runs scored in the core env, in one process (scripts/score_runs.py), in
# place of one infer and one score job per run. Its outputs are update(): kept while the job runs, so
# it rewrites only the runs whose inputs changed (their digests are in the files' metadata). Open
# tasks, MCQ tasks judged in another env and the sweeps keep their own rules. Trade-offs: docs/inference.md.
for _i, (_ds, _models, _runs) in enumerate(rulegrid.batched_runs(RUNS, BATCHED_TASKS)):

    rule:
        name:
            f"runs_{_i}"
        input:
            env_ready("core"),
            fingerprint="results/predictions/{model}/fingerprint.json",
            generated=batch_generated(_ds, _runs),
            tasks_jsonl=sorted({items_path(_ds, t) for t, _, _ in _runs}),
            manifests=batch_manifests(_ds, [t for t, _, _ in _runs]),
            prompts=sorted({prompt_path(p) for _, _, p in _runs}),
        output:
            predictions=batch_outputs(_ds, _runs, "results/predictions/{run}.parquet"),
            decisions=batch_outputs(_ds, _runs, "results/scores/{run}/decisions.parquet"),
            metrics=batch_outputs(_ds, _runs, "results/scores/{run}/metrics.json"),
        log:
            f"{LOGS}/runs/{{model}}/{_ds}.log",
        wildcard_constraints:
            model=one_of(_models),
        params:
            py=env_python("core"),
            fingerprint=model_fp,
            batch=batch_param(_ds, _runs),
            model=model_entry_untracked,
            cache=config["prediction_cache"],
            sample_rate=config["sample_rate"],
            tracking=TRACKING,
        conda:
            conda_file("core")
        group:
            (lambda ds: lambda w: f"runs-{w.model}-{ds}")(_ds)
        resources:
            mem_mb=2000,
            runtime=30,
        shell:
            "{params.py:q} scripts/score_runs.py --model {wildcards.model} --model-json {params.model:q} "
            "--batch-json {params.batch:q} --cache-root {params.cache:q} --sample-rate {params.sample_rate} "
            "--tracking-json {params.tracking:q} > {log} 2>&1"

    workflow.ruleorder(f"runs_{_i}", "infer")
    workflow.ruleorder(f"runs_{_i}", "score")
