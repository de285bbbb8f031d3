"""Instruction-following checks (MMAU-Pro's "instruction following" items, IFEval-style).

Each item carries ``meta.instruction = {task_identifier, kwargs}``; the check named by
``task_identifier`` says whether the model's reply obeys the spoken instruction (a word count, a
format, keywords, case...). The checks reproduce MMAU-Pro's released evaluation (its AIF functions),
including its choices: words are whitespace-separated tokens, paragraphs are split by ``***``,
keyword checks are substring tests (so "cat" is found in "category"), a missing ``N`` means 0.
One difference: sentences are counted by a punctuation rule (``.``/``!``/``?`` followed by space
or the end) where MMAU-Pro uses NLTK's punkt, which also knows abbreviations ("Mr. Smith").

An unknown ``task_identifier`` (or an item without one) is left out with a counted reason, never
scored as a failure of the model.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

import pandas as pd

Check = Callable[[str, dict, dict], bool]


def _n(kw: dict, key: str, default: float = 0) -> float:
    v = kw.get(key)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return default
    return float(v)


def _list(kw: dict, key: str) -> list[str]:
    """A ``"a, b"`` string (MMAU-Pro's format) or a list, as words."""
    v = kw.get(key) or ""
    return [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v).split(", ")


def count_words(text: str) -> int:
    return len(text.split())


def count_sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()])


def count_paragraphs(text: str) -> int:
    return len([p for p in text.split("***") if p.strip()])


def count_bullets(text: str) -> int:
    return len(re.findall(r"(?:^|\n)\s*\*\s+", text))


def count_highlights(text: str) -> int:
    return len(re.findall(r"\*([^*]+)\*", text))


def count_placeholders(text: str) -> int:
    return len(re.findall(r"\[[^\]]+\]", text))


def count_capital_words(text: str) -> int:
    return sum(w.isupper() for w in text.split())


def keyword_frequency(text: str, keyword: str) -> int:
    return len(re.findall(r"\b" + re.escape(keyword.lower()) + r"\b", text.lower()))


def _letters(text: str, keep_space: bool) -> str:
    return re.sub(r"[^a-zA-Z ]" if keep_space else r"[^a-zA-Z]", "", text).lower()


def _sections(text: str, n: float, splitter: str) -> bool:
    """Non-empty parts between ``splitter``s; an empty splitter splits between every character, as
    MMAU-Pro's ``re.split`` does."""
    parts = re.split(rf"\s*{re.escape(splitter)}\s*", text.strip())
    return len([s for s in parts if s.strip()]) == n


def _two_responses(text: str) -> bool:
    parts = text.split("******")
    return len(parts) == 2 and parts[0].lower().strip() != parts[1].lower().strip()


def _range(count: Callable[[str], int]) -> Check:
    return lambda r, kw, it: _n(kw, "N1", 0) <= count(r) <= _n(kw, "N2", 999)


#: MMAU-Pro task_identifier -> check(reply, kwargs, item)
CHECKS: dict[str, Check] = {
    "Include Keywords": lambda r, kw, it: all(k.lower() in r.lower() for k in _list(kw, "keywords")),
    "Keyword Frequency": lambda r, kw, it: keyword_frequency(r, str(kw.get("keyword") or "")) == _n(kw, "N"),
    "Forbidden Words": lambda r, kw, it: not any(w.lower() in r.lower() for w in _list(kw, "forbidden_words")),
    "Number Paragraphs": lambda r, kw, it: count_paragraphs(r) == _n(kw, "N"),
    "Number Words (at least)": lambda r, kw, it: count_words(r) >= _n(kw, "N"),
    "Number Words (at most)": lambda r, kw, it: count_words(r) <= _n(kw, "N"),
    "Number Words (range)": _range(count_words),
    "Number Sentences (at least)": lambda r, kw, it: count_sentences(r) >= _n(kw, "N"),
    "Number Sentences (at most)": lambda r, kw, it: count_sentences(r) <= _n(kw, "N"),
    "Number Sentences (range)": _range(count_sentences),
    "Postscript": lambda r, kw, it: _letters(str(kw.get("postscript_marker") or ""), False) in _letters(r, False),
    "Number Placeholder": lambda r, kw, it: count_placeholders(r) >= _n(kw, "N"),
    "Number Bullets": lambda r, kw, it: count_bullets(r) == _n(kw, "N"),
    "Title": lambda r, kw, it: bool(re.search(r"<<[^>]+>>", r)),
    "Minimum Number Highlighted Section": lambda r, kw, it: count_highlights(r) >= _n(kw, "N"),
    "Multiple Sections": lambda r, kw, it: _sections(r, _n(kw, "N"), str(kw.get("section_splitter") or "")),
    "Repeat Prompt": lambda r, kw, it: r.strip().lower().startswith(str(it.get("question") or "").strip().lower()),
    "Two Responses": lambda r, kw, it: _two_responses(r),
    "All Uppercase": lambda r, kw, it: r.isupper(),
    "All Lowercase": lambda r, kw, it: r.islower(),
    "All-capital Words (at least)": lambda r, kw, it: count_capital_words(r) >= _n(kw, "N"),
    "All-capital Words (at most)": lambda r, kw, it: count_capital_words(r) <= _n(kw, "N"),
    "All-capital Words (range)": _range(count_capital_words),
    "Start Checker": lambda r, kw, it: _letters(r, True).startswith(_letters(str(kw.get("start_phrase") or ""), True)),
    "End Checker": lambda r, kw, it: _letters(r, True).endswith(_letters(str(kw.get("end_phrase") or ""), True)),
    "Quotation": lambda r, kw, it: r.strip().startswith('"') and r.strip().endswith('"'),
    "No Commas": lambda r, kw, it: "," not in r,
}


def instruction_of(item: dict) -> tuple[str | None, dict]:
    """(task_identifier, kwargs) of an item; kwargs given as a JSON string are decoded."""
    spec = (item.get("meta") or {}).get("instruction") or {}
    kwargs: Any = spec.get("kwargs") or {}
    if isinstance(kwargs, str):
        try:
            kwargs = json.loads(kwargs) if kwargs.strip() else {}
        except json.JSONDecodeError:
            kwargs = {}
    return spec.get("task_identifier"), dict(kwargs) if isinstance(kwargs, dict) else {}


def check_item(item: dict, reply: str | None) -> tuple[bool | None, str | None]:
    """(followed, None), or (None, reason) when the item cannot be checked. A failed generation is
    checked as an empty reply (it did not follow the instruction)."""
    tid, kwargs = instruction_of(item)
    if not tid:
        return None, "instruction:missing_task_identifier"
    check = CHECKS.get(str(tid))
    if check is None:
        return None, "instruction:unknown_task_identifier"
    return bool(check(reply or "", kwargs, item)), None


def score_instructions(items: list[dict], raw: list[str | None]) -> tuple[pd.DataFrame, dict]:
    """Per item (id, task_identifier, followed, excluded_reason) and the headline: the share of
    checkable items whose reply follows the instruction, with a Wilson interval."""
    from lalmbench.core.stats import wilson_interval

    rows = []
    for it, r in zip(items, raw):
        ok, why = check_item(it, r)
        rows.append({"id": it["id"], "task_identifier": instruction_of(it)[0], "followed": ok,
                     "excluded_reason": why})
    per = pd.DataFrame(rows, columns=["id", "task_identifier", "followed", "excluded_reason"])
    kept = per["followed"].dropna()
    n, k = len(kept), int(kept.astype(bool).sum())
    lo, hi = wilson_interval(k, n)
    excluded = per["excluded_reason"].dropna().value_counts()
    head = {"metric": "instruction_following_rate", "value": k / n if n else math.nan, "ci_low": lo, "ci_high": hi,
            "n": n, "n_followed": k, "excluded": {str(a): int(b) for a, b in sorted(excluded.items())}}
    return per, head
