"""Reading LLM replies: JSON where the model wrote JSON (also inside a code fence or after some
chatter), else a line-by-line fallback in each stage's reader. A reply neither reads is
``unreadable``: it is counted in every output, never dropped in silence.
"""
from __future__ import annotations

import json
from typing import Any

JSON = "json"
FALLBACK = "fallback"
UNREADABLE = "unreadable"
ERROR = "error"  # the call itself failed (the backend's error is kept)


def first_json(text: str | None) -> Any | None:
    """The first JSON object or array in ``text`` that parses (a small model often wraps it in prose
    or a ```json fence), else None."""
    if not text:
        return None
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            return value
    return None


def json_objects(text: str | None) -> list[dict]:
    """Every JSON object in ``text`` that parses on its own, outermost first: what survives of a reply
    cut off by the token budget in the middle of a list."""
    out: list[dict] = []
    if not text:
        return out
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            out.append(value)
        i = text.find("{", end)
    return out


def count_status(records: list[dict], key: str = "status") -> dict[str, int]:
    """How many records have each status (json / fallback / unreadable / error), zeros included."""
    out = {JSON: 0, FALLBACK: 0, UNREADABLE: 0, ERROR: 0}
    for r in records:
        out[r[key]] = out.get(r[key], 0) + 1
    return out
