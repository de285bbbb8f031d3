"""The job's side of tracking: a separate worker process that owns the tracking service's client.

Why a process: the W&B and MLflow clients retry, buffer, spawn helpers, capture the console and
register exit hooks. In the job's own process any of that can stall or break the job. Here the job
only queues JSON lines (never blocking: a thread feeds the worker's stdin), and at the end waits
for the worker at most ``timeout_s`` before stopping it. So a tracking failure costs the job at most
that wait plus a warning in its log, and the files the job writes never depend on tracking.
"""
from __future__ import annotations

import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

log = logging.getLogger("lalmbench.tracking")

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the worker imports this same lalmbench


def _plain(obj: Any) -> Any:
    return obj.item() if hasattr(obj, "item") else str(obj)


def frame_payload(df: pd.DataFrame) -> dict:
    """A table as plain JSON: column names and rows, missing values as null."""
    return {"columns": [str(c) for c in df.columns],
            "rows": df.astype(object).where(df.notna(), None).values.tolist()}


class ProcessTracker:
    """A tracked run fed to ``python -m lalmbench.tracking.worker`` (same interpreter, same env)."""

    enabled = True

    def __init__(self, settings: dict, run: dict):
        self.backend = settings["backend"]
        self.timeout_s = float(settings["timeout_s"])
        self.log_every = int(settings["log_every"])
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(PACKAGE_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
        # stdout/stderr are the job's log: the worker's warnings land next to the job's own lines. Its own
        # session: stopping it also stops the helpers a client spawns (wandb-core).
        self._proc = subprocess.Popen([sys.executable, "-m", "lalmbench.tracking.worker"], stdin=subprocess.PIPE,
                                      env=env, text=True, encoding="utf-8", start_new_session=True)
        self._writer = threading.Thread(target=self._feed, name="tracking-feed", daemon=True)
        self._writer.start()
        self._send("start", settings=settings, run=run)

    def _feed(self) -> None:
        stdin = self._proc.stdin
        try:
            while (line := self._queue.get()) is not None:
                stdin.write(line)
                stdin.flush()
            stdin.close()
        except (OSError, ValueError):  # the worker stopped (it logged why): drop what is left
            pass

    def _send(self, op: str, **args: Any) -> None:
        if not self._closed:
            self._queue.put(json.dumps({"op": op, "args": args}, default=_plain) + "\n")

    def progress(self, step: int, metrics: dict[str, float]) -> None:
        self._send("progress", step=int(step), metrics=metrics)

    def summary(self, metrics: dict[str, Any]) -> None:
        self._send("summary", metrics=metrics)

    def table(self, name: str, df: pd.DataFrame) -> None:
        self._send("table", name=name, **frame_payload(df))

    def artifact(self, path: str, name: str | None = None) -> None:
        self._send("artifact", path=str(Path(path).resolve()), name=name or Path(path).name)

    def close(self, status: str = "finished") -> None:
        if self._closed:
            return
        self._send("finish", status=status)
        self._closed = True
        self._queue.put(None)
        t0 = time.monotonic()
        try:
            rc = self._proc.wait(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._proc.wait()
            log.warning("tracking (%s): still busy after %g s (tracking.timeout_s), stopped; this job's tracked "
                        "run may be incomplete. The benchmark's results on disk are complete.", self.backend,
                        self.timeout_s)
            return
        if rc != 0:
            log.warning("tracking (%s): the tracking process failed (exit %d, reason logged above); the "
                        "benchmark's results on disk are complete.", self.backend, rc)
        else:
            log.info("tracking (%s): run closed (%.1f s at the end of the job)", self.backend, time.monotonic() - t0)

    def __enter__(self) -> "ProcessTracker":
        return self

    def __exit__(self, exc_type, *_: object) -> None:
        self.close("failed" if exc_type else "finished")
