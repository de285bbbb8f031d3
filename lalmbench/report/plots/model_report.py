"""A model report's table beside what was scored here: one panel per unit, one line per row."""
from __future__ import annotations

import numpy as np
import pandas as pd

from lalmbench.report.plots.style import plt

UNIT_LABEL = {"percent": "WER / accuracy (%)", "bleu": "BLEU", "score": "score (as printed)"}


def plot_report(df: pd.DataFrame):
    """Per row: the published number (diamond), ``value_official`` (circle) and ``value`` (square)
    with the row's interval; labels of ``outside`` rows are red, ``not run`` rows grey with their
    published number only."""
    units = [u for u in ("percent", "bleu", "score") if (df["unit"] == u).any()] or ["percent"]
    heights = [max(int((df["unit"] == u).sum()), 1) for u in units]
    fig, axes = plt.subplots(len(units), 1, figsize=(9, 0.32 * sum(heights) + 1.2 * len(units) + 0.6),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, unit in zip(axes[:, 0], units):
        rows = df[df["unit"] == unit].reset_index(drop=True)
        y = np.arange(len(rows))[::-1]
        if rows.empty:
            ax.text(0.5, 0.5, "no rows", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        num = {c: pd.to_numeric(rows[c], errors="coerce").to_numpy(dtype=float)
               for c in ("published", "value_official", "value", "interval_low", "interval_high")}
        ran = np.isfinite(num["interval_low"]) & np.isfinite(num["interval_high"])
        if ran.any():
            ax.hlines(y[ran], num["interval_low"][ran], num["interval_high"][ran], color="0.6", lw=3, alpha=0.6,
                      label="interval (see interval_of)")
        for col, marker, color, dy, label in (("value_official", "o", "tab:blue", 0.15, "value_official (report's rule)"),
                                              ("value", "s", "tab:orange", -0.15, "value (lalm-bench's rule)"),
                                              ("published", "D", "black", 0.0, "published")):
            ok = np.isfinite(num[col])
            if ok.any():
                ax.scatter(num[col][ok], y[ok] + dy, marker=marker, s=26, color=color, zorder=3, label=label)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{b} [{m}]" for b, m in zip(rows["benchmark"], rows["metric"])], fontsize=7)
        for tick, flag in zip(ax.get_yticklabels(), rows["flag"]):
            tick.set_color({"outside": "tab:red", "not run": "0.55"}.get(flag, "black"))
        ax.set_xlabel(UNIT_LABEL[unit], fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    axes[0, 0].set_title(f"{df['report'].iloc[0] if len(df) else ''}: published vs scored here "
                         "(red: outside the interval; grey: not run, reason in the table)", fontsize=9)
    handles, labels = {}, {}
    for ax in axes[:, 0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=4, frameon=False)
    fig.tight_layout()
    return fig
