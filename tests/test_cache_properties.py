"""The prediction cache (the resume file) under every crash point (hypothesis).

A crash can stop a write after any byte. For any rows, written in any batches, and any cut of the
file's bytes: reopening keeps exactly the rows whose lines were complete before the cut, says how
many bytes it dropped, and appending the missing rows gives a file with every row exactly once
(a failed row once more: it is retried, and the retry wins).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import tests.properties  # noqa: F401  (hypothesis profile)
from lalmbench.inference.cache import PredictionCache, read_rows, repair_tail

# what a model or server can return, lone surrogates, newlines and the key-lookup trap included
TEXT = st.one_of(st.none(), st.text(st.characters(exclude_categories=()), max_size=30),
                 st.sampled_from(['"key": "k0"', 'x", "key": "k1', "\n", "{}", "\\"]))


@st.composite
def batches(draw) -> list[list[dict]]:
    """Rows with distinct keys, split into the batches a job appends one after another."""
    keys = draw(st.lists(st.text("0123456789abcdef", min_size=1, max_size=6).map("k".__add__), min_size=1,
                         max_size=25, unique=True))
    rows = [{"key": k, "raw_output": draw(TEXT), "error": draw(st.none() | TEXT), "latency_s": draw(st.floats(0, 9))}
            for k in keys]
    cuts = sorted(draw(st.sets(st.integers(1, len(rows) - 1), max_size=len(rows) - 1))) if len(rows) > 1 else []
    return [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]


def _scratch() -> tempfile.TemporaryDirectory:
    """A fresh directory per example, in RAM where there is one: the cache fsyncs every batch
    (milliseconds each on a disk, for thousands of batches here); the bytes written are the same."""
    return tempfile.TemporaryDirectory(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)


def _write(path: Path, parts: list[list[dict]]) -> None:
    cache = PredictionCache(path)
    for part in parts:
        cache.append(part)
    cache.close()


@given(batches(), st.data())
def test_a_cut_at_any_byte_keeps_exactly_the_complete_rows_and_resumes_without_duplicates(parts, data):
    rows = [r for part in parts for r in part]
    with _scratch() as d:
        path = Path(d) / "model" / "fp.jsonl"
        _write(path, parts)
        full = path.read_bytes()
        ends = [i + 1 for i, b in enumerate(full) if b == ord("\n")]
        assert len(ends) == len(rows)  # one line per row: no raw newline ever reaches the file
        cut = data.draw(st.integers(0, len(full)), label="cut")
        path.write_bytes(full[:cut])
        complete = sum(end <= cut for end in ends)

        cache = PredictionCache(path)  # repairs the torn tail before anything is appended
        assert path.stat().st_size == (ends[complete - 1] if complete else 0)
        assert list(cache.rows.values()) == rows[:complete]
        cache.append([r for r in rows if not cache.done(r["key"])])  # what a resumed job generates
        cache.close()

        lines = path.read_bytes().splitlines(keepends=True)
        assert all(line.endswith(b"\n") for line in lines)
        keys = [json.loads(line)["key"] for line in lines]
        # every row once; a kept row that failed is retried, and its new row wins when read
        retried = {r["key"] for r in rows[:complete] if r["error"] is not None}
        assert {k: keys.count(k) for k in keys} == {r["key"]: 1 + (r["key"] in retried) for r in rows}
        assert read_rows(path) == {r["key"]: r for r in rows}


@given(batches(), st.data())
def test_repair_reports_the_bytes_it_dropped(parts, data):
    with _scratch() as d:
        path = Path(d) / "fp.jsonl"
        _write(path, parts)
        full = path.read_bytes()
        cut = data.draw(st.integers(0, len(full)), label="cut")
        path.write_bytes(full[:cut])
        kept = full[:cut].rfind(b"\n") + 1
        assert repair_tail(path) == cut - kept
        assert path.read_bytes() == full[:kept]
        assert repair_tail(path) == 0  # idempotent: a second open drops nothing


@given(batches(), st.data())
def test_reading_some_keys_gives_exactly_those_rows(parts, data):
    rows = {r["key"]: r for part in parts for r in part}
    wanted = data.draw(st.sets(st.sampled_from(sorted(rows)) | st.just("k-not-there")), label="wanted")
    with _scratch() as d:
        path = Path(d) / "fp.jsonl"
        _write(path, parts)
        assert read_rows(path, wanted) == {k: rows[k] for k in wanted if k in rows}
