"""A generated block between two marker lines of a markdown file: split it out, check it, rewrite it.

Both generated tables (docs/benchmarks-measured.md's figures, README.md's default results) live between
marker comments, so a hand edit or a re-run without regenerating is caught by comparing the block with
a fresh generation.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def split_block(text: str, start: str, end: str, where: str) -> tuple[str, str, str]:
    """(head up to and including the start line, block, tail from the end marker on).

    ``where`` names the file in the error, which says which marker is missing or repeated."""
    for marker in (start, end):
        if text.count(marker) != 1:
            raise ValueError(f"{where}: expected the marker line {marker!r} exactly once, found it "
                             f"{text.count(marker)} times")
    head, rest = text.split(start + "\n", 1) if start + "\n" in text else text.split(start, 1)
    block, tail = rest.split(end, 1)
    return head + start + "\n", block, end + tail


def sync_block(path: Path, start: str, end: str, block: str, *, write: bool, hint: str) -> int:
    """--check (write=False): 0 when ``path``'s block equals ``block``, else 1 with ``hint`` on stderr.
    --write: put ``block`` between the markers (atomically) and return 0."""
    head, old, tail = split_block(path.read_text(encoding="utf-8"), start, end, path.name)
    if write:
        from lalmbench.core.io import write_text

        write_text(path, head + block + tail)
        return 0
    if old != block:
        print(f"{path.name}: {hint}", file=sys.stderr)
        return 1
    return 0


def add_mode_options(ap: argparse.ArgumentParser, path: Path) -> None:
    """--write / --check, the two ways a generator's CLI meets its file (default: print the block)."""
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help=f"rewrite the generated block in {path.name}")
    g.add_argument("--check", action="store_true", help=f"exit 1 when {path.name}'s block is not the generated one")


def emit(args: argparse.Namespace, path: Path, start: str, end: str, block: str, hint: str) -> int:
    """Print the block, or check / rewrite it in ``path`` as the options of add_mode_options ask."""
    if not (args.write or args.check):
        sys.stdout.write(block)
        return 0
    return sync_block(path, start, end, block, write=args.write, hint=hint)
