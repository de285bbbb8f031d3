"""The tracking worker process seen from the process that feeds it (a long job, or the sync).

Why a process: the W&B and MLflow clients retry, buffer, spawn helpers, capture the console and
register exit hooks. In the job's own process any of that can stall or break the job. Here the
feeder only queues JSON lines (never blocking: a thread feeds the worker's stdin), and at the end
waits for the worker a bounded time before stopping it. So a tracking failure costs at most that
wait plus a warning in the log, and the files the job writes never depend on tracking.
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
from typing import Any, Callable

log = logging.getLogger("lalmbench.tracking")

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the worker imports this same lalmbench


def plain(obj: Any) -> Any:
    """JSON fallback for numpy scalars (and anything else: its text)."""
    return obj.item() if hasattr(obj, "item") else str(obj)


def message(op: str, **args: Any) -> str:
    """One line of the worker's protocol (also one line of a job's spool)."""
    return json.dumps({"op": op, "args": args}, default=plain) + "\n"


class WorkerProcess:
    """``python -m lalmbench.tracking.worker`` (same interpreter, same env), fed line by line."""

    def __init__(self, backend: str):
        self.backend = backend
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

    def _feed(self) -> None:
        stdin = self._proc.stdin
        try:
            while (line := self._queue.get()) is not None:
                stdin.write(line)
                stdin.flush()
            stdin.close()
        except (OSError, ValueError):  # the worker stopped (it logged why): drop what is left
            pass

    def send(self, line: str) -> None:
        if not self._closed:
            self._queue.put(line)

    def close(self, timeout_s: float, busy: Callable[[], object] = lambda: None) -> bool:
        """End the input and wait for the worker: at most ``timeout_s`` while ``busy()`` (a progress
        mark, e.g. how many runs are done) stays the same; past that, stop it with a warning.
        True when it finished without a failure."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        t0, mark = time.monotonic(), busy()
        while True:
            try:
                rc = self._proc.wait(timeout=min(0.5, timeout_s))
                break
            except subprocess.TimeoutExpired:
                if (now_mark := busy()) != mark:
                    t0, mark = time.monotonic(), now_mark
                elif time.monotonic() - t0 >= timeout_s:
                    try:
                        os.killpg(self._proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    self._proc.wait()
                    log.warning("tracking (%s): still busy after %g s (tracking.timeout_s), stopped; the tracked "
                                "run may be incomplete. The benchmark's results on disk are complete.", self.backend,
                                timeout_s)
                    return False
        if rc != 0:
            log.warning("tracking (%s): the tracking process failed (exit %d, reason logged above); the "
                        "benchmark's results on disk are complete.", self.backend, rc)
        return rc == 0
