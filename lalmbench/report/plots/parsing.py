"""What the parser made of the answers: confusion matrices (gold vs predicted option label) and the
parse-stage composition (which parser stage produced each answer, or why none did) per model.

A model whose answers mostly parse only at a late stage (normalised text, token-set) is scored by
the parser more than one that writes the label; an "unparsed" column in the confusion matrix is
answers counted wrong because no option could be read from them.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.scoring.parse import STATUSES
from lalmbench.report.plots.common import mcq_rows, per_model_in, placeholder, primary_prompt
from lalmbench.report.plots.style import plt

UNPARSED = "unparsed"
CONFUSION_COLS = ["model", "prompt", "condition", "gold_label", "pred_label", "count", "row_share"]
STAGE_COLS = ["model", "prompt", "condition", "parse_status", "count", "share"]


def _label_order(labels) -> list[str]:
    real = sorted({str(x) for x in labels if x is not None and str(x) != UNPARSED}, key=lambda s: (len(s), s))
    return real + ([UNPARSED] if UNPARSED in set(map(str, labels)) else [])


def confusion_table(decisions: pd.DataFrame, prompts: Sequence[str] | None = None,
                    condition: str = "audio") -> pd.DataFrame:
    """Counts of (gold label, predicted label) per model, pooled over tasks, in ``condition`` (a model
    without it: its first condition) and the model's primary prompt. Unparsed answers are
    ``pred_label == "unparsed"``; ``row_share`` is count / items with that gold label."""
    if decisions.empty or "gold_label" not in decisions.columns or "pred_label" not in decisions.columns:
        return pd.DataFrame(columns=CONFUSION_COLS)
    rows = []
    for model, cond, g in per_model_in(decisions, prompts, condition):
        gold = g["gold_label"].astype(str)
        pred = g["pred_label"].astype(object).where(g["pred_label"].notna(), UNPARSED).astype(str)
        counts = pd.crosstab(gold, pred)
        for gl in _label_order(counts.index):
            total = int(counts.loc[gl].sum())
            for pl in _label_order(list(counts.columns)):
                c = int(counts.loc[gl, pl]) if pl in counts.columns else 0
                rows.append({"model": model, "prompt": g["prompt"].iloc[0], "condition": cond, "gold_label": gl,
                             "pred_label": pl, "count": c, "row_share": c / total if total else np.nan})
    return pd.DataFrame(rows, columns=CONFUSION_COLS)


def parse_stage_table(decisions: pd.DataFrame, prompts: Sequence[str] | None = None) -> pd.DataFrame:
    """Count and share of each ``parse_status`` per model x condition (primary prompt, all tasks)."""
    if decisions.empty or "parse_status" not in decisions.columns:
        return pd.DataFrame(columns=STAGE_COLS)
    d = primary_prompt(mcq_rows(decisions), prompts)
    rows = []
    for (model, cond), g in d.groupby(["model", "condition"], sort=True):
        counts = g["parse_status"].astype(str).value_counts()
        statuses = list(STATUSES) + sorted(set(counts.index) - set(STATUSES))
        for s in statuses:
            c = int(counts.get(s, 0))
            rows.append({"model": model, "prompt": g["prompt"].iloc[0], "condition": cond, "parse_status": s,
                         "count": c, "share": c / len(g)})
    return pd.DataFrame(rows, columns=STAGE_COLS)


def plot_confusion(decisions: pd.DataFrame, prompts: Sequence[str] | None = None, condition: str = "audio"):
    t = confusion_table(decisions, prompts, condition)
    if t.empty:
        return placeholder("no multiple-choice decisions", title="Confusion")
    models = sorted(t["model"].unique())
    ncol = min(len(models), 3)
    nrow = -(-len(models) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.8 * nrow), squeeze=False)
    for ax in axes.flat[len(models):]:
        ax.axis("off")
    for ax, model in zip(axes.flat, models):
        sub = t[t["model"] == model]
        golds = list(dict.fromkeys(sub["gold_label"]))
        preds = list(dict.fromkeys(sub["pred_label"]))
        share = sub.pivot(index="gold_label", columns="pred_label", values="row_share").reindex(index=golds, columns=preds)
        count = sub.pivot(index="gold_label", columns="pred_label", values="count").reindex(index=golds, columns=preds)
        im = ax.imshow(share.to_numpy(dtype=float), cmap="Blues", vmin=0, vmax=1)
        for i in range(len(golds)):
            for j in range(len(preds)):
                v = share.iat[i, j]
                ax.text(j, i, f"{int(count.iat[i, j])}", ha="center", va="center", fontsize=7,
                        color="white" if v > 0.6 else "black")
        ax.set_xticks(range(len(preds)), preds, fontsize=8)
        ax.set_yticks(range(len(golds)), golds, fontsize=8)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(f"{model} [{sub['condition'].iloc[0]}]", fontsize=9)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="share of the gold row")
    return fig


def plot_parse_stages(decisions: pd.DataFrame, prompts: Sequence[str] | None = None):
    t = parse_stage_table(decisions, prompts)
    if t.empty:
        return placeholder("no multiple-choice decisions", title="Parse stages")
    runs = list(dict.fromkeys(zip(t["model"], t["condition"])))
    statuses = [s for s in dict.fromkeys(t["parse_status"]) if t.loc[t["parse_status"] == s, "count"].sum() > 0]
    cmap = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(max(5, 0.8 * len(runs) + 3), 3.8))
    bottom = np.zeros(len(runs))
    for i, s in enumerate(statuses):
        vals = np.array([t[(t["model"] == m) & (t["condition"] == c) & (t["parse_status"] == s)]["share"].sum()
                         for m, c in runs])
        # failures dark grey, non-answers (the model answered nothing) light grey, errors red
        color = {"unparseable": "0.3", "non-answer": "0.7", "error": "tab:red"}.get(s, cmap(i % 10))
        ax.bar(range(len(runs)), vals, bottom=bottom, label=s, color=color)
        bottom += vals
    ax.set_xticks(range(len(runs)), [f"{m}\n[{c}]" for m, c in runs], rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of answers")
    ax.legend(fontsize="x-small", bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title("parse stage that produced each answer", fontsize=10)
    fig.tight_layout()
    return fig
