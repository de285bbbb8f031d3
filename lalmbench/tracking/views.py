"""What a tracked scoring run shows: small tables computed from a run's decisions.

The same views as the per-run tables of the earlier TACoBeLAL tool: gold vs predicted label
distribution, accuracy by gold label, by option count and by answer type, and the confusion matrix
(long form: one row per gold x predicted pair, unparseable answers as their own column). Pure
pandas, so each view is testable without a tracking service.
"""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np
import pandas as pd

UNPARSEABLE = "(unparseable)"
MCQ_COLUMNS = {"gold_label", "pred_label", "correct", "n_options"}


def is_mcq(decisions: pd.DataFrame) -> bool:
    return MCQ_COLUMNS <= set(decisions.columns)


def answer_types(decisions: pd.DataFrame, items: list[dict]) -> pd.Series:
    """Per decision: the item's ``meta.answer_type`` where the builder set one (e.g. "none, it is the
    last" vs an event), else the ``type`` of the gold option."""
    if "meta_answer_type" in decisions.columns:
        return decisions["meta_answer_type"].astype(object).fillna("(none)").astype(str)
    gold_type = {it["id"]: next((o.get("type") for o in it.get("options") or [] if o.get("label") == it.get("answer_label")),
                                None) for it in items}
    return decisions["id"].map(gold_type).fillna("(none)").astype(str)


def _accuracy_by(decisions: pd.DataFrame, key: pd.Series, name: str) -> pd.DataFrame:
    g = decisions["correct"].astype(bool).groupby(key.rename(name), sort=True)
    out = pd.DataFrame({"n": g.size(), "correct": g.sum()}).reset_index()
    out["accuracy"] = out["correct"] / out["n"]
    return out


def analysis_tables(decisions: pd.DataFrame, items: list[dict]) -> dict[str, pd.DataFrame]:
    """The views of an MCQ run ({} for other decision formats, e.g. open-ended scoring)."""
    if not is_mcq(decisions) or decisions.empty:
        return {}
    gold = decisions["gold_label"].astype(str)
    pred = decisions["pred_label"].astype(object).fillna(UNPARSEABLE).astype(str)
    labels = sorted(set(gold) | set(pred) - {UNPARSEABLE}) + ([UNPARSEABLE] if (pred == UNPARSEABLE).any() else [])
    dist = pd.DataFrame({"label": labels,
                         "gold": gold.value_counts().reindex(labels, fill_value=0).to_numpy(),
                         "predicted": pred.value_counts().reindex(labels, fill_value=0).to_numpy()})
    pairs = pd.MultiIndex.from_product([sorted(set(gold)), labels], names=["gold_label", "pred_label"])
    confusion = (pd.DataFrame({"gold_label": gold, "pred_label": pred}).value_counts()
                 .reindex(pairs, fill_value=0).rename("n").reset_index())
    return {
        "label_distribution": dist,
        "accuracy_by_gold_label": _accuracy_by(decisions, gold, "gold_label"),
        "accuracy_by_n_options": _accuracy_by(decisions, decisions["n_options"].astype(int), "n_options"),
        "accuracy_by_answer_type": _accuracy_by(decisions, answer_types(decisions, items), "answer_type"),
        "confusion_matrix": confusion,
    }


def progress_points(decisions: pd.DataFrame, latency_s: pd.Series | None, every: int) -> Iterator[tuple[int, dict]]:
    """(items done, metrics) every ``every`` items and at the last one, in item order: how accuracy
    and latency settle as items accumulate."""
    n = len(decisions)
    if not n:
        return
    steps = np.unique(np.r_[np.arange(every, n + 1, every), n])
    correct = np.cumsum(decisions["correct"].astype(bool).to_numpy()) if "correct" in decisions else None
    lat = None if latency_s is None else np.cumsum(pd.to_numeric(latency_s, errors="coerce").fillna(0).to_numpy())
    for k in steps.tolist():
        m: dict[str, float] = {"items_done": k, "fraction": k / n}
        if correct is not None:
            m["accuracy_so_far"] = float(correct[k - 1]) / k
        if lat is not None:
            m["latency_per_item_s"] = float(lat[k - 1]) / k
        yield k, m


NOT_SUMMARY = {"versions", "backend_info", "scoring", "seed", "batch_size", "boot_seed"}  # provenance, not results


def numeric_summary(metrics: dict[str, Any]) -> dict[str, float]:
    """The numbers of a metrics.json (nested dicts flattened with '.'); the headline ``value`` also
    under its metric's name (``accuracy``, ``wer``...). NaN and text are left out."""
    out: dict[str, float] = {}

    def walk(prefix: str, obj: Any) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(f"{prefix}{k}.", v)
        elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and not math.isnan(obj):
            out[prefix[:-1]] = float(obj)

    walk("", {k: v for k, v in metrics.items() if k not in NOT_SUMMARY})
    for m in [metrics] + list(metrics.get("extra_metrics") or []):
        v = m.get("value")
        if m.get("metric") and isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
            out[str(m["metric"])] = float(v)
    return out
