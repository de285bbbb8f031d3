"""Shared figure setup: headless backend and reproducible SVG output."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.hashsalt"] = "lalm-bench"  # stable element ids -> byte-identical SVGs across runs

SAVE_META = {"png": {"Software": None}, "svg": {"Date": None}}


def save(fig, png: str, svg: str) -> None:
    from lalmbench.core.io import atomic_path

    for path, fmt in ((png, "png"), (svg, "svg")):
        with atomic_path(path, suffix=f".{fmt}") as tmp:
            fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=SAVE_META[fmt])
    plt.close(fig)
