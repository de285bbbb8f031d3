"""Rule entry for scoring one run: items + predictions -> decisions.parquet + metrics.json."""
from __future__ import annotations

import hashlib
import json
import logging
import os
from typing import Callable

import numpy as np
import pandas as pd

from lalmbench.core import io

log = logging.getLogger("lalmbench.score")

RUN_KEYS = ("model", "dataset", "task", "condition", "prompt")
PROVENANCE = ("model_id", "model_revision", "backend", "seed", "batch_size")
SCORE_INPUTS_KEY = "lalmbench.score_inputs"


def score_run_files(*, items_path: str, predictions_path: str, parser_cfg: dict, config_hash: str,
                    run: list[str], decisions_path: str, metrics_path: str, judge_cfg: dict | None = None,
                    judge_model=None, official_cfg: dict | None = None, score_inputs: str | None = None,
                    missing: str | None = None) -> dict:
    """``judge_cfg`` (the top-level ``judge:`` block with ``judge_model_cfg`` and ``seed`` filled in
    by the workflow) turns on the LLM-judge fallback; ``judge_model`` injects a loaded backend.
    ``official_cfg`` (the dataset's official rule for this task, :mod:`lalmbench.scoring.official`)
    adds ``value_official`` beside ``value`` and the per-item official columns; ``score_inputs`` (the
    digest of what the run is scored from) goes into the decisions file's metadata. ``missing``: an
    imported model's ``params.missing``, what becomes of items its file has no output for
    (:func:`without_output`)."""
    from lalmbench.scoring import item_versions
    from lalmbench.scoring.mcq import score_mcq

    items = io.read_jsonl(items_path)
    preds = io.read_parquet(predictions_path)
    items, preds, no_output = without_output(items, preds, missing)
    # imported outputs that carry the item they were made on: compared with ours, scored on theirs if asked
    items, differs, versions = item_versions.for_run(items, preds)
    decisions, metrics = score_mcq(items, preds, parser_cfg)
    if "samples" in preds.columns:  # k > 1 outputs per item: the row is sample 0, the rest are scored apart
        decisions, metrics = _with_samples(items, preds, parser_cfg, decisions, metrics)
    if no_output:
        flag = no_output.pop("no_output_flag")
        metrics = {**metrics, **no_output, "flags": [*metrics.get("flags", []), flag]}
    if versions:
        decisions["item_version_differs"] = decisions["id"].astype(str).map(differs)
        metrics = {**metrics, **versions}
        log.info("outputs made on a different version of their item: %d of %d%s", len(differs), len(items),
                 f"; scored against their own items: {versions['n_own_items']}" if "n_own_items" in versions else "")
    if judge_cfg:
        decisions, judged = _judge(decisions, items, judge_cfg, judge_model)
        metrics = {**metrics, **judged, "flags": [*metrics.get("flags", []), *judged.get("flags", [])]}
    if official_cfg:
        from lalmbench.scoring.official import run_official

        decisions, official = run_official(official_cfg, items, decisions)
        metrics = {**metrics, **official}
        log.info("official %s: %.4f over %d items (%d left out), %d items disagree with ours",
                 official["official_scorer"], official["value_official"], official["n_official"],
                 sum(official["official_excluded"].values()), official["n_official_disagree"])
    if len(preds):  # tokens and latency: results/tables/cost.tsv, never all.tsv (lalmbench.scoring.cost)
        from lalmbench.scoring.cost import cost_summary

        metrics["cost"] = cost_summary(preds)
    first = preds.iloc[0] if len(preds) else {}
    metrics = {
        **dict(zip(RUN_KEYS, run)),
        **metrics,
        "config_hash": config_hash,
        **{k: _plain(first.get(k)) for k in PROVENANCE},
        "versions": json.loads(first["versions"]) if len(preds) and first.get("versions") else {},
        "backend_info": json.loads(first["backend_info"]) if len(preds) and first.get("backend_info") else {},
    }
    log.info("%s: %s=%.4f n=%d unparseable=%d", "/".join(run), metrics["metric"], metrics["value"], metrics["n"],
             metrics.get("n_unparseable", 0))
    io.write_parquet(decisions_path, decisions, metadata={SCORE_INPUTS_KEY: score_inputs} if score_inputs else None)
    io.write_json(metrics_path, metrics)
    return metrics


def _with_samples(items: list[dict], preds: pd.DataFrame, parser_cfg: dict, decisions: pd.DataFrame,
                  metrics: dict) -> tuple[pd.DataFrame, dict]:
    """A sampled run's decisions with the per-item columns of :mod:`lalmbench.scoring.sampled` and its
    metrics with accuracy@k_mean, pass@k and majority@k (``value`` stays sample 0's accuracy) and, in
    metrics.json only, ``sampling_curve``: pass@j and majority@j for j = 1..k."""
    from lalmbench.scoring.mcq import score_mcq
    from lalmbench.scoring.sampled import ITEM_COLUMNS, sample_outputs, sampled_scores, sampling_curve

    per_sample = [score_mcq(items, p, parser_cfg)[0] for p in sample_outputs(preds)]
    per_item, rows = sampled_scores(per_sample)
    curve = sampling_curve(np.stack([d["correct"].to_numpy(dtype=bool) for d in per_sample], axis=1),
                           np.stack([d["pred_label"].to_numpy(dtype=object) for d in per_sample], axis=1),
                           per_sample[0]["gold_label"].to_numpy(dtype=object))
    decisions = decisions.assign(**{c: per_item[c].to_numpy() for c in ITEM_COLUMNS})
    for r in rows:
        log.info("%s=%.4f [%.4f, %.4f] over %d items x %d samples (design effect %.2f)", r["metric"], r["value"],
                 r["ci_low"], r["ci_high"], r["n"], len(per_sample), r["design_effect"])
    return decisions, {**metrics, "samples": len(per_sample), "sampling_curve": curve,
                       "extra_metrics": [*metrics.get("extra_metrics", []), *rows]}


def no_output_ids(preds: pd.DataFrame) -> dict[str, str]:
    """id -> the imported file, for the prediction rows of items that file has no output for."""
    from lalmbench.models.imported import NO_OUTPUT_KEY
    from lalmbench.scoring.item_versions import extra_values

    return {i: str(src) for i, src in extra_values(preds, NO_OUTPUT_KEY).items()}


def without_output(items: list[dict], preds: pd.DataFrame,
                   missing: str | None) -> tuple[list[dict], pd.DataFrame, dict]:
    """(items, predictions, metrics fields) of a run once imported items without an output are dealt with.

    An imported file that lacks an item's output never had one, so a rerun cannot make it and the
    benchmark's own script, which scores the records in the file, never sees it: with ``missing:
    leave-out`` (the default) such items leave ``value`` and ``value_official`` alike; with ``wrong``
    they stay and count as wrong (an empty output). Either way the metrics carry ``n_no_output``,
    ``missing`` and a flag (``no_output_flag``) such as ``106 of 1,000 items have no output in FILE``."""
    from lalmbench.models.imported import DEFAULT_MISSING, MISSING_MODES

    absent = no_output_ids(preds)
    if not absent:
        return items, preds, {}
    missing = missing or DEFAULT_MISSING
    if missing not in MISSING_MODES:
        raise io.InputError(f"params.missing: expected one of {list(MISSING_MODES)}, got {missing!r}")
    ids = {str(it["id"]) for it in items}
    gone = sorted(i for i in absent if i in ids)
    files = sorted({absent[i] for i in gone})
    where = ", ".join(files)
    flag = f"{len(gone):,} of {len(items):,} items have no output in {where}"
    if missing == "leave-out":
        if len(gone) == len(items):
            raise io.InputError(f"{where}: none of the {len(items):,} items of this run has an output (check the ids "
                                f"or params.id_template / id_pattern)")
        keep = [it for it in items if str(it["id"]) not in absent]
        preds = preds[~preds["id"].astype(str).isin(absent)].reset_index(drop=True)
        flag += ": left out of value and value_official"
        items = keep
    else:
        flag += ": counted as wrong (missing: wrong)"
    log.info("%s", flag)
    return items, preds, {"n_no_output": len(gone), "missing": missing, "no_output_file": where,
                          "no_output_flag": flag}


def score_inputs_digest(items_path: str, predictions_path: str, settings: dict) -> str:
    """What a run's decisions and metrics are made from: both files' bytes and every scoring setting."""
    from lalmbench.inference.fingerprint import file_digest

    blob = json.dumps([file_digest(items_path), file_digest(predictions_path), settings], sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()


def recorded_score_inputs(decisions_path: str) -> str | None:
    try:
        return io.parquet_metadata(decisions_path).get(SCORE_INPUTS_KEY)
    except OSError:  # no file yet (FileNotFoundError) or not a readable parquet
        return None


def scores_paths(run_key: str) -> tuple[str, str]:
    """(decisions.parquet, metrics.json) of a run."""
    return f"results/scores/{run_key}/decisions.parquet", f"results/scores/{run_key}/metrics.json"


def score_runs(batch: dict, *, model: str, model_cfg: dict, cache_root: str, sample_rate: int,
               after_run: Callable[[dict], None] | None = None) -> dict[str, int]:
    """Rule ``runs`` (``run_jobs: per-dataset``): every MCQ run of one model and dataset in one process,
    each written as rule infer and rule score would write it. A run whose predictions file is current
    (same inputs, same model fingerprint) is not materialised again, and one whose decisions record the
    same score inputs is not scored again: only its files' times are renewed, so a rerun of this job for
    one edited task re-scores that task's runs only.

    ``batch``: ``{"dataset", "scorer" (parser version + scoring code), "settings": {name: {parser, judge,
    official, missing}}, "runs": [[task, condition,
    prompt, run_hash, settings name], ...]}`` (settings are shared by many runs: the command line stays short)."""
    from lalmbench.core.runs import Run
    from lalmbench.inference.cache import cache_files
    from lalmbench.inference.fingerprint import model_fingerprint
    from lalmbench.inference.materialize import is_current, materialize
    from lalmbench.inference.plan import slice_from_spec
    from lalmbench.inference.sampling import run_fingerprint
    from lalmbench.models.imported import needs_audio

    fp = model_fingerprint(model_cfg)
    cache = cache_files(cache_root, model, fp)
    dataset, runs = batch["dataset"], batch["runs"]
    counts = {"materialised": 0, "predictions_current": 0, "scored": 0, "scores_current": 0}
    for i, (task, condition, prompt, run_hash, name) in enumerate(runs, 1):
        sl = slice_from_spec(model, ("main", dataset, task, condition, prompt, None), audio=needs_audio(model_cfg))
        decisions, metrics = scores_paths(Run(model, dataset, task, condition, prompt).key)
        if is_current(sl, run_fingerprint(fp, model_cfg)):
            os.utime(sl.out)
            counts["predictions_current"] += 1
        else:
            df = materialize(sl, model_cfg=model_cfg, cache_path=cache, sample_rate=sample_rate)
            counts["materialised"] += 1
            log.info("%s: %d rows, %d errors", sl.out, len(df), int(df.error.notna().sum()))
        settings = {**batch["settings"][name], "run_hash": run_hash, "scorer": batch["scorer"]}
        digest = score_inputs_digest(sl.items, sl.out, settings)
        if recorded_score_inputs(decisions) == digest and os.path.exists(metrics):
            for p in (decisions, metrics):
                os.utime(p)
            counts["scores_current"] += 1
            log.info("[%d/%d] %s/%s/%s: scores current", i, len(runs), task, condition, prompt)
            continue
        score_run_files(items_path=sl.items, predictions_path=sl.out, parser_cfg=settings["parser"],
                        config_hash=run_hash, run=[model, dataset, task, condition, prompt],
                        decisions_path=decisions, metrics_path=metrics, judge_cfg=settings["judge"] or None,
                        official_cfg=settings["official"] or None, score_inputs=digest,
                        missing=settings.get("missing") or None)
        counts["scored"] += 1
        log.info("[%d/%d] scored", i, len(runs))
        if after_run:
            after_run({"items_path": sl.items, "predictions_path": sl.out, "decisions_path": decisions,
                       "metrics_path": metrics})
    log.info("%s: %s", model, ", ".join(f"{k} {v}" for k, v in counts.items()))
    return counts


def _judge(decisions: pd.DataFrame, items: list[dict], cfg: dict, model=None) -> tuple[pd.DataFrame, dict]:
    from lalmbench.scoring.judge import Judge
    from lalmbench.scoring.judge_mcq import DEFAULTS, judge_fallback

    cfg = {**DEFAULTS, **cfg}
    judge = Judge(cfg["judge_model"], cfg["judge_model_cfg"], cfg["prompt"], cache_dir=cfg["cache_dir"], model=model)
    decisions, metrics = judge_fallback(decisions, items, judge, audit_n=int(cfg["audit_n"]),
                                        max_disagreement=float(cfg["max_disagreement"]), seed=int(cfg.get("seed", 0)))
    log.info("judge %s: %d unparseable sent, %d credited; agreement with rule reads %d/%d%s",
             judge.name, metrics["judge_n_fallback"], metrics["judge_n_credited"], metrics["judge_audit_agree"],
             metrics["judge_audit_n"], "" if metrics["judge_trusted"] else " (untrusted)")
    return decisions, metrics


def _plain(v):
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return None
    return v.item() if hasattr(v, "item") else v
