"""All metrics.json -> results/all.tsv: one row per run x metric, sorted, byte-stable."""
from __future__ import annotations

from typing import Iterable

import pandas as pd

from lalmbench import io

KEYS = ["model", "dataset", "task", "condition", "prompt", "metric"]
VALUES = ["value", "ci_low", "ci_high", "n", "chance", "p_vs_chance", "parse_failure_rate"]
PROVENANCE = ["model_id", "model_revision", "backend", "parser_version", "config_hash"]
COLUMNS = KEYS + VALUES + PROVENANCE + ["flags"]


def metrics_rows(metrics: dict) -> list[dict]:
    """A metrics.json holds one headline metric, plus optional extra ones under ``metrics`` (list of dicts)."""
    base = {k: metrics.get(k) for k in KEYS[:-1] + PROVENANCE}
    rows = [{**base, **{k: metrics.get(k) for k in ["metric"] + VALUES}}]
    for extra in metrics.get("extra_metrics", []):
        rows.append({**base, **{k: extra.get(k, metrics.get(k) if k in ("n", "chance") else None)
                                for k in ["metric"] + VALUES}})
    return rows


def model_flags(check_paths: Iterable[str]) -> dict[str, str]:
    """model -> flag text from listening-check results (only flagged models appear)."""
    flags = {}
    for p in check_paths:
        r = io.read_json(p)
        if r.get("flagged"):
            flags[r["model"]] = "not-listening:" + "+".join(r["flagged_conditions"])
    return flags


def build_table(paths: Iterable[str], checks: Iterable[str] = ()) -> pd.DataFrame:
    rows = []
    for p in paths:
        m = io.read_json(p)
        missing = [k for k in ("model", "dataset", "task", "condition", "prompt", "metric", "value") if k not in m]
        if missing:
            raise io.InputError(f"{p}: metrics file lacks {missing}")
        rows += metrics_rows(m)
    df = pd.DataFrame(rows, columns=COLUMNS)
    flags = model_flags(checks)
    df["flags"] = [flags.get(m, "") for m in df["model"]]
    dup = df.duplicated(KEYS, keep=False)
    if dup.any():
        raise ValueError(f"duplicate result rows for {df.loc[dup, KEYS].head(3).to_dict('records')}")
    df["n"] = df["n"].astype("Int64")
    return df.sort_values(KEYS, kind="mergesort").reset_index(drop=True)


def write_all_tsv(paths: Iterable[str], out: str, checks: Iterable[str] = ()) -> pd.DataFrame:
    df = build_table(paths, checks)
    io.write_tsv(out, df)
    return df
