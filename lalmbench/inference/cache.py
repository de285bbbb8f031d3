"""The prediction cache: an append-only JSONL of finished predictions, keyed by item key.

Each generate job (one per model, dataset and shard) appends to its own file,
``<root>/<model>/<fingerprint>/<unit>.jsonl``, so concurrent jobs of one model never interleave
lines; readers take the rows of every file of the fingerprint (and of ``<fingerprint>.jsonl``, the
one file per fingerprint of earlier versions), so re-sharding or regrouping never regenerates a
finished item. Files are fsync'ed after every batch, so a job killed at any point (``kill -9``,
node failure, full disk) loses at most the batch in flight. Opening repairs a torn last line
(truncates to the last complete line and logs the bytes dropped) before anything is appended, so
a crash mid-write never makes the run impossible to finish. Rows are keyed by content, so a row
from an older config can never be mistaken for the current one.

Each row names the environment it was made in by a digest (``environment``); the record behind
each digest (packages, lock, CPU, GPU: lalmbench.core.provenance.environment) is kept once per
file, beside it in ``<unit>.environments.json``, and copied into the predictions files' metadata.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Iterable

from lalmbench.core import io

log = logging.getLogger("lalmbench.inference.cache")


def cache_file(root: str | Path, model: str, model_fp: str, unit: str | None = None) -> Path:
    """The file one generate job appends to (``unit``: its dataset and shard); without a unit, the
    single per-fingerprint file of earlier versions (still read)."""
    if unit is None:
        return Path(root) / model / f"{model_fp}.jsonl"
    return Path(root) / model / model_fp / f"{unit}.jsonl"


def cache_files(root: str | Path, model: str, model_fp: str) -> list[Path]:
    """Every existing cache file of a model fingerprint, in a fixed order."""
    legacy = cache_file(root, model, model_fp)
    return ([legacy] if legacy.exists() else []) + sorted((Path(root) / model / model_fp).glob("*.jsonl"))


def environments_path(cache_path: str | Path) -> Path:
    """The file beside a cache file that holds the environment records its rows' digests name."""
    return Path(cache_path).with_suffix(".environments.json")


def record_environment(cache_path: str | Path, digest: str, record: dict) -> None:
    """Keep ``record`` under ``digest`` beside the cache file (one job writes each cache file, so
    this read-add-write has no concurrent writer)."""
    path = environments_path(cache_path)
    known = io.read_json(path) if path.exists() else {}
    if known.get(digest) != record:
        io.write_json(path, {**known, digest: record})


def read_environments(cache_paths: Iterable[str | Path]) -> dict[str, dict]:
    """Environment records by digest, over the files beside these cache files (missing ones: none)."""
    out: dict[str, dict] = {}
    for p in cache_paths:
        path = environments_path(p)
        if path.exists():
            out.update(io.read_json(path))
    return out


def repair_tail(path: Path) -> int:
    """Truncate a torn last line (no trailing newline); return the number of bytes dropped."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return 0
        # walk back to the last newline (the torn line is at most one batch of rows)
        pos, block = size, 1 << 16
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            pos = start
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return size - keep


_KEY_PREFIX = '{"key": "'  # every row is written with its key first (row_line)


def row_line(row: dict) -> str:
    """One cache line: ``key`` first, the rest sorted, ASCII-escaped JSON (any string the model
    produced, lone surrogates included, round-trips). The key's place is fixed so that a reader can
    skip a row by its prefix without a response field that holds its own ``"key"`` shadowing it."""
    rest = {k: v for k, v in row.items() if k != "key"}
    return json.dumps({"key": row["key"], **dict(sorted(rest.items()))}, ensure_ascii=True) + "\n"


def _prefix_key(line: str) -> str | None:
    """The row's key read from the line's prefix, or None for a line not in that form (then the whole
    line is parsed). Keys are hex digests: no escapes inside the quotes."""
    if not line.startswith(_KEY_PREFIX):
        return None
    end = line.find('"', len(_KEY_PREFIX))
    return line[len(_KEY_PREFIX):end] if end > 0 else None


def read_rows(path: Path, keys: set[str] | None = None, *, live: bool = False) -> dict[str, dict]:
    """Rows by key (a later row for the same key wins: a retried failure replaces its error).

    With ``keys``, only those rows are parsed: one predictions file needs a few of the model's
    rows, and its job should not decode the whole cache to find them. ``live``: another job may be
    appending to the file right now, so a last line without its newline is skipped, not an error."""
    rows: dict[str, dict] = {}
    if not path.exists():
        return rows
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if live and not line.endswith("\n"):
                break
            if keys is not None:
                key = _prefix_key(line)
                if key is not None and key not in keys:
                    continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise io.InputError(f"{path}:{lineno}: corrupt prediction cache line ({exc.msg}); "
                                    f"delete the file to regenerate its predictions") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
                raise io.InputError(f"{path}:{lineno}: prediction cache line without a string 'key'; "
                                    f"delete the file to regenerate its predictions")
            if keys is None or rec["key"] in keys:
                rows[rec["key"]] = rec
    return rows


def merge_rows(paths: Iterable[Path], keys: set[str] | None = None, *, live: bool = True) -> dict[str, dict]:
    """Rows by key over several cache files; a finished row wins over a failed one from another file."""
    rows: dict[str, dict] = {}
    for path in paths:
        for k, r in read_rows(Path(path), keys, live=live).items():
            if k not in rows or rows[k].get("error") is not None:
                rows[k] = r
    return rows


class PredictionCache:
    """Finished predictions of one model fingerprint; ``append`` makes new ones durable in ``path``
    (this job's own file). ``others``: the fingerprint's other files (other datasets' and shards'
    jobs, earlier layouts), read so that nothing they hold is generated again."""

    def __init__(self, path: str | Path, others: Iterable[str | Path] = ()):
        self.path = Path(path)
        dropped = repair_tail(self.path)
        if dropped:
            log.warning("%s: dropped a torn last line (%d bytes) left by an interrupted write", self.path, dropped)
        self.rows = merge_rows([p for p in map(Path, others) if p != self.path])
        for k, r in read_rows(self.path).items():
            if k not in self.rows or self.rows[k].get("error") is not None:
                self.rows[k] = r
        self._fh = None

    def done(self, key: str) -> bool:
        row = self.rows.get(key)
        return row is not None and row.get("error") is None

    def append(self, rows: Iterable[dict]) -> None:
        rows = list(rows)
        if not rows:
            return
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")
        self._fh.write("".join(row_line(r) for r in rows))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.rows.update((r["key"], r) for r in rows)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
