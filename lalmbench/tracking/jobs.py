"""What each job type sends to its tracked run: parameters, progress, summary, views and files.

Scoring: called after decisions.parquet and metrics.json are written, from those files (which the
run's spool names; its all.tsv rows are written into the spool). Any error
here is logged as a warning and swallowed: the job's outputs already exist and must stand.
Generate: parameters and the final summary of a model job (its live progress comes from
:class:`lalmbench.core.progress.ProgressLog`).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

from lalmbench.core import io
from lalmbench.tracking import open_tracker, settings_of
from lalmbench.tracking.views import analysis_tables, numeric_summary, progress_points

log = logging.getLogger("lalmbench.tracking")

RUN_KEYS = ("model", "dataset", "task", "condition", "prompt")
SCORE_PARAMS = RUN_KEYS + ("metric", "config_hash", "parser_version", "model_id", "model_revision", "backend", "seed",
                           "batch_size")


def score_params(metrics: dict) -> dict:
    """The run's identity and provenance from its metrics.json (package versions as versions.<name>)."""
    params = {k: metrics[k] for k in SCORE_PARAMS if metrics.get(k) is not None}
    params.update({f"versions.{k}": v for k, v in sorted((metrics.get("versions") or {}).items())})
    if metrics.get("parser_stages"):
        params["parser_stages"] = ",".join(metrics["parser_stages"])
    return params


def track_score(settings: dict | str | None, *, items_path: str, predictions_path: str, decisions_path: str,
                metrics_path: str) -> None:
    """One tracked run for a finished scoring job; never raises."""
    settings = settings_of(settings)
    if not settings:
        return
    try:
        _track_score(settings, items_path, predictions_path, decisions_path, metrics_path)
    except Exception as exc:  # the scores are on disk already; tracking must not undo the job
        log.warning("tracking: this scoring job is not tracked (%s: %s); its results on disk are complete.",
                    type(exc).__name__, exc)


def _track_score(settings: dict, items_path: str, predictions_path: str, decisions_path: str, metrics_path: str) -> None:
    metrics = io.read_json(metrics_path)
    decisions = io.read_parquet(decisions_path)
    preds = io.read_parquet(predictions_path)
    latency = (preds.set_index(preds["id"].astype(str))["latency_s"].reindex(decisions["id"].astype(str))
               if "latency_s" in preds.columns else None)
    items = io.read_jsonl(items_path)
    name = "/".join(str(metrics.get(k)) for k in RUN_KEYS)
    tracker = open_tracker(settings, name=name, job_type="score", params=score_params(metrics))
    if not tracker.enabled:
        return
    with tracker:
        for step, point in progress_points(decisions, latency, tracker.log_every):
            tracker.progress(step, point)
        tracker.summary(numeric_summary(metrics))
        for view, df in analysis_tables(decisions, items).items():
            tracker.table(view, df)
        if settings.get("artifacts", True):
            for path in _run_files(metrics_path, tracker.folder):
                tracker.artifact(*path)
            tracker.artifact(decisions_path, "decisions.parquet")
            tracker.artifact(predictions_path, "predictions.parquet")


def _run_files(metrics_path: str, folder: Path) -> list[tuple[str, str]]:
    """metrics.json and this run's rows of results/all.tsv, as the aggregate rule will write them
    (the flags column is filled later, by the listening check), kept in the run's spool."""
    from lalmbench.report.aggregate import build_table

    rows = folder / "all.tsv"
    io.write_tsv(rows, build_table([metrics_path]))
    return [(metrics_path, "metrics.json"), (str(rows), "all.tsv")]


def generate_params(model: str, model_cfg: dict, n_slices: int, fingerprint: str) -> dict:
    """A model job's parameters: its config entry (flattened), fingerprint and how many files it serves."""
    params = {"model": model, "model_fingerprint": fingerprint, "slices": n_slices}
    for k, v in sorted(model_cfg.items()):
        if isinstance(v, dict):
            params.update({f"{k}.{kk}": vv for kk, vv in sorted(v.items())})
        else:
            params[k] = ",".join(map(str, v)) if isinstance(v, list) else v
    return params


def generate_summary(summary: dict, wall_s: float) -> dict:
    """Final numbers of a model job from the summary it writes (generate.json)."""
    slices: Sequence[dict] = summary.get("slices", [])
    out = {k: sum(int(s[k]) for s in slices) for k in ("items", "cached", "generated", "errors")}
    out.update({"model_loads": int(summary.get("model_loads", 0)), "slices": len(slices), "wall_s": wall_s})
    if out["generated"] and wall_s > 0:
        out["items_per_s"] = out["generated"] / wall_s
    return out
