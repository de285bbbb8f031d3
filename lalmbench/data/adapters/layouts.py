"""Release layouts of speech corpora, read as plain records for the declarative reader.

Speech benchmarks are downloaded as their authors packed them, not as one question table: LibriSpeech
keeps one ``<speaker>-<chapter>.trans.txt`` per chapter folder beside the flac files, AISHELL ships one
transcript file for every split and the split's audio in its own folder, Common Voice and CoVoST 2 write
TSVs whose text holds bare quote characters, FLEURS writes TSVs without a header. These spec keys
(set by a preset, or in a dataset's params) read them without a code path per benchmark:

  format: transcripts   ``<id><blank><text>`` lines (Kaldi ``text``, LibriSpeech ``*.trans.txt``,
                        AISHELL transcripts) -> records ``{id, text}``
  quoting: none         a CSV/TSV whose quote characters are text (Common Voice, CoVoST 2, FLEURS)
  names: [..]           the column names of a CSV/TSV without a header line (FLEURS)
  expect_columns: [..]  columns every table of the layout has; a file without them fails, naming it
  path_fields: regex    named groups matched in each file's path (relative to ``items``) become
                        fields of its records (FLEURS' language folder, CoVoST 2's language pair)
  derive: {col: regex}  named groups matched in a column's value become fields (LibriSpeech's
                        speaker and chapter from the utterance id)
  rows_where: {col: v}  only rows whose column has one of these values (CoVoST 2's ``split``)
  audio_join: {glob, key}  the split is the audio folder: records are joined to the audio files under
                        ``audio_root`` matching ``glob`` by file stem == ``key`` (AISHELL's one
                        transcript file for all splits)

Every record of a folder also gets ``_dir``, its file's folder relative to ``items`` (LibriSpeech's
flac files lie beside their transcript: ``audio_template: "{_dir}/{path}.flac"``).
"""
from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Any

from lalmbench.core.io import InputError

#: how the reader's layout keys are named in a spec
TABLE_KEYS = ("names", "quoting")


def read_transcripts(path: Path) -> list[dict]:
    """``<id><blank><text>`` per line; blank lines are skipped, an id without text keeps an empty text
    (the reader leaves that item out as ``item:missing_answer``)."""
    out = []
    for n, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(None, 1)
        out.append({"id": parts[0], "text": parts[1] if len(parts) > 1 else "", "_line": n})
    return out


def read_delimited(path: Path, *, sep: str, names: list[str] | None, quoting: str | None) -> list[dict]:
    """A CSV/TSV read field by field: with ``quoting: none`` a quote is text (Common Voice's
    ``"Hello," she said``); with ``names`` the file has no header and every line must have exactly
    that many fields (a line that has not is an error naming it)."""
    q = csv.QUOTE_NONE if quoting == "none" else csv.QUOTE_MINIMAL
    rows = list(csv.reader(_lines(path), delimiter=sep, quoting=q))
    if names is None:
        if not rows:
            return []
        header, rows, first = rows[0], rows[1:], 2
    else:
        header, first = [str(x) for x in names], 1
    out = []
    for n, row in enumerate(rows, start=first):
        if not row:
            continue
        if len(row) != len(header):
            raise InputError(f"{path}: line {n} has {len(row)} fields, expected {len(header)} "
                             f"({', '.join(header)})")
        out.append(dict(zip(header, row)))
    return out


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}); expected the release's UTF-8 file") from None


def on_file(records: list[dict], file: Path, root: Path, spec: dict) -> list[dict]:
    """One file's records with ``_dir``, ``_file`` and its ``path_fields``; a file that lacks the
    layout's ``expect_columns`` fails here, naming the file and what it should hold."""
    folder = root.is_dir()
    rel = file.relative_to(root) if folder else file     # one file: its path fields come from its whole path
    expect = list(spec.get("expect_columns") or [])
    if expect and records:
        missing = [c for c in expect if c not in records[0]]
        if missing:
            raise InputError(f"{file}: no column(s) {missing}; expected {_layout(spec)} with columns "
                             f"{expect}, found {[c for c in records[0] if not c.startswith('_')]}")
    extra: dict[str, Any] = {"_dir": rel.parent.as_posix() if folder and str(rel.parent) != "." else "",
                             "_file": str(file)}
    if spec.get("path_fields"):
        m = re.search(str(spec["path_fields"]), rel.as_posix())
        if m is None:
            raise InputError(f"{file}: its path {rel.as_posix()!r} does not match {spec['path_fields']!r}; expected "
                             f"{_layout(spec)}")
        extra.update({k: v for k, v in m.groupdict().items() if v is not None})
    return [{**r, **{k: v for k, v in extra.items() if k not in r}} for r in records]


def _layout(spec: dict) -> str:
    return str(spec.get("layout") or f"the files of {spec.get('preset', 'this dataset')!r}")


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
                             f"{[c for c in where if c not in records[0]]} to select rows by; expected {_layout(spec)}")
        keep = [r for r in records if all(str(r.get(c, "")) in [str(v) for v in _as_list(vals)]
                                          for c, vals in where.items())]
        if len(keep) < len(records):
            notes[f"rows:outside_{'_'.join(f'{c}={v}' for c, v in where.items())}"] = len(records) - len(keep)
        records = keep
    if spec.get("audio_join"):
        records = _join_audio(records, dict(spec["audio_join"]), audio_root, spec, dropped, notes)
    return records, dropped, notes


def _as_list(v: Any) -> list:
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
        raise InputError(f"{root}: no audio files matching {glob!r}; expected {_layout(spec)}")
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
