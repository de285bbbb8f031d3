"""Strict validators for the clips / events tables (the strong-annotation data contract).

Called on every dataset before any builder runs, so they are vectorised (a 1M-row events table
takes well under a second) and import only numpy/pandas. Each problem raises
:class:`lalmbench.core.io.InputError` naming the file, the 1-based data row as a user sees it (row 1 =
first row under the header; blank lines are not counted) and what was expected, plus how many rows
share the problem. Tables an adapter derived from a user's file pass ``rows`` (each table row's
data row in that file), so the row named is the file's, not the derived table's.

Free text (label, caption): runs of whitespace, newlines and tabs included, are collapsed to one
space by :func:`collapse_whitespace` before validation (a label copied from a spreadsheet cell
must not put a line break into an option); any other control character is an error.

Contract (DESIGN.md):
  clips:  clip_id, audio_path, duration_s, sample_rate, split, source
  events: clip_id, onset_s, offset_s, label, caption (nullable), source
"""
from __future__ import annotations

import os
import re
from typing import Iterable

import numpy as np
import pandas as pd

from lalmbench.core.io import InputError

CLIP_COLUMNS = ("clip_id", "audio_path", "duration_s", "sample_rate", "split", "source")
EVENT_COLUMNS = ("clip_id", "onset_s", "offset_s", "label", "caption", "source")


CONTROL = r"[\x00-\x1f\x7f-\x9f]"


def _row(rows: np.ndarray | None, i: int) -> int:
    """The 1-based data row a user sees for table position ``i``."""
    return int(rows[i]) if rows is not None else i + 1


def _fail(path: str | os.PathLike, mask: np.ndarray, what: str, df: pd.DataFrame, col: str | None = None,
          rows: np.ndarray | None = None) -> None:
    if not np.any(mask):
        return
    bad = np.flatnonzero(mask)
    i = int(bad[0])
    value = df[col].iloc[i] if col is not None else None
    value = value.item() if isinstance(value, np.generic) else value  # -2.0, not np.float64(-2.0)
    shown = f" ({col}={value!r})" if col is not None else ""
    more = f"; {len(bad)} rows have this problem (first rows: {', '.join(str(_row(rows, r)) for r in bad[:5])})" \
        if len(bad) > 1 else ""
    raise InputError(f"{path}: row {_row(rows, i)}: {what}{shown}{more}")


# Python's whitespace (what ``str.isspace``, ``str.strip`` and ``re``'s ``\s`` match), written out for
# RE2 so Arrow's C++ regex engine applies exactly Python's rules
_SPACE_CHARS = r"\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_SPACE = f"[{_SPACE_CHARS}]"
_OTHER_SPACE = "[" + _SPACE_CHARS.replace(r"\x{1c}-\x{20}", r"\x{1c}-\x{1f}") + "]"    # all but " "
_NEEDS_COLLAPSE = f"{_SPACE}{_SPACE}|{_OTHER_SPACE}|^{_SPACE}|{_SPACE}$"
_CONTROL_RE2 = r"[\x{0}-\x{1f}\x{7f}-\x{9f}]"


def _arrow(s: pd.Series):
    """The column as a pyarrow string array (no copy for pyarrow-backed strings)."""
    import pyarrow as pa

    return pa.array(s.astype("string[pyarrow]").array)


def _plain_text(arr) -> bool:
    """True when every string is printable ASCII (0x20-0x7E) with no leading, trailing or doubled
    space: then it has no control character and nothing to collapse, and the regex scans below
    can be skipped. Checked on the bytes with numpy, a megabyte at a time (a tenth of RE2's time on
    a 1M-row caption column); any other text takes the regex path."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        return all(_plain_text(c) for c in arr.chunks)
    if arr.null_count:
        arr = arr.drop_null()
    n = len(arr)
    if n == 0:
        return True
    if arr.type not in (pa.string(), pa.large_string()):
        return False
    width = np.int64 if arr.type == pa.large_string() else np.int32
    offsets = np.frombuffer(arr.buffers()[1], width)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(arr.buffers()[2], np.uint8)[offsets[0]:offsets[-1]]
    step = 1 << 20
    for lo in range(0, len(data), step):
        c = data[lo:lo + step + 1]                          # one byte of overlap for the pairs
        if ((c < 0x20) | (c > 0x7E)).any() or ((c[:-1] == 0x20) & (c[1:] == 0x20)).any():
            return False
    rel = offsets - offsets[0]
    nonempty = rel[1:] > rel[:-1]
    return not ((data[rel[:-1][nonempty]] == 0x20).any() or (data[rel[1:][nonempty] - 1] == 0x20).any())


def edges_plain(arr) -> bool:
    """True when no string of ``arr`` (pyarrow strings) starts or ends with a space, a control byte or a
    non-ASCII byte, so stripping whitespace (Python's or Arrow's, Unicode included) changes none:
    only the first and last byte of each string are looked at."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        return all(edges_plain(c) for c in arr.chunks)
    if arr.type not in (pa.string(), pa.large_string()):
        return False
    n = len(arr)
    if n == 0:
        return True
    width = np.int64 if arr.type == pa.large_string() else np.int32
    offsets = np.frombuffer(arr.buffers()[1], width)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(arr.buffers()[2], np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    nonempty = offsets[1:] > offsets[:-1]
    edge = np.r_[data[offsets[:-1][nonempty]], data[offsets[1:][nonempty] - 1]]
    return not ((edge <= 0x20) | (edge >= 0x7F)).any()


def collapse_whitespace(s: pd.Series) -> pd.Series:
    """Runs of whitespace (newlines, tabs, ...) -> one space, stripped; nulls stay null. Arrow's regex
    engine scans the column once for cells that need it (usually none: ``s`` comes back as is)."""
    return collapse_whitespace_counted(s)[0]


def collapse_whitespace_counted(s: pd.Series) -> tuple[pd.Series, int]:
    """:func:`collapse_whitespace` and how many cells it changed."""
    import pyarrow.compute as pc

    arr = _arrow(s)
    if _plain_text(arr):
        return s.astype("string[pyarrow]"), 0
    needs = pc.match_substring_regex(arr, _NEEDS_COLLAPSE)
    n = int(pc.sum(needs).as_py() or 0)
    if not n:
        return s.astype("string[pyarrow]"), 0
    out = pc.utf8_trim(pc.replace_substring_regex(arr, f"{_SPACE}+", " "), " ")
    return pd.Series(pd.arrays.ArrowStringArray(out), index=s.index), n


def _control(df: pd.DataFrame, col: str, path, rows: np.ndarray | None) -> None:
    """A control character left in free text (after whitespace was collapsed) names row and code point."""
    import pyarrow.compute as pc

    arr = _arrow(df[col])
    if _plain_text(arr):
        return
    hit = pc.match_substring_regex(arr, _CONTROL_RE2)
    if pc.any(hit).as_py():
        mask = np.asarray(hit.fill_null(False), dtype=bool)
        i = int(np.flatnonzero(mask)[0])
        ch = re.search(CONTROL, str(df[col].iloc[i])).group()
        _fail(path, mask, f"{col} contains control character U+{ord(ch):04X}; labels and captions must be "
              "printable text", df, col, rows)


def same_values(a: pd.Series, b: pd.Series) -> bool:
    """``a.equals(b)``, answered at once when both columns hold the same array (captions that are the
    labels): comparing a categorical with itself compares every category string."""
    return a.array is b.array or a.equals(b)


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
    if isinstance(s.array, pd.arrays.ArrowStringArray) and edges_plain(arr := _arrow(s)):
        import pyarrow.compute as pc

        return na | (pc.binary_length(arr).fill_null(0).to_numpy(zero_copy_only=False) == 0)
    st = s.astype("string").str.strip()
    return na | (st.fillna("") == "").to_numpy()


def _numeric(df: pd.DataFrame, col: str, path, rows: np.ndarray | None = None) -> np.ndarray:
    v = pd.to_numeric(df[col], errors="coerce")
    bad = v.isna().to_numpy() & df[col].notna().to_numpy()
    _fail(path, bad, f"{col} is not a number", df, col, rows)
    return v.to_numpy(dtype=float, na_value=np.nan)


def validate_clips(df: pd.DataFrame, path: str | os.PathLike, *, rows: np.ndarray | None = None) -> None:
    """clip_id unique and non-empty; audio_path non-empty; duration_s > 0 (or null = unknown);
    sample_rate a positive integer (or null). ``rows``: each table row's data row in ``path``."""
    _columns(df, path, CLIP_COLUMNS, "clips")
    _fail(path, _blank(df["clip_id"]), "clip_id is empty; every clip needs an id", df, rows=rows)
    dup = df["clip_id"].astype("string").duplicated(keep="first").to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        cid = df["clip_id"].iloc[i]
        first = int(np.flatnonzero((df["clip_id"].astype("string") == str(cid)).to_numpy())[0])
        raise InputError(f"{path}: row {_row(rows, i)}: duplicate clip_id {cid!r} (first at row {_row(rows, first)}); "
                         f"clip ids must be unique ({int(dup.sum())} duplicate rows)")
    _fail(path, _blank(df["audio_path"]), "audio_path is empty", df, "clip_id", rows)
    dur = _numeric(df, "duration_s", path, rows)
    _fail(path, ~np.isnan(dur) & ~(np.isfinite(dur) & (dur > 0)),
          "duration_s must be a positive finite number of seconds (or empty if unknown)", df, "duration_s", rows)
    sr = _numeric(df, "sample_rate", path, rows)
    _fail(path, ~np.isnan(sr) & ~(np.isfinite(sr) & (sr > 0) & (np.floor(sr) == sr)),
          "sample_rate must be a positive integer (or empty if unknown)", df, "sample_rate", rows)


def validate_events(df: pd.DataFrame, path: str | os.PathLike, clip_ids: Iterable[str] | pd.Series,
                    *, duplicates: str = "error", rows: np.ndarray | None = None) -> None:
    """clip_id known; onset_s/offset_s finite with 0 <= onset_s <= offset_s; label non-empty; label and
    caption free of control characters; exact duplicate rows (same clip, onset, offset, label) an
    error unless ``duplicates='ignore'``. ``rows``: each table row's data row in ``path``."""
    _columns(df, path, EVENT_COLUMNS, "events")
    _fail(path, _blank(df["clip_id"]), "clip_id is empty", df, rows=rows)
    on = _numeric(df, "onset_s", path, rows)
    off = _numeric(df, "offset_s", path, rows)
    _fail(path, np.isnan(on) | ~np.isfinite(on), "onset_s is missing or not finite (NaN/inf)", df, "onset_s", rows)
    _fail(path, np.isnan(off) | ~np.isfinite(off), "offset_s is missing or not finite (NaN/inf)", df, "offset_s",
          rows)
    _fail(path, on < 0, "onset_s is negative; expected seconds from the clip start", df, "onset_s", rows)
    bad = off < on
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        more = f"; {int(bad.sum())} rows have offset_s < onset_s" if bad.sum() > 1 else ""
        raise InputError(f"{path}: row {_row(rows, i)}: offset_s ({off[i]:g}) is before onset_s ({on[i]:g}); "
                         f"expected onset_s <= offset_s{more}")
    _fail(path, _blank(df["label"]), "label is empty; every event needs a label", df, "clip_id", rows)
    _control(df, "label", path, rows)
    if not same_values(df["caption"], df["label"]):                   # captions that are the labels (TACoBeLAL)
        _control(df, "caption", path, rows)
    import pyarrow as pa
    import pyarrow.compute as pc

    known = _arrow(pd.Series(list(clip_ids) if not isinstance(clip_ids, pd.Series) else clip_ids))
    # check distinct ids only (1M rows -> ~100k lookups, by Arrow's hash set; a categorical is factorised already)
    codes, uniq = pd.factorize(df["clip_id"])            # (the duplicate check reuses the codes)
    unknown_u = ~np.asarray(pc.is_in(_arrow(pd.Series(uniq)).cast(pa.large_string()),
                                     value_set=known.cast(pa.large_string())), dtype=bool)
    if unknown_u.any():
        mask = unknown_u[codes] & (codes >= 0)
        _fail(path, mask, "clip_id is not in the clips table", df, "clip_id", rows)
    if duplicates == "error":
        dup = _duplicate_events(df, on, off, codes)
        _fail(path, dup, "exact duplicate of an earlier event (same clip_id, onset_s, offset_s, label)", df,
              "label", rows)
    elif duplicates != "ignore":
        raise ValueError(f"duplicates must be 'error' or 'ignore', got {duplicates!r}")


VALIDATED_KEY = "lalmbench.validated"


def validated_stamp(clips: pd.DataFrame, events: pd.DataFrame) -> str | None:
    """What an events parquet carries (under ``VALIDATED_KEY``) when ``validate_clips`` and
    ``validate_events`` (duplicates an error) passed on exactly these tables: a summary of both
    that is cheap to recompute (row counts, columns, each number column's sum and NaN count, each
    text column's byte total and null count). A step that reads the tables back recomputes it and
    skips checks already made once; a table edited or
    re-written by anything else no longer matches and is checked in full."""
    import json

    try:
        return json.dumps({"version": 1, "clips": _fingerprint(clips, CLIP_COLUMNS),
                           "events": _fingerprint(events, EVENT_COLUMNS)}, sort_keys=True)
    except (TypeError, ValueError):        # a column that is neither numbers nor text: no stamp
        return None


def _fingerprint(df: pd.DataFrame, checked: tuple[str, ...]) -> dict:
    """Row count, column names, and a summary of each column the validators look at."""
    import pyarrow.compute as pc

    cols: dict = {}
    for c in checked:
        if c not in df.columns:
            continue
        s = df[c]
        if s.dtype.kind in "biuf":
            v = s.to_numpy(np.float64, na_value=np.nan)
            cols[str(c)] = [float(np.nansum(v)).hex(), int(np.isnan(v).sum())]
        elif isinstance(s.dtype, pd.CategoricalDtype):      # the same figures from the distinct strings
            codes = s.cat.codes.to_numpy()
            size = pc.binary_length(_arrow(pd.Series(s.cat.categories))).to_numpy(zero_copy_only=False)
            uses = np.bincount(codes[codes >= 0], minlength=len(size))
            cols[str(c)] = [int(uses @ size.astype(np.int64)), int((codes < 0).sum())]
        else:
            arr = _arrow(s)
            cols[str(c)] = [int(pc.sum(pc.binary_length(arr)).as_py() or 0), arr.null_count]
    return {"rows": len(df), "names": [str(c) for c in df.columns], "columns": cols}


def fit_events_to_clips(events: pd.DataFrame, clips: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """Events confined to their clip's known duration: an event starting at or after the clip's end
    cannot be heard and is dropped; one that ends after it is cut at the end (the part a listener
    hears). Clips of unknown duration (NaN) are left alone. Returns (events, number dropped, number cut)."""
    dur_s = pd.to_numeric(clips["duration_s"], errors="coerce").to_numpy(float)
    if not np.isfinite(dur_s).any():                            # no clip has a known duration
        return events, 0, 0
    dur = pd.Series(dur_s, index=clips["clip_id"].astype(str).to_numpy())
    codes, uniq = pd.factorize(events["clip_id"])               # look up the distinct ids only
    d_u = dur.reindex(pd.Index(np.asarray(uniq, dtype=object)).astype(str)).to_numpy(float)
    d = np.where(codes >= 0, np.r_[d_u, np.nan][codes], np.nan)
    on = pd.to_numeric(events["onset_s"], errors="coerce").to_numpy(float)
    off = pd.to_numeric(events["offset_s"], errors="coerce").to_numpy(float)
    known = np.isfinite(d)
    late = known & (on >= d)
    over = known & ~late & (off > d)
    if late.any() or over.any():
        events = events.assign(offset_s=np.where(over, d, off))[~late].reset_index(drop=True)
    return events, int(late.sum()), int(over.sum())


def _duplicate_events(df: pd.DataFrame, on: np.ndarray, off: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """``df.duplicated(subset=[clip_id, onset_s, offset_s, label])``, with pandas' four-column
    comparison run only on the rows whose integer hash of (clip, onset, offset) collides with
    another's (on a 1M-row table: a handful of rows instead of all; the collisions found by sorting
    the hashes). ``clip``: the clip ids'
    ``pd.factorize`` codes."""
    cols = ["clip_id", "onset_s", "offset_s", "label"]
    u = np.uint64
    h = (clip.astype(u) * u(0x9E3779B97F4A7C15)) ^ ((on + 0.0).view(u) * u(0xC2B2AE3D27D4EB4F)) \
        ^ ((off + 0.0).view(u) * u(0x165667B19E3779F9))
    # hashes that occur more than once, from a sort (cheaper than a hash table of every row)
    s = np.sort(h)
    repeated = s[1:][s[1:] == s[:-1]]
    out = np.zeros(len(h), bool)
    if len(repeated):                   # equal rows hash equal, so every duplicate is a candidate
        rows = np.flatnonzero(np.isin(h, repeated))
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
    try:
        return pd.read_csv(p, sep=sep)
    except pd.errors.EmptyDataError:
        raise InputError(f"{p}: empty file, expected a header with columns {list(EVENT_COLUMNS)} (events) or "
                         f"{list(CLIP_COLUMNS)} (clips)") from None
