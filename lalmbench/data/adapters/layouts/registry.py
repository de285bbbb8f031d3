"""The one registry of release layouts: each ``format:`` value that is a layout and how it is read
(the keys are documented in :mod:`lalmbench.data.adapters.layouts`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lalmbench.data.adapters.layouts.text import headerless_records, read_transcripts
from lalmbench.data.adapters.layouts.trees import folder_records, line_records


@dataclass(frozen=True)
class Layout:
    """A ``format:`` value's reader: ``read(path, spec) -> records``; ``per_file``: it reads one file
    (the reader finds a folder's files by ``pattern``), else the whole folder tree given as ``items``."""
    read: Callable[[Path, dict], list[dict]]
    per_file: bool


#: ``format`` values that are release layouts, and how each is read
LAYOUTS: dict[str, Layout] = {
    "transcripts": Layout(lambda path, spec: read_transcripts(path), per_file=True),
    "headerless": Layout(headerless_records, per_file=True),
    "folders": Layout(folder_records, per_file=False),
    "lines": Layout(line_records, per_file=False),
}
