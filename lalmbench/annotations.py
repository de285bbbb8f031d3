"""Strict validators for the clips / events tables (the strong-annotation data contract).

Called on every dataset before any builder runs, so they are vectorised (a 1M-row events table
takes well under a second) and import only numpy/pandas. Each problem raises
:class:`lalmbench.io.InputError` naming the file, the 1-based data row as a user sees it (row 1 =
first row under the header) and what was expected, plus how many rows share the problem.

Contract (DESIGN.md):
  clips:  clip_id, audio_path, duration_s, sample_rate, split, source
  events: clip_id, onset_s, offset_s, label, caption (nullable), source
"""
from __future__ import annotations

import os
from typing import Iterable

import numpy as np
import pandas as pd

from lalmbench.io import InputError

CLIP_COLUMNS = ("clip_id", "audio_path", "duration_s", "sample_rate", "split", "source")
EVENT_COLUMNS = ("clip_id", "onset_s", "offset_s", "label", "caption", "source")


def _fail(path: str | os.PathLike, mask: np.ndarray, what: str, df: pd.DataFrame, col: str | None = None) -> None:
    if not np.any(mask):
        return
    rows = np.flatnonzero(mask)
    i = int(rows[0])
    shown = f" ({col}={df[col].iloc[i]!r})" if col is not None else ""
    more = f"; {len(rows)} rows have this problem (first rows: {', '.join(str(r + 1) for r in rows[:5])})" \
        if len(rows) > 1 else ""
    raise InputError(f"{path}: row {i + 1}: {what}{shown}{more}")


def _columns(df: pd.DataFrame, path, required: Iterable[str], what: str) -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{path}: {what} table is missing column(s) {missing}; "
                         f"expected {list(required)}, found {list(df.columns)}")


def _blank(s: pd.Series) -> np.ndarray:
    """Null, or a string that is empty after stripping (checked once per category of a categorical)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        blank = np.r_[_blank(pd.Series(s.cat.categories)), True]      # code -1 (missing) -> last entry
        return blank[codes]
    na = s.isna().to_numpy()
    st = s.astype("string").str.strip()
    return na | (st.fillna("") == "").to_numpy()


def _numeric(df: pd.DataFrame, col: str, path) -> np.ndarray:
    v = pd.to_numeric(df[col], errors="coerce")
    bad = v.isna().to_numpy() & df[col].notna().to_numpy()
    _fail(path, bad, f"{col} is not a number", df, col)
    return v.to_numpy(dtype=float, na_value=np.nan)


def validate_clips(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """clip_id unique and non-empty; audio_path non-empty; duration_s > 0 (or null = unknown);
    sample_rate a positive integer (or null)."""
    _columns(df, path, CLIP_COLUMNS, "clips")
    _fail(path, _blank(df["clip_id"]), "clip_id is empty; every clip needs an id", df)
    dup = df["clip_id"].astype("string").duplicated(keep="first").to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        cid = df["clip_id"].iloc[i]
        first = int(np.flatnonzero((df["clip_id"].astype("string") == str(cid)).to_numpy())[0])
        raise InputError(f"{path}: row {i + 1}: duplicate clip_id {cid!r} (first at row {first + 1}); "
                         f"clip ids must be unique ({int(dup.sum())} duplicate rows)")
    _fail(path, _blank(df["audio_path"]), "audio_path is empty", df, "clip_id")
    dur = _numeric(df, "duration_s", path)
    _fail(path, ~np.isnan(dur) & ~(np.isfinite(dur) & (dur > 0)),
          "duration_s must be a positive finite number of seconds (or empty if unknown)", df, "duration_s")
    sr = _numeric(df, "sample_rate", path)
    _fail(path, ~np.isnan(sr) & ~(np.isfinite(sr) & (sr > 0) & (np.floor(sr) == sr)),
          "sample_rate must be a positive integer (or empty if unknown)", df, "sample_rate")


def validate_events(df: pd.DataFrame, path: str | os.PathLike, clip_ids: Iterable[str] | pd.Series,
                    *, duplicates: str = "error") -> None:
    """clip_id known; onset_s/offset_s finite with 0 <= onset_s <= offset_s; label non-empty;
    exact duplicate rows (same clip, onset, offset, label) an error unless ``duplicates='ignore'``."""
    _columns(df, path, EVENT_COLUMNS, "events")
    _fail(path, _blank(df["clip_id"]), "clip_id is empty", df)
    on = _numeric(df, "onset_s", path)
    off = _numeric(df, "offset_s", path)
    _fail(path, np.isnan(on) | ~np.isfinite(on), "onset_s is missing or not finite (NaN/inf)", df, "onset_s")
    _fail(path, np.isnan(off) | ~np.isfinite(off), "offset_s is missing or not finite (NaN/inf)", df, "offset_s")
    _fail(path, on < 0, "onset_s is negative; expected seconds from the clip start", df, "onset_s")
    bad = off < on
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        more = f"; {int(bad.sum())} rows have offset_s < onset_s" if bad.sum() > 1 else ""
        raise InputError(f"{path}: row {i + 1}: offset_s ({off[i]:g}) is before onset_s ({on[i]:g}); "
                         f"expected onset_s <= offset_s{more}")
    _fail(path, _blank(df["label"]), "label is empty; every event needs a label", df, "clip_id")
    known = pd.Index(pd.Series(list(clip_ids) if not isinstance(clip_ids, pd.Series) else clip_ids)
                     .astype("string").unique())
    # check distinct ids only (1M rows -> ~100k lookups; a categorical is factorised already)
    codes, uniq = pd.factorize(df["clip_id"])
    unknown_u = known.get_indexer(pd.Index(np.asarray(uniq, dtype=object)).astype("string")) < 0
    if unknown_u.any():
        mask = unknown_u[codes] & (codes >= 0)
        _fail(path, mask, "clip_id is not in the clips table", df, "clip_id")
    if duplicates == "error":
        dup = _duplicate_events(df, on, off)
        _fail(path, dup, "exact duplicate of an earlier event (same clip_id, onset_s, offset_s, label)", df,
              "label")
    elif duplicates != "ignore":
        raise ValueError(f"duplicates must be 'error' or 'ignore', got {duplicates!r}")


def _duplicate_events(df: pd.DataFrame, on: np.ndarray, off: np.ndarray) -> np.ndarray:
    """``df.duplicated(subset=[clip_id, onset_s, offset_s, label])``, with pandas' four-column
    comparison run only on the rows whose integer hash of (clip, onset, offset) collides with
    another's (on a 1M-row table: a handful of rows instead of all)."""
    cols = ["clip_id", "onset_s", "offset_s", "label"]
    clip, _ = pd.factorize(df["clip_id"])
    u = np.uint64
    h = (clip.astype(u) * u(0x9E3779B97F4A7C15)) ^ ((on + 0.0).view(u) * u(0xC2B2AE3D27D4EB4F)) \
        ^ ((off + 0.0).view(u) * u(0x165667B19E3779F9))
    order = np.argsort(h)
    same = h[order[1:]] == h[order[:-1]]
    cand = np.zeros(len(h), bool)
    cand[order[1:][same]] = True
    cand[order[:-1][same]] = True
    out = np.zeros(len(h), bool)
    if cand.any():                      # equal rows hash equal, so every duplicate is a candidate
        rows = np.flatnonzero(cand)
        out[rows] = df.iloc[rows].duplicated(subset=cols, keep="first").to_numpy()
    return out


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Read a clips/events table from parquet, CSV or TSV (by extension)."""
    p = str(path)
    if not os.path.exists(p):
        raise InputError(f"{p}: file not found")
    if p.endswith(".parquet"):
        return pd.read_parquet(p)
    sep = "\t" if p.endswith((".tsv", ".tsv.gz")) else ","
    return pd.read_csv(p, sep=sep)
