"""Shared, vectorised preparation of strong annotations for the task builders.

Every family starts from the same cleaned view of ``events.parquet`` joined to ``clips.parquet``:
events sorted by (clip, onset), integer clip codes, the option text (caption, else label) and a
normalised text code used to spot duplicates. Each filter here counts what it removed under a
named reason so ``stats.json`` says why rows did not become items.

Reason names carry their unit as a prefix: ``event:`` (annotation rows), ``clip:`` (clips),
``candidate:`` (sampled option tuples rejected by a family's ambiguity rules).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lalmbench.data.annotations import same_values
from lalmbench.core.io import InputError

EVENT_COLUMNS = ("clip_id", "onset_s", "offset_s", "label")
CLIP_COLUMNS = ("clip_id", "audio_path")


class Table(dict):
    """Columns as equal-length numpy arrays. Lighter than a DataFrame for the builders' row
    selections (a DataFrame take/boolean filter re-stacks blocks; here it is one fancy index each)."""

    def __len__(self) -> int:
        return len(next(iter(self.values()))) if dict.__len__(self) else 0

    def take(self, idx: np.ndarray) -> "Table":
        return Table({k: v[idx] for k, v in self.items()})


@dataclass
class Prepared:
    """Events ready for a builder: one row per usable event, sorted by (clip, onset, offset)."""

    ev: Table                      # columns: row, clip, onset, offset, dur, norm, tcode, lcode, occ, n_occ
    clip_ids: np.ndarray           # clip code -> clip_id (object array of str)
    audio_paths: np.ndarray        # clip code -> audio_path as given in clips
    clip_durations: np.ndarray     # clip code -> duration_s (NaN when unknown)
    text_uniques: np.ndarray       # norm code -> a representative option text
    texts: np.ndarray              # tcode -> the event's own option text (caption, else label)
    labels: np.ndarray             # lcode -> label (index -1 -> None)
    raw_clip: np.ndarray           # clip code of every input row (before any filter)
    raw_lcode: np.ndarray          # label code of every input row (before any filter)
    raw_norm: np.ndarray           # normalised-text code of every input row (-1 = empty text)
    rows_read: int
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str, n: int) -> None:
        if n:
            self.dropped[reason] = self.dropped.get(reason, 0) + int(n)

    def drop_coded(self, code: np.ndarray, reasons: dict[int, str]) -> np.ndarray:
        """Count each candidate's drop code (0 = usable) under its reason; the usable positions."""
        for c, name in reasons.items():
            self.drop(name, int((code == c).sum()))
        return np.flatnonzero(code == 0)

    def clip_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(clip codes present, start row, count) of each clip's run in ``ev``."""
        codes = self.ev["clip"]           # sorted by clip, so runs are contiguous
        if len(codes) == 0:
            z = np.zeros(0, np.int64)
            return z, z, z
        start = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        count = np.diff(np.r_[start, len(codes)])
        return codes[start], start, count


def param(params: dict | None, name: str, default: Any) -> Any:
    """A builder parameter with its default (None in config means 'use the default')."""
    if params and params.get(name) is not None:
        return params[name]
    return default


def n_options(params: dict, *, family: str, task: str, default: int, minimum: int = 2) -> int:
    """The ``n_options`` param, refused below the least a question of this family needs."""
    k = int(param(params, "n_options", default))
    if k < minimum:
        raise ValueError(f"task {task}: {family} needs n_options >= {minimum}, got {k}")
    return k


def choice(params: dict, name: str, allowed: tuple[str, ...], *, task: str) -> str:
    """A param that takes one of ``allowed`` (the first is the default)."""
    value = str(param(params, name, allowed[0]))
    if value not in allowed:
        raise ValueError(f"task {task}: {name} must be {' or '.join(repr(a) for a in allowed)}, got {value!r}")
    return value


COMMON_PARAMS = frozenset({"min_event_s", "sample_seed", "question", "max_items_per_clip"})


def check_params(params: dict | None, allowed: set[str] | frozenset, *, family: str, task: str) -> dict:
    """Copy of ``params``; an unknown key (a typo such as ``min_gap`` for ``min_gap_s``) is an error
    instead of a silently ignored difficulty setting."""
    params = dict(params or {})
    known = set(allowed) | COMMON_PARAMS
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"task {task!r} (family {family}): unknown param(s) {unknown}; known: {sorted(known)}")
    return params


def _arrow_strings(x) -> "pa.Array | pa.ChunkedArray":
    """A string column or array in pyarrow (no copy for pyarrow-backed strings)."""
    import pyarrow as pa

    arr = getattr(x, "array", x)
    if isinstance(arr, pd.arrays.ArrowStringArray):
        return pa.array(arr)
    return pa.array(np.asarray(arr, dtype=object), type=pa.string(), from_pandas=True)


def factorize_strings(x, *, sort: bool = False) -> tuple[np.ndarray, pd.api.extensions.ExtensionArray]:
    """``pd.factorize(x, sort=sort, use_na_sentinel=True)`` for strings, run in Arrow's C++ kernels
    (hashing, and a sort by code point: UTF-8 byte order is code point order, as Python compares)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(_arrow_strings(x))
    if isinstance(enc, pa.ChunkedArray):     # the chunks share the dictionary built over all of them
        chunks = enc.chunks
        if not chunks:
            return np.zeros(0, np.int64), pd.array([], dtype="string")
        uniq = chunks[-1].dictionary
        if not all(c.dictionary.equals(uniq) for c in chunks[:-1]):
            chunks = enc.unify_dictionaries().chunks
            uniq = chunks[0].dictionary
        codes = np.concatenate([c.indices.fill_null(-1).to_numpy() for c in chunks]).astype(np.int64)
    else:
        codes, uniq = enc.indices.fill_null(-1).to_numpy().astype(np.int64), enc.dictionary
    if sort and len(uniq):
        order = pc.array_sort_indices(uniq).to_numpy()
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        codes = np.where(codes >= 0, rank[np.maximum(codes, 0)], -1)
        uniq = uniq.take(order)
    return codes, pd.arrays.ArrowStringArray(uniq)


def codes_of(s: pd.Series) -> tuple[np.ndarray, pd.api.extensions.ExtensionArray]:
    """(int64 codes with -1 for missing, the values they index as a "string" array) of a column. A
    categorical (string columns read with ``read_dictionary``) is already that; anything else is
    factorised once. The values may include ones no row uses (a categorical's unused categories)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.cat.codes.to_numpy(np.int64), pd.array(s.cat.categories, dtype="string")
    if isinstance(s.array, pd.arrays.ArrowStringArray):
        return factorize_strings(s)
    codes, uniq = pd.factorize(s, use_na_sentinel=True)
    return codes.astype(np.int64), pd.array(uniq, dtype="string")


def sorted_codes(codes: np.ndarray, values: pd.api.extensions.ExtensionArray, *, strip: bool = False
                 ) -> tuple[np.ndarray, pd.api.extensions.ExtensionArray]:
    """``codes`` (into ``values``, -1 = missing) renumbered into the sorted distinct strings the rows
    use (stripped first with ``strip``): what ``pd.factorize(strings, sort=True)`` gives for the rows'
    strings, computed on the values only."""
    used = np.bincount(codes[codes >= 0], minlength=len(values)) > 0
    vals = values[used]
    if strip:
        vals = pd.Series(vals).str.strip().array
    f, uniq = factorize_strings(vals, sort=True)
    remap = np.full(len(values) + 1, -1, np.int64)
    remap[np.flatnonzero(used)] = f
    return remap[np.where(codes >= 0, codes, len(values))], uniq


# Python's \W (= [^\w\s] or \s) restricted to ASCII, written out for RE2 (whose \w differs)
_ASCII_NOT_WORD = r"[^0-9A-Za-z_]+"


def normalise_text(s: pd.Series) -> pd.Series:
    r"""Case-, whitespace- and trailing-punctuation-insensitive text, for duplicate detection.

    The rules are Python's (Unicode ``\w``/``\s``): lower case, each character that is neither a
    word character nor whitespace replaced by a space, whitespace runs collapsed, stripped. For
    ASCII texts, nearly all captions, that is every run of non-word characters -> one space, done by
    pyarrow's RE2 in C++ in one pass over the distinct captions; only the others go through Python's ``re``.
    """
    def python_rules(x: pd.Series) -> pd.Series:
        return (x.str.lower().str.replace(r"[^\w\s]", " ", regex=True)
                .str.replace(r"\s+", " ", regex=True).str.strip())

    s = s.astype("string")
    if s.dtype.storage != "pyarrow" or len(s) == 0:
        return python_rules(s)
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = pa.array(s.array)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    out = pd.Series(pd.arrays.ArrowStringArray(_ascii_words(arr)), index=s.index)
    other = ~np.asarray(pc.string_is_ascii(arr).fill_null(True), dtype=bool)
    if other.any():
        out[other] = python_rules(s[other])
    return out


_WORD_BYTE = np.full(256, 32, np.uint8)                 # ASCII word characters, lower-cased; others -> " "
for _c in b"0123456789abcdefghijklmnopqrstuvwxyz_":
    _WORD_BYTE[_c] = _c
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _WORD_BYTE[_c] = _c + 32


def _ascii_words(arr: "pa.StringArray", chunk: int = 16384) -> "pa.StringArray":
    """Each string lower-cased (ASCII), every run of bytes that are not ASCII word characters turned
    into one space, stripped: ``utf8_trim(replace_substring_regex(ascii_lower(x), "[^0-9A-Za-z_]+",
    " "), " ")`` done on the bytes with numpy (RE2 takes twice as long on 300k captions), a few
    thousand strings at a time so the temporaries stay in cache. Bytes of non-ASCII characters
    become spaces too; callers redo those strings with Python's rules."""
    import pyarrow as pa

    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    if len(arr) <= chunk:
        return _ascii_words_chunk(arr)
    return pa.concat_arrays([_ascii_words_chunk(arr.slice(lo, chunk)) for lo in range(0, len(arr), chunk)])


def _ascii_words_chunk(arr: "pa.StringArray") -> "pa.StringArray":
    import pyarrow as pa

    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], np.int32)[arr.offset:arr.offset + n + 1].copy()
    data = np.frombuffer(arr.buffers()[2], np.uint8)[offsets[0]:offsets[-1]] if n else np.zeros(0, np.uint8)
    offsets -= offsets[0] if n else 0
    b = _WORD_BYTE[data]
    word = b != 32
    length = np.diff(offsets)
    row = np.repeat(np.arange(n, dtype=np.int32), length)
    start = np.zeros(len(b) + 1, bool)
    start[offsets[:-1][length > 0]] = True                 # first byte of each non-empty string
    # a non-word run becomes one space where a word byte of the same string precedes it and one
    # follows it right away (only the run's last byte is kept); leading and trailing runs go
    words_before = np.cumsum(word, dtype=np.int32) - word
    has_before = words_before > np.r_[words_before, 0][offsets[:-1]][row]
    word_next = np.r_[word[1:], False] & ~start[1:]
    keep = word | (word_next & has_before)
    kept = np.zeros(len(b) + 1, np.int32)
    np.cumsum(keep, dtype=np.int32, out=kept[1:])
    out = pa.StringArray.from_buffers(n, pa.py_buffer(kept[offsets]), pa.py_buffer(b[keep]))
    if arr.null_count:
        import pyarrow.compute as pc

        out = pc.if_else(arr.is_valid(), out, pa.scalar(None, pa.string()))
    return out


def _require(df: pd.DataFrame, cols: tuple[str, ...], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputError(f"{what}: missing column(s) {missing}; have {list(df.columns)}")


def prepare_events(events: pd.DataFrame, clips: pd.DataFrame, params: dict | None, *,
                   repeats: str = "first", min_events: int = 1, norm_order: bool = True,
                   text_order: bool = True) -> Prepared:
    """Clean and index events for a builder.

    ``repeats`` says what to do with a text (normalised caption/label) that occurs more than once
    in a clip: ``"keep"`` keeps every occurrence, ``"first"`` keeps only its first occurrence
    (later ones counted as ``event:repeat_not_first``), ``"drop"`` drops every occurrence
    (``event:repeated_text``), for questions where a repeat makes the answer ambiguous.
    Clips left with fewer than ``min_events`` usable events are dropped (``clip:too_few_events``).
    ``norm_order=False`` numbers the normalised texts in no particular order (skipping a sort of the
    distinct texts) for a family that only compares norm codes for equality. ``text_order=False``
    does the same for the text and label codes where the texts are the labels (TACoBeLAL): they
    number the values as the table stores them (a categorical's categories; skipping a sort of
    every distinct caption), for a family that only looks texts up by code; rows tied in (clip,
    onset, offset) are still ordered by their texts, ranked among those rows only.
    """
    return _prepare_events(events, clips, params, repeats=repeats, min_events=min_events, norm_order=norm_order,
                           text_order=text_order)


def _prepare_events(events: pd.DataFrame, clips: pd.DataFrame, params: dict | None, *, repeats: str,
                    min_events: int, norm_order: bool, text_order: bool) -> Prepared:
    _require(events, EVENT_COLUMNS, "events table")
    _require(clips, CLIP_COLUMNS, "clips table")
    rows_read = len(events)
    min_event_s = float(param(params, "min_event_s", 0.0))

    import pyarrow as pa
    import pyarrow.compute as pc

    clip_arrow = _arrow_strings(clips["clip_id"].astype(str))
    if pc.count_distinct(clip_arrow).as_py() != len(clip_arrow):
        raise InputError("clips table: duplicate clip_id values (run annotations.validate_clips for the rows)")
    order = pc.array_sort_indices(clip_arrow).to_numpy()       # code point order, as Python sorts str
    clip_ids = np.asarray(clip_arrow.take(order).to_pylist(), dtype=object)
    audio_paths = clips["audio_path"].astype(str).to_numpy()[order].astype(object)
    if "duration_s" in clips.columns:
        clip_durations = pd.to_numeric(clips["duration_s"], errors="coerce").to_numpy(float)[order]
    else:
        clip_durations = np.full(len(clip_ids), np.nan)

    # codes for the 1M clip ids (free for a categorical), then look up only the distinct ones in the clips table
    ev_codes, ev_uniq = codes_of(events["clip_id"])
    if len(ev_codes) and ev_codes.min() < 0:
        i = int(np.flatnonzero(ev_codes < 0)[0])
        raise InputError(f"events table row {i + 1}: clip_id is missing")
    # the distinct ids' rows in the sorted clips table (-1 = unknown), by Arrow's hash lookup
    loc = pc.index_in(_arrow_strings(ev_uniq).cast(pa.large_string()),
                      value_set=clip_arrow.take(order).cast(pa.large_string()))
    loc = loc.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    used = np.bincount(ev_codes, minlength=len(ev_uniq)) > 0
    if np.any((loc < 0) & used):
        bad_u = np.flatnonzero((loc < 0) & used)
        unknown = np.isin(ev_codes, bad_u)
        i = int(np.flatnonzero(unknown)[0])
        raise InputError(f"events table row {i + 1}: clip_id {str(ev_uniq[ev_codes[i]])!r} is not in the clips "
                         f"table ({int(unknown.sum())} such rows)")
    code = loc[ev_codes].astype(np.int64)

    onset = pd.to_numeric(events["onset_s"], errors="coerce").to_numpy(float)
    offset = pd.to_numeric(events["offset_s"], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(onset) | ~np.isfinite(offset) | (offset < onset) | (onset < 0)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"events table row {i + 1}: onset_s={float(onset[i])!r}, offset_s={float(offset[i])!r}; expected "
                         f"finite 0 <= onset_s <= offset_s ({int(bad.sum())} such rows)")

    # Text work happens on distinct values only (a few hundred AudioSet labels, a few hundred thousand
    # TACoBeLAL captions for 1M rows), carried to the rows through integer codes. The option text is the
    # caption where it is not blank, else the label.
    lraw, lvals = codes_of(events["label"])
    if "caption" in events.columns and not same_values(events["caption"], events["label"]):
        craw, cvals = codes_of(events["caption"])
        cap_ok = (pd.Series(cvals).str.strip().fillna("") != "").to_numpy(bool)
        has_cap = (craw >= 0) & np.r_[cap_ok, False][craw]
        traw = np.where(has_cap, len(lvals) + craw, lraw)
        tvals = pd.concat([pd.Series(lvals), pd.Series(cvals)], ignore_index=True).array
    else:                                   # no captions, or captions that are the labels (TACoBeLAL)
        traw, tvals = lraw, lvals

    same_texts = traw is lraw and (pd.Series(lvals).str.strip() == pd.Series(lvals)).all()
    as_read = same_texts and not text_order
    if as_read:
        # the texts are the labels, already stripped: their codes as read, in no particular order
        lcodes, luniq = lraw, lvals
        tcodes, tuniq = lcodes, luniq
    else:
        # sorted codes: every code (and so every tie-break and sample) is independent of input row order
        lcodes, luniq = sorted_codes(lraw, lvals)
        tcodes, tuniq = (lcodes, luniq) if same_texts else sorted_codes(traw, tvals, strip=True)
    def norms() -> tuple[np.ndarray, int, np.ndarray]:
        """(norm code of each row, number of norm codes, each norm code's representative text code)."""
        ncodes_u, norm_vals = factorize_strings(normalise_text(pd.Series(tuniq, dtype="string")), sort=norm_order)
        # representative text for each norm code: the first (in code point order) of the texts mapping to it
        rep = _first_text_per_norm(ncodes_u, len(norm_vals), tuniq if as_read else None, tcodes)
        return np.where(tcodes >= 0, ncodes_u[np.maximum(tcodes, 0)], -1), len(norm_vals), rep

    from concurrent.futures import ThreadPoolExecutor

    # the distinct texts are normalised in a thread while the rows are sorted here (Arrow's and
    # numpy's kernels release the GIL, so on two cores the two overlap)
    with ThreadPoolExecutor(1, thread_name_prefix="norms") as pool:
        normed = pool.submit(norms)
        texts = np.asarray(tuniq, dtype=object)
        empty = (tcodes < 0) | np.r_[texts == "", True][tcodes]
        # Work on a row-index vector and take every column once at the end: a take per column per
        # step would copy the whole table at every step.
        short = ~empty & (offset - onset < min_event_s)
        idx = np.flatnonzero(~empty & ~short)
        if not as_read:
            tie = tcodes.astype(np.int64) * (len(luniq) + 1) + lcodes
            idx = idx[sort_order(code[idx], onset[idx], offset[idx], tie[idx])]
        else:                               # texts = labels, numbered as read: ties are ranked by the strings
            idx = idx[sort_order(code[idx], onset[idx], offset[idx], tcodes[idx], tie_values=tuniq)]
        norm, n_norm, rep_idx = normed.result()
    text_uniques = texts[rep_idx] if len(rep_idx) else np.zeros(0, object)

    prep = Prepared(ev=Table(), clip_ids=clip_ids, audio_paths=audio_paths, clip_durations=clip_durations,
                    text_uniques=text_uniques, texts=texts,
                    labels=np.r_[texts if tuniq is luniq else np.asarray(luniq, dtype=object),
                                 np.array([None], dtype=object)],
                    raw_clip=code, raw_lcode=lcodes, raw_norm=norm,
                    rows_read=rows_read)
    prep.drop("event:empty_text", int(empty.sum()))
    prep.drop("event:shorter_than_min_event_s", int(short.sum()))
    # occurrence index of each (clip, text) and its count: stable sort by one int64 key
    key = code[idx] * np.int64(max(n_norm, 1) + 1) + (norm[idx] + 1)
    ko = np.argsort(key, kind="stable")
    ks = key[ko]
    new = np.r_[True, ks[1:] != ks[:-1]] if len(ks) else np.zeros(0, bool)
    run_start = np.flatnonzero(new)
    run_id = np.cumsum(new) - 1
    occ = np.empty(len(key), np.int64)
    occ[ko] = np.arange(len(key)) - run_start[run_id]
    n_occ = np.empty(len(key), np.int64)
    n_occ[ko] = np.diff(np.r_[run_start, len(key)])[run_id]
    if repeats == "first":
        sel = occ == 0
        prep.drop("event:repeat_not_first", int((~sel).sum()))
    elif repeats == "drop":
        sel = n_occ == 1
        prep.drop("event:repeated_text", int((~sel).sum()))
    elif repeats == "keep":
        sel = np.ones(len(idx), bool)
    else:
        raise ValueError(f"repeats must be keep|first|drop, got {repeats!r}")
    idx, occ, n_occ = idx[sel], occ[sel], n_occ[sel]

    clip_arr = code[idx]
    n_per_clip = np.bincount(clip_arr, minlength=len(clip_ids))[clip_arr] if len(clip_arr) else clip_arr
    few = n_per_clip < min_events
    if few.any():
        prep.drop("clip:too_few_events", int(np.count_nonzero(np.bincount(clip_arr[few]))))
        idx, occ, n_occ = idx[~few], occ[~few], n_occ[~few]
    n_clips_events = int(np.count_nonzero(np.bincount(code))) if len(code) else 0
    n_clips_any = int(np.count_nonzero(np.bincount(code[idx]))) if len(idx) else 0
    gone = n_clips_events - n_clips_any - prep.dropped.get("clip:too_few_events", 0)
    prep.drop("clip:no_usable_events", gone)
    on_i, off_i = onset[idx], offset[idx]
    prep.ev = Table({"row": idx, "clip": code[idx], "onset": on_i, "offset": off_i, "dur": off_i - on_i,
                     "norm": norm[idx], "tcode": tcodes[idx], "lcode": lcodes[idx], "occ": occ, "n_occ": n_occ})
    return prep


def draw_positions(count: np.ndarray, m: int, rng: np.random.Generator,
                   excluded: np.ndarray | None = None) -> np.ndarray:
    """For each row i, ``m`` distinct positions drawn uniformly from ``range(count[i])`` minus
    ``excluded[i]`` (entries < 0 mean 'nothing excluded'); returns [n, m] sorted per row.

    Sequential draws, each mapped past the positions already taken, so the cost is
    O(n * (m + e)^2) numpy work. Callers guarantee ``count - valid excludes >= m``.
    """
    n = len(count)
    count = count.astype(np.int64)
    if excluded is None:
        excluded = np.zeros((n, 0), np.int64)
    big = np.iinfo(np.int64).max // 4
    taken = np.sort(np.where(excluded >= 0, excluded, big), axis=1)
    n_ex = (excluded >= 0).sum(axis=1)
    out = np.zeros((n, 0), np.int64)
    for t in range(m):
        r = np.floor(rng.random(n) * (count - n_ex - t)).astype(np.int64)
        for c in range(taken.shape[1]):              # taken is sorted ascending
            r += r >= taken[:, c]
        out = np.sort(np.concatenate([out, r[:, None]], axis=1), axis=1)
        taken = np.sort(np.concatenate([taken, r[:, None]], axis=1), axis=1)
    return out


def run_rank(keys_sorted: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal values (input sorted/grouped)."""
    if len(keys_sorted) == 0:
        return np.zeros(0, np.int64)
    new = np.r_[True, keys_sorted[1:] != keys_sorted[:-1]]
    return np.arange(len(keys_sorted)) - np.flatnonzero(new)[np.cumsum(new) - 1]


def _first_text_per_norm(ncodes: np.ndarray, n_norm: int, texts, tcodes: np.ndarray) -> np.ndarray:
    """For each norm code, the text code (index into ``ncodes``) of the first of the used texts that
    map to it: the lowest code where the codes are sorted (``texts`` None), else the first string in
    code point order, compared among the texts that share a norm code only."""
    rep = np.full(n_norm, -1)
    if texts is None:
        rep[ncodes[::-1]] = np.arange(len(ncodes))[::-1]
        return rep
    used = np.flatnonzero(np.bincount(tcodes[tcodes >= 0], minlength=len(ncodes)) > 0)
    rep[ncodes[used]] = used
    shared = used[np.bincount(ncodes[used], minlength=n_norm)[ncodes[used]] > 1]
    if len(shared):
        rank = factorize_strings(pd.array(texts, dtype="string")[shared], sort=True)[0]
        by = shared[np.lexsort((rank, ncodes[shared]))]
        first = np.r_[True, ncodes[by][1:] != ncodes[by][:-1]]
        rep[ncodes[by[first]]] = by[first]
    return rep


def sort_order(clip: np.ndarray, onset: np.ndarray, offset: np.ndarray, tie: np.ndarray, *,
               tie_values=None) -> np.ndarray:
    """Order by (clip, onset, offset, tie) -- a total order on content, so the result does not
    depend on input row order. With ``tie_values`` (strings), ``tie`` are codes into them in no
    particular order and the last key is the string itself.

    One unstable argsort of the float key clip*span + onset (exact to < 1 us while clip*span <
    2**40), then np.lexsort only over the rows whose key is tied (their strings ranked among
    themselves): a 4-key lexsort of every row is much slower.
    """
    if len(clip) == 0:
        return np.zeros(0, np.int64)

    def ranked(codes: np.ndarray) -> np.ndarray:
        if tie_values is None:
            return codes
        u, inv = np.unique(codes, return_inverse=True)
        return factorize_strings(pd.array(tie_values, dtype="string")[u], sort=True)[0][inv.reshape(-1)]

    span = float(np.ceil(onset.max())) + 1.0
    if (float(clip.max()) + 1) * span >= 2.0 ** 40:
        return np.lexsort((ranked(tie), offset, onset, clip))
    key = clip * span + onset
    o = np.argsort(key)
    ks = key[o]
    eq = ks[1:] == ks[:-1]
    if eq.any():
        tied = np.zeros(len(o), bool)
        tied[1:] |= eq
        tied[:-1] |= eq
        pos = np.flatnonzero(tied)                 # contiguous runs of equal keys, in key order
        sub = o[pos]
        o[pos] = sub[np.lexsort((ranked(tie[sub]), offset[sub], key[sub]))]
    return o


def sample_tuples(prep: Prepared, k: int, n_trials: int, rng: np.random.Generator) -> np.ndarray:
    """Random k-subsets of each clip's events (row indices into ``prep.ev``, sorted by onset).

    Each trial draws, for every clip with at least k events, k distinct positions uniformly
    (sequential draws mapped past the positions already taken), so one trial costs
    O(n_clips * k^2) numpy work however many events there are. Duplicates across trials are
    removed. Returns an int64 array [m, k] whose rows are sorted (= onset order).
    """
    if len(prep.ev) == 0:
        return np.zeros((0, k), dtype=np.int64)
    _, start, count = prep.clip_bounds()
    ok = count >= k
    start, count = start[ok].astype(np.int64), count[ok].astype(np.int64)
    if len(start) == 0:
        return np.zeros((0, k), dtype=np.int64)
    out = [draw_positions(count, k, rng) for _ in range(int(n_trials))]
    local = np.concatenate(out)                     # [trials * clips, k] positions within clip
    base = np.tile(start, int(n_trials))
    width = int(count.max())
    if width ** k * len(start) < 2 ** 62:           # dedupe on one int64 key when it fits
        key = np.tile(np.arange(len(start), dtype=np.int64), int(n_trials))
        for c in range(k):
            key = key * width + local[:, c]
        _, first = np.unique(key, return_index=True)
    else:
        _, first = np.unique(np.concatenate([base[:, None], local], axis=1), axis=0, return_index=True)
    first = np.sort(first)
    return base[first, None] + local[first]


def select_per_clip(clip_of: np.ndarray, n_max: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of at most ``n_max`` randomly chosen rows per clip, returned in (clip, row) order."""
    if len(clip_of) == 0:
        return np.zeros(0, np.int64)
    keys = clip_of.astype(np.float64) + rng.random(len(clip_of)) * 0.5
    order = np.argsort(keys, kind="stable")
    oc = clip_of[order]
    new = np.r_[True, oc[1:] != oc[:-1]]
    rank = np.arange(len(order)) - np.flatnonzero(new)[np.cumsum(new) - 1]
    return np.sort(order[rank < n_max])


def cap_per_clip(prep: Prepared, ok: np.ndarray, clip_of_ok: np.ndarray, n_max: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The accepted candidates ``ok`` kept after at most ``n_max`` per clip (seeded), with the
    surplus counted as ``candidate:over_max_items_per_clip``."""
    keep = ok[select_per_clip(clip_of_ok, n_max, rng)]
    prep.drop("candidate:over_max_items_per_clip", len(ok) - len(keep))
    return keep


def item_ids(prep: Prepared, clip_codes: np.ndarray, task: str) -> list[str]:
    """``{clip_id}__{task}__{n}`` with n counting items within a clip, in row order.

    Rows need not be grouped by clip (balanced position draws reorder them), so the counter is
    computed over a stable sort by clip and scattered back: ids are unique whatever the row order.
    """
    if len(clip_codes) == 0:
        return []
    order = np.argsort(clip_codes, kind="stable")
    sc = clip_codes[order]
    new = np.r_[True, sc[1:] != sc[:-1]]
    n = np.empty(len(clip_codes), dtype=np.int64)
    n[order] = np.arange(len(sc)) - np.flatnonzero(new)[np.cumsum(new) - 1]
    cids = prep.clip_ids[clip_codes]
    return [f"{c}__{task}__{j}" for c, j in zip(cids.tolist(), n.tolist())]


def format_texts(template: str, texts: list[str]) -> list[str]:
    """``[template.format(text=t) for t in texts]``; joined by plain concatenation when the template's
    only field is ``{text}`` (no format parsing per question)."""
    import string

    parts = list(string.Formatter().parse(template))
    fields = [i for i, (_, name, _, _) in enumerate(parts) if name is not None]
    if len(fields) == 1 and parts[fields[0]][1:] == ("text", "", None):
        i = fields[0]
        pre, post = "".join(p[0] for p in parts[:i + 1]), "".join(p[0] for p in parts[i + 1:])
        return [pre + t + post for t in texts]
    return [template.format(text=t) for t in texts]


def r4(x: np.ndarray, nd: int = 4) -> np.ndarray:
    """Rounded floats for item meta (stable, readable JSON)."""
    return np.round(np.asarray(x, dtype=float), nd)


def with_none(values: np.ndarray, missing: np.ndarray) -> "Nullable":
    """An item column of float ``values`` with None where ``missing`` (JSON null instead of NaN)."""
    from lalmbench.tasks.options import Nullable

    return Nullable(values, missing)
