"""Release layouts that are not one question table: records built from an audio folder tree (the
class is a folder name, as in GTZAN and CochlScene) or a tree of small label files (GiantSteps),
from a header-less table (TUT2017's ``meta.txt``), from the matching lines of text files (IEMOCAP's
EmoEvaluation), and label values mapped to the text the scoring script compares (VocalSound's
AudioSet ids -> "Laughter").

The declarative reader (:mod:`lalmbench.data.adapters.reader`) asks :data:`LAYOUTS` for a spec's
``format`` before its table formats, and applies :func:`map_values` to every record it loaded, so a
preset names these as data:

  format: folders    audio_glob: glob(s) of the audio files under ``items``;
                     path_fields: a regex over each file's path relative to ``items`` whose named
                     groups become fields; the file's own path is the field ``path``;
                     content_field: the globbed files are label files instead (GiantSteps'
                     annotations/key/<track>.key), their text this field
  format: headerless names: [column names] of a tab- or space-separated table without a header;
                     optional_names: trailing ones a row may lack (TUT2017's development meta.txt
                     adds a recording id that its evaluation meta.txt has not)
  format: lines      line_pattern: a regex whose named groups make one record of each matching line
                     of the files ``pattern`` names (path_fields over each file's path adds fields)
  value_maps:        {column: {value: text}} -- a value missing from its map leaves the record out,
                     counted as ``item:label_not_in_map``
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from lalmbench.core.io import InputError
from lalmbench.data.adapters.tables import UNREADABLE


def _globs(spec: dict, key: str) -> list[str]:
    v = spec.get(key)
    return [str(g) for g in (v if isinstance(v, list) else [v])] if v else []


def folder_records(path: Path, spec: dict) -> list[dict]:
    """One record per audio file under the folder ``path`` (sorted by relative path), its fields read
    from the path by ``path_fields``. A file whose path does not match is an error naming it and the
    pattern: a wrong folder given as ``items`` must not pass as an empty benchmark."""
    if not path.is_dir():
        raise InputError(f"{path}: this preset reads a folder tree ({spec.get('layout_hint', 'class folders')}); "
                         f"params.items is a file. Set it to the folder that holds the class folders")
    globs = _globs(spec, "audio_glob") or ["**/*.wav"]
    files = sorted({f for g in globs for f in path.glob(g) if f.is_file()})
    if not files:
        raise InputError(f"{path}: no files matching {globs}; expected "
                         f"{spec.get('layout_hint', 'one folder per class holding its audio files')}")
    pattern = re.compile(str(spec.get("path_fields") or r"^(?P<label>[^/]+)/"))
    out = []
    for f in files:
        rel = f.relative_to(path).as_posix()
        m = pattern.search(rel)
        if m is None:
            raise InputError(f"{path / rel}: its path does not match {pattern.pattern!r}; expected "
                             f"{spec.get('layout_hint', 'one folder per class holding its audio files')}")
        rec = {"path": rel, **{k: v for k, v in m.groupdict().items() if v is not None}}
        if spec.get("content_field"):        # a label file (GiantSteps' <track>.key): its text is the field
            rec[str(spec["content_field"])] = _small_text(f)
        out.append(rec)
    return out


#: a label file read as a field is a few words; anything longer is not one (a wrong glob)
MAX_LABEL_FILE = 4096


def _small_text(path: Path) -> str:
    if path.stat().st_size > MAX_LABEL_FILE:
        raise InputError(f"{path}: {path.stat().st_size} bytes, too long for a label file (at most "
                         f"{MAX_LABEL_FILE}); audio_glob should name the label files")
    try:
        return path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; audio_glob should name the label files") from None


def headerless_records(path: Path, spec: dict) -> list[dict]:
    """Rows of a table without a header line (tabs, else runs of spaces), named by ``names``. A row
    with another number of fields is an error naming its line: such a file is not this layout."""
    names = [str(n) for n in spec.get("names") or []]
    if not names:
        raise InputError(f"{path}: format headerless needs names: [column, ...]")
    if path.is_dir():
        found = sorted(f for g in _globs(spec, "pattern") for f in path.glob(g) if f.is_file())
        if not found:
            raise InputError(f"{path}: no file matching {_globs(spec, 'pattern')} in this folder")
        return [r for f in found for r in headerless_records(f, dict(spec, pattern=None))]
    optional = [str(n) for n in spec.get("optional_names") or []]
    least = len(names) - len([n for n in names if n in optional])
    expected = f"{least}" + (f" to {len(names)}" if least < len(names) else "")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.rstrip("\r").split("\t") if "\t" in line else line.split()
        parts = [p.strip() for p in parts]
        if not least <= len(parts) <= len(names):
            raise InputError(f"{path}: line {n} has {len(parts)} field(s) ({line[:80]!r}); expected "
                             f"{expected}: {', '.join(names)}")
        out.append(dict(zip(names, parts)))
    return out


def line_records(path: Path, spec: dict) -> list[dict]:
    """One record per line matching ``line_pattern`` in the text files ``pattern`` names under the
    folder ``path`` (or in the file ``path``), with the named groups of ``path_fields`` over the
    file's relative path beside the line's (IEMOCAP's Session1/dialog/EmoEvaluation/<dialog>.txt:
    the session and dialog from the path, utterance and emotion from its lines). Other lines
    (headers, per-annotator detail) are not records; files where no line matches are an error."""
    files = sorted(f for g in _globs(spec, "pattern") for f in path.glob(g) if f.is_file()) if path.is_dir() else [path]
    hint = spec.get("layout_hint", "lines matching line_pattern")
    if not files:
        raise InputError(f"{path}: no file matching {_globs(spec, 'pattern')}; expected {hint}")
    line_rx = re.compile(str(spec.get("line_pattern") or r"^(?P<line>.+)$"))
    file_rx = re.compile(str(spec["path_fields"])) if spec.get("path_fields") else None
    out = []
    for f in files:
        rel = f.relative_to(path).as_posix() if path.is_dir() else f.name
        m = file_rx.search(rel) if file_rx else None
        if file_rx and m is None:
            raise InputError(f"{f}: its path does not match {file_rx.pattern!r}; expected {hint}")
        fields = {k: v for k, v in (m.groupdict() if m else {}).items() if v is not None}
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            lm = line_rx.search(line)
            if lm:
                out.append({**fields, **{k: v for k, v in lm.groupdict().items() if v is not None}})
    if not out:
        raise InputError(f"{path}: no line matching {line_rx.pattern!r} in {len(files)} file(s) "
                         f"({files[0].name}, ...); expected {hint}")
    return out


#: ``format`` values the reader hands to this module, and the function that reads each
LAYOUTS: dict[str, Callable[[Path, dict], list[dict]]] = {
    "folders": folder_records,
    "headerless": headerless_records,
    "lines": line_records,
}


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
    """The answer and audio columns a preset names must exist in the file: a table of another layout
    (a train split's CSV with other headers, a folder of something else) is an error naming the file,
    the column expected and the columns found, not a benchmark whose every item is "missing"."""
    if not records:
        return
    cols = spec.get("columns") or {}
    found = {k for r in records for k in r if not str(k).startswith("_")}
    for key in ("answer", "audio"):
        if key == "answer" and (spec.get("allow_no_answer") or spec.get("kind") == "instruction"):
            continue
        v = cols.get(key)
        names = [str(n) for n in (v if isinstance(v, list) else [v]) if n is not None and "{" not in str(n)]
        if names and not found & set(names):
            where = spec.get("pattern") or (spec.get("format") if spec.get("format") not in (None, "auto") else None)
            raise InputError(f"{path}: no column {' or '.join(map(repr, names))} (the {key}) in its records; expected "
                             f"{spec.get('preset', 'the preset')}'s layout{f' ({where})' if where else ''}, "
                             f"found columns {sorted(found)[:20]}")
