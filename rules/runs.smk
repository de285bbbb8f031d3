# run_jobs: per-dataset -- one job per model and dataset writes every predictions file, decisions and
# metrics of the dataset's MCQ runs scored in the core env, in one process (scripts/score_runs.py), in
# place of one infer and one score job per run. Its outputs are update(): kept while the job runs, so
# it rewrites only the runs whose inputs changed (their digests are in the files' metadata). Open
# tasks, MCQ tasks judged in another env and the sweeps keep their own rules. Trade-offs: docs/inference.md.
import json

from lalmbench.inference.plan import items_path, manifest_path

BATCHED_TASKS = rulegrid.mcq_tasks_scored_in(config, "core") if config["run_jobs"] == "per-dataset" else []


def batch_generated(dataset, runs):
    """The generate summaries of the job's model and dataset: for ordering only (ancient) while every
    predictions file of the job is current, as rule infer reads them (rules/common.smk: generated_summary)."""
    def summary(w):
        paths = unit_summaries(w.model, dataset)
        current = all(file_is_current(slice_from_spec(w.model, ("main", dataset, t, c, p, None))) for t, c, p in runs)
        return [ancient(p) for p in paths] if current else paths
    return summary


def batch_param(dataset, runs):
    """The runs of one job with everything that scores them (tracked: an edit reruns the job, whose
    runs then compare digests): parser, judge and official settings per task and prompt, run hashes."""
    def param(w):
        settings = {f"{t}|{p}": {"parser": json.loads(_parser_param(t, p, w.model)),
                                 "judge": json.loads(rulegrid.mcq_judge_json(config, t)),
                                 "official": json.loads(rulegrid.official_json(config, t))}
                    for t, _, p in runs}
        return canonical({"dataset": dataset, "scorer": SCORER, "settings": settings,
                          "runs": [[t, c, p, _score_run_hash(w.model, t, c, p), f"{t}|{p}"] for t, c, p in runs]})
    return param


def batch_outputs(dataset, runs, path):
    return [update(path.format(run=f"{{model}}/{dataset}/{t}/{c}/{p}")) for t, c, p in runs]


for _i, (_ds, _models, _runs) in enumerate(rulegrid.batched_runs(RUNS, BATCHED_TASKS)):

    rule:
        name:
            f"runs_{_i}"
        input:
            env_ready("core"),
            fingerprint="results/predictions/{model}/fingerprint.json",
            generated=batch_generated(_ds, _runs),
            tasks_jsonl=sorted({items_path(_ds, t) for t, _, _ in _runs}),
            manifests=sorted({manifest_path(_ds, t) for t, _, _ in _runs}),
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
