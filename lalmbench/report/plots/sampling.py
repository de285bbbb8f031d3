"""Sampled models beside greedy ones: accuracy against k, and accuracy against mean output tokens.

Drawn from results/all.tsv (``accuracy``; a sampled run's ``accuracy@k_mean``, ``pass@k`` and
``majority@k``) and results/tables/cost.tsv (mean output tokens), each model's runs pooled with
their item counts as weights (its ``audio`` condition where it has one). ``accuracy`` is one output
per item: greedy for a greedy entry, sample 0 for a sampled one. The table the figure draws is
written beside it (results/tables/sampling.tsv).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import placeholder

SAMPLED = re.compile(r"^(?:accuracy@(?P<mean>\d+)_mean|pass@(?P<pass>\d+)|majority@(?P<majority>\d+))$")
COLUMNS = ["model", "model_id", "k", "accuracy", "accuracy_k_mean", "pass_k", "majority_k", "output_tokens_mean",
           "cost_note"]


def _pooled(rows: pd.DataFrame, weight: str, value: str) -> float:
    w = pd.to_numeric(rows[weight], errors="coerce")
    v = pd.to_numeric(rows[value], errors="coerce")
    ok = w.notna() & v.notna() & (w > 0)
    return float(np.average(v[ok], weights=w[ok])) if ok.any() else np.nan


def sampling_table(table: pd.DataFrame, cost: pd.DataFrame) -> pd.DataFrame:
    """One row per model: pooled accuracy, its sampled metrics at its k (empty for a greedy model),
    and its mean output tokens (empty, with the reason, where the backend counts none)."""
    rows = []
    for model, runs in table.groupby("model", sort=True):
        if (runs["condition"] == "audio").any():
            runs = runs[runs["condition"] == "audio"]
        row = {"model": model, "model_id": runs["model_id"].dropna().iloc[0] if runs["model_id"].notna().any() else "",
               "k": 1, "accuracy": _pooled(runs[runs["metric"] == "accuracy"], "n", "value")}
        for metric, sub in runs.groupby("metric"):
            m = SAMPLED.match(str(metric))
            if m:
                kind = next(g for g, v in m.groupdict().items() if v)
                row["k"] = int(m.group(kind))
                row[{"mean": "accuracy_k_mean", "pass": "pass_k", "majority": "majority_k"}[kind]] = \
                    _pooled(sub, "n", "value")
        c = cost[cost["model"] == model] if len(cost) else cost
        if len(c) and (c["condition"] == "audio").any():
            c = c[c["condition"] == "audio"]
        row["output_tokens_mean"] = _pooled(c, "n_outputs", "output_tokens_mean") if len(c) else np.nan
        row["cost_note"] = "; ".join(sorted({str(x) for x in c["cost_note"].dropna() if str(x)})) if len(c) else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def plot_sampling(t: pd.DataFrame):
    """Left: accuracy of one output, avg@k, majority@k and pass@k per model (a greedy model: its one
    point). Right: accuracy against mean output tokens, the thinking-budget view."""
    from lalmbench.report.plots.style import plt

    if t.empty:
        return placeholder("no model in results/all.tsv", title="Sampling")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    steps = ["accuracy", "accuracy_k_mean", "majority_k", "pass_k"]
    for r in t.itertuples():
        ys = [getattr(r, s) for s in steps]
        shown = [(i, y) for i, y in enumerate(ys) if not pd.isna(y)]
        label = r.model if r.k == 1 else f"{r.model} (k={r.k})"
        left.plot([i for i, _ in shown], [y for _, y in shown], marker="o", linestyle="-" if r.k > 1 else "none",
                  label=label)
    left.set_xticks(range(len(steps)), ["one output\n(greedy / sample 0)", "avg@k", "majority@k", "pass@k"])
    left.set_ylabel("accuracy")
    left.set_ylim(0, 1)
    left.legend(fontsize=7)
    left.set_title("Accuracy against k")
    tokens = t.dropna(subset=["output_tokens_mean", "accuracy"])
    for r in tokens.itertuples():
        right.scatter(r.output_tokens_mean, r.accuracy)
        right.annotate(r.model, (r.output_tokens_mean, r.accuracy), fontsize=7, xytext=(3, 3),
                       textcoords="offset points")
    right.set_xlabel("mean output tokens per output")
    right.set_ylabel("accuracy (one output)")
    right.set_ylim(0, 1)
    right.set_title("Accuracy against output tokens")
    missing = sorted(set(t["model"]) - set(tokens["model"]))
    if missing:
        right.text(0.01, 0.01, "no token counts: " + ", ".join(missing), transform=right.transAxes, fontsize=7)
    fig.tight_layout()
    return fig


def write_sampling(all_tsv: str, cost_tsv: str, *, tsv: str, png: str, svg: str) -> pd.DataFrame:
    """Rule plot_sampling: read all.tsv and cost.tsv, write the table and its figure."""
    from lalmbench.core import io
    from lalmbench.report.plots.style import save

    table = pd.read_csv(all_tsv, sep="\t", keep_default_na=False, na_values=[""])
    cost = pd.read_csv(cost_tsv, sep="\t", keep_default_na=False, na_values=[""])
    t = sampling_table(table, cost)
    io.write_tsv(tsv, t)
    save(plot_sampling(t), png, svg)
    return t
