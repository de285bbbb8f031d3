"""Published numbers beside the official rule and lalm-bench's rule on released outputs (one row each)."""
from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from lalmbench.report.plots.style import plt


def plot_published(df: pd.DataFrame):
    """Per ledger row: the published number (diamond), ``value_official`` with its Wilson interval
    and ``value`` with its interval, in percent; rows whose published number lies outside the
    official interval are labelled in red."""
    rows = df.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(len(rows), 1) + 1.4))
    y = np.arange(len(rows))[::-1]
    if rows.empty:
        ax.text(0.5, 0.5, "no ledger entry has results in all.tsv", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    for col, lo, hi, dy, color, label in (("value_official", "official_ci_low", "official_ci_high", 0.12, "tab:blue",
                                           "official rule on released outputs (Wilson 95%)"),
                                          ("value", "ci_low", "ci_high", -0.12, "tab:orange", "lalm-bench rule (95%)")):
        v = pd.to_numeric(rows[col], errors="coerce").to_numpy(dtype=float)
        ok = np.isfinite(v)
        if ok.any():
            err = np.vstack([v - pd.to_numeric(rows[lo], errors="coerce").to_numpy(dtype=float),
                             pd.to_numeric(rows[hi], errors="coerce").to_numpy(dtype=float) - v])
            ax.errorbar(v[ok], y[ok] + dy, xerr=np.nan_to_num(err[:, ok]), fmt="o", ms=4, capsize=2, color=color,
                        label=label)
    pub = pd.to_numeric(rows["published"], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(pub)
    if ok.any():
        ax.scatter(pub[ok], y[ok], marker="D", s=30, color="black", zorder=3, label="published")
    flags = [_text(f) for f in (rows["flags"] if "flags" in rows else [""] * len(rows))]
    marks = {k: f"[{n}]" for n, k in enumerate((k for k, f in enumerate(flags) if f), 1)}
    ax.set_yticks(y)
    ax.set_yticklabels([f"{m} ({e.split('@')[-1]})" + (f" {marks[k]}" if k in marks else "")
                        for k, (m, e) in enumerate(zip(rows["model"], rows["entry"]))], fontsize=8)
    for tick, flag in zip(ax.get_yticklabels(), rows["flag"]):
        if flag == "outside":
            tick.set_color("tab:red")
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%)")
    ax.set_title(f"{rows['benchmark'].iloc[0]}: published vs scored here (red: published outside the official interval)",
                 fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()  # below the figure: never over a row or the axis label
    fig.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, frameon=False)
    if marks:  # all.tsv's flags of the flagged rows, under the legend: the figure never drops them
        notes = "\n".join(textwrap.fill(f"{marks[k]} {flags[k]}", 140) for k in marks)
        fig.text(0.02, -0.08, notes, fontsize=6, va="top", ha="left")
    return fig


def _text(v) -> str:
    return "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
