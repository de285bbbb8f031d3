"""The one writer every bench uses: a figure becomes one JSON line in ``bench/results/<bench>.jsonl``.

docs/benchmarks-measured.md's table is generated from these files (``python -m bench.measured_table``), so
a figure is never typed by hand. Each line has exactly these keys::

    bench      the bench's name (its file under bench/results/)
    figure     what was measured, e.g. "batched items/s"
    unit       "s", "MB", "items/s", "x" (a ratio), ...
    target     "<= 30" or ">= 3" in the figure's unit, or null when the figure has none
    value      the number
    commit     `git describe --always --dirty` of the code that was measured
    cpu_count  CPUs this process may use (its affinity mask, not the machine's)
    loadavg    [1, 5, 15]-minute load averages when the line was written: a busy machine inflates
               wall times, so a reader can tell a quiet run from a loaded one
    date       UTC, ISO 8601

Lines are only ever appended (the file is rewritten atomically with the new line at the end); the
latest line of each (bench, figure) is the current figure.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().with_name("results")
KEYS = ("bench", "figure", "unit", "target", "value", "commit", "cpu_count", "loadavg", "date")
TARGET = re.compile(r"^(<=|>=) (-?\d+(?:\.\d+)?)$")


def parse_target(target: str | None) -> tuple[str, float] | None:
    """("<=", 30.0) for "<= 30"; None for no target. Anything else is refused with the accepted form."""
    if target is None:
        return None
    m = TARGET.match(str(target))
    if not m:
        raise ValueError(f"target: {target!r} is not '<= N' or '>= N' (a number in the figure's unit) or None")
    return m.group(1), float(m.group(2))


def meets(value: float, target: str | None) -> bool | None:
    """Whether value meets target; None when there is no target."""
    t = parse_target(target)
    if t is None:
        return None
    return value <= t[1] if t[0] == "<=" else value >= t[1]


def git_commit(root: Path = ROOT) -> str:
    """The measured code: a -dirty suffix says the working tree had uncommitted changes."""
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=root,
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() or "unknown"


def record(bench: str, figure: str, value: float, unit: str, target: str | None = None, *,
           results_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Append one figure to ``<results_dir>/<bench>.jsonl`` (default bench/results/) and return the line."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", bench):
        raise ValueError(f"bench: {bench!r} must be a file-name-safe name (letters, digits, _ . -)")
    if not figure or "|" in figure or "\n" in figure:
        raise ValueError(f"figure: {figure!r} must be a non-empty one-line label without '|'")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"value: {figure!r} is {value}, not a finite number")
    parse_target(target)
    line = {"bench": bench, "figure": figure, "unit": unit, "target": target, "value": value,
            "commit": git_commit(), "cpu_count": len(os.sched_getaffinity(0)),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()}
    path = Path(results_dir) if results_dir is not None else RESULTS
    path = path / f"{bench}.jsonl"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if old and not old.endswith("\n"):
        old += "\n"
    from lalmbench.core.io import write_text

    write_text(path, old + json.dumps(line, ensure_ascii=False) + "\n")
    return line


def read_results(results_dir: str | os.PathLike | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every line of every ``*.jsonl`` under results_dir, by bench; a bad line names its file and line."""
    from lalmbench.core.io import read_jsonl

    path = Path(results_dir) if results_dir is not None else RESULTS
    out: dict[str, list[dict[str, Any]]] = {}
    for f in sorted(path.glob("*.jsonl")):
        for n, line in enumerate(read_jsonl(f), 1):
            missing = [k for k in KEYS if k not in line]
            if missing:
                raise ValueError(f"{f}: row {n}: missing key(s) {missing}")
            out.setdefault(line["bench"], []).append(line)
    return out


def latest(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last line of each figure, in the order the figures first appeared."""
    last: dict[str, dict[str, Any]] = {}
    for line in lines:
        last[line["figure"]] = line  # a reassigned key keeps its first position
    return list(last.values())
