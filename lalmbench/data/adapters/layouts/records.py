"""What every layout's records go through, whatever read them: fields from a file's path
(``path_fields``), the columns a layout must have, derived fields, the rows of the split, the audio
files of the split (``audio_join``) and label values mapped to the text the scoring compares
(``value_maps``); see :mod:`lalmbench.data.adapters.layouts`."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from lalmbench.core.io import InputError
from lalmbench.data.adapters.tables import UNREADABLE


def layout_name(spec: dict, default: str | None = None) -> str:
    """The release layout in words, for errors that find another one (the preset's ``layout``)."""
    return str(spec.get("layout") or default or f"the files of {spec.get('preset', 'this dataset')!r}")


def path_match(pattern: str, rel: str, file: Path, expected: str) -> dict:
    """The named groups of ``pattern`` (``path_fields``) over a file's path relative to ``items``; a
    path that does not match is an error naming the file: a wrong folder must not pass as a benchmark."""
    m = re.search(pattern, rel)
    if m is None:
        raise InputError(f"{file}: its path does not match {pattern!r}; expected {expected}")
    return {k: v for k, v in m.groupdict().items() if v is not None}


def on_file(records: list[dict], file: Path, root: Path, spec: dict) -> list[dict]:
    """One file's records with ``_dir``, ``_file`` and its ``path_fields``."""
    folder = root.is_dir()
    rel = file.relative_to(root) if folder else file     # one file: its path fields come from its whole path
    extra: dict[str, Any] = {"_dir": rel.parent.as_posix() if folder and str(rel.parent) != "." else "",
                             "_file": str(file)}
    if spec.get("path_fields"):
        extra.update(path_match(str(spec["path_fields"]), rel.as_posix(), file, layout_name(spec)))
    return [{**r, **{k: v for k, v in extra.items() if k not in r}} for r in records]


def arrange(records: list[dict], spec: dict, audio_root: Path | None) -> tuple[list[dict], Counter, Counter]:
    """The layout's rows: derived fields, the rows of the chosen split, and (``audio_join``) the
    audio files of the split. Returns (records, dropped: reason -> n, notes: reason -> n)."""
    dropped: Counter = Counter()
    notes: Counter = Counter()
    for col, pattern in (spec.get("derive") or {}).items():
        rx = re.compile(str(pattern))
        for r in records:
            m = rx.search(str(r.get(col, "")))
            if m:
                r.update({k: v for k, v in m.groupdict().items() if v is not None and k not in r})
    where = spec.get("rows_where") or {}
    if where:
        if records and any(c not in records[0] for c in where):
            raise InputError(f"{records[0].get('_file', spec.get('items'))}: no column(s) "
                             f"{[c for c in where if c not in records[0]]} to select rows by; expected {layout_name(spec)}")
        keep = [r for r in records if all(str(r.get(c, "")) in [str(v) for v in as_list(vals)]
                                          for c, vals in where.items())]
        if len(keep) < len(records):
            notes[f"rows:outside_{'_'.join(f'{c}={v}' for c, v in where.items())}"] = len(records) - len(keep)
        records = keep
    if spec.get("audio_join"):
        records = _join_audio(records, dict(spec["audio_join"]), audio_root, spec, dropped, notes)
    return records, dropped, notes


def as_list(v: Any) -> list:
    """A value or a list of values as a list."""
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _join_audio(records: list[dict], join: dict, root: Path | None, spec: dict, dropped: Counter,
                notes: Counter) -> list[dict]:
    """Records whose ``key`` is the stem of an audio file under ``root`` (the split's folder), with
    ``_audio`` = that file's path relative to ``root``. A transcript of another split is no item
    here (noted); an audio file without a transcript is left out (``item:no_transcript``)."""
    if root is None:
        raise InputError(f"dataset {spec.get('source', '')!r}: the split is the audio folder (audio_join), so "
                         f"params.audio_root must be set to it. {spec.get('how', '')}")
    glob, key = str(join.get("glob", "**/*.wav")), str(join.get("key", "id"))
    audio: dict[str, str] = {}
    for f in sorted(root.glob(glob)):
        if f.is_file():
            audio.setdefault(f.stem, f.relative_to(root).as_posix())
    if not audio:
        raise InputError(f"{root}: no audio files matching {glob!r}; expected {layout_name(spec)}")
    out, seen = [], set()
    for r in records:
        k = str(r.get(key, ""))
        if k in audio:
            out.append({**r, "_audio": audio[k]})
            seen.add(k)
    if len(records) > len(out):
        notes["rows:transcripts_of_other_splits"] = len(records) - len(out)
    missing = len(set(audio) - seen)
    if missing:
        dropped["item:no_transcript"] += missing
    return out


def map_values(records: list[dict], spec: dict, path: Path) -> list[dict]:
    """Records with ``value_maps`` applied: the column's value replaced by its mapped text, the value
    as published kept as ``<column>_published``; a value not in the map marks the record unreadable
    (counted by the reader as ``item:label_not_in_map``)."""
    maps = spec.get("value_maps") or {}
    if not maps:
        return records
    out = []
    for r in records:
        r = dict(r)
        for col, table in maps.items():
            if col not in r:
                raise InputError(f"{path}: value_maps names column {col!r}, which the records do not have "
                                 f"(found {sorted(k for k in r if not k.startswith('_'))})")
            v = r[col]
            key = v.strip() if isinstance(v, str) else v
            if key in table:
                r[f"{col}_published"], r[col] = v, table[key]
            else:
                r.setdefault(UNREADABLE, "item:label_not_in_map")
        out.append(r)
    return out


def check_columns(records: list[dict], spec: dict, path: Path) -> None:
    """The layout's ``expect_columns`` and the answer and audio columns a preset names must exist in
    the file: a table of another layout (a train split's CSV with other headers, a folder of something
    else) is an error naming the file, the columns expected and the columns found, not a benchmark whose
    every item is "missing"."""
    if not records:
        return
    expect = list(spec.get("expect_columns") or [])
    missing = [c for c in expect if c not in records[0]]
    if missing:
        raise InputError(f"{path}: no column(s) {missing}; expected {layout_name(spec)} with columns "
                         f"{expect}, found {[c for c in records[0] if not str(c).startswith('_')]}")
    cols = spec.get("columns") or {}
    found = {k for r in records for k in r if not str(k).startswith("_")}
    later = {g for rx in (spec.get("derive") or {}).values() for g in re.compile(str(rx)).groupindex}
    for key in ("answer", "audio"):
        if key == "answer" and (spec.get("allow_no_answer") or spec.get("kind") == "instruction"):
            continue
        v = cols.get(key)
        # a template, or a field arrange() adds later (audio_join's _audio, derive's groups), is not checked
        names = [str(n) for n in (v if isinstance(v, list) else [v])
                 if n is not None and "{" not in str(n) and not str(n).startswith("_") and str(n) not in later]
        if names and not found & set(names):
            where = spec.get("pattern") or (spec.get("format") if spec.get("format") not in (None, "auto") else None)
            raise InputError(f"{path}: no column {' or '.join(map(repr, names))} (the {key}) in its records; expected "
                             f"{spec.get('preset', 'the preset')}'s layout{f' ({where})' if where else ''}, "
                             f"found columns {sorted(found)[:20]}")
