"""Rule tracking_sync: upload every spooled run no live worker has sent, in one worker process.

``python -m lalmbench.tracking.sync --tracking-json JSON --report PATH``. One process imports the
tracking client once for all the runs (instead of once per job). Bounded like a job's tracking:
the worker is stopped when no run has been sent for ``timeout_s``; a failure is a warning, the
runs not sent stay in the spool for the next sync, and the rule itself never fails.
"""
from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from lalmbench.core import io
from lalmbench.core.progress import setup_logging
from lalmbench.tracking import settings_of
from lalmbench.tracking.client import WorkerProcess, message
from lalmbench.tracking.spool import SENT, pending, read_spool

log = logging.getLogger("lalmbench.tracking")


def sync(settings: dict) -> dict:
    """Upload the pending spools; what was sent, left and skipped (already sent by a live worker)."""
    todo = pending(settings)
    root = Path(settings["dir"]) / "spool"
    total = sum(1 for _ in root.rglob("messages.jsonl")) if root.is_dir() else 0
    report = {"backend": settings["backend"], "spooled": total, "already_sent": total - len(todo), "sent": 0,
              "left": len(todo), "wall_s": 0.0}
    if not todo:
        log.info("tracking (%s): nothing to upload (%d runs already sent live)", settings["backend"], total)
        return report
    t0 = time.monotonic()
    worker = WorkerProcess(settings["backend"])
    for folder in todo:
        for msg in read_spool(folder):
            args = msg["args"]
            if msg["op"] == "start":
                run = {k: v for k, v in args["run"].items() if k != "pid"}  # the job is gone: no process to watch
                worker.send(message("start", settings=settings, run=run))
            else:
                worker.send(message(msg["op"], **args))
    worker.close(float(settings["timeout_s"]), busy=lambda: sum((f / SENT).exists() for f in todo))
    left = [f for f in todo if not (f / SENT).exists()]
    report.update(sent=len(todo) - len(left), left=len(left), wall_s=round(time.monotonic() - t0, 2))
    if left:
        log.warning("tracking (%s): %d of %d spooled runs are not uploaded (reason above); they stay in %s and the "
                    "next sync retries them (rerun the workflow with `--forcerun tracking_sync`).",
                    settings["backend"], len(left), len(todo), root)
    else:
        log.info("tracking (%s): %d runs uploaded in %.1f s (%d already sent live)", settings["backend"], len(todo),
                 report["wall_s"], report["already_sent"])
    return report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tracking-json", required=True, help="tracking settings (config tracking: + group)")
    p.add_argument("--report", required=True, help="JSON written at the end: runs sent, left, already sent")
    a = p.parse_args()
    setup_logging()
    settings = settings_of(a.tracking_json)
    report = sync(settings) if settings else {"backend": "none"}
    io.write_json(a.report, report)


if __name__ == "__main__":
    main()
