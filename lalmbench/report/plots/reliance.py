"""Audio reliance: accuracy with the item's audio vs without it (no-audio, silence, noise, shuffled).

A model that listens loses accuracy when its audio is withheld; one that answers from the text
alone does not. Each non-audio condition is compared with ``audio`` on the same items by an exact
McNemar test (``lalmbench.core.stats.mcnemar_exact``), so the drop comes with a p-value.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import mcq_rows, error_bars, placeholder, primary_prompt, proportion
from lalmbench.report.plots.style import plt
from lalmbench.core.stats import mcnemar_exact

ALL_TASKS = "(all tasks)"
CONDITION_ORDER = ("audio", "no-audio", "silence", "noise", "shuffled")


def _cond_rank(c: str) -> int:
    return CONDITION_ORDER.index(c) if c in CONDITION_ORDER else len(CONDITION_ORDER)


def reliance_table(decisions: pd.DataFrame, prompts: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per model x task x condition (plus a pooled ``(all tasks)`` task): accuracy with Wilson
    interval, and for non-audio conditions the drop from ``audio`` on the paired items
    (``delta`` = acc(condition) - acc(audio) over items present in both) with its McNemar p-value."""
    cols = ["model", "prompt", "task", "condition", "n", "k", "value", "ci_low", "ci_high", "n_paired",
            "delta_vs_audio", "p_mcnemar"]
    d = primary_prompt(mcq_rows(decisions), prompts)
    if d.empty:
        return pd.DataFrame(columns=cols)
    d = d.assign(item=d["dataset"].astype(str) + "/" + d["task"].astype(str) + "/" + d["id"].astype(str))
    rows = []
    for model, gm in d.groupby("model", sort=True):
        groups = [(t, g) for t, g in gm.groupby("task", sort=True)]
        if len(groups) > 1:
            groups.append((ALL_TASKS, gm))
        for task, g in groups:
            by_cond = {c: x.set_index("item")["correct"].astype(bool) for c, x in g.groupby("condition")}
            audio = by_cond.get("audio")
            for cond in sorted(by_cond, key=lambda c: (_cond_rank(c), c)):
                s = by_cond[cond]
                row = {"model": model, "prompt": g["prompt"].iloc[0], "task": task, "condition": cond,
                       **proportion(int(s.sum()), len(s)), "n_paired": math.nan, "delta_vs_audio": math.nan,
                       "p_mcnemar": math.nan}
                if audio is not None and cond != "audio":
                    common = audio.index.intersection(s.index)
                    if len(common):
                        res = mcnemar_exact(s.loc[common].to_numpy(), audio.loc[common].to_numpy())
                        row.update(n_paired=int(len(common)), delta_vs_audio=res["diff"], p_mcnemar=res["p_value"])
                rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def plot_reliance(decisions: pd.DataFrame, prompts: Sequence[str] | None = None):
    t = reliance_table(decisions, prompts)
    if t.empty:
        return placeholder("no scored runs", title="Audio reliance")
    models = sorted(t["model"].unique())
    conds = sorted(t["condition"].unique(), key=lambda c: (_cond_rank(c), c))
    tasks = list(dict.fromkeys(sorted(x for x in t["task"].unique() if x != ALL_TASKS)))
    if (t["task"] == ALL_TASKS).any():
        tasks.append(ALL_TASKS)
    cmap = plt.get_cmap("tab10")
    width = 0.8 / max(len(conds), 1)
    fig, axes = plt.subplots(len(models), 1, figsize=(max(6, 0.9 * len(tasks) * max(len(conds), 2) / 2 + 2),
                                                      2.9 * len(models)), squeeze=False, sharey=True)
    for ax, model in zip(axes[:, 0], models):
        sub = t[t["model"] == model]
        for j, cond in enumerate(conds):
            m = sub[sub["condition"] == cond].set_index("task").reindex(tasks)
            ok = m["value"].notna().to_numpy()
            if not ok.any():
                continue
            x = np.arange(len(tasks)) + (j - (len(conds) - 1) / 2) * width
            ax.bar(x[ok], m["value"].to_numpy()[ok], width, yerr=error_bars(m)[:, ok], capsize=2,
                   color=cmap(CONDITION_ORDER.index(cond) if cond in CONDITION_ORDER else 9), alpha=0.85,
                   label=cond, hatch=None if cond == "audio" else "//", edgecolor="white", linewidth=0.3)
            for xi, (_, r) in zip(x[ok], m[ok].iterrows()):
                if cond != "audio" and np.isfinite(r["p_mcnemar"]) and r["p_mcnemar"] < 0.05:
                    ax.text(xi, min(r["ci_high"] + 0.02, 0.97), "*", ha="center", fontsize=10)
        ax.set_title(f"{model} (prompt {sub['prompt'].iloc[0]})", fontsize=10)
        ax.set_xticks(np.arange(len(tasks)), tasks, rotation=25, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.legend(fontsize="small", ncols=min(len(conds), 5), loc="upper right")
    fig.tight_layout()
    return fig
