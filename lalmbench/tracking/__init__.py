"""Experiment tracking (config ``tracking:``): W&B or MLflow runs for generate and scoring jobs.

Jobs call :func:`open_tracker` and talk to the :class:`~lalmbench.tracking.base.Tracker` it gives;
with ``backend: none`` that is a no-op. Otherwise the calls go to the job's spool
(:mod:`lalmbench.tracking.spool`): a long job's run goes live in a worker process, the others are
uploaded together at the end by rule ``tracking_sync``. A job never imports a tracking client, and a
tracking failure never fails a job or slows it by more than ``timeout_s``.
"""
from __future__ import annotations

import json
import logging
import os

from lalmbench.tracking.base import NullTracker, Tracker

log = logging.getLogger("lalmbench.tracking")

__all__ = ["NullTracker", "Tracker", "open_tracker", "job_settings", "settings_of"]


def job_settings(tracking: dict, group: str) -> dict:
    """What a job needs from the validated ``tracking:`` block, plus the workflow's group
    ({} when tracking is off, so rules pass nothing)."""
    if tracking.get("backend", "none") == "none":
        return {}
    return {**tracking, "group": group}


def settings_of(settings: dict | str | None) -> dict:
    """Job settings from a rule's ``--tracking-json`` (or a dict): {} means tracking is off."""
    if isinstance(settings, str):
        settings = json.loads(settings) if settings.strip() else {}
    if not settings or settings.get("backend", "none") == "none":
        return {}
    return settings


def open_tracker(settings: dict | str | None, *, name: str, job_type: str, params: dict,
                 tags: list[str] | None = None) -> Tracker:
    """A tracked run for one job (``settings`` as from :func:`job_settings`, or its JSON); a
    :class:`NullTracker` when tracking is off or its spool cannot even be written."""
    settings = settings_of(settings)
    if not settings:
        return NullTracker()
    from lalmbench.tracking.spool import SpoolTracker, spool_dir

    run = {"name": name, "job_type": job_type, "group": settings["group"], "params": params, "tags": tags or [],
           "pid": os.getpid()}
    try:
        return SpoolTracker(settings, run, spool_dir(settings, job_type, name))
    except OSError as exc:
        log.warning("tracking (%s): could not write this job's tracking spool (%s); the job runs untracked.",
                    settings["backend"], exc)
        return NullTracker()
