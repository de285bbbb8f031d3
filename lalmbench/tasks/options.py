"""Vectorised option arrangement and item/stats assembly shared by the MCQ families.

:func:`lalmbench.core.items.place_answer` arranges one item at a time; here the same rule (gold at
a balanced position, distractors in random order around it) is applied to all items at once, so
a 200k-item family costs one argsort instead of 200k generator calls.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence as SequenceABC
from typing import Any, Sequence

import numpy as np

from lalmbench.tasks.prep import Prepared, item_ids, r4
from lalmbench.core.items import (LABELS, balanced_positions, chi_square_balance, option_labels,
                                   position_histogram)


def arrange(n_items: int, k: int, gold_member: np.ndarray | int, rng: np.random.Generator
            ) -> tuple[np.ndarray, np.ndarray]:
    """Return (perm [n, k], gold_pos [n]): option j of item i shows member perm[i, j].

    ``gold_member`` is the index (0..k-1) of the correct member in each item's member list.
    Gold positions are balanced over 0..k-1 (items.balanced_positions); the distractors keep a
    uniformly random order.
    """
    gold_member = np.broadcast_to(np.asarray(gold_member, dtype=np.int64), (n_items,))
    gold_pos = balanced_positions(n_items, k, rng)
    keys = rng.random((n_items, k))
    keys[np.arange(n_items), gold_member] = -1.0
    by_key = np.argsort(keys, axis=1, kind="stable")          # gold first, then distractors shuffled
    j = np.arange(k)[None, :]
    p = gold_pos[:, None]
    src = np.where(j < p, j + 1, np.where(j == p, 0, j))
    perm = np.take_along_axis(by_key, src, axis=1)
    return perm, gold_pos


def arrange_rows(rows: np.ndarray, gold_member: np.ndarray | int, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`arrange` for items whose members are ``rows`` [n, k]: (perm, gold_pos, the rows in
    display order)."""
    perm, gold_pos = arrange(len(rows), rows.shape[1], gold_member, rng)
    return perm, gold_pos, np.take_along_axis(rows, perm, axis=1)


def build_stats(*, rows_read: int, dropped: dict[str, int], items: Sequence[dict],
                params: dict | None, gold_pos: np.ndarray | None = None, n_options: int | None = None,
                extra: dict[str, Any] | None = None) -> dict:
    """The ``{task}.stats.json`` payload. With ``gold_pos``/``n_options`` (all items share k) the
    histogram and chi-square come from the arrays; otherwise they are counted from the items."""
    if gold_pos is not None and n_options:
        obs = np.bincount(np.asarray(gold_pos, dtype=np.int64), minlength=n_options)[:n_options]
        hist = {LABELS[i]: int(v) for i, v in enumerate(obs.tolist()) if v}
        chi = _chi(obs.tolist(), n_options) if len(items) else {}
    else:
        hist = position_histogram(items)
        chi = chi_square_fast(items)
    stats = {
        "rows_read": int(rows_read),
        "dropped": {k: int(v) for k, v in sorted(dropped.items())},
        "items_written": len(items),
        "answer_position_histogram": hist,
        "chi_square": chi,
        "params": dict(params or {}),
    }
    if extra:
        stats.update(extra)
    return stats


def import_in_background(*modules: str) -> None:
    """Start importing ``modules`` in a daemon thread: a rule entry calls it for the ones it needs
    only at the end (scipy.special for :func:`_chi`), so that the import runs
    while the main thread waits on parquet reads and numpy/Arrow kernels that release the GIL. A
    later ``import`` of the same module waits for it (Python's per-module import lock)."""
    import importlib
    import threading

    def run() -> None:
        for m in modules:
            try:
                importlib.import_module(m)
            except ImportError:               # the main thread's own import reports it
                pass

    threading.Thread(target=run, name="import-ahead", daemon=True).start()


def _chi(obs: list[int], n: int) -> dict[str, dict]:
    """Pearson's chi-square against uniform, as ``scipy.stats.chisquare`` computes it (same statistic,
    p = ``scipy.special.chdtrc``), without importing scipy.stats (seconds of a build's run time)."""
    from scipy.special import chdtrc

    f_obs = np.asarray(obs, dtype=np.float64)
    f_exp = f_obs.mean(keepdims=True)
    stat = float(((f_obs - f_exp) ** 2 / f_exp).sum())
    return {f"n_options={n}": {"observed": obs, "chi2": stat, "p": float(chdtrc(float(len(f_obs) - 1), stat))}}


def chi_square_fast(items: Sequence[dict]) -> dict[str, dict]:
    """Chi-square that the gold *position* (index in the option list) is uniform, per option count.

    Like items.chi_square_balance, but by position rather than letter, so imported items whose
    labels are not A..k in order (curated TACoBeLAL items keep their original letters) count right.
    """
    out: dict[str, dict] = {}
    obs: dict[int, list[int]] = {}
    for it in items:
        opts = it.get("options")
        if it.get("answer_label") and opts:
            k = len(opts)
            pos = next(i for i, o in enumerate(opts) if o["label"] == it["answer_label"])
            obs.setdefault(k, [0] * k)[pos] += 1
    for k in sorted(obs):
        out.update(_chi(obs[k], k))
    return out


def labels_for(k: int) -> list[str]:
    return option_labels(k)


__all__ = ["arrange", "build_stats", "emit", "gc_paused", "ItemRows", "labels_for", "LABELS"]


def _cols(d: dict[str, Any] | None, n: int) -> tuple[list[str], list]:
    """Dict of per-item (or per-item-per-option) values -> keys and columns (see :func:`_column`)."""
    if not d:
        return [], []
    return list(d), [_column(v) for v in d.values()]


class _Const:
    """A column holding the same value for every item (a family name, a parameter): written as one
    literal instead of being encoded per item."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Coded:
    """A column of values drawn from a few (or a few hundred thousand) distinct ones: ``values``
    (a list) indexed by integer ``codes`` of any shape. A family passes its option texts this way
    (codes into the events' distinct captions), so each distinct text is JSON-encoded once, not
    once per option it appears in."""

    __slots__ = ("values", "codes")

    def __init__(self, values: Sequence, codes: np.ndarray) -> None:
        self.values = values if isinstance(values, list) else list(values)
        self.codes = np.asarray(codes, dtype=np.int64)
        if self.codes.size and (self.codes.min() < 0 or self.codes.max() >= len(self.values)):
            raise ValueError(f"codes must index the {len(self.values)} values")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape


class Nullable:
    """A column of floats with None where ``null`` (any shape, like the values): kept as numpy and
    written by orjson from the buffer, NaN standing in for None (orjson writes both as null)."""

    __slots__ = ("values", "null")

    def __init__(self, values: np.ndarray, null: np.ndarray) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        self.null = np.broadcast_to(np.asarray(null, dtype=bool), self.values.shape)

    def __getitem__(self, key) -> "Nullable":
        return Nullable(self.values[key], self.null[key])

    def tolist(self) -> list:
        out = np.asarray(self.values, dtype=object)
        out[self.null] = None
        return out.tolist()


def _column(v: Any) -> "list | np.ndarray | _Const | Coded | Nullable":
    """A column as ItemRows keeps it: a contiguous numpy array for numbers and booleans (encoded by
    orjson straight from the buffer, no Python float per value), a list for anything else (strings,
    None mixed in), or a :class:`_Const` for a scalar."""
    if isinstance(v, np.ndarray):
        v = v.reshape(-1)
        if (v.dtype.kind in "biu" or v.dtype == np.float64) and v.dtype.isnative:    # float32 would print shorter
            return np.ascontiguousarray(v)
        return v.tolist()
    if isinstance(v, Coded):
        return Coded(v.values, np.ascontiguousarray(v.codes.reshape(-1)))
    if isinstance(v, Nullable):
        return Nullable(np.ascontiguousarray(v.values.reshape(-1)), np.ascontiguousarray(v.null.reshape(-1)))
    if isinstance(v, (list, tuple)):
        return list(v)
    return _Const(v)


def gc_paused(fn):
    """Run ``fn`` with the cyclic GC paused: building ~10^6 small dicts/tuples otherwise triggers
    repeated full-heap collections that cost more than the objects themselves (none form cycles)."""
    import functools
    import gc

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kw)
        finally:
            if was:
                gc.enable()

    return wrapper


def emit(*, ids: Sequence[str], task: str, dataset: str, clip_ids: Sequence[str],
         audio_paths: Sequence[str], questions: Sequence[str] | str, opt_text: np.ndarray,
         opt_type: np.ndarray | Coded | str, gold_pos: np.ndarray | None,
         opt_meta: dict[str, np.ndarray] | None = None, meta: dict[str, Any] | None = None,
         references: Sequence[list[str]] | None = None) -> "ItemRows":
    """Items in the contract from column arrays, as an :class:`ItemRows` sequence.

    ``opt_text``/``opt_type``/``opt_meta`` arrays are [n_items, k] in display order; ``gold_pos``
    is the gold option index per item (None for open-answer items).
    """
    n = len(ids)
    k = opt_text.shape[1] if n else 0
    labels = option_labels(k) if k else []
    if isinstance(opt_text, Coded):
        flat_text = Coded(opt_text.values, opt_text.codes.reshape(-1))
    else:
        flat_text = opt_text.reshape(-1).tolist() if n else []
    flat_type = Coded(opt_type.values, opt_type.codes.reshape(-1)) if isinstance(opt_type, Coded) else \
        opt_type.reshape(-1).tolist() if isinstance(opt_type, np.ndarray) else _Const(opt_type)
    okeys = tuple(opt_meta or {})
    ocols = [_column(opt_meta[key] if isinstance(opt_meta[key], (Coded, Nullable)) else np.asarray(opt_meta[key]))
             for key in okeys]
    mkeys, mcols = _cols(meta, n)
    if gold_pos is not None:
        gold_pos = np.asarray(gold_pos, dtype=np.int64)
        ans_label = Coded(labels, gold_pos)
        if isinstance(flat_text, Coded):
            ans_text = Coded(flat_text.values, flat_text.codes[np.arange(n) * k + gold_pos])
        else:
            ans_text = [flat_text[i * k + g] for i, g in enumerate(gold_pos.tolist())]
    else:
        ans_label = ans_text = _Const(None)
    return ItemRows(n=n, k=k, task=task, dataset=dataset, ids=list(ids), clip_ids=list(clip_ids),
                    audio_paths=list(audio_paths),
                    questions=_Const(questions) if isinstance(questions, str) else _column(questions),
                    labels=labels, flat_text=flat_text, flat_type=flat_type, okeys=okeys, ocols=ocols,
                    mkeys=tuple(mkeys), mcols=mcols, ans_label=ans_label, ans_text=ans_text,
                    references=[list(r) for r in references] if references is not None else None)


def emit_events(prep: "Prepared", clip_codes: np.ndarray, disp: np.ndarray, *, task: str, dataset: str,
                **kw: Any) -> "ItemRows":
    """:func:`emit` for items whose options are annotated events: ``disp`` [n_items, k] holds each
    item's event rows in display order; the option texts are those events' texts, and each option's
    meta has the event's onset, offset and label besides the family's own ``opt_meta``."""
    ev = prep.ev
    opt_meta = {"onset_s": r4(ev["onset"][disp], 6), "offset_s": r4(ev["offset"][disp], 6),
                "label": prep.labels[ev["lcode"][disp]], **kw.pop("opt_meta", {})}
    return emit(ids=item_ids(prep, clip_codes, task), task=task, dataset=dataset,
                clip_ids=prep.clip_ids[clip_codes].tolist(), audio_paths=prep.audio_paths[clip_codes].tolist(),
                opt_text=prep.texts[ev["tcode"][disp]], opt_type="event", opt_meta=opt_meta, **kw)


ITEM_KEYS = ("id", "task", "dataset", "clip_id", "audio_path", "question", "options", "answer_label",
             "answer_text", "references", "meta")


class ItemRows(SequenceABC):
    """A family's items held as columns; each item dict is made when it is read.

    ~10^5 items of ~15 small dicts each cost more memory than the 1M-row events table they came
    from; made one at a time while the JSONL is written they cost next to nothing. Reading an item
    twice gives two equal, independent dicts (a change to one is not kept), and the sequence equals
    any sequence holding the same items.
    """

    def __init__(self, *, n: int, k: int, task: str, dataset: str, ids: list, clip_ids: list, audio_paths: list,
                 questions: list, labels: list, flat_text: list, flat_type: list, okeys: tuple, ocols: list,
                 mkeys: tuple, mcols: list, ans_label: list, ans_text: list, references: list | None) -> None:
        self._n, self._k = n, k
        self._task, self._dataset = task, dataset
        self._ids, self._clip_ids, self._audio_paths, self._questions = ids, clip_ids, audio_paths, questions
        self._labels, self._flat_text, self._flat_type = labels, flat_text, flat_type
        self._ocols, self._mcols = ocols, mcols
        self._ans_label, self._ans_text, self._references = ans_label, ans_text, references
        self._okeys, self._mkeys = okeys, mkeys
        self._make_ometa = _dict_maker(okeys)
        self._make_meta = _dict_maker(mkeys)
        self._make_option = _dict_maker(("label", "text", "type", "meta"))
        self._make_item = _dict_maker(ITEM_KEYS)
        self._type_at = _getter(flat_type)
        self._text_at, self._question_at = _getter(flat_text), _getter(questions)
        self._ans_label_at, self._ans_text_at = _getter(ans_label), _getter(ans_text)
        self._ometa_at = [_getter(c) for c in ocols]
        self._meta_at = [_getter(c) for c in mcols]

    def __len__(self) -> int:
        return self._n

    @property
    def ids(self) -> list[str]:
        """The items' ids, without making the items."""
        return list(self._ids)

    def _item(self, i: int) -> dict:
        k, lo = self._k, i * self._k
        options = [self._make_option(self._labels[j], self._text_at(lo + j), self._type_at(lo + j),
                                     self._make_ometa(*[at(lo + j) for at in self._ometa_at])) for j in range(k)]
        refs = list(self._references[i]) if self._references is not None else []
        return self._make_item(self._ids[i], self._task, self._dataset, self._clip_ids[i], self._audio_paths[i],
                               self._question_at(i), options, self._ans_label_at(i), self._ans_text_at(i), refs,
                               self._make_meta(*[at(i) for at in self._meta_at]))

    def json_lines(self, chunk: int = 4096, threads: int = 2):
        """The items as JSON Lines, in chunks of ``chunk`` items (bytes-like objects: ``bytes`` or
        Arrow buffers, which a file's ``write`` and ``b"".join`` take as they are): exactly what
        ``orjson.dumps(item, OPT_SORT_KEYS | OPT_SERIALIZE_NUMPY)`` + newline gives for each item,
        written from the columns without making the item dicts: each column is encoded by one orjson
        call where it holds only strings or only numbers, split into values and joined with the
        item's literal JSON between them by Arrow's C++ kernels (a third less time than the dicts on
        10^5 items)."""
        k, n = self._k, self._n
        options = tuple({"label": _dump(self._labels[j]), "text": _every(self._flat_text, j, k),
                         "type": _every(self._flat_type, j, k),
                         "meta": {key: _every(c, j, k) for key, c in zip(self._okeys, self._ocols)}}
                        for j in range(k))
        item = {"answer_label": self._ans_label, "answer_text": self._ans_text, "audio_path": self._audio_paths,
                "clip_id": self._clip_ids, "dataset": _dump(self._dataset), "id": self._ids,
                "meta": dict(zip(self._mkeys, self._mcols)), "options": options, "question": self._questions,
                "references": [list(r) for r in self._references] if self._references is not None else b"[]",
                "task": _dump(self._task)}
        parts: list = [b""]                      # literal JSON, then (column, kind) and literal in turn
        _template(item, parts)
        import pyarrow as pa
        import pyarrow.compute as pc

        parts[-1] += b"\n"
        literals = [pa.scalar(x, pa.binary()) for x in parts[::2]]
        slots = parts[1::2]
        if not slots:
            for lo in range(0, n, chunk):
                yield parts[0] * (min(n, lo + chunk) - lo)
            return
        from collections import deque
        from concurrent.futures import ThreadPoolExecutor

        # Arrow's kernels release the GIL: the columns are encoded, and the chunks made (a bounded
        # window, in order), by a few threads while the caller writes the previous chunks; the pool
        # takes tasks in order, so a chunk waiting on a column waits on one that is being encoded
        with ThreadPoolExecutor(max(threads, 1), thread_name_prefix="jsonl") as pool:
            # each distinct value of a coded column encoded once, then picked per item by code; the
            # other columns encoded whole (one orjson call and one split per column, not per chunk),
            # so that a chunk is Arrow slices, takes and one join
            encoded: dict = {}
            for c, kind in slots:
                if kind == "coded" and id(c.values) not in encoded:
                    encoded[id(c.values)] = pool.submit(_encode_json, c.values)
            pieces = [(encoded[id(c.values)], pa.array(c.codes)) if kind == "coded" else
                      (pool.submit(_encode, c, kind), None) for c, kind in slots]

            def lines_of(lo: int) -> "pa.Buffer":
                hi = min(n, lo + chunk)
                args = [literals[0]]
                for (enc, codes), lit in zip(pieces, literals[1:]):
                    enc = enc.result()
                    args += [enc.slice(lo, hi - lo) if codes is None else enc.take(codes.slice(lo, hi - lo)), lit]
                lines = pc.binary_join_element_wise(*args, pa.scalar(b"", pa.binary()))
                offsets = np.frombuffer(lines.buffers()[1], np.int32)[lines.offset:lines.offset + len(lines) + 1]
                # the joined bytes as they lie in Arrow's buffer (a bytes-like object; no copy into a bytes)
                return lines.buffers()[2].slice(int(offsets[0]), int(offsets[-1] - offsets[0]))

            window: deque = deque()
            for lo in range(0, n, chunk):
                window.append(pool.submit(lines_of, lo))
                if len(window) > threads:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._item(j) for j in range(*i.indices(self._n))]
        i = operator.index(i)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"item index {i} out of range ({self._n} items)")
        return self._item(i)

    def __iter__(self):
        return map(self._item, range(self._n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SequenceABC) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ItemRows({self._n} items)"


# --- JSON Lines from columns (ItemRows.json_lines) --------------------------------------------------

_NUMBERS = frozenset({int, float, bool, type(None)})
_CONSTANTS = frozenset({str, int, bool, type(None)})   # equal values of one of these types write the same JSON


def _dump(v: Any) -> bytes:
    import orjson

    from lalmbench.core.io import json_default

    return orjson.dumps(v, option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY, default=json_default)


def _template(value: bytes | dict | tuple | list, parts: list) -> None:
    """Append one item's JSON to ``parts`` (which ends with a literal): ``bytes`` are literal JSON, a
    dict an object (keys sorted by code point, as OPT_SORT_KEYS sorts them), a tuple an array, a
    list a column of per-item values: a (column, kind) slot (see :func:`_encode`) followed by a new
    literal, or the value itself when every item holds the same scalar (a family name, a parameter)."""
    if isinstance(value, bytes):
        parts[-1] += value
    elif isinstance(value, _Const):
        parts[-1] += _dump(value.value)
    elif isinstance(value, np.ndarray):
        parts += [(value, "array"), b""]
    elif isinstance(value, Coded):
        parts += [(value, "coded"), b""]
    elif isinstance(value, Nullable):
        parts += [(value, "nullable"), b""]
    elif isinstance(value, (dict, tuple)):
        keys = sorted(value) if isinstance(value, dict) else range(len(value))
        parts[-1] += b"{" if isinstance(value, dict) else b"["
        for n, key in enumerate(keys):
            parts[-1] += (b"," if n else b"") + (_dump(key) + b":" if isinstance(value, dict) else b"")
            _template(value[key], parts)
        parts[-1] += b"}" if isinstance(value, dict) else b"]"
    else:
        types = set(map(type, value))
        if len(types) == 1 and types <= _CONSTANTS and value.count(value[0]) == len(value):
            parts[-1] += _dump(value[0])
            return
        kind = _kind(types)
        quote = b'"' if kind == "str" else b""        # a string column's pieces come without their quotes
        parts[-1] += quote
        parts += [(value, kind), quote]


def _kind(types: set) -> str:
    """How a list holding values of these types is encoded (see :func:`_encode`)."""
    return "str" if types == {str} else "number" if types <= _NUMBERS else \
        "str_or_null" if types <= {str, type(None)} else "any"


def _encode_json(values: list) -> "pa.BinaryArray":
    """Each value's complete JSON (strings with their quotes), as an Arrow binary array."""
    import pyarrow.compute as pc

    kind = _kind(set(map(type, values)))
    if kind == "str":
        return pc.binary_join_element_wise(b'"', _encode(values, kind), b'"', b"")
    return _encode(values, kind)


def _encode(values: list, kind: str) -> "pa.BinaryArray":
    """Each value's JSON as orjson writes it, as an Arrow binary array: one orjson call per column
    chunk where the kind allows, split in Arrow: in a JSON array of strings a quote is always
    escaped, so ``","`` occurs only between elements (the template supplies the quotes); numbers,
    nulls and booleans hold no comma."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def split(blob: bytes, sep: bytes) -> pa.BinaryArray:
        return pc.split_pattern(pa.array([blob], pa.binary()), sep).flatten()

    if kind == "str":
        return split(_dump(values)[2:-2], b'","')
    if kind == "number":
        return split(_dump(values)[1:-1], b",")
    if kind == "array":                         # numbers or booleans straight from the numpy buffer
        return split(_dump(np.ascontiguousarray(values))[1:-1], b",")
    if kind == "nullable":                      # NaN where null: orjson writes null for both
        return split(_dump(np.where(values.null, np.nan, values.values))[1:-1], b",")
    if kind == "str_or_null":
        n_null = values.count(None)
        if 0 < n_null < len(values) and values.index(None) == len(values) - n_null:    # None only at the end
            return pa.concat_arrays([_encode_json(values[:-n_null]), pa.array([b"null"] * n_null, pa.binary())])
        null = np.fromiter((v is None for v in values), bool, len(values))
        strs = [v for v in values if v is not None]
        if not strs:
            return pa.array([b"null"] * len(values), pa.binary())
        quoted = pc.binary_join_element_wise(b'"', split(_dump(strs)[2:-2], b'","'), b'"', b"")
        taken = quoted.take(pa.array(np.maximum(np.cumsum(~null) - 1, 0)))
        return pc.if_else(pa.array(null), pa.scalar(b"null", pa.binary()), taken)
    return pa.array([_dump(v) for v in values], pa.binary())

def _getter(c: "list | np.ndarray | _Const"):
    """Index -> the column's value there as Python gives it (a numpy column's values as Python
    numbers, as ``tolist`` would)."""
    if isinstance(c, _Const):
        v = c.value
        return lambda i: v
    if isinstance(c, Coded):
        values, codes = c.values, c.codes
        return lambda i: values[codes.item(i)]
    if isinstance(c, Nullable):
        values, null = c.values, c.null
        return lambda i: None if null[i] else values.item(i)
    return c.item if isinstance(c, np.ndarray) else c.__getitem__


def _every(c: "list | np.ndarray | _Const", j: int, k: int):
    """Option ``j`` of every item from a flat per-option column."""
    if isinstance(c, _Const):
        return c
    return Coded(c.values, c.codes[j::k]) if isinstance(c, Coded) else c[j::k]      # Nullable slices too


_MAKERS: dict[tuple[str, ...], Any] = {}


def _dict_maker(keys: tuple[str, ...]):
    """A function building ``{keys[0]: a0, keys[1]: a1, ...}`` from positional args as one dict
    display (compiled once per key tuple): about twice as fast as ``dict(zip(keys, row))``."""
    if keys not in _MAKERS:
        args = [f"a{i}" for i in range(len(keys))]
        body = ", ".join(f"{k!r}: {a}" for k, a in zip(keys, args))
        _MAKERS[keys] = eval(f"lambda {', '.join(args)}: {{{body}}}")  # keys are repr()-quoted literals
    return _MAKERS[keys]
