"""A job's tracked run as a local spool: the job writes its tracking messages to a JSONL file and
imports no tracking client; only a job that is still running after ``tracking.live_after_s``
(a real model's generate job) starts the worker process and streams to it live.

Why: importing the W&B or MLflow client costs seconds of CPU, more than many of the default run's
tiny jobs take for their own work. Spooled runs are uploaded together at the
end by one process (rule ``tracking_sync``, :mod:`lalmbench.tracking.sync`), which imports the
client once and skips the runs a live worker has already sent (``sent.json`` in the spool).

Spool layout: ``<tracking.dir>/spool/<job_type>/<run name>/`` with ``messages.jsonl`` (one
worker message per line: start, progress, summary, table, artifact, finish), the files the job
made only for tracking (a scoring run's ``all.tsv`` rows), and ``sent.json`` once uploaded.
"""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from lalmbench.tracking.client import WorkerProcess, message

log = logging.getLogger("lalmbench.tracking")

MESSAGES = "messages.jsonl"
SENT = "sent.json"


def spool_root(settings: dict) -> Path:
    return Path(settings["dir"]) / "spool"


def spool_dir(settings: dict, job_type: str, name: str) -> Path:
    """This job's spool: ``spool/<job_type>/<name>`` (``generate/random`` -> spool/generate/random)."""
    parts = [p for p in name.split("/") if p not in ("", ".", "..")]
    if parts and parts[0] == job_type:
        parts = parts[1:]
    return spool_root(settings) / job_type / Path(*(parts or ["run"]))


def frame_payload(df: pd.DataFrame) -> dict:
    """A table as plain JSON: column names and rows, missing values as null."""
    return {"columns": [str(c) for c in df.columns],
            "rows": df.astype(object).where(df.notna(), None).values.tolist()}


class SpoolTracker:
    """One job's tracked run: every call appends a line to the spool (cheap, never blocks); after
    ``live_after_s`` of the job the run goes live (worker process, spool so far replayed)."""

    enabled = True

    def __init__(self, settings: dict, run: dict, folder: Path):
        self.settings, self.folder = settings, Path(folder)
        self.backend = settings["backend"]
        self.timeout_s = float(settings["timeout_s"])
        self.log_every = int(settings["log_every"])
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / SENT).unlink(missing_ok=True)  # a rerun of the job is a new run
        self._lock = threading.Lock()
        self._closed = False
        self._live: WorkerProcess | None = None
        self._lines: list[str] = []
        self._file = open(self.folder / MESSAGES, "w", encoding="utf-8")
        self._start = {"settings": settings, "run": {**run, "spool": str(self.folder.resolve())}}
        self._put(message("start", run=self._start["run"]))
        live_after_s = float(settings.get("live_after_s", 20))
        self._timer = threading.Timer(live_after_s, self._go_live)
        self._timer.daemon = True
        if live_after_s <= 0:
            self._go_live()
        else:
            self._timer.start()

    def _put(self, line: str) -> None:
        with self._lock:
            if self._closed:
                return
            self._file.write(line)
            self._file.flush()
            self._lines.append(line)
            if self._live is not None:
                self._live.send(line)

    def _go_live(self) -> None:
        """Start the worker and replay what the spool holds so far (its start carries the settings)."""
        with self._lock:
            if self._closed or self._live is not None:
                return
            try:
                self._live = WorkerProcess(self.backend)
            except OSError as exc:
                log.warning("tracking (%s): could not start the tracking process (%s); this run is uploaded by "
                            "rule tracking_sync at the end instead.", self.backend, exc)
                return
            self._live.send(message("start", **self._start))
            for line in self._lines[1:]:
                self._live.send(line)
            log.info("tracking (%s): the job is long, its run is now live", self.backend)

    def progress(self, step: int, metrics: dict[str, float]) -> None:
        self._put(message("progress", step=int(step), metrics=metrics))

    def summary(self, metrics: dict[str, Any]) -> None:
        self._put(message("summary", metrics=metrics))

    def table(self, name: str, df: pd.DataFrame) -> None:
        self._put(message("table", name=name, **frame_payload(df)))

    def artifact(self, path: str, name: str | None = None) -> None:
        self._put(message("artifact", path=str(Path(path).resolve()), name=name or Path(path).name))

    def close(self, status: str = "finished") -> None:
        self._timer.cancel()
        self._put(message("finish", status=status))
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._file.close()
            live = self._live
        if live is not None and live.close(self.timeout_s):
            log.info("tracking (%s): live run closed", self.backend)

    def __enter__(self) -> "SpoolTracker":
        return self

    def __exit__(self, exc_type, *_: object) -> None:
        self.close("failed" if exc_type else "finished")


def read_spool(folder: Path) -> list[dict]:
    """A spool's messages; a job killed mid-way has no finish: it ends as a failed run."""
    msgs = []
    for line in (folder / MESSAGES).read_text(encoding="utf-8").splitlines():
        try:
            msgs.append(json.loads(line))
        except json.JSONDecodeError:  # the last line of a job killed while writing it
            break
    if msgs and msgs[-1]["op"] != "finish":
        msgs.append({"op": "finish", "args": {"status": "failed"}})
    return msgs


def pending(settings: dict) -> list[Path]:
    """Spools whose run no one has uploaded yet, oldest first."""
    root = spool_root(settings)
    found = [p.parent for p in root.rglob(MESSAGES)] if root.is_dir() else []
    return sorted((f for f in found if not (f / SENT).exists()), key=lambda f: ((f / MESSAGES).stat().st_mtime, str(f)))
