"""Shared pieces of the figure families: the combined decisions table, the prompt each figure
shows, proportions with Wilson intervals and a placeholder figure for absent inputs.

The combined decisions table (``results/tables/decisions.parquet``) is every run's
``decisions.parquet`` stacked with the run's keys (model, dataset, task, condition, prompt) in
front, so figures over items (reliance, temporal bins, confusion, paired tests) read one file.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from lalmbench.core.io import InputError
from lalmbench.core.stats import wilson_interval

RUN_KEYS = ["model", "dataset", "task", "condition", "prompt"]
# conditions that withhold the item's audio: their accuracy is the "floor" a model reaches without listening
FLOOR_CONDITIONS = ("no-audio", "silence", "noise", "shuffled")
OUTCOMES = ("correct", "wrong", "unparseable")


def run_from_path(path: str | Path) -> dict:
    """Run keys of ``results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/decisions.parquet``."""
    parts = Path(path).parts
    if len(parts) < 6 or parts[-1] != "decisions.parquet":
        raise InputError(f"{path}: expected .../{{model}}/{{dataset}}/{{task}}/{{condition}}/{{prompt}}/decisions.parquet")
    return dict(zip(RUN_KEYS, parts[-6:-1]))


def _harmonise_meta(df: pd.DataFrame) -> pd.DataFrame:
    """meta_* columns mix types across tasks (an int in one, a string in another): keep numbers and
    booleans where a column is consistently one kind, else store strings (parquet needs one type)."""
    for col in [c for c in df.columns if c.startswith("meta_")]:
        s = df[col]
        vals = s[s.notna()]
        kinds = {type(v).__name__ for v in vals.tolist()}
        kinds = {"float" if k in ("int", "float", "int64", "float64", "int32") else k for k in kinds}
        if kinds <= {"float"}:
            df[col] = pd.to_numeric(s, errors="raise")
        elif kinds <= {"bool", "bool_"}:
            df[col] = s.astype("boolean")
        else:
            df[col] = s.map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return df


def collect_decisions(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Stack decisions files with their run keys; one row per (run, item), sorted by run then item order."""
    frames = []
    for p in paths:
        d = pd.read_parquet(p)
        if "id" not in d.columns:
            raise InputError(f"{p}: decisions file lacks column 'id' (have {list(d.columns)})")
        keys = run_from_path(p)
        d = d.astype({c: object for c in d.columns if c.startswith("meta_")})
        for i, k in enumerate(RUN_KEYS):
            d.insert(i, k, keys[k])
        frames.append(d)
    if not frames:
        raise InputError("collect_decisions: no decisions files given")
    df = pd.concat(frames, ignore_index=True, sort=False)
    meta = sorted(c for c in df.columns if c.startswith("meta_"))
    rest = [c for c in df.columns if c not in meta]
    df = df[rest + meta].sort_values(RUN_KEYS, kind="mergesort").reset_index(drop=True)
    return _harmonise_meta(df)


def mcq_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows scored right/wrong (multiple choice); open-answer runs have no ``correct`` and are left
    to their own metrics. ``correct`` comes back as a plain bool column."""
    if "correct" not in df.columns:
        return df.iloc[0:0].assign(correct=pd.Series(dtype=bool))
    d = df[df["correct"].notna()]
    return d.assign(correct=d["correct"].astype(bool))


def primary_prompt(df: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Keep one prompt per model: the first of ``order`` (the config's prompt list) the model ran,
    else its alphabetically first. Pooling prompts would count each item several times."""
    if df.empty or "prompt" not in df.columns:
        return df
    keep = []
    for model, g in df.groupby("model", sort=True):
        have = set(g["prompt"].unique())
        chosen = next((p for p in (order or []) if p in have), None) or sorted(have)[0]
        keep.append(g[g["prompt"] == chosen])
    return pd.concat(keep, ignore_index=True)


def per_model_in(decisions: pd.DataFrame, prompts: Sequence[str] | None, condition: str):
    """(model, condition, rows) of each model's MCQ rows under its primary prompt, in ``condition``
    (a model without it: its first condition), models in name order."""
    d = primary_prompt(mcq_rows(decisions), prompts)
    for model, g in d.groupby("model", sort=True):
        cond = condition if (g["condition"] == condition).any() else sorted(g["condition"].unique())[0]
        yield model, cond, g[g["condition"] == cond]


def proportion(k: int, n: int) -> dict:
    """Accuracy with its Wilson 95% interval (the convention of results/all.tsv)."""
    lo, hi = wilson_interval(int(k), int(n))
    return {"n": int(n), "k": int(k), "value": k / n if n else math.nan, "ci_low": lo, "ci_high": hi}


def placeholder(message: str, *, title: str | None = None):
    """A small figure saying why there is nothing to draw (the report keeps its slot and says why)."""
    from lalmbench.report.plots.style import plt

    fig, ax = plt.subplots(figsize=(6, 1.8))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=10)
    if title:
        ax.set_title(title)
    return fig


def model_colors(models: Sequence[str]) -> dict:
    from lalmbench.report.plots.style import plt

    cmap = plt.get_cmap("tab10")
    return {m: cmap(i % 10) for i, m in enumerate(sorted(models))}


def error_bars(t: pd.DataFrame) -> np.ndarray:
    """Asymmetric (lower, upper) bar lengths; clipped at 0 because a Wilson bound at p=0 or 1 can sit
    a rounding error on the wrong side of the point estimate, and matplotlib rejects negative bars."""
    return np.clip(np.vstack([(t["value"] - t["ci_low"]).to_numpy(dtype=float),
                              (t["ci_high"] - t["value"]).to_numpy(dtype=float)]), 0.0, None)
