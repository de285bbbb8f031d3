"""A spec's question records read whatever their layout: a table format (one file, a ``save_to_disk``
folder, or a folder's files by ``pattern``), a per-file release layout, or a tree layout of
:data:`lalmbench.data.adapters.layouts.LAYOUTS`; used by :mod:`lalmbench.data.adapters.reader`."""
from __future__ import annotations

import re
from pathlib import Path

from lalmbench.core.io import InputError
from lalmbench.data.adapters.layouts.records import as_list, check_columns, map_values, on_file
from lalmbench.data.adapters.layouts.registry import LAYOUTS
from lalmbench.data.adapters.tables import load_records


def load(path: Path, spec: dict, pattern: str | list[str] | None) -> list[dict]:
    """The records of the file or folder ``path`` in the spec's ``format`` (a table format, a per-file
    layout, or a tree layout reading the whole folder), path fields added, values mapped and columns
    checked per file; read from a folder, each file's records carry ``_shard`` (its name without the
    ``-00000-of-00001`` part) and, with ``track_from_folder``, ``track`` (its folder's name)."""
    fmt = str(spec.get("format", "auto"))
    if fmt in LAYOUTS and not LAYOUTS[fmt].per_file:      # a folder tree read as a whole
        return _checked(LAYOUTS[fmt].read(path, spec), spec, path)
    if not path.is_dir():
        recs = load_records(path, fmt=fmt, layout=spec)
        files = [(path, recs)]
    else:
        if (path / "state.json").is_file():
            return _checked(load_records(path), spec, path)
        if not pattern:
            tables = _files(path, TABLE_GLOBS)
            raise InputError(f"{path}: params.items is a folder, and {spec.get('preset', 'this dataset')!r} names no "
                             f"file pattern to find the benchmark's own files in it (it holds "
                             f"{', '.join(str(f.relative_to(path)) for f in tables[:8]) or 'no table'}"
                             f"{', ...' if len(tables) > 8 else ''}); set params.items to the question file, or "
                             f"params.pattern to a glob of them")
        globs = as_list(pattern)
        found = _files(path, globs)
        if not found:
            raise InputError(f"{path}: no question files matching {globs} in this folder"
                             + (f"; expected {spec['layout']}" if spec.get("layout") else ""))
        files = [(f, load_records(f, fmt=fmt, layout=spec)) for f in found]
    out = []
    for f, recs in files:
        recs = on_file(recs, f, path, spec)
        shard = re.sub(r"-\d{5}-of-\d{5}$", "", f.stem)
        for r in _checked(recs, spec, f):
            r = dict(r, _shard=shard) if len(files) > 1 or path.is_dir() else dict(r)
            if spec.get("track_from_folder") and "track" not in r:
                r["track"] = f.parent.name
            out.append(r)
    return out


def _checked(records: list[dict], spec: dict, path: Path) -> list[dict]:
    """One file's records with the preset's value maps applied, its answer and audio columns checked."""
    records = map_values(records, spec, path)
    check_columns(records, spec, path)
    return records


#: the tables a folder may hold (named when a folder without a pattern is refused)
TABLE_GLOBS = ["**/*.parquet", "**/*.arrow", "**/*.jsonl", "**/*.json", "**/*.csv", "**/*.tsv"]


def _files(path: Path, globs: list[str]) -> list[Path]:
    return sorted({f for g in globs for f in path.glob(g) if f.is_file() and ".cache" not in f.parts})
