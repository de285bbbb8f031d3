"""Sampled models beside greedy ones: accuracy against k, and accuracy against mean output tokens.

Drawn from results/all.tsv (``accuracy``; a sampled run's ``accuracy@k_mean``, ``pass@k`` and
``majority@k``) and results/tables/cost.tsv (mean output tokens), each model's runs pooled with
their item counts as weights (its ``audio`` condition where it has one). ``accuracy`` is one output
per item: greedy for a greedy entry, sample 0 for a sampled one. The table the figure draws is
written beside it (results/tables/sampling.tsv).
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import placeholder

SAMPLED = re.compile(r"^(?:accuracy@(?P<mean>\d+)_mean|pass@(?P<pass>\d+)|majority@(?P<majority>\d+))$")
CURVE_COLUMNS = ["model", "j", "pass_j", "majority_j", "n"]
COLUMNS = ["model", "model_id", "k", "accuracy", "accuracy_k_mean", "pass_k", "majority_k", "output_tokens_mean",
           "cost_note"]


def _pooled(rows: pd.DataFrame, weight: str, value: str) -> float:
    w = pd.to_numeric(rows[weight], errors="coerce")
    v = pd.to_numeric(rows[value], errors="coerce")
    ok = w.notna() & v.notna() & (w > 0)
    return float(np.average(v[ok], weights=w[ok])) if ok.any() else np.nan


def _audio_first(runs: pd.DataFrame) -> pd.DataFrame:
    """A model's runs in the ``audio`` condition where it has any (a model is drawn by what it hears),
    else all of them (a text-only model's no-audio runs)."""
    heard = runs["condition"] == "audio"
    return runs[heard] if heard.any() else runs


def sampling_table(table: pd.DataFrame, cost: pd.DataFrame) -> pd.DataFrame:
    """One row per model: pooled accuracy, its sampled metrics at its k (empty for a greedy model),
    and its mean output tokens (empty, with the reason, where the backend counts none)."""
    rows = []
    for model, runs in table.groupby("model", sort=True):
        runs = _audio_first(runs)
        row = {"model": model, "model_id": runs["model_id"].dropna().iloc[0] if runs["model_id"].notna().any() else "",
               "k": 1, "accuracy": _pooled(runs[runs["metric"] == "accuracy"], "n", "value")}
        for metric, sub in runs.groupby("metric"):
            m = SAMPLED.match(str(metric))
            if m:
                kind = next(g for g, v in m.groupdict().items() if v)
                row["k"] = int(m.group(kind))
                row[{"mean": "accuracy_k_mean", "pass": "pass_k", "majority": "majority_k"}[kind]] = \
                    _pooled(sub, "n", "value")
        c = _audio_first(cost[cost["model"] == model]) if len(cost) else cost
        row["output_tokens_mean"] = _pooled(c, "n_outputs", "output_tokens_mean") if len(c) else np.nan
        row["cost_note"] = "; ".join(sorted({str(x) for x in c["cost_note"].dropna() if str(x)})) if len(c) else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def sampling_curves(metrics: list[dict]) -> pd.DataFrame:
    """Accuracy against j = 1..k per sampled model: pass@j (unbiased, from all k samples) and majority@j
    (the vote of the first j samples), each run's ``sampling_curve`` from its metrics.json pooled over
    the model's runs with their item counts as weights (its ``audio`` condition where it has one)."""
    rows = [{"model": m["model"], "condition": m.get("condition"), "j": point["k"], "n": m.get("n") or 0,
             "pass": point["pass"], "majority": point["majority"]}
            for m in metrics for point in m.get("sampling_curve") or []]
    if not rows:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    df = pd.DataFrame(rows)
    out = []
    for model, runs in df.groupby("model", sort=True):
        runs = _audio_first(runs)
        for j, at_j in runs.groupby("j", sort=True):
            out.append({"model": model, "j": int(j), "pass_j": _pooled(at_j, "n", "pass"),
                        "majority_j": _pooled(at_j, "n", "majority"), "n": int(at_j["n"].sum())})
    return pd.DataFrame(out, columns=CURVE_COLUMNS)


def plot_sampling(t: pd.DataFrame, curves: pd.DataFrame | None = None):
    """Left: accuracy against k: per sampled model pass@j (solid) and majority@j (dashed) for j = 1..k
    and avg@k (dotted, the same at every j); a greedy model is its one output at k = 1. Right: accuracy
    against mean output tokens, the thinking-budget view (avg@k for a sampled model). One colour per model."""
    from lalmbench.report.plots.style import plt

    if t.empty:
        return placeholder("no model in results/all.tsv", title="Sampling")
    curves = curves if curves is not None else pd.DataFrame(columns=CURVE_COLUMNS)
    colours = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(t["model"])}
    kmax = max(int(t["k"].max()), 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4))
    greedy = t[t["k"] == 1].reset_index(drop=True)
    for i, r in greedy.iterrows():
        # greedy points side by side at k = 1, so that equal accuracies stay visible
        x = 1 + 0.12 * (i - (len(greedy) - 1) / 2) / max(len(greedy), 1) * min(kmax - 1, 3)
        left.plot([x], [r["accuracy"]], marker="o", linestyle="none", color=colours[r["model"]], label=r["model"])
    for r in t[t["k"] > 1].itertuples():
        c = curves[curves["model"] == r.model]
        colour = colours[r.model]
        if len(c):
            left.plot(c["j"], c["pass_j"], marker="o", color=colour, label=f"{r.model}: pass@j")
            left.plot(c["j"], c["majority_j"], marker="s", linestyle="--", color=colour, label=f"{r.model}: majority@j")
        else:
            left.plot([r.k], [r.pass_k], marker="o", color=colour, label=f"{r.model}: pass@{r.k}")
            left.plot([r.k], [r.majority_k], marker="s", color=colour, label=f"{r.model}: majority@{r.k}")
        left.hlines(r.accuracy_k_mean, 1, r.k, colors=[colour], linestyles=":", label=f"{r.model}: avg@{r.k}")
    left.set_xticks(range(1, kmax + 1))
    left.set_xlabel("k (samples per item; a greedy model: one output)")
    left.set_ylabel("accuracy")
    left.set_ylim(0, 1.02)
    left.set_title("Accuracy against k")
    left.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    y = t["accuracy_k_mean"].where(t["k"] > 1, t["accuracy"])
    tokens = t.assign(y=y).dropna(subset=["output_tokens_mean", "y"])
    for r in tokens.itertuples():
        right.scatter(r.output_tokens_mean, r.y, color=colours[r.model])
        right.annotate(r.model if r.k == 1 else f"{r.model} (avg@{r.k})", (r.output_tokens_mean, r.y), fontsize=7,
                       xytext=(3, 3), textcoords="offset points")
    right.set_xlabel("mean output tokens per output")
    right.set_ylabel("accuracy (avg@k where sampled)")
    right.set_ylim(0, 1.02)
    right.set_title("Accuracy against output tokens")
    missing = sorted(set(t["model"]) - set(tokens["model"]))
    if missing:
        right.text(0.01, 0.01, "no token counts: " + ", ".join(missing), transform=right.transAxes, fontsize=7)
    fig.tight_layout()
    return fig


def write_sampling(all_tsv: str, cost_tsv: str, *, tsv: str, png: str, svg: str, metrics: Sequence[str] = (),
                   curve_tsv: str | None = None) -> pd.DataFrame:
    """Rule plot_sampling: read all.tsv, cost.tsv and the runs' metrics.json (their sampling curves),
    write the tables and the figure."""
    from lalmbench.core import io
    from lalmbench.report.plots.style import save

    table = pd.read_csv(all_tsv, sep="\t", keep_default_na=False, na_values=[""])
    cost = pd.read_csv(cost_tsv, sep="\t", keep_default_na=False, na_values=[""])
    t = sampling_table(table, cost)
    curves = sampling_curves([io.read_json(p) for p in metrics])
    io.write_tsv(tsv, t)
    if curve_tsv:
        io.write_tsv(curve_tsv, curves)
    save(plot_sampling(t, curves), png, svg)
    return t
