"""Prediction similarity between two conditions of the same run (e.g. ``noise`` vs ``audio``).

Per item: cosine similarity of the sentence embeddings of the two raw outputs. A model whose
answers barely change when its audio is replaced by noise is not using the audio; for open
answers (captions) this is the graded version of the MCQ listening check. Reported overall and per
category (an item meta key, default ``category`` when items have it, else the task), with the
per-item detail.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.analysis.embed import Encoder, cosine_rows, summary_stats
from lalmbench.core.io import InputError

DETAIL_COLS = ["id", "category", "text_a", "text_b", "similarity"]


def _category(df: pd.DataFrame, key: str | None, task: str) -> pd.Series:
    if key:
        col = key if key in df.columns else f"meta_{key}"
        if col not in df.columns:
            raise InputError(f"similarity: category key {key!r} is not a column or item meta key "
                             f"(meta keys: {sorted(c[5:] for c in df.columns if c.startswith('meta_'))})")
        return df[col].astype(object).where(df[col].notna(), "<missing>").astype(str)
    if "meta_category" in df.columns:
        return df["meta_category"].astype(object).where(df["meta_category"].notna(), "<missing>").astype(str)
    return pd.Series(task, index=df.index, dtype=object)


def prediction_similarity(a: pd.DataFrame, b: pd.DataFrame, encode: Encoder, *, text_col: str = "raw_output",
                          category: str | None = None, task: str = "all",
                          labels: Sequence[str] = ("a", "b")) -> tuple[pd.DataFrame, dict]:
    """Per-item similarity of ``a`` vs ``b`` (matched on ``id``) and the summary dict.

    Both frames must cover the same ids (an id in one only is an error naming it). Items whose text
    is missing in either run (a failed generation) get no similarity and are counted in
    ``n_missing_text``; empty strings are embedded as they are.
    """
    for name, df in zip(labels, (a, b)):
        for col in ("id", text_col):
            if col not in df.columns:
                raise InputError(f"similarity: {name} lacks column {col!r} (have {list(df.columns)})")
        dup = df["id"][df["id"].duplicated()]
        if len(dup):
            raise InputError(f"similarity: {name} has duplicated id {dup.iloc[0]!r}")
    ia, ib = pd.Index(a["id"].astype(str)), pd.Index(b["id"].astype(str))
    only_a, only_b = ia.difference(ib), ib.difference(ia)
    if len(only_a) or len(only_b):
        which, side = (only_a[0], labels[0]) if len(only_a) else (only_b[0], labels[1])
        raise InputError(f"similarity: id {which!r} is only in {side} ({len(only_a)} only in {labels[0]}, "
                         f"{len(only_b)} only in {labels[1]}); compare runs over the same items")
    a = a.assign(id=a["id"].astype(str)).set_index("id", drop=False)
    b = b.assign(id=b["id"].astype(str)).set_index("id").loc[a.index]
    cat = _category(a, category, task)
    ta, tb = a[text_col], b[text_col]
    ok = (ta.notna() & tb.notna()).to_numpy()
    sim = np.full(len(a), math.nan)
    if ok.any():
        texts = ta[ok].astype(str).tolist() + tb[ok].astype(str).tolist()
        emb = encode(texts)
        k = int(ok.sum())
        sim[ok] = cosine_rows(emb[:k], emb[k:])
    detail = pd.DataFrame({"id": a.index, "category": cat.to_numpy(), "text_a": ta.to_numpy(),
                           "text_b": tb.to_numpy(), "similarity": sim}, columns=DETAIL_COLS).reset_index(drop=True)
    scored = detail[detail["similarity"].notna()]
    summary = {
        "a": labels[0], "b": labels[1], "n_items": int(len(detail)), "n_missing_text": int((~ok).sum()),
        "overall": summary_stats(scored["similarity"]),
        "per_category": {c: summary_stats(g["similarity"]) for c, g in scored.groupby("category", sort=True)},
    }
    return detail, summary
