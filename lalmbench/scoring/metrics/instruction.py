"""Instruction-following checks (MMAU-Pro's "instruction following" items, IFEval-style).

Each item carries ``meta.instruction = {task_identifier, kwargs}``; the check named by
``task_identifier`` says whether the model's reply obeys the spoken instruction (a word count, a
format, keywords, case...). The checks reproduce MMAU-Pro's released evaluation (its AIF functions),
including its choices: words are whitespace-separated tokens, paragraphs are split by ``***``,
keyword checks are substring tests (so "cat" is found in "category"), a missing ``N`` means 0.
One difference: sentences are counted by a punctuation rule (``.``/``!``/``?`` followed by space
or the end) where MMAU-Pro uses NLTK's punkt, which also knows abbreviations ("Mr. Smith").

An unknown ``task_identifier`` (or an item without one), and kwargs a check cannot read (``N``
that is no number, a list where a word is due), are left out with a counted reason, never scored
as a failure of the model.

Every check runs in time linear in the reply (a reply may be 8 MiB, the API client's cap): the
patterns whose plain regex would backtrack over a long run (bullets, placeholders, titles,
sections) are counted by scans that give the same counts; bench/bench_instruction.py times them
on adversarial replies.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

import pandas as pd

Check = Callable[[str, dict, dict], bool]


class BadKwargs(ValueError):
    """An instruction's kwargs the check cannot read: the item is left out, counted."""


def _n(kw: dict, key: str, default: float = 0) -> float:
    """A count from the kwargs: a number, or a string holding one (MMAU-Pro stores some as text)."""
    v = kw.get(key)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise BadKwargs(f"{key} is a {type(v).__name__}, not a number")
    try:
        n = float(v)
    except (ValueError, OverflowError):
        raise BadKwargs(f"{key} is not a number") from None
    if not math.isfinite(n):
        raise BadKwargs(f"{key} is not a finite number")
    return n


def _text(kw: dict, key: str) -> str:
    """A word or phrase from the kwargs (a number is read as its digits; a list or mapping is not a phrase)."""
    v = kw.get(key)
    if not v:
        return ""
    if isinstance(v, (list, tuple, dict)):
        raise BadKwargs(f"{key} is a {type(v).__name__}, not a text")
    return str(v)


def _list(kw: dict, key: str) -> list[str]:
    """A ``"a, b"`` string (MMAU-Pro's format) or a list, as words."""
    v = kw.get(key) or ""
    if isinstance(v, dict):
        raise BadKwargs(f"{key} is a mapping, not a list of words")
    return [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v).split(", ")


def count_words(text: str) -> int:
    return len(text.split())


def count_sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()])


def count_paragraphs(text: str) -> int:
    return len([p for p in text.split("***") if p.strip()])


#: a bullet starts at the text's start or after the *last* newline before its star: the official
#: ``(?:^|\n)\s*\*\s+`` counts the same bullets, but tries every newline of a long blank run in turn
_BULLET = re.compile(r"(?:\A\s*|\n[^\S\n]*)\*\s+")
_PLACEHOLDER = re.compile(r"\[[^\]]+\]")


def count_bullets(text: str) -> int:
    return len(_BULLET.findall(text))


def count_highlights(text: str) -> int:
    return len(re.findall(r"\*([^*]+)\*", text))


def count_placeholders(text: str) -> int:
    # only up to the last "]": past it every "[" would scan to the end of the text and fail
    return len(_PLACEHOLDER.findall(text, 0, text.rfind("]") + 1))


def has_title(text: str) -> bool:
    """``<<title>>`` somewhere (``<<[^>]+>>``): a "<<" and a ">>" with one or more characters between
    them and no ">" among them, i.e. a "<<" inside the piece of text before some ">>"."""
    pieces = text.split(">")
    # pieces[k + 1] == "" (with a piece after it) means pieces[k] ends at a ">>"; its last character
    # must be part of the title, not of the "<<"
    return any(pieces[k + 1] == "" and "<<" in pieces[k][:-1] for k in range(len(pieces) - 2))


def count_capital_words(text: str) -> int:
    return sum(w.isupper() for w in text.split())


def keyword_frequency(text: str, keyword: str) -> int:
    return len(re.findall(r"\b" + re.escape(keyword.lower()) + r"\b", text.lower()))


def _letters(text: str, keep_space: bool) -> str:
    return re.sub(r"[^a-zA-Z ]+" if keep_space else r"[^a-zA-Z]+", "", text).lower()


_SPACE = re.compile(r"\s*")


def count_sections(text: str, splitter: str) -> int:
    """The non-blank parts of ``re.split(r"\\s*<splitter>\\s*", text.strip())`` (the official split),
    found with ``str.find``: the regex tries every blank before a splitter that is not there. An empty
    splitter splits between every character there, so each non-blank character is a part."""
    text = text.strip()
    if not splitter:
        return sum(not c.isspace() for c in text)
    n, at = 0, 0
    while (i := text.find(splitter, at)) >= 0:
        n += bool(text[at:i].strip())
        at = _SPACE.match(text, i + len(splitter)).end()
    return n + bool(text[at:].strip())


def _two_responses(text: str) -> bool:
    parts = text.split("******")
    return len(parts) == 2 and parts[0].lower().strip() != parts[1].lower().strip()


def _range(count: Callable[[str], int]) -> Check:
    return lambda r, kw, it: _n(kw, "N1", 0) <= count(r) <= _n(kw, "N2", 999)


#: MMAU-Pro task_identifier -> check(reply, kwargs, item)
CHECKS: dict[str, Check] = {
    "Include Keywords": lambda r, kw, it: all(k.lower() in r.lower() for k in _list(kw, "keywords")),
    "Keyword Frequency": lambda r, kw, it: keyword_frequency(r, _text(kw, "keyword")) == _n(kw, "N"),
    "Forbidden Words": lambda r, kw, it: not any(w.lower() in r.lower() for w in _list(kw, "forbidden_words")),
    "Number Paragraphs": lambda r, kw, it: count_paragraphs(r) == _n(kw, "N"),
    "Number Words (at least)": lambda r, kw, it: count_words(r) >= _n(kw, "N"),
    "Number Words (at most)": lambda r, kw, it: count_words(r) <= _n(kw, "N"),
    "Number Words (range)": _range(count_words),
    "Number Sentences (at least)": lambda r, kw, it: count_sentences(r) >= _n(kw, "N"),
    "Number Sentences (at most)": lambda r, kw, it: count_sentences(r) <= _n(kw, "N"),
    "Number Sentences (range)": _range(count_sentences),
    "Postscript": lambda r, kw, it: _letters(_text(kw, "postscript_marker"), False) in _letters(r, False),
    "Number Placeholder": lambda r, kw, it: count_placeholders(r) >= _n(kw, "N"),
    "Number Bullets": lambda r, kw, it: count_bullets(r) == _n(kw, "N"),
    "Title": lambda r, kw, it: has_title(r),
    "Minimum Number Highlighted Section": lambda r, kw, it: count_highlights(r) >= _n(kw, "N"),
    "Multiple Sections": lambda r, kw, it: count_sections(r, _text(kw, "section_splitter")) == _n(kw, "N"),
    "Repeat Prompt": lambda r, kw, it: r.strip().lower().startswith(str(it.get("question") or "").strip().lower()),
    "Two Responses": lambda r, kw, it: _two_responses(r),
    "All Uppercase": lambda r, kw, it: r.isupper(),
    "All Lowercase": lambda r, kw, it: r.islower(),
    "All-capital Words (at least)": lambda r, kw, it: count_capital_words(r) >= _n(kw, "N"),
    "All-capital Words (at most)": lambda r, kw, it: count_capital_words(r) <= _n(kw, "N"),
    "All-capital Words (range)": _range(count_capital_words),
    "Start Checker": lambda r, kw, it: _letters(r, True).startswith(_letters(_text(kw, "start_phrase"), True)),
    "End Checker": lambda r, kw, it: _letters(r, True).endswith(_letters(_text(kw, "end_phrase"), True)),
    "Quotation": lambda r, kw, it: r.strip().startswith('"') and r.strip().endswith('"'),
    "No Commas": lambda r, kw, it: "," not in r,
}


def instruction_of(item: dict) -> tuple[str | None, dict | None]:
    """(task_identifier, kwargs) of an item; kwargs given as a JSON string are decoded, and are None
    when they are neither a mapping nor a JSON text of one."""
    spec = (item.get("meta") or {}).get("instruction") or {}
    kwargs: Any = spec.get("kwargs") or {}
    if isinstance(kwargs, str):
        try:
            kwargs = json.loads(kwargs) if kwargs.strip() else {}
        except (ValueError, RecursionError):
            kwargs = None
    return spec.get("task_identifier"), dict(kwargs) if isinstance(kwargs, dict) else None


def check_item(item: dict, reply: str | None) -> tuple[bool | None, str | None]:
    """(followed, None), or (None, reason) when the item cannot be checked. A failed generation is
    checked as an empty reply (it did not follow the instruction)."""
    tid, kwargs = instruction_of(item)
    if not tid:
        return None, "instruction:missing_task_identifier"
    check = CHECKS.get(str(tid))
    if check is None:
        return None, "instruction:unknown_task_identifier"
    if kwargs is None:
        return None, "instruction:unreadable_kwargs"
    try:
        return bool(check(reply or "", kwargs, item)), None
    except BadKwargs:
        return None, "instruction:unreadable_kwargs"


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
