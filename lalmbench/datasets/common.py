"""Shared adapter helpers: required local files, audio paths kept inside their root, table shape."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from lalmbench.io import InputError


class DatasetMissing(InputError):
    """A dataset file is not on disk: the message says what to download and where to put it."""


def require_file(path: str | os.PathLike | None, *, dataset: str, what: str, how: str, key: str) -> Path:
    """The configured file, or a DatasetMissing that says which config key, what, and how to get it."""
    if not path:
        raise DatasetMissing(f"dataset {dataset!r}: params.{key} is not set; it must point at {what}. {how}")
    p = Path(path)
    if not p.exists():
        raise DatasetMissing(f"dataset {dataset!r}: {p} (params.{key}) not found; expected {what}. {how}")
    return p


def require_dir(path: str | os.PathLike | None, *, dataset: str, what: str, how: str, key: str) -> Path:
    p = require_file(path, dataset=dataset, what=what, how=how, key=key)
    if not p.is_dir():
        raise DatasetMissing(f"dataset {dataset!r}: {p} (params.{key}) is not a directory; expected {what}. {how}")
    return p


def resolve_audio(root: str | os.PathLike, rel: Sequence[str], *, source: str, rows: Sequence[int] | None = None,
                  check_exists: bool = True, missing: str = "error") -> tuple[list[str], np.ndarray]:
    """Join each audio path to ``root`` and refuse any that escapes it.

    A path is inside the root when its lexical normalisation (``..`` resolved, no symlinks
    followed) lies under the normalised root; ``../x`` or an absolute path elsewhere is an
    InputError naming ``source`` and the 1-based row. With ``check_exists``, a missing file is an
    error (``missing='error'``) or reported in the returned mask (``missing='skip'``: the caller
    drops and counts those rows). Returns (paths as root/rel strings, exists mask).
    """
    root_s = os.path.normpath(os.path.abspath(str(root)))
    # A plain relative path (no leading '/', no empty, '.' or '..' component) is inside the root and
    # normalises to itself: joined in one vectorised pass. Only the others (100k TACoBeLAL file names
    # have none) take the per-path normalisation below.
    stripped = pd.Series(list(rel), dtype="string").str.strip()
    plain = ~stripped.str.contains(r"^/|//|/$|(?:^|/)\.\.?(?:/|$)|^$", regex=True).fillna(True).to_numpy(bool)
    out = (os.path.join(str(root), "") + stripped.fillna("")).tolist()
    for i in np.flatnonzero(~plain).tolist():
        r = rel[i]
        row = rows[i] if rows is not None else i + 1
        if r is None or (isinstance(r, float) and np.isnan(r)) or not str(r).strip():
            raise InputError(f"{source}: row {row}: audio path is empty")
        r = str(r).strip()
        joined = os.path.normpath(os.path.join(root_s, r))
        if os.path.commonpath([root_s, joined]) != root_s:
            raise InputError(f"{source}: row {row}: audio path {r!r} escapes the dataset's audio root {root_s} "
                             f"(resolves to {joined}); paths must stay inside the root")
        out[i] = os.path.join(str(root), os.path.relpath(joined, root_s))
    exists = np.ones(len(out), bool)
    if check_exists:
        exists = np.fromiter((os.path.exists(p) for p in out), bool, len(out))
        if missing == "error" and not exists.all():
            i = int(np.flatnonzero(~exists)[0])
            row = rows[i] if rows is not None else i + 1
            raise InputError(f"{source}: row {row}: audio file {out[i]} does not exist "
                             f"({int((~exists).sum())} of {len(out)} missing); put the dataset's audio under "
                             f"{root} or set missing_audio: skip to leave those clips out (counted in stats)")
        if missing not in ("error", "skip"):
            raise ValueError(f"missing_audio must be 'error' or 'skip', got {missing!r}")
    return out, exists


def clips_frame(clip_ids: Iterable[str], audio_paths: Iterable[str], *, duration_s=np.nan, sample_rate=None,
                split="", source: str) -> pd.DataFrame:
    ids = list(clip_ids)
    n = len(ids)
    dur = np.broadcast_to(np.asarray(duration_s, dtype=float), (n,)) if n else np.zeros(0)
    sr = pd.array(np.broadcast_to(np.asarray(sample_rate if sample_rate is not None else pd.NA, dtype=object), (n,)),
                  dtype="Int64") if n else pd.array([], dtype="Int64")
    return pd.DataFrame({"clip_id": pd.array(ids, dtype="string"), "audio_path": pd.array(list(audio_paths), dtype="string"),
                         "duration_s": dur.astype(float), "sample_rate": sr,
                         "split": pd.array(np.broadcast_to(np.asarray(split, dtype=object), (n,)).tolist(), dtype="string"),
                         "source": pd.array([source] * n, dtype="string")})


def constant_strings(value: str, n: int) -> pd.api.extensions.ExtensionArray:
    """``n`` copies of ``value`` as a pandas "string" array, built in Arrow (no list of n Python refs)."""
    import pyarrow as pa

    codes = pa.array(np.zeros(n, np.int8))
    return pd.arrays.ArrowStringArray(pa.DictionaryArray.from_arrays(codes, pa.array([value])).cast(pa.string()))


def read_csv_strict(path: Path, *, required: Sequence[str], sep: str | None = None, header: bool = True,
                    names: Sequence[str] | None = None) -> pd.DataFrame:
    """Read a CSV/TSV as strings, checking the required columns are present (named in the error)."""
    if sep is None:
        sep = "\t" if str(path).endswith((".tsv", ".tsv.gz", ".txt")) else ","
    try:
        df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, header=0 if header else None,
                         names=list(names) if names else None, quotechar='"')
    except pd.errors.ParserError as exc:
        raise InputError(f"{path}: cannot parse as {'TSV' if sep == chr(9) else 'CSV'}: {exc}") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing}; found {list(df.columns)}")
    return df


def to_seconds(df: pd.DataFrame, col: str, path: Path, *, line_offset: int = 1) -> np.ndarray:
    """Numeric column; a non-number raises naming the row (1-based data row, header not counted)."""
    v = pd.to_numeric(df[col].str.strip(), errors="coerce").to_numpy(float)
    bad = ~np.isfinite(v)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{path}: row {i + 1}: {col}={df[col].iloc[i]!r} is not a finite number of seconds "
                         f"({int(bad.sum())} such rows)")
    return v
