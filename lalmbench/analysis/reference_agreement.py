"""How much the reference captions of a clip agree with each other (e.g. Clotho's 5 per clip).

Every pair of a clip's references (10 pairs for 5 captions) gets the cosine similarity of their
sentence embeddings. Low agreement marks clips whose references describe different things, which
caps what any caption metric can reward; such clips are listed as outliers: pairs and clips whose
similarity lies ``z_threshold`` or more standard deviations from the mean over all pairs / clips.
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterable

import numpy as np
import pandas as pd

from lalmbench.analysis.embed import Encoder, cosine_rows
from lalmbench.core.io import InputError

PAIR_COLS = ["clip_id", "i", "j", "caption_i", "caption_j", "similarity", "z"]
CLIP_COLS = ["clip_id", "n_captions", "n_pairs", "mean", "min", "max", "std", "z"]


def captions_from_wide(df: pd.DataFrame, *, id_col: str = "file_name", prefix: str = "caption_",
                       source: str = "captions") -> pd.DataFrame:
    """Clotho-style wide rows (file_name, caption_1..caption_N) -> long (clip_id, caption_index, caption)."""
    cols = [c for c in df.columns if c.startswith(prefix)]
    if id_col not in df.columns or not cols:
        raise InputError(f"{source}: expected columns {id_col!r} and {prefix}1..{prefix}N, got {list(df.columns)}")
    cols = sorted(cols, key=lambda c: int(c[len(prefix):]) if c[len(prefix):].isdigit() else 10**9)
    rows = []
    for r, (cid, *caps) in enumerate(df[[id_col, *cols]].itertuples(index=False, name=None), start=1):
        for k, c in enumerate(caps, start=1):
            if isinstance(c, str) and c.strip():
                rows.append({"clip_id": str(cid), "caption_index": k, "caption": c.strip()})
    return pd.DataFrame(rows, columns=["clip_id", "caption_index", "caption"])


def captions_from_items(items: Iterable[dict]) -> pd.DataFrame:
    """Task items with ``references`` (the captioning items of a dataset adapter) -> long captions."""
    rows = []
    for it in items:
        for k, c in enumerate(it.get("references") or [], start=1):
            if isinstance(c, str) and c.strip():
                rows.append({"clip_id": str(it.get("clip_id") or it["id"]), "caption_index": k, "caption": c.strip()})
    return pd.DataFrame(rows, columns=["clip_id", "caption_index", "caption"])


def pair_similarities(captions: pd.DataFrame, encode: Encoder) -> pd.DataFrame:
    """One row per unordered pair of a clip's captions (``i < j`` by caption index) with its cosine."""
    need = {"clip_id", "caption_index", "caption"}
    if not need <= set(captions.columns):
        raise InputError(f"reference agreement: captions need columns {sorted(need)}")
    caps = captions.sort_values(["clip_id", "caption_index"], kind="mergesort").reset_index(drop=True)
    uniq = pd.unique(caps["caption"])
    emb = encode(list(uniq)) if len(uniq) else np.zeros((0, 1))
    pos = {t: k for k, t in enumerate(uniq)}
    rows, ia, ib = [], [], []
    for cid, g in caps.groupby("clip_id", sort=True):
        recs = list(zip(g["caption_index"], g["caption"]))
        for (i, ci), (j, cj) in combinations(recs, 2):
            rows.append({"clip_id": cid, "i": int(i), "j": int(j), "caption_i": ci, "caption_j": cj})
            ia.append(pos[ci])
            ib.append(pos[cj])
    pairs = pd.DataFrame(rows, columns=PAIR_COLS[:-2])
    pairs["similarity"] = cosine_rows(emb[ia], emb[ib]) if rows else np.zeros(0)
    return pairs


def _z(v: pd.Series) -> pd.Series:
    sd = v.std(ddof=1)
    if len(v) < 2 or not np.isfinite(sd) or sd == 0:
        return pd.Series(0.0, index=v.index)
    return (v - v.mean()) / sd


def agreement_tables(pairs: pd.DataFrame, *, z_threshold: float = 2.0,
                     model: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """(pairs with z, per-clip table with z, outliers, summary). z uses the sample std (ddof=1) over all
    pairs (pairs) or over all clips' mean similarity (clips); an outlier has ``|z| >= z_threshold``
    (``kind`` says pair or clip, ``direction`` low or high)."""
    pairs = pairs.copy()
    pairs["z"] = _z(pairs["similarity"])
    g = pairs.groupby("clip_id", sort=True)
    clips = pd.DataFrame({
        "n_captions": g.apply(lambda x: len(set(x["i"]) | set(x["j"])), include_groups=False),
        "n_pairs": g.size(), "mean": g["similarity"].mean(), "min": g["similarity"].min(),
        "max": g["similarity"].max(), "std": g["similarity"].std(ddof=1),
    }).reset_index()
    clips["z"] = _z(clips["mean"])
    po = pairs[pairs["z"].abs() >= z_threshold].assign(kind="pair")
    co = clips[clips["z"].abs() >= z_threshold].assign(kind="clip")
    outliers = pd.concat([
        po.assign(similarity=po["similarity"])[["kind", "clip_id", "i", "j", "caption_i", "caption_j", "similarity", "z"]],
        co.rename(columns={"mean": "similarity"})[["kind", "clip_id", "similarity", "z"]],
    ], ignore_index=True)
    outliers["direction"] = np.where(outliers["z"] < 0, "low", "high")
    outliers = outliers.sort_values(["kind", "z"], kind="mergesort").reset_index(drop=True)
    s = pairs["similarity"]
    summary = {
        "model": model, "n_clips": int(len(clips)), "n_pairs": int(len(pairs)),
        "pairs_per_clip": sorted({int(x) for x in clips["n_pairs"]}),
        "mean": float(s.mean()), "std": float(s.std(ddof=1)) if len(s) > 1 else float("nan"),
        "median": float(s.median()), "min": float(s.min()), "max": float(s.max()),
        "q05": float(s.quantile(0.05)), "q95": float(s.quantile(0.95)),
        "clip_mean_of_means": float(clips["mean"].mean()), "z_threshold": float(z_threshold),
        "n_outlier_pairs": int(len(po)), "n_outlier_clips": int(len(co)),
    }
    return pairs[PAIR_COLS], clips[CLIP_COLS], outliers, summary


def reference_agreement(captions: pd.DataFrame, encode: Encoder, *, z_threshold: float = 2.0,
                        model: str | None = None, min_captions: int = 2) -> tuple[pd.DataFrame, ...]:
    """Captions (long) -> pairs, clips, outliers, summary. Clips with fewer than ``min_captions``
    references have no pair; they are counted in the summary (``n_clips_too_few``), not dropped silently."""
    counts = captions.groupby("clip_id").size()
    few = counts[counts < min_captions]
    keep = captions[~captions["clip_id"].isin(few.index)]
    if keep.empty:
        raise InputError(f"reference agreement: no clip has {min_captions} or more captions")
    pairs, clips, outliers, summary = agreement_tables(pair_similarities(keep, encode), z_threshold=z_threshold,
                                                       model=model)
    summary["n_clips_too_few"] = int(len(few))
    return pairs, clips, outliers, summary
