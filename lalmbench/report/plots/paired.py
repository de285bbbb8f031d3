"""Paired comparison matrix: which model beats which on the same items, with significance.

For every condition, each pair of models is compared on the items both answered (all tasks
pooled, each model's primary prompt) by an exact McNemar test; p-values are Holm-adjusted over
the pairs of that condition (``lalmbench.core.stats.paired_comparisons``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import mcq_rows, placeholder, primary_prompt
from lalmbench.report.plots.style import plt
from lalmbench.core.stats import paired_comparisons

COLS = ["condition", "system_a", "system_b", "n", "a_only", "b_only", "acc_a", "acc_b", "diff", "p_value",
        "p_holm", "significant", "min_detectable_diff"]


def paired_table(decisions: pd.DataFrame, prompts: Sequence[str] | None = None, alpha: float = 0.05) -> pd.DataFrame:
    """All model pairs per condition (conditions with at least two models)."""
    if decisions.empty:
        return pd.DataFrame(columns=COLS)
    d = primary_prompt(mcq_rows(decisions), prompts)
    d = d.assign(item=d["dataset"].astype(str) + "/" + d["task"].astype(str) + "/" + d["id"].astype(str))
    out = []
    for cond, g in d.groupby("condition", sort=True):
        wide = g.pivot(index="item", columns="model", values="correct")
        if wide.shape[1] < 2:
            continue
        wide = wide[sorted(wide.columns)].astype("boolean")
        t = paired_comparisons(wide.astype(object).where(wide.notna(), None), alpha=alpha)
        t.insert(0, "condition", cond)
        out.append(t)
    if not out:
        return pd.DataFrame(columns=COLS)
    return pd.concat(out, ignore_index=True)[COLS]


def _stars(p: float) -> str:
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def plot_paired(decisions: pd.DataFrame, prompts: Sequence[str] | None = None, alpha: float = 0.05):
    t = paired_table(decisions, prompts, alpha)
    if t.empty:
        return placeholder("fewer than two models share a condition: nothing to compare", title="Paired comparisons")
    conds = list(dict.fromkeys(t["condition"]))
    fig, axes = plt.subplots(1, len(conds), figsize=(4.6 * len(conds), 4.0), squeeze=False)
    for ax, cond in zip(axes[0], conds):
        sub = t[t["condition"] == cond]
        models = sorted(set(sub["system_a"]) | set(sub["system_b"]))
        k = len(models)
        diff = np.full((k, k), np.nan)
        text = [["" for _ in range(k)] for _ in range(k)]
        for r in sub.itertuples():
            i, j = models.index(r.system_a), models.index(r.system_b)
            diff[i, j], diff[j, i] = r.diff, -r.diff
            star = _stars(r.p_holm)
            text[i][j] = f"{r.diff:+.2f}{star}\nn={r.n}"
            text[j][i] = f"{-r.diff:+.2f}{star}\nn={r.n}"
        im = ax.imshow(diff, cmap="RdBu", vmin=-0.5, vmax=0.5)
        for i in range(k):
            for j in range(k):
                if i != j:
                    ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7)
        ax.set_xticks(range(k), models, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(k), models, fontsize=8)
        ax.set_title(f"row minus column accuracy [{cond}]", fontsize=9)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="accuracy difference (row - column)")
    return fig
