"""What a job may tell its tracker, and the tracker used when tracking is off.

A job talks to a :class:`Tracker` only; which service (if any) receives the calls is decided by
the config (``tracking.backend``). Every call returns at once and never raises, so a job's own
work and its files do not depend on tracking in any way.
"""
from __future__ import annotations

from typing import Any, Protocol

import pandas as pd


class Tracker(Protocol):
    """One tracked run (one generate or scoring job)."""

    def progress(self, step: int, metrics: dict[str, float]) -> None:
        """A point of the live series (``step`` = items done)."""

    def summary(self, metrics: dict[str, Any]) -> None:
        """Final numbers of the job (shown as the run's summary)."""

    def table(self, name: str, df: pd.DataFrame) -> None:
        """An analysis view (label distribution, accuracy by gold label, confusion matrix...)."""

    def artifact(self, path: str, name: str | None = None) -> None:
        """A file the job wrote, uploaded with the run (``name``: the name it gets there)."""

    def close(self, status: str = "finished") -> None:
        """End the run; waits at most ``tracking.timeout_s`` for uploads, then gives up with a warning."""

    def __enter__(self) -> "Tracker": ...

    def __exit__(self, *exc: object) -> None: ...


class NullTracker:
    """Tracking off (``backend: none``) or unavailable: every call does nothing."""

    enabled = False
    log_every = 0

    def progress(self, step: int, metrics: dict[str, float]) -> None:
        pass

    def summary(self, metrics: dict[str, Any]) -> None:
        pass

    def table(self, name: str, df: pd.DataFrame) -> None:
        pass

    def artifact(self, path: str, name: str | None = None) -> None:
        pass

    def close(self, status: str = "finished") -> None:
        pass

    def __enter__(self) -> "NullTracker":
        return self

    def __exit__(self, exc_type, *_: object) -> None:
        self.close("failed" if exc_type else "finished")
