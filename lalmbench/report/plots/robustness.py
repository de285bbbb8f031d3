"""Robustness: how much of an accuracy is option order, prompt wording or answer position.

Three panels, each from its own table:

- circular vs plain accuracy (CircularEval sweep, ``results/sweeps/circular.tsv``; absent unless
  ``sweeps.circular`` is configured): an item counts for circular accuracy only if every cyclic
  shift of its options is answered correctly;
- prompt-variant spread (from ``results/all.tsv``): min/mean/max accuracy over the prompt
  templates a model ran, per task and condition (``lalmbench.checks.sweeps.prompt_spread``);
- answer-position bias (from the decisions): share of predictions at each option position vs the
  share of gold answers there, with a chi-square test (``lalmbench.checks.sweeps.position_bias_test``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.report.plots.common import error_bars, model_colors, per_model_in, proportion
from lalmbench.report.plots.style import plt
from lalmbench.checks.sweeps import position_bias_test, prompt_spread

CIRCULAR_COLS = ["model", "dataset", "task", "condition", "prompt", "plain_accuracy", "circular_accuracy",
                 "ci_low", "ci_high", "n", "chance"]
SPREAD_COLS = ["model", "dataset", "task", "condition", "metric", "n_prompts", "min", "min_prompt", "max",
               "max_prompt", "range", "mean", "std"]
POSITION_COLS = ["model", "prompt", "condition", "position", "label", "n_gold", "n_predicted", "gold_share",
                 "pred_share", "n", "k", "value", "ci_low", "ci_high", "position_chi2", "position_p"]


def circular_table(circular: pd.DataFrame | None) -> pd.DataFrame:
    """Circular accuracy next to the plain accuracy over the same shifted predictions (one row per run)."""
    if circular is None or circular.empty or "metric" not in circular.columns:
        return pd.DataFrame(columns=CIRCULAR_COLS)
    keys = ["model", "dataset", "task", "condition", "prompt"]
    circ = circular[circular["metric"] == "circular_accuracy"].set_index(keys)
    plain = circular[circular["metric"] == "circular_plain_accuracy"].set_index(keys)["value"]
    out = pd.DataFrame({"plain_accuracy": plain.reindex(circ.index), "circular_accuracy": circ["value"],
                        "ci_low": circ["ci_low"], "ci_high": circ["ci_high"], "n": circ["n"],
                        "chance": circ["chance"]}).reset_index()
    return out[CIRCULAR_COLS].sort_values(keys, kind="mergesort").reset_index(drop=True)


def spread_table(all_tsv: pd.DataFrame) -> pd.DataFrame:
    """Accuracy spread across prompt templates, only for groups that ran at least two prompts."""
    acc = all_tsv[all_tsv["metric"] == "accuracy"]
    if acc.empty:
        return pd.DataFrame(columns=SPREAD_COLS)
    t = prompt_spread(acc)
    return t[t["n_prompts"] >= 2].reset_index(drop=True)[SPREAD_COLS]


def position_table(decisions: pd.DataFrame, prompts: Sequence[str] | None = None,
                   condition: str = "audio") -> pd.DataFrame:
    """Per model and option position: how often gold sits there, how often the model picks it, and the
    accuracy on items whose gold is there. Uses ``condition`` (default audio) and each model's primary
    prompt; models without that condition use their first condition. Unparsed answers are excluded
    from ``n_predicted`` (their count is the row ``position == -1``)."""
    need = {"gold_pos", "pred_pos", "correct"}
    if decisions.empty or not need <= set(decisions.columns):
        return pd.DataFrame(columns=POSITION_COLS)
    rows = []
    for model, cond, g in per_model_in(decisions, prompts, condition):
        max_n = int(g["n_options"].max()) if "n_options" in g else int(max(g["gold_pos"].max(), g["pred_pos"].max()) + 1)
        gold = np.bincount(g["gold_pos"].astype(int), minlength=max_n)
        parsed = g["pred_pos"] >= 0
        pred = np.bincount(g.loc[parsed, "pred_pos"].astype(int), minlength=max_n)
        test = position_bias_test(pred, gold)
        for pos in list(range(max_n)) + [-1]:
            at = g[g["gold_pos"] == pos]
            rows.append({"model": model, "prompt": g["prompt"].iloc[0], "condition": cond, "position": pos,
                         "label": chr(ord("A") + pos) if pos >= 0 else "unparsed",
                         "n_gold": int(gold[pos]) if pos >= 0 else 0,
                         "n_predicted": int(pred[pos]) if pos >= 0 else int((~parsed).sum()),
                         "gold_share": gold[pos] / gold.sum() if pos >= 0 else np.nan,
                         "pred_share": pred[pos] / pred.sum() if pos >= 0 and pred.sum() else np.nan,
                         **(proportion(int(at["correct"].sum()), len(at)) if pos >= 0 else
                            {"n": 0, "k": 0, "value": np.nan, "ci_low": np.nan, "ci_high": np.nan}),
                         **test})
    return pd.DataFrame(rows, columns=POSITION_COLS)


def plot_robustness(all_tsv: pd.DataFrame, decisions: pd.DataFrame, circular: pd.DataFrame | None = None,
                    prompts: Sequence[str] | None = None):
    circ = circular_table(circular)
    spread = spread_table(all_tsv)
    pos = position_table(decisions, prompts)
    models = sorted(set(all_tsv["model"]) | set(decisions.get("model", [])))
    colors = model_colors(models)
    n_circ = max(len(circ), 4)  # the CircularEval panel grows with its bars so labels stay readable
    fig, axes = plt.subplots(1, 3, figsize=(10 + 0.32 * n_circ, 4.8),
                             gridspec_kw={"width_ratios": [0.32 * n_circ, 5, 5]})

    ax = axes[0]
    if circ.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no CircularEval sweep\n(configure sweeps.circular and run `snakemake sweeps`)",
                ha="center", va="center", fontsize=9)
    else:
        labels = [f"{r.model} · {r.task}/{r.condition}" for r in circ.itertuples()]
        x = np.arange(len(circ))
        ax.bar(x - 0.2, circ["plain_accuracy"], 0.4, label="plain (all shifts)", color="0.65")
        ax.bar(x + 0.2, circ["circular_accuracy"], 0.4, yerr=error_bars(circ.rename(columns={"circular_accuracy": "value"})),
               capsize=2, label="circular (every shift right)", color="tab:blue")
        ax.set_xticks(x, labels, rotation=90, fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.legend(fontsize="small")
    ax.set_title("option order (CircularEval)", fontsize=10)

    ax = axes[1]
    if spread.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "one prompt template per run:\nno prompt spread to show", ha="center", va="center",
                fontsize=9)
    else:
        s = spread.sort_values(["model", "task", "condition"], kind="mergesort").reset_index(drop=True)
        x = np.arange(len(s))
        for i, r in s.iterrows():
            ax.vlines(i, r["min"], r["max"], color=colors.get(r["model"], "k"), linewidth=3, alpha=0.8)
            ax.plot(i, r["mean"], "o", color="k", markersize=3)
        ax.set_xticks(x, [f"{r.model}\n{r.task}/{r.condition}" for r in s.itertuples()], rotation=30, ha="right",
                      fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy: min-max over prompts (dot: mean)")
    ax.set_title("prompt-variant spread", fontsize=10)

    ax = axes[2]
    p = pos[pos["position"] >= 0]
    if p.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no multiple-choice decisions", ha="center", va="center", fontsize=9)
    else:
        pmodels = sorted(p["model"].unique())
        npos = int(p["position"].max()) + 1
        width = 0.8 / (len(pmodels) + 1)
        gold = p.groupby("position")["gold_share"].mean().reindex(range(npos))
        ax.bar(np.arange(npos) - 0.4 + width / 2, gold, width, color="0.8", label="gold share (mean over models)")
        for j, m in enumerate(pmodels):
            r = p[p["model"] == m].set_index("position").reindex(range(npos))
            pval = r["position_p"].iloc[0]
            ax.bar(np.arange(npos) - 0.4 + width * (j + 1.5), r["pred_share"], width, color=colors.get(m),
                   label=f"{m} predicted (chi2 p={pval:.2g})")
        ax.set_xticks(np.arange(npos), [chr(ord("A") + i) for i in range(npos)])
        ax.set_xlabel("option position")
        ax.set_ylabel("share of answers")
        ax.legend(fontsize="x-small")
    ax.set_title("answer-position bias", fontsize=10)
    fig.tight_layout()
    return fig
