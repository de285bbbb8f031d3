"""Rubric proposal: the LLM reads reference captions and a model's answers, a few clips per prompt,
and proposes weighted yes/no criteria; :func:`read_criteria` turns each reply into criteria."""
from __future__ import annotations

import math
import re
from typing import Sequence

from .replies import ERROR, FALLBACK, JSON, UNREADABLE, first_json, json_objects

# fallback: "1. Names the main sound source (weight 4)" / "- Mentions the setting: 2" / "* x - weight: 3"
_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?P<text>.+?)\s*[\(\[:,–—-]\s*(?:weight\s*[:=]?\s*)?"
                   r"(?P<w>\d+(?:\.\d+)?)\s*[\)\]]?\s*$", re.IGNORECASE)


def _weight(value: object) -> float | None:
    try:
        w = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return w if 0 < w < math.inf else None  # the prompt asks for 1-5; any positive weight is read as given


def _clean(text: object) -> str:
    return " ".join(str(text).split()).strip(" .\"'") if text is not None else ""


def read_criteria(raw: str | None) -> tuple[list[dict], str]:
    """(criteria ``[{"criterion", "weight"}]``, status). JSON first (``{"criteria": [...]}`` or a
    bare list), then the whole criterion objects of a reply cut off mid-list, then lines that end in a weight. A criterion without text or a positive weight is
    left out; a reply with none left is ``unreadable``."""
    if raw is None:
        return [], ERROR
    parsed = first_json(raw)
    if isinstance(parsed, dict):
        parsed = parsed.get("criteria", parsed.get("rubric"))
    if isinstance(parsed, list):
        out = []
        for c in parsed:
            if isinstance(c, dict):
                text = _clean(c.get("criterion") or c.get("name") or c.get("text"))
                w = _weight(c.get("weight"))
                if text and w is not None:
                    out.append({"criterion": text, "weight": w})
        if out:
            return out, JSON
    # a reply cut off by the token budget: the criterion objects that were closed before the cut
    out = [{"criterion": _clean(c.get("criterion")), "weight": _weight(c.get("weight"))} for c in json_objects(raw)
           if "criterion" in c]
    out = [c for c in out if c["criterion"] and c["weight"] is not None]
    if out:
        return out, FALLBACK
    for line in raw.splitlines():
        m = _LINE.match(line)
        if m:
            text, w = _clean(m.group("text")), _weight(m.group("w"))
            if text and not text.startswith(("{", "[")) and w is not None:
                out.append({"criterion": text, "weight": w})
    return (out, FALLBACK) if out else ([], UNREADABLE)


def render_examples(chunk: Sequence[dict]) -> str:
    """One prompt's clips: each clip's references and the model's answer."""
    blocks = []
    for n, item in enumerate(chunk, 1):
        refs = "\n".join(f"  - {r}" for r in item["references"])
        blocks.append(f"Clip {n}\nReferences:\n{refs}\nModel's caption: {item['answer']}\n")
    return "\n".join(blocks)


def chunks(items: Sequence[dict], size: int) -> list[list[dict]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]
