"""Tempo estimation asked as an open question (GiantSteps Tempo): MIREX's Accuracy1 and Accuracy2.

The reply's tempo is the first number in it ("about 128 BPM" -> 128; "120-130" -> 120). Accuracy1:
within 4% of the reference tempo; Accuracy2: within 4% of the reference times 1, 2, 3, 1/2 or 1/3
(octave errors forgiven). A reply with no number is wrong and counted as a parse failure; an item
whose reference is not a positive number (GiantSteps' v2 "0.0" for its three untempo'd files) is
left out and counted, since no estimate could match it.
"""
from __future__ import annotations

import re
from typing import Sequence

from lalmbench.core.stats import wilson_interval

TOLERANCE = 0.04
FACTORS = (1.0, 2.0, 3.0, 1 / 2, 1 / 3)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")


def parse_bpm(reply: str | None) -> float | None:
    m = _NUMBER.search(reply or "")
    return float(m.group()) if m else None


def _within(estimate: float, target: float) -> bool:
    return abs(estimate - target) <= TOLERANCE * target


def score_tempi(references: Sequence[Sequence[str]], raw: Sequence[str | None]) -> tuple[list[dict], list[dict], dict]:
    """(per item: bpm read, accuracy1, accuracy2, status; the Accuracy1 and Accuracy2 rows with Wilson
    intervals over the items kept; what was left out)."""
    per, k1, k2, n, unread, excluded = [], 0, 0, 0, 0, 0
    for refs, r in zip(references, raw):
        try:
            ref = float(refs[0])
        except (ValueError, IndexError):
            ref = 0.0
        est = parse_bpm(r)
        if ref <= 0:
            excluded += 1
            per.append({"bpm": est, "correct": None, "accuracy2": None, "tempo_status": "no_reference_tempo"})
            continue
        a1 = est is not None and _within(est, ref)
        a2 = est is not None and any(_within(est, f * ref) for f in FACTORS)
        n += 1
        k1 += a1
        k2 += a2
        unread += est is None
        per.append({"bpm": est, "correct": a1, "accuracy2": a2, "tempo_status": "no_number" if est is None else "read"})
    rows = []
    for metric, k in (("tempo_accuracy1", k1), ("tempo_accuracy2", k2)):
        lo, hi = wilson_interval(k, n)
        rows.append({"metric": metric, "value": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi, "n": n})
    rows[0]["parse_failure_rate"] = unread / n if n else None
    return per, rows, {"excluded": {"no_reference_tempo": excluded} if excluded else {}}
