"""Robustness sweeps: option-order permutations (CircularEval), prompt-variant spread, batch determinism.

Why: on audio MCQ benchmarks a shuffle of the options moves accuracy by up to ~24 points and a
change of prompt template by several, so a single accuracy hides how much of it is position bias
or prompt luck. These functions are pure (items/decisions/tables in, tables/dicts out); the
``scripts/sweep_*.py`` entry points do the file I/O.

CircularEval (MMBench's protocol, applied to audio MCQ): each item is asked ``k`` times with its
options cyclically shifted; an item counts as correct only if *every* shift is answered correctly.
Shifted items are ordinary items (ids ``<id>@shift<s>``), so any backend and the normal scorer
run on them unchanged.
"""
from __future__ import annotations

import copy
import math
import re
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.core.io import InputError
from lalmbench.core.stats import p_vs_chance, wilson_interval

SHIFT_SEP = "@shift"
_SHIFT_ID = re.compile(rf"^(?P<base>.*){re.escape(SHIFT_SEP)}(?P<shift>\d+)$")


# --- CircularEval -------------------------------------------------------------------------------

def circular_shifts(items: Sequence[dict], k: int | None = None) -> list[dict]:
    """Each item ``k`` times (default: once per option) with options rotated by 0..k-1 positions.

    Labels stay in place (A, B, C...), texts move: shift ``s`` puts original option ``j`` at
    position ``(j + s) mod n``, so the gold answer visits ``min(k, n)`` different positions.
    ``k`` larger than an item's option count is capped at that count (a rotation by n is the
    identity; repeating it would double-count). The shift and base id go into ``meta``
    (``circular_base_id``, ``circular_shift``) so decisions can be grouped back.
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    out = []
    for it in items:
        if SHIFT_SEP in str(it["id"]):
            raise InputError(f"item {it['id']!r}: already a shifted item (contains {SHIFT_SEP!r})")
        opts = it.get("options") or []
        n = len(opts)
        if n < 2:
            raise InputError(f"item {it['id']!r}: CircularEval needs >= 2 options, got {n}")
        labels = [o["label"] for o in opts]
        if it.get("answer_label") not in labels:
            raise InputError(f"item {it['id']!r}: answer_label {it.get('answer_label')!r} not among {labels}")
        gold_idx = labels.index(it["answer_label"])
        for s in range(min(k or n, n)):
            new = copy.deepcopy(it)
            moved = [None] * n
            for j, o in enumerate(opts):
                moved[(j + s) % n] = {**copy.deepcopy(o), "label": labels[(j + s) % n]}
            new["options"] = moved
            new["answer_label"] = labels[(gold_idx + s) % n]
            new["answer_text"] = it.get("answer_text", opts[gold_idx].get("text"))
            new["id"] = f"{it['id']}{SHIFT_SEP}{s}"
            new["meta"] = {**(it.get("meta") or {}), "circular_base_id": str(it["id"]), "circular_shift": s}
            out.append(new)
    return out


def split_shift_id(item_id: str) -> tuple[str, int]:
    m = _SHIFT_ID.match(item_id)
    if not m:
        raise InputError(f"id {item_id!r} is not a shifted item id (<id>{SHIFT_SEP}<k>)")
    return m.group("base"), int(m.group("shift"))


def _proportion_row(k: int, n: int, chance: float | None = None) -> dict:
    lo, hi = wilson_interval(k, n)
    return {"n": n, "n_correct": k, "value": k / n if n else math.nan, "ci_low": lo, "ci_high": hi,
            **({"chance": chance, "p_vs_chance": p_vs_chance(k, n, chance)} if chance is not None else {})}


def circular_metrics(decisions: pd.DataFrame) -> dict:
    """Circular accuracy, per-shift accuracy and answer-position bias from scored shifted items.

    ``decisions`` is :func:`lalmbench.scoring.mcq.score_mcq` output on :func:`circular_shifts` items.
    Returns a dict with ``summary`` (the headline row: circular accuracy with its Wilson interval,
    chance = mean over items of (1/n)^shifts, i.e. a random guesser passing every shift, the
    plain accuracy over all shifted predictions, the consistency rate = same option *text* chosen
    under every shift) and three tables: ``by_shift``, ``by_gold_position`` and
    ``pred_position_hist`` (plus a chi-square test of the predicted positions against the gold
    positions' distribution: a small p means the model prefers some positions).
    """
    need = {"id", "correct", "gold_pos", "pred_pos", "n_options", "outcome"}
    missing = need - set(decisions.columns)
    if missing:
        raise InputError(f"circular_metrics: decisions lack columns {sorted(missing)}")
    df = decisions.copy()
    parts = [split_shift_id(i) for i in df["id"]]
    df["base_id"] = [b for b, _ in parts]
    df["shift"] = [s for _, s in parts]
    g = df.groupby("base_id", sort=True)
    per_item = pd.DataFrame({
        "all_correct": g["correct"].all(),
        "n_shifts": g.size(),
        "n_options": g["n_options"].first(),
    })
    incomplete = per_item[per_item["n_shifts"] < np.minimum(per_item["n_options"], df["shift"].max() + 1)]
    if len(incomplete):
        raise InputError(f"circular_metrics: item {incomplete.index[0]!r} has {incomplete['n_shifts'].iloc[0]} "
                         f"shifts, others have more; every item needs all its shifts")
    # consistency: the same original option chosen under every shift (correct or not)
    orig_choice = np.where(df["pred_pos"] >= 0, (df["pred_pos"] - df["shift"]) % df["n_options"], -1)
    df["orig_choice"] = orig_choice
    consistent = df.groupby("base_id")["orig_choice"].agg(lambda s: bool((s >= 0).all() and s.nunique() == 1))

    n_items = len(per_item)
    k_all = int(per_item["all_correct"].sum())
    chance = float(np.mean((1.0 / per_item["n_options"]) ** per_item["n_shifts"]))
    plain_k = int(df["correct"].sum())
    summary = {
        "metric": "circular_accuracy", **_proportion_row(k_all, n_items, chance),
        "n_predictions": int(len(df)), "shifts_per_item": int(per_item["n_shifts"].max()),
        "plain_accuracy": plain_k / len(df), "consistency_rate": float(consistent.mean()),
        "parse_failure_rate": float((df["outcome"] == "unparseable").mean()),
    }
    by_shift = pd.DataFrame([{"shift": s, **_proportion_row(int(x["correct"].sum()), len(x),
                                                            float((1.0 / x["n_options"]).mean()))}
                             for s, x in df.groupby("shift", sort=True)])
    by_gold = pd.DataFrame([{"gold_pos": p, **_proportion_row(int(x["correct"].sum()), len(x),
                                                              float((1.0 / x["n_options"]).mean()))}
                            for p, x in df.groupby("gold_pos", sort=True)])
    max_n = int(df["n_options"].max())
    pred_counts = np.bincount(df.loc[df["pred_pos"] >= 0, "pred_pos"], minlength=max_n)
    gold_counts = np.bincount(df["gold_pos"], minlength=max_n)
    hist = pd.DataFrame({"position": np.arange(max_n), "n_predicted": pred_counts, "n_gold": gold_counts})
    hist.loc[len(hist)] = {"position": -1, "n_predicted": int((df["pred_pos"] < 0).sum()), "n_gold": 0}
    summary.update(position_bias_test(pred_counts, gold_counts))
    summary["spread_by_shift"] = float(by_shift["value"].max() - by_shift["value"].min())
    return {"summary": summary, "by_shift": by_shift, "by_gold_position": by_gold, "pred_position_hist": hist}


def position_bias_test(pred_counts: np.ndarray, gold_counts: np.ndarray) -> dict:
    """Chi-square goodness of fit of the predicted positions against the gold positions' shares.

    Under CircularEval the gold positions are balanced by construction, so an unbiased model's
    answers (right or wrong) spread like them; a model that always says "A" gives p ~ 0.
    """
    from scipy.stats import chisquare

    pred = np.asarray(pred_counts, dtype=float)
    gold = np.asarray(gold_counts, dtype=float)
    keep = gold > 0
    if pred[keep].sum() == 0 or keep.sum() < 2:
        return {"position_chi2": math.nan, "position_p": math.nan}
    expected = gold[keep] / gold[keep].sum() * pred[keep].sum()
    res = chisquare(pred[keep], expected)
    return {"position_chi2": float(res.statistic), "position_p": float(res.pvalue)}


# --- prompt variants ------------------------------------------------------------------------------

def prompt_spread(table: pd.DataFrame, *, by: Sequence[str] = ("model", "dataset", "task", "condition", "metric"),
                  prompt_col: str = "prompt", value_col: str = "value") -> pd.DataFrame:
    """Spread of a metric across prompt templates: n_prompts, min/max (and which prompt), range,
    mean and sample standard deviation (ddof=1; NaN with a single prompt) per group of ``by``."""
    missing = [c for c in list(by) + [prompt_col, value_col] if c not in table.columns]
    if missing:
        raise InputError(f"prompt_spread: table lacks columns {missing}")
    rows = []
    for key, g in table.groupby(list(by), sort=True):
        g = g.sort_values(prompt_col, kind="mergesort")
        v = g[value_col].astype(float)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), "n_prompts": int(len(g)),
                     "min": float(v.min()), "min_prompt": g.loc[v.idxmin(), prompt_col],
                     "max": float(v.max()), "max_prompt": g.loc[v.idxmax(), prompt_col],
                     "range": float(v.max() - v.min()), "mean": float(v.mean()),
                     "std": float(v.std(ddof=1)) if len(g) > 1 else math.nan})
    return pd.DataFrame(rows)


# --- batch-size determinism ----------------------------------------------------------------------

def determinism(pred_a: pd.DataFrame, pred_b: pd.DataFrame, *, labels_a: pd.Series | None = None,
                labels_b: pd.Series | None = None, max_examples: int = 5) -> dict:
    """Rate of identical raw outputs between two runs of the same model on the same items (e.g.
    batch size 1 vs N), with a Wilson interval; optionally also the rate of identical parsed
    labels. Both runs must cover the same ids (an id in one only is an error naming it)."""
    for name, df in (("a", pred_a), ("b", pred_b)):
        for col in ("id", "raw_output"):
            if col not in df.columns:
                raise InputError(f"determinism: predictions {name} lack column {col!r}")
    a = pred_a.set_index(pred_a["id"].astype(str))
    b = pred_b.set_index(pred_b["id"].astype(str))
    only_a = a.index.difference(b.index)
    only_b = b.index.difference(a.index)
    if len(only_a) or len(only_b):
        which = only_a[0] if len(only_a) else only_b[0]
        raise InputError(f"determinism: id {which!r} is in only one of the two runs "
                         f"({len(only_a)} only in a, {len(only_b)} only in b)")
    b = b.loc[a.index]
    ra = a["raw_output"].astype(object).where(a["raw_output"].notna(), None)
    rb = b["raw_output"].astype(object).where(b["raw_output"].notna(), None)
    same = np.array([x == y for x, y in zip(ra, rb)], dtype=bool)
    n = int(len(same))
    k = int(same.sum())
    lo, hi = wilson_interval(k, n)
    out = {"metric": "batch_determinism", "n": n, "n_identical": k, "value": k / n if n else math.nan,
           "ci_low": lo, "ci_high": hi,
           "examples": [{"id": i, "a": x, "b": y} for i, x, y, s in zip(a.index, ra, rb, same) if not s][:max_examples]}
    if labels_a is not None and labels_b is not None:
        la = labels_a.reindex(a.index)
        lb = labels_b.reindex(a.index)
        same_lab = np.array([(pd.isna(x) and pd.isna(y)) or x == y for x, y in zip(la, lb)], dtype=bool)
        out["label_identical_rate"] = float(same_lab.mean()) if n else math.nan
    return out
