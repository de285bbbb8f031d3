"""The tracking worker: ``python -m lalmbench.tracking.worker`` reads one JSON message per line on
stdin and forwards it to the backend: one run (a long job streaming live), or several one after
the other (rule tracking_sync uploading the spooled runs), each from its ``start`` to its ``finish``.

The first failure (package missing, server down, quota, bad key) is logged once as a warning on
stderr, which is the job's log; later messages are read and dropped, and the exit code says it
failed. Secrets from the environment are masked in that warning. A run that reaches its
``finish`` is marked ``sent.json`` in its spool, so the sync does not upload it twice.
"""
from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from pathlib import Path

from lalmbench.core import io
from lalmbench.models.secrets import Redactor
from lalmbench.core.progress import setup_logging

BACKENDS = {"wandb": ("lalmbench.tracking.wandb_backend", "WandbBackend"),
            "mlflow": ("lalmbench.tracking.mlflow_backend", "MlflowBackend")}
SECRET_ENV = ("WANDB_API_KEY", "MLFLOW_TRACKING_TOKEN", "MLFLOW_TRACKING_PASSWORD", "DATABRICKS_TOKEN")
PACKAGES = {"wandb": "wandb", "mlflow": "mlflow-skinny"}

log = logging.getLogger("lalmbench.tracking")


def load_backend(settings: dict):
    module, cls = BACKENDS[settings["backend"]]
    return getattr(importlib.import_module(module), cls)(settings)


def _why(exc: Exception, backend: str) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ImportError):
        text += f" (install {PACKAGES.get(backend, backend)} in this job's env; envs/<env>/requirements.txt pins it)"
    return Redactor(os.environ.get(k) for k in SECRET_ENV).excerpt(text, 1000)


def mark_sent(spool: str | None, settings: dict, status: str) -> None:
    if spool:
        io.write_json(Path(spool) / "sent.json", {"backend": settings["backend"], "project": settings["project"],
                                                  "status": status})


def serve(lines) -> int:
    """Forward every message; return 0, or 1 after the first failure (logged, then nothing more is sent)."""
    backend, settings, spool, name, failed = None, {}, None, "?", False
    for line in lines:
        if failed:
            continue
        msg = json.loads(line)
        op, args = msg["op"], msg["args"]
        try:
            if op == "start":
                settings, spool = args["settings"], args["run"].pop("spool", None)
                name = settings["backend"]
                backend = load_backend(settings)
                backend.start(args["run"])
            else:
                getattr(backend, op)(**args)
                if op == "finish":
                    backend = None
                    mark_sent(spool, settings, args["status"])
        except Exception as exc:
            failed = True
            log.warning("tracking (%s) failed, nothing more is tracked for this job: %s. The benchmark goes on; "
                        "its results on disk are complete.", name, _why(exc, name))
    if backend is not None and not failed:  # the job died without closing its run
        try:
            backend.finish("failed")
        except Exception as exc:
            log.warning("tracking (%s): could not close the run of a job that stopped early: %s", name, _why(exc, name))
    return 1 if failed else 0


def main() -> None:
    setup_logging()
    sys.exit(serve(sys.stdin))


if __name__ == "__main__":
    main()
