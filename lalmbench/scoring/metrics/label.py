"""Open-answer classification (ESC-50 asked "what sound is this?"): is the gold label the one class
the reply names?

Why a rule of its own: a label set too large to show as options (ESC-50's 50 classes) is asked
open, and exact match would fail "A dog is barking." for ``dog``. A reply is correct when the gold
label occurs in it as whole words and no other label of the task does (a reply listing several
classes names none). Labels and replies are compared lower-cased, with ``_``, ``-`` and ``/`` as
spaces and other punctuation removed (``chirping_birds`` = "chirping birds"). The label set is
``scoring.labels`` or, by default, every reference of the task's items. Inflections are not
matched ("dogs" is not ``dog``): the rule stays strict rather than guess.
"""
from __future__ import annotations

import re
from typing import Sequence

from lalmbench.core.stats import wilson_interval


def normalise(text: str) -> str:
    t = re.sub(r"[_\-/]", " ", str(text).lower())
    return " ".join(re.findall(r"[^\W_]+", t))


def _occurs(phrase: str, text: str) -> list[tuple[int, int]]:
    """Word-aligned spans of ``phrase`` in ``text`` (both normalised)."""
    return [(m.start(), m.end()) for m in re.finditer(rf"(?<!\S){re.escape(phrase)}(?!\S)", text)] if phrase else []


def named_labels(reply: str | None, labels: Sequence[str]) -> list[str]:
    """The labels a reply names, each once; a label found only inside a longer named label's words
    (``clock`` inside "clock tick") is not counted apart from it."""
    text = normalise(reply or "")
    spans = {lab: _occurs(normalise(lab), text) for lab in labels}
    named = []
    for lab, sp in spans.items():
        inside = [s for s in sp if any(o != lab and any(a <= s[0] and s[1] <= b and (a, b) != s for a, b in other)
                                       for o, other in spans.items())]
        if len(sp) > len(inside):
            named.append(lab)
    return named


def score_labels(references: Sequence[Sequence[str]], raw: Sequence[str | None],
                 labels: Sequence[str] | None = None) -> tuple[list[dict], dict]:
    """(per item: correct, named labels, status; the headline accuracy with a Wilson interval and the
    share of replies that name no label)."""
    label_set = list(dict.fromkeys(labels or [r for refs in references for r in refs]))
    per, k, none = [], 0, 0
    for refs, r in zip(references, raw):
        named = named_labels(r, label_set)
        gold = {normalise(x) for x in refs}
        ok = len(named) == 1 and normalise(named[0]) in gold
        status = "no_label" if not named else ("one_label" if len(named) == 1 else "several_labels")
        none += not named
        k += ok
        per.append({"correct": ok, "labels_named": named, "label_status": status})
    n = len(per)
    lo, hi = wilson_interval(k, n)
    return per, {"metric": "label_accuracy", "value": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi,
                 "n": n, "parse_failure_rate": none / n if n else None, "n_labels": len(label_set)}
