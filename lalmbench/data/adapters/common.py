"""Shared adapter helpers: required local files, audio paths kept inside their root, table shape."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from lalmbench.core.io import InputError


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


SYMLINK_HINT = ("set datasets.<name>.params.symlinks_outside_root: allow if the dataset's files are links into a "
                "store elsewhere (git-annex, DVC, a Hugging Face cache)")


def audio_checks(params: dict) -> dict:
    """The audio-path checks a dataset's params ask for, as :func:`resolve_audio` keywords."""
    return {"check_exists": bool(params.get("check_audio", True)),
            "missing": str(params.get("missing_audio", "error")),
            "symlinks": str(params.get("symlinks_outside_root", "error"))}


def _stat(path: str, follow: bool) -> os.stat_result | None:
    try:
        return os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([root, path]) == root


# a relative path with no empty, "." or ".." component and no surrounding whitespace: joined to the
# root it is already normalised and lies inside it
_PLAIN = re.compile(r"(?!\s)(?!\.\.?(?:/|$))[^/]+(?:/(?!\.\.?(?:/|$))[^/]+)*(?<!\s)").fullmatch


# the paths _PLAIN does not match, among ASCII strings, for Arrow's RE2: whitespace (Python's \s in
# ASCII) at either end, an empty, "." or ".." component, or nothing at all
_NOT_PLAIN_ASCII = r"^[\t-\r\x1c- ]|[\t-\r\x1c- ]$|^/|/$|//|(^|/)\.\.?(/|$)|^$"


def plain_paths(rel: Sequence) -> np.ndarray:
    """``[type(r) is str and bool(_PLAIN(r)) for r in rel]`` as a bool array: ASCII strings are checked
    by Arrow's regex engine in one pass, the others (non-ASCII, not strings) by Python's."""
    return _plain_paths(rel)[0]


def _plain_paths(rel: Sequence) -> tuple[np.ndarray, "pa.Array | None"]:
    """(:func:`plain_paths`, the paths as an Arrow array where they all are strings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        arr = pa.array(rel, type=pa.string())
    except (pa.ArrowException, TypeError):
        return np.fromiter((type(r) is str and bool(_PLAIN(r)) for r in rel), bool, len(rel)), None
    plain = np.asarray(pc.and_(pc.string_is_ascii(arr), pc.invert(pc.match_substring_regex(arr, _NOT_PLAIN_ASCII)))
                       .fill_null(False), dtype=bool)
    other = np.flatnonzero(~np.asarray(pc.string_is_ascii(arr).fill_null(True), dtype=bool))
    for i in other.tolist():
        plain[i] = bool(_PLAIN(rel[i]))
    return plain, arr


def _row_of(rows: Sequence[int] | None, i: int) -> int:
    return rows[i] if rows is not None else i + 1


def _refuse_link(real: str, st: os.stat_result | None, real_root: str, r: str, source: str, row: int) -> None:
    """The error for a path whose folder (``real`` = resolved folder + name) or, when ``st`` says it is
    a symlink, whose own target lies outside the real root."""
    if st is not None and stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(real)
    if not _inside(real, real_root):
        raise InputError(f"{source}: row {row}: audio path {r!r} resolves through a symlink to {real}, "
                         f"outside the dataset's audio root {real_root}; {SYMLINK_HINT}")


def _resolve_other(r, root, root_s: str, real_root: str, *, check_exists: bool, symlinks: str, source: str,
                   row: int) -> tuple[str, str, os.stat_result | None]:
    """(normalised path, path as root/rel, its lstat) of any path that is not plain: empty, absolute,
    with ``..`` or ``.`` components or surrounding whitespace; errors as :func:`resolve_audio` says."""
    if r is None or (isinstance(r, float) and np.isnan(r)) or not str(r).strip():
        raise InputError(f"{source}: row {row}: audio path is empty")
    r = str(r).strip()
    joined = os.path.normpath(os.path.join(root_s, r))
    if not _inside(joined, root_s):
        raise InputError(f"{source}: row {row}: audio path {r!r} escapes the dataset's audio root {root_s} "
                         f"(resolves to {joined}); paths must stay inside the root")
    if joined == root_s:
        raise InputError(f"{source}: row {row}: audio path {r!r} is the audio root {root_s} itself, not an "
                         f"audio file")
    p = os.path.join(str(root), os.path.relpath(joined, root_s))
    st = _stat(joined, follow=False) if check_exists else None
    if symlinks == "error":
        folder, name = os.path.split(joined)
        _refuse_link(os.path.join(os.path.realpath(folder), name), st, real_root, r, source, row)
    return joined, p, st


def resolve_audio(root: str | os.PathLike, rel: Sequence[str], *, source: str, rows: Sequence[int] | None = None,
                  check_exists: bool = True, missing: str = "error",
                  symlinks: str = "error") -> tuple[list[str], np.ndarray]:
    """Join each audio path to ``root`` and refuse any that escapes it or is not a file.

    A path is inside the root when its lexical normalisation (``..`` resolved) lies under the
    normalised root, and (``symlinks='error'``, the default) when what it resolves to with symlinks
    followed lies under the root's own resolution: ``../x``, an absolute path elsewhere, or a
    symlink (of the file or of a folder on its way) to a place outside the root is an InputError
    naming ``source`` and the 1-based row. ``symlinks='allow'`` accepts links out of the root (the
    root itself may always be a symlink). The root (``.``) and directories are never audio files.
    With ``check_exists`` a missing file is an error (``missing='error'``) or reported in the
    returned mask (``missing='skip'``: the caller drops and counts those rows); without it the files
    are not stat'ed (neither existence nor a symlinked file is checked, only its folders).
    Returns (paths as root/rel strings, exists mask).
    """
    if missing not in ("error", "skip"):
        raise ValueError(f"missing_audio must be 'error' or 'skip', got {missing!r}")
    if symlinks not in ("error", "allow"):
        raise ValueError(f"symlinks_outside_root must be 'error' or 'allow', got {symlinks!r}")
    root_s = os.path.normpath(os.path.abspath(str(root)))
    real_root = os.path.realpath(root_s)
    root_dir = os.path.join(root_s, "")             # root_s + "/" (once, also for the root "/")
    user_dir = os.path.join(str(root), "")
    dirs: dict[str, tuple[str, bool]] = {}           # folder -> (its realpath, inside the real root)
    exists = np.ones(len(rel), bool)
    if not check_exists:
        out = _resolve_unchecked(rel, root, root_s, real_root, root_dir, user_dir, symlinks=symlinks, source=source,
                                 rows=rows)
        if out is not None:
            return out, exists
    out = []
    for i, r in enumerate(rel):
        if type(r) is str and _PLAIN(r):
            # the common case, a clean relative path: already normalised and inside the root, so only
            # its folder's symlinks (once per folder) and, with check_exists, the file itself are looked at
            joined = root_dir + r
            p = user_dir + r
            st = _stat(joined, follow=False) if check_exists else None  # one lstat per file
            if symlinks == "error":
                folder, _, name = r.rpartition("/")
                if folder not in dirs:  # 100k files share a few folders
                    real_dir = os.path.realpath(root_dir + folder)
                    dirs[folder] = (real_dir, _inside(real_dir, real_root))
                real_dir, ok = dirs[folder]
                if not ok or (st is not None and stat.S_ISLNK(st.st_mode)):
                    _refuse_link(os.path.join(real_dir, name), st, real_root, r, source, _row_of(rows, i))
        else:
            joined, p, st = _resolve_other(r, root, root_s, real_root, check_exists=check_exists,
                                           symlinks=symlinks, source=source, row=_row_of(rows, i))
        if check_exists:
            if st is not None and stat.S_ISLNK(st.st_mode):
                st = _stat(joined, follow=True)
            if st is not None and stat.S_ISDIR(st.st_mode):
                raise InputError(f"{source}: row {_row_of(rows, i)}: audio path {p} is a directory, not an audio file")
            exists[i] = st is not None
        out.append(p)
    if check_exists and missing == "error" and not exists.all():
        i = int(np.flatnonzero(~exists)[0])
        raise InputError(f"{source}: row {_row_of(rows, i)}: audio file {out[i]} does not exist "
                         f"({int((~exists).sum())} of {len(out)} missing); put the dataset's audio under "
                         f"{root} or set missing_audio: skip to leave those clips out (counted in stats)")
    return out, exists


def _resolve_unchecked(rel: Sequence, root, root_s: str, real_root: str, root_dir: str, user_dir: str, *,
                       symlinks: str, source: str, rows: Sequence[int] | None) -> list[str] | None:
    """:func:`resolve_audio` without ``check_exists``, on whole columns: plain paths are recognised in
    one pass and their folders' symlinks checked once per distinct folder; only the other paths
    take the per-path route. None when a folder leads out of the root (the per-path loop then
    names the first such row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    plain, arr = _plain_paths(rel)
    every = bool(plain.all())
    if symlinks == "error" and plain.any():
        simple = arr if every else pa.array([r for r, ok in zip(rel, plain.tolist()) if ok], type=pa.string())
        folders = pc.unique(pc.replace_substring_regex(simple, r"(^|/)[^/]*$", "")).to_pylist() \
            if pc.any(pc.match_substring(simple, "/")).as_py() else [""]
        for folder in folders:
            if not _inside(os.path.realpath(root_dir + folder), real_root):
                return None
    out = [user_dir + r for r in rel] if every else [user_dir + r if ok else "" for r, ok in zip(rel, plain.tolist())]
    for i in np.flatnonzero(~plain).tolist():
        out[i] = _resolve_other(rel[i], root, root_s, real_root, check_exists=False, symlinks=symlinks,
                                source=source, row=_row_of(rows, i))[1]
    return out


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
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: empty file, expected a header with columns {list(names or required)}") from None
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
