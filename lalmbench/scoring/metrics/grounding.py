"""Temporal grounding metrics: onset/offset error and IoU between a predicted and a gold interval.

Models answer grounding questions in free text ("The dog barks from 1.2 s to 3.4 s",
"[1.20, 3.40]", "00:01.2 - 00:03.4"). :func:`parse_interval` reads exactly one interval or
reports why not (no interval, several different ones, offset before onset); unparseable answers
are counted and scored as IoU 0 (never dropped), like unparseable MCQ answers count as wrong.
"""
from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np

from lalmbench.core.io import InputError

_NUM = r"(?:(?P<{n}m>\d+):)?(?P<{n}s>\d+(?:\.\d+)?)"
_INTERVAL = re.compile(
    r"(?<![\w.])" + _NUM.format(n="a") + r"\s*(?:s|sec|secs|seconds?)?\s*"
    r"(?:-|–|—|to|until|till|and|,)\s*"
    + _NUM.format(n="b") + r"\s*(?:s|sec|secs|seconds?)?(?![\w.])", re.IGNORECASE)
_START_END = re.compile(
    r"\b(?:starts?|starting|begins?|beginning|onset)\b[^0-9]{0,20}?" + _NUM.format(n="a")
    + r".{0,40}?\b(?:ends?|ending|stops?|offset)\b[^0-9]{0,20}?" + _NUM.format(n="b"), re.IGNORECASE | re.DOTALL)


def _seconds(m: re.Match, n: str) -> float:
    minutes = m.group(f"{n}m")
    return float(m.group(f"{n}s")) + (60.0 * int(minutes) if minutes else 0.0)


def parse_interval(text: str | None) -> tuple[tuple[float, float] | None, str]:
    """``((onset_s, offset_s), "ok")`` or ``(None, reason)``."""
    if not text or not str(text).strip():
        return None, "empty"
    found = {(round(_seconds(m, "a"), 6), round(_seconds(m, "b"), 6))
             for rx in (_INTERVAL, _START_END) for m in rx.finditer(str(text))}
    if not found:
        return None, "no interval"
    if len(found) > 1:
        return None, f"several intervals {sorted(found)}"
    (on, off), = found
    if off < on:
        return None, f"offset {off} before onset {on}"
    return (on, off), "ok"


def interval_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    if union <= 0:
        return 1.0 if a == b else 0.0
    return inter / union


def grounding_scores(gold: Sequence[tuple[float, float]], raw_outputs: Sequence[str | None], *,
                     iou_thresholds: Sequence[float] = (0.3, 0.5, 0.7)) -> dict:
    """Per-item parse + errors, and summary: mean IoU (unparseable = 0), recall at IoU thresholds
    with Wilson intervals, median absolute onset/offset error over parsed items, parse failure rate."""
    from lalmbench.core.stats import wilson_interval

    if len(gold) != len(raw_outputs):
        raise InputError(f"grounding: {len(gold)} gold intervals but {len(raw_outputs)} outputs")
    per_item = []
    for i, (g, raw) in enumerate(zip(gold, raw_outputs)):
        g = (float(g[0]), float(g[1]))
        if not (math.isfinite(g[0]) and math.isfinite(g[1])) or g[1] < g[0]:
            raise InputError(f"grounding: item #{i} has an invalid gold interval {g}")
        pred, status = parse_interval(raw)
        row = {"gold_onset_s": g[0], "gold_offset_s": g[1], "parse_status": status,
               "pred_onset_s": pred[0] if pred else None, "pred_offset_s": pred[1] if pred else None,
               "onset_error_s": abs(pred[0] - g[0]) if pred else None,
               "offset_error_s": abs(pred[1] - g[1]) if pred else None,
               "iou": interval_iou(pred, g) if pred else 0.0}
        per_item.append(row)
    n = len(per_item)
    iou = np.array([p["iou"] for p in per_item])
    parsed = [p for p in per_item if p["pred_onset_s"] is not None]
    summary = {"metric": "mean_iou", "value": float(iou.mean()) if n else math.nan, "n": n,
               "parse_failure_rate": (n - len(parsed)) / n if n else math.nan,
               "median_onset_error_s": float(np.median([p["onset_error_s"] for p in parsed])) if parsed else math.nan,
               "median_offset_error_s": float(np.median([p["offset_error_s"] for p in parsed])) if parsed else math.nan,
               "mean_onset_error_s": float(np.mean([p["onset_error_s"] for p in parsed])) if parsed else math.nan,
               "mean_offset_error_s": float(np.mean([p["offset_error_s"] for p in parsed])) if parsed else math.nan}
    recalls = []
    for t in iou_thresholds:
        k = int((iou >= t).sum())
        lo, hi = wilson_interval(k, n)
        recalls.append({"metric": f"recall_iou{t:g}", "value": k / n if n else math.nan, "ci_low": lo, "ci_high": hi,
                        "n": n, "parse_failure_rate": summary["parse_failure_rate"]})
    return {"summary": summary, "recalls": recalls, "per_item": per_item}
