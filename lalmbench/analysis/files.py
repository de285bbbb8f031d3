"""File edges of the analyses (the scripts call these; the computations are pure functions)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import pandas as pd

from lalmbench.core import io

log = logging.getLogger("lalmbench.analysis")


def similarity_files(decisions_a: str, decisions_b: str, *, out_json: str, out_tsv: str, labels: Sequence[str],
                     run: dict, model: str | None = None, category: str | None = None, batch_size: int = 64) -> dict:
    from lalmbench.analysis.embed import load_encoder
    from lalmbench.analysis.similarity import prediction_similarity

    encode, model_name = load_encoder(model, batch_size=batch_size)
    a, b = pd.read_parquet(decisions_a), pd.read_parquet(decisions_b)
    detail, summary = prediction_similarity(a, b, encode, category=category, task=run.get("task", "all"),
                                            labels=labels)
    summary = {**run, **summary, "embedding_model": model_name, "text_column": "raw_output",
               "files": {labels[0]: decisions_a, labels[1]: decisions_b},
               "detailed": detail[["id", "category", "similarity"]].to_dict("records")}
    io.write_tsv(out_tsv, detail)
    io.write_json(out_json, _nan_to_none(summary))
    log.info("%s vs %s: mean similarity %.4f over %d items", labels[0], labels[1], summary["overall"]["mean"],
             summary["overall"]["n"])
    return summary


def similarity_table(paths: Sequence[str], out: str) -> pd.DataFrame:
    """All similarity JSONs -> one TSV row per (run, category) plus the overall row (category ``(all)``)."""
    rows = []
    for p in paths:
        s = io.read_json(p)
        base = {k: s.get(k) for k in ("model", "dataset", "task", "prompt", "a", "b", "embedding_model")}
        rows.append({**base, "category": "(all)", **s["overall"]})
        rows += [{**base, "category": c, **v} for c, v in sorted(s["per_category"].items())]
    df = pd.DataFrame(rows, columns=["model", "dataset", "task", "prompt", "a", "b", "embedding_model", "category",
                                     "n", "mean", "std"])
    io.write_tsv(out, df)
    return df


def reference_agreement_files(*, out_dir: str, csv: str | None = None, items: str | None = None,
                              model: str | None = None, z_threshold: float = 2.0, batch_size: int = 64) -> dict:
    from lalmbench.analysis.embed import load_encoder
    from lalmbench.analysis.reference_agreement import captions_from_items, captions_from_wide, reference_agreement

    if bool(csv) == bool(items):
        raise ValueError("reference agreement: give exactly one of csv= or items=")
    if csv:
        captions = captions_from_wide(pd.read_csv(csv, dtype=str, keep_default_na=False), source=csv)
    else:
        captions = captions_from_items(io.read_jsonl(items))
    encode, model_name = load_encoder(model, batch_size=batch_size)
    pairs, clips, outliers, summary = reference_agreement(captions, encode, z_threshold=z_threshold, model=model_name)
    summary["source"] = csv or items
    out = Path(out_dir)
    _write_csv(out / "pairs.csv", pairs)
    _write_csv(out / "clips.csv", clips)
    _write_csv(out / "outliers.csv", outliers)
    io.write_json(out / "summary.json", _nan_to_none(summary))
    log.info("%d clips, %d pairs: mean %.4f (std %.4f); %d outlier pairs, %d outlier clips", summary["n_clips"],
             summary["n_pairs"], summary["mean"], summary["std"], summary["n_outlier_pairs"], summary["n_outlier_clips"])
    return summary


def _write_csv(path: Path, df: pd.DataFrame) -> None:
    with io.atomic_path(path, suffix=".csv") as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")


def _nan_to_none(obj):
    import math

    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj
