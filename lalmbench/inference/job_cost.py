"""What a generate job cost: items per second and GPU-seconds per 1,000 items.

A generate job (lalmbench.inference.model_job.generate) knows its wall time (model load included:
an allocation pays for it), how many outputs it generated and how many GPUs its model entry asked
for (``resources.gpus``, what rule generate requests); it writes them into its summary JSON
(``results/predictions/<model>/generate/<unit>.json``, key ``job``). Rule aggregate reads the
summaries and repeats each job's figures on the runs it served in results/tables/cost.tsv; a run
served by several jobs (shards) gets their sums. Wall time is measured: these columns never
reproduce to the byte, and so never enter results/all.tsv.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

#: cost.tsv's job columns, after the run's own
JOB_COLUMNS = ["jobs", "job_wall_s", "items_per_s", "gpu_s_per_1000_items", "job_note"]
NO_GPU = "the job asked for no GPU (resources.gpus: 0): no GPU-seconds"
FROM_CACHE = ("the job generated nothing: every output came from the prediction cache (each output keeps "
              "the latency_s of the job that generated it)")


def job_figures(wall_s: float, generated: int, gpus: int) -> dict:
    """One job's record for its summary: wall seconds, outputs generated, GPUs requested."""
    return {"wall_s": round(float(wall_s), 3), "generated": int(generated), "gpus": int(gpus)}


def combined(jobs: list[dict]) -> dict:
    """cost.tsv's job columns for the jobs that served one run: outputs per wall second over all of
    them, GPU-seconds (wall x GPUs requested) per 1,000 outputs, and why a column is empty."""
    wall = sum(j["wall_s"] for j in jobs)
    made = sum(j["generated"] for j in jobs)
    gpu_s = sum(j["wall_s"] * j["gpus"] for j in jobs)
    notes = [FROM_CACHE] if not made else []
    if made and not any(j["gpus"] for j in jobs):
        notes.append(NO_GPU)
    return {"jobs": len(jobs), "job_wall_s": wall, "items_per_s": made / wall if made and wall > 0 else None,
            "gpu_s_per_1000_items": 1000 * gpu_s / made if made and gpu_s > 0 else None,
            "job_note": "; ".join(notes)}


def no_job_figures(summaries_given: bool) -> dict:
    """The job columns of a run no generate job summary names, and why."""
    why = ("no generate job summary names this run's predictions file" if summaries_given
           else "no generate job summaries were given to the table")
    return {"jobs": 0, "job_wall_s": None, "items_per_s": None, "gpu_s_per_1000_items": None, "job_note": why}


def run_key(out: str) -> tuple[str, ...] | None:
    """(model, dataset, task, condition, prompt) of a main predictions file
    ``results/predictions/<model>/<dataset>/<task>/<condition>/<prompt>.parquet``; None for any other."""
    parts = Path(out).parts
    if len(parts) < 7 or parts[-7:-5] != ("results", "predictions") or not out.endswith(".parquet"):
        return None
    return (*parts[-5:-1], Path(parts[-1]).stem)


def run_job_figures(summaries: Iterable[dict]) -> dict[tuple, dict]:
    """run key -> the job columns of the generate jobs whose slices wrote that run's predictions file."""
    by_run: dict[tuple, list[dict]] = {}
    for s in summaries:
        job = s.get("job")
        if not isinstance(job, dict):
            continue
        for sl in s.get("slices", []):
            key = run_key(str(sl.get("out", "")))
            if key is not None:
                by_run.setdefault(key, []).append(job)
    return {k: combined(v) for k, v in by_run.items()}
