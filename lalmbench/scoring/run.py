"""Rule entry for scoring one run: items + predictions -> decisions.parquet + metrics.json."""
from __future__ import annotations

import json
import logging

import pandas as pd

from lalmbench.core import io

log = logging.getLogger("lalmbench.score")

RUN_KEYS = ("model", "dataset", "task", "condition", "prompt")
PROVENANCE = ("model_id", "model_revision", "backend", "seed", "batch_size")


def score_run_files(*, items_path: str, predictions_path: str, parser_cfg: dict, config_hash: str,
                    run: list[str], decisions_path: str, metrics_path: str, judge_cfg: dict | None = None,
                    judge_model=None, official_cfg: dict | None = None) -> dict:
    """``judge_cfg`` (the top-level ``judge:`` block with ``judge_model_cfg`` and ``seed`` filled in
    by the workflow) turns on the LLM-judge fallback; ``judge_model`` injects a loaded backend.
    ``official_cfg`` (the dataset's official rule for this task, :mod:`lalmbench.scoring.official`)
    adds ``value_official`` beside ``value`` and the per-item official columns."""
    from lalmbench.scoring.mcq import score_mcq

    items = io.read_jsonl(items_path)
    preds = io.read_parquet(predictions_path)
    decisions, metrics = score_mcq(items, preds, parser_cfg)
    if judge_cfg:
        decisions, judged = _judge(decisions, items, judge_cfg, judge_model)
        metrics = {**metrics, **judged}
    if official_cfg:
        from lalmbench.scoring.official import run_official

        decisions, official = run_official(official_cfg, items, decisions)
        metrics = {**metrics, **official}
        log.info("official %s: %.4f over %d items (%d left out), %d items disagree with ours",
                 official["official_scorer"], official["value_official"], official["n_official"],
                 sum(official["official_excluded"].values()), official["n_official_disagree"])
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
    io.write_parquet(decisions_path, decisions)
    io.write_json(metrics_path, metrics)
    return metrics


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
