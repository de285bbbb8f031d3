"""Progress lines for rule logs: items done, items/s and ETA, one line at a time (logs are files, not TTYs).

With tracking on, the same counts (plus latency per item and accuracy so far, where known) also go
to the job's tracked run every ``tracking.log_every`` items.
"""
from __future__ import annotations

import logging
import time

from tqdm import tqdm


class ProgressLog:
    def __init__(self, total: int, desc: str, logger: logging.Logger, min_interval_s: float = 5.0,
                 tracker=None):
        self.total, self.desc, self.logger = total, desc, logger
        self.done = 0
        self.start = time.monotonic()
        self.min_interval_s = min_interval_s
        self._last = 0.0
        self.tracker = tracker if getattr(tracker, "enabled", False) else None
        self.every = self.tracker.log_every if self.tracker else 0
        self._next_point = self.every
        self.latency_s = 0.0  # summed per-item latency of the items done
        self.judged = 0       # items whose correctness is known (MCQ items with a gold label)
        self.correct = 0

    def update(self, n: int, *, latency_s: float = 0.0, judged: int = 0, correct: int = 0) -> None:
        self.done += n
        self.latency_s += latency_s
        self.judged += judged
        self.correct += correct
        now = time.monotonic()
        if now - self._last >= self.min_interval_s or self.done >= self.total:
            self._last = now
            self.logger.info(tqdm.format_meter(self.done, self.total, now - self.start, prefix=self.desc,
                                               unit="item", ascii=True, ncols=100))
        if self.tracker and (self.done >= self._next_point or self.done >= self.total):
            self._next_point = (self.done // self.every + 1) * self.every
            self.tracker.progress(self.done, self.point(now))

    def point(self, now: float) -> dict[str, float]:
        """The live numbers at this moment (what a tracked run plots against items done)."""
        elapsed = max(now - self.start, 1e-9)
        out = {"items_done": self.done, "fraction": self.done / max(self.total, 1), "items_per_s": self.done / elapsed,
               "latency_per_item_s": self.latency_s / max(self.done, 1)}
        if self.judged:
            out["accuracy_so_far"] = self.correct / self.judged
        return out


def setup_logging(level: int = logging.INFO) -> logging.Logger:
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    return logging.getLogger("lalmbench")
