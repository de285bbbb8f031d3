"""Per-file text tables of release layouts: transcript lines, CSV/TSV whose quotes are text or that
have no header line, and header-less whitespace tables (see :mod:`lalmbench.data.adapters.layouts`)."""
from __future__ import annotations

import csv
from pathlib import Path

from lalmbench.core.io import InputError


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


def headerless_records(path: Path, spec: dict) -> list[dict]:
    """Rows of a table without a header line (tabs, else runs of spaces), named by ``names``, the
    trailing ``optional_names`` allowed to be missing. A row with another number of fields is an error
    naming its line: such a file is not this layout."""
    names = [str(n) for n in spec.get("names") or []]
    if not names:
        raise InputError(f"{path}: format headerless needs names: [column, ...]")
    optional = [str(n) for n in spec.get("optional_names") or []]
    least = len(names) - len([n for n in names if n in optional])
    expected = f"{least}" + (f" to {len(names)}" if least < len(names) else "")
    out = []
    for n, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        parts = line.rstrip("\r").split("\t") if "\t" in line else line.split()
        parts = [p.strip() for p in parts]
        if not least <= len(parts) <= len(names):
            raise InputError(f"{path}: line {n} has {len(parts)} field(s) ({line[:80]!r}); expected "
                             f"{expected}: {', '.join(names)}")
        out.append(dict(zip(names, parts)))
    return out


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}); expected the release's UTF-8 file") from None
