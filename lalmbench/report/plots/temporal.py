"""Temporal breakdowns: accuracy binned by item meta (onset gap, overlap, duration ratio) and, when
the scorer wrote per-item ``iou`` (grounding), the IoU distribution per model.

The bins are fixed (not quantiles) so that the same bin means the same thing across models and
runs; items without the meta key are not in that feature's rows (the tasks pooled are listed).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import error_bars, mcq_rows, model_colors, placeholder, primary_prompt, proportion
from lalmbench.report.plots.style import plt

INF = math.inf
DEFAULT_BINS: dict[str, list[float] | None] = {
    "gap_s": [0.0, 0.25, 0.5, 1.0, 2.0, INF],           # seconds between the two events' onsets/offsets
    "duration_ratio": [1.0, 1.25, 1.5, 2.0, 3.0, INF],  # longer / shorter event duration
    "overlap": None,                                    # categorical: False / True
}
COLS = ["model", "prompt", "condition", "feature", "bin", "bin_low", "n", "k", "value", "ci_low", "ci_high", "tasks"]
IOU_COLS = ["model", "prompt", "condition", "task", "n", "mean", "median", "q25", "q75", "share_iou_ge_0.5"]
LINESTYLE = {"audio": "-", "no-audio": ":", "silence": "--", "noise": "-.", "shuffled": (0, (1, 3))}


def _bin_label(lo: float, hi: float) -> str:
    return f"[{lo:g}, {hi:g})" if math.isfinite(hi) else f">= {lo:g}"


def temporal_table(decisions: pd.DataFrame, bins: Mapping[str, Sequence[float] | None] = DEFAULT_BINS,
                   prompts: Sequence[str] | None = None) -> pd.DataFrame:
    """Accuracy (Wilson 95%) per model x condition x feature bin over all items carrying the feature,
    each model's primary prompt. Numeric features use half-open bins ``[lo, hi)``; values below the
    first edge are dropped from that feature (and counted nowhere else)."""
    d = primary_prompt(mcq_rows(decisions), prompts)
    rows = []
    for feature, edges in bins.items():
        col = f"meta_{feature}"
        if col not in d.columns:
            continue
        f = d[d[col].notna()]
        if f.empty:
            continue
        if edges is None:
            key = f[col].astype(str)
            labels = sorted(key.unique())
            lows = [math.nan] * len(labels)
        else:
            vals = pd.to_numeric(f[col], errors="coerce")
            idx = np.searchsorted(np.asarray(edges, dtype=float), vals.to_numpy(dtype=float), side="right") - 1
            ok = (idx >= 0) & (idx < len(edges) - 1) & vals.notna().to_numpy()
            f, idx = f[ok], idx[ok]
            key = pd.Series([_bin_label(edges[i], edges[i + 1]) for i in idx], index=f.index, dtype=object)
            labels = [_bin_label(edges[i], edges[i + 1]) for i in range(len(edges) - 1)]
            lows = list(edges[:-1])
        for (model, cond), g in f.groupby(["model", "condition"], sort=True):
            gk = key.loc[g.index]
            for lab, lo in zip(labels, lows):
                x = g[gk == lab]
                if x.empty:
                    continue
                rows.append({"model": model, "prompt": g["prompt"].iloc[0], "condition": cond, "feature": feature,
                             "bin": lab, "bin_low": lo, **proportion(int(x["correct"].sum()), len(x)),
                             "tasks": ",".join(sorted(x["task"].unique()))})
    return pd.DataFrame(rows, columns=COLS)


def iou_table(decisions: pd.DataFrame, prompts: Sequence[str] | None = None) -> pd.DataFrame:
    """Distribution of per-item IoU (grounding) per model x condition x task, where decisions have ``iou``."""
    if "iou" not in decisions.columns:
        return pd.DataFrame(columns=IOU_COLS)
    d = primary_prompt(decisions[decisions["iou"].notna()], prompts)
    rows = []
    for (model, cond, task), g in d.groupby(["model", "condition", "task"], sort=True):
        v = g["iou"].astype(float)
        rows.append({"model": model, "prompt": g["prompt"].iloc[0], "condition": cond, "task": task,
                     "n": int(len(v)), "mean": float(v.mean()), "median": float(v.median()),
                     "q25": float(v.quantile(0.25)), "q75": float(v.quantile(0.75)),
                     "share_iou_ge_0.5": float((v >= 0.5).mean())})
    return pd.DataFrame(rows, columns=IOU_COLS)


def plot_temporal(decisions: pd.DataFrame, bins: Mapping[str, Sequence[float] | None] = DEFAULT_BINS,
                  prompts: Sequence[str] | None = None):
    t = temporal_table(decisions, bins, prompts)
    has_iou = "iou" in decisions.columns and decisions["iou"].notna().any()
    features = [f for f in bins if f in set(t["feature"])]
    if not features and not has_iou:
        return placeholder("no items carry temporal meta (gap_s, overlap, duration_ratio) or IoU:\n"
                           "add an ORDER/grounding task on a dataset with strong annotations", title="Temporal")
    n = len(features) + (1 if has_iou else 0)
    fig, axes = plt.subplots(1, n, figsize=(4.6 * n, 3.8), squeeze=False)
    colors = model_colors(sorted(decisions["model"].unique()))
    for ax, feature in zip(axes[0], features):
        sub = t[t["feature"] == feature]
        labels = list(dict.fromkeys(sub.sort_values(["bin_low", "bin"], kind="mergesort")["bin"]))
        for (model, cond), g in sub.groupby(["model", "condition"], sort=True):
            g = g.set_index("bin").reindex(labels)
            x = np.arange(len(labels))
            ok = g["value"].notna().to_numpy()
            ax.errorbar(x[ok], g["value"][ok], yerr=error_bars(g)[:, ok],
                        color=colors.get(model), linestyle=LINESTYLE.get(cond, "-"), marker="o", markersize=3,
                        capsize=2, label=f"{model} [{cond}]")
            for xi, (_, r) in zip(x[ok], g[ok].iterrows()):
                ax.annotate(f"n={r['n']}", (xi, 0.02), fontsize=6, ha="center", color="0.4")
        ax.set_xticks(np.arange(len(labels)), labels, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(feature)
        ax.set_ylabel("accuracy")
        ax.set_title(f"by {feature} ({', '.join(sorted(set(','.join(sub['tasks']).split(','))))})", fontsize=9)
        ax.legend(fontsize="x-small")
    if has_iou:
        ax = axes[0, -1]
        d = primary_prompt(decisions[decisions["iou"].notna()], prompts)
        groups = [(f"{m}\n[{c}]", g["iou"].astype(float).to_numpy()) for (m, c), g in
                  d.groupby(["model", "condition"], sort=True)]
        ax.boxplot([v for _, v in groups], tick_labels=[k for k, _ in groups])
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("IoU (predicted vs gold span)")
        ax.set_title("grounding IoU", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    return fig
