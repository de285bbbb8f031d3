"""Scoring one answer against a rubric: one yes/no verdict per criterion, then a weighted score.

An answer's score is the sum of the weights of the criteria it meets (weights sum to 1, so the
score lies in [0, 1]). It is only computed when every criterion got a verdict: an answer whose
reply leaves a criterion unread has no score and is counted (``incomplete``), never scored on the
criteria that happened to be read.
"""
from __future__ import annotations

import re
from typing import Sequence

from .replies import ERROR, FALLBACK, JSON, UNREADABLE, first_json

YES = {"yes", "y", "true", "met", "pass", "1"}
NO = {"no", "n", "false", "not met", "unmet", "fail", "0"}
INCOMPLETE = "incomplete"
# fallback: "1: yes", "2. No - it names a dog", "Criterion 3 - yes"
_LINE = re.compile(r"^\s*(?:criterion\s*)?(\d+)\s*[.):=-]*\s*[\"']?(yes|no|true|false|met|not met)\b",
                   re.IGNORECASE | re.MULTILINE)


def _verdict(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().strip(".!").lower()
        return True if v in YES else False if v in NO else None
    if isinstance(value, dict):  # {"1": {"verdict": "yes", "reason": ...}}
        for key in ("verdict", "met", "answer", "value"):
            if key in value:
                return _verdict(value[key])
    return None


def read_verdicts(raw: str | None, ids: Sequence[int]) -> tuple[dict[int, bool | None], str]:
    """(verdict per criterion id, status): JSON ``{"1": "yes", ...}`` or a list of
    ``{"criterion": 1, "verdict": "yes"}``, else ``<n>: yes`` lines. Status is json / fallback when
    every id got a verdict, incomplete when some did, unreadable when none did."""
    out: dict[int, bool | None] = {i: None for i in ids}
    if raw is None:
        return out, ERROR
    parsed = first_json(raw)
    found = {}
    if isinstance(parsed, dict):
        for k, v in parsed.items():
            m = re.search(r"\d+", str(k))
            if m:
                found[int(m.group())] = _verdict(v)
    elif isinstance(parsed, list):
        for n, v in enumerate(parsed, 1):
            if isinstance(v, dict) and any(k in v for k in ("criterion", "id")):
                m = re.search(r"\d+", str(v.get("criterion", v.get("id"))))
                if m:
                    found[int(m.group())] = _verdict(v)
            else:
                found[n] = _verdict(v)
    status = JSON
    if not any(found.get(i) is not None for i in ids):
        found = {int(m.group(1)): _verdict(m.group(2)) for m in _LINE.finditer(raw)}
        status = FALLBACK
    for i in ids:
        out[i] = found.get(i)
    read = sum(v is not None for v in out.values())
    if read == 0:
        return out, UNREADABLE
    return out, status if read == len(ids) else INCOMPLETE


def weighted_score(criteria: Sequence[dict], verdicts: dict[int, bool | None]) -> float | None:
    """Sum of the (normalised) weights of the criteria met; None unless every criterion has a verdict."""
    if not criteria or any(verdicts.get(c["id"]) is None for c in criteria):
        return None
    return float(sum(c["weight"] for c in criteria if verdicts[c["id"]]))


def render_criteria(criteria: Sequence[dict]) -> str:
    return "\n".join(f"{c['id']}. {c['criterion']}" for c in criteria)


def render_references(references: Sequence[str]) -> str:
    return "\n".join(f"- {r}" for r in references)
