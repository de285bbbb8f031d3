"""Accuracy per model per task with Wilson 95% intervals and each task's chance level."""
from __future__ import annotations

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import error_bars
from lalmbench.report.plots.style import plt, save


def accuracy_table(df: pd.DataFrame) -> pd.DataFrame:
    """The rows the figure draws (accuracy only), one per condition x task x model."""
    acc = df[df["metric"] == "accuracy"]
    return acc[["condition", "task", "model", "prompt", "value", "ci_low", "ci_high", "chance", "n"]]


def floor_table(df: pd.DataFrame, floor_condition: str = "no-audio") -> pd.DataFrame:
    """The text-only floor per task: the best accuracy any model reaches with no audio at all
    (``floor_condition`` runs, any prompt), and which model/prompt reached it."""
    acc = df[(df["metric"] == "accuracy") & (df["condition"] == floor_condition)]
    cols = ["task", "floor", "floor_model", "floor_prompt"]
    if acc.empty:
        return pd.DataFrame(columns=cols)
    best = acc.sort_values(["task", "value", "model", "prompt"], ascending=[True, False, True, True],
                           kind="mergesort").groupby("task", sort=True).first().reset_index()
    return best.rename(columns={"value": "floor", "model": "floor_model", "prompt": "floor_prompt"})[cols]


def plot_accuracy(df: pd.DataFrame):
    acc = accuracy_table(df)
    floor = floor_table(df).set_index("task")["floor"]
    conditions = sorted(acc["condition"].unique())
    tasks = sorted(acc["task"].unique())
    models = sorted(acc["model"].unique())
    fig, axes = plt.subplots(len(conditions), 1, figsize=(max(6, 1.3 * len(tasks) * max(1, len(models)) / 2 + 2),
                                                           3.2 * len(conditions)), squeeze=False, sharey=True)
    colors = plt.get_cmap("tab10")
    for ax, cond in zip(axes[:, 0], conditions):
        sub = acc[acc["condition"] == cond]
        present = sorted(sub["model"].unique())
        width = 0.8 / max(len(present), 1)
        for j, model in enumerate(present):
            m = sub[sub["model"] == model].groupby("task").first().reindex(tasks)  # first prompt if several
            x = np.arange(len(tasks)) + (j - (len(present) - 1) / 2) * width
            ok = m["value"].notna().to_numpy()
            if not ok.any():
                continue
            yerr = error_bars(m)
            ax.bar(x[ok], m["value"].to_numpy()[ok], width, yerr=yerr[:, ok], capsize=2, label=model,
                   color=colors(models.index(model) % 10), alpha=0.85)  # one colour per model in every panel
        chance = sub.groupby("task")["chance"].first().reindex(tasks).to_numpy()
        for i, c in enumerate(chance):
            if np.isfinite(c):
                ax.hlines(c, i - 0.45, i + 0.45, colors="0.3", linestyles="--", linewidth=1,
                          label="chance" if i == 0 else None)
        if cond != "no-audio":
            fl = floor.reindex(tasks).to_numpy(dtype=float)
            first = True
            for i, f in enumerate(fl):
                if np.isfinite(f):
                    ax.hlines(f, i - 0.45, i + 0.45, colors="tab:red", linestyles=":", linewidth=1.5,
                              label="no-audio floor (best)" if first else None)
                    first = False
        ax.set_title(f"condition: {cond}")
        ax.set_xticks(np.arange(len(tasks)), tasks, rotation=25, ha="right")
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.legend(fontsize="small", ncols=min(len(models) + 1, 4), loc="upper right")
    fig.tight_layout()
    return fig


def plot_accuracy_file(table: str, *, png: str, svg: str) -> None:
    df = pd.read_csv(table, sep="\t")
    save(plot_accuracy(df), png, svg)
