"""Whether a label the label stages read agrees with the option texts around it.

A label is unparseable when the text says another option: its sentence describes a contrasting
option, a later conclusion names another, an answer slot tagged with it holds another option's text,
or the bare label is itself another option's text. Apart from :mod:`lalmbench.scoring.parse` so the
entry point reads as the order of its stages; these return why, or None, and the parser decides.
"""
from __future__ import annotations

import re
from typing import Sequence

from lalmbench.scoring import answer_labels as al
from lalmbench.scoring import answer_text as at
from lalmbench.scoring import conclusion as cl
from lalmbench.scoring import option_text as ot
from lalmbench.scoring.option_text import normalise_text


_LABELLED_BEFORE = re.compile(r"(?:\b(?i:option|choice)\s+|[(\[]|^|\s)(?P<l>[A-Za-z])[)\].:,]?\s*"
                              r"(?i:(?:a|an|the)\s+)?$")


def _labelled(text: str, pos: int, label: str) -> bool:
    """Whether the option text at ``pos`` follows its own label ("Option A, ...", "(A) ...", "A. ...")."""
    m = _LABELLED_BEFORE.search(text[max(0, pos - 16):pos])
    return m is not None and m.group("l").upper() == label


def _contrast(a: ot.OptionPhrase, b: ot.OptionPhrase) -> bool:
    """Options that differ by a modifier ("female singer" / "male singer", "two beeps" / "one beep"):
    describing one excludes the other."""
    return bool((set(a.words) & set(b.words)) - cl.FUNCTION_WORDS)


# a lead-in to the reasons for the answer just given, and a list item's start: the items explain the answer
_EXPLAINED = re.compile(r"(?i:\bhere(?:'s|\s+is|\s+are)\s+(?:why|the\s+reasons?|my\s+reasoning|a\s+breakdown)\b)")
_ITEM_START = re.compile(r"[ \t]*(?:[*\-•+]|\d{1,2}[.)])[ \t]")


def contradicted(text: str, masked: str, sentences: list[tuple[int, int]], label: str, pos: int,
                 phrases: Sequence[ot.OptionPhrase], v: at.Vetoes) -> str | None:
    """Why a label read at ``pos`` is contradicted by the text around it, or None: its sentence or
    the one before asserts a contrasting option ("... a solo female singer. The answer is B." with B
    "Male singer"), or a later conclusion sentence names another option."""
    by_label = {p.label: p for p in phrases}
    mine = by_label.get(label)
    k = next((i for i, (s, e) in enumerate(sentences) if s <= pos < e), None)
    if k is None:
        return None
    # "Therefore, the answer is: (A) The third speaker" states the label with its own text: the
    # statement is whole, whatever the sentence before it described
    whole = ot.starts_with_option(text, pos + len(label), min(len(text), pos + len(label) + 300), phrases) == label
    # an answer slot after the reasoning's closing tag ("...pull him out.</Reasoning><Conclusion>B") is
    # the template's answer: the reasoning's last sentence is not its description
    first = k if k and cl.TAG.search(text, sentences[k - 1][1], pos) else max(0, k - 1)
    if mine is not None and not whole:
        for s, e in sentences[first:k + 1]:
            if e <= pos and cl.list_heading(text, masked, s, phrases):
                continue  # "* **4) sounds heard during a game:** ..." goes through an option set aside
            # "Option A, <A's text>, ..." discusses an option; only unlabelled text describes the audio
            named = {lab for lab, a, _ in ot.named_options(text, s, e, phrases, v).spans
                     if not _labelled(text, a, lab)}
            if len(named) == 1 and label not in named:
                other, = named
                # describing "valid" does not contradict "Valid. No counterexample exists"
                if other in by_label and _contrast(mine, by_label[other]) \
                        and not set(by_label[other].words) < set(mine.words):
                    return f"label {label} but the text says option {other}"
    why = _EXPLAINED.search(masked, pos)
    for s, e in sentences[k + 1:]:
        if not at.MARKER.search(masked, s, e) or cl.list_heading(text, masked, s, phrases) \
                or why is not None and why.end() <= s and _ITEM_START.match(text, text.rfind("\n", 0, s) + 1):
            continue  # "Here's why:\n\n* **Coffee beans would make a more consistent ...**": the answer explained
        named = ot.named_options(text, s, e, phrases, v).asserted
        if len(named) == 1 and label not in named:
            return f"label {label} but a later conclusion names option {next(iter(named))}"
    return None


# "<C>Red Hand</C>": an answer slot whose tag is a label and whose content is an option's text
_LABEL_SLOT = re.compile(r"<(?P<l>[A-J])>(?P<c>[^<\n]{1,300})</(?P=l)>")


def label_slot_with_other_text(text: str, opts: tuple[tuple[str, str], ...],
                               phrases: Sequence[ot.OptionPhrase]) -> str | None:
    """Why an answer slot tagged with one label but holding another option's text ("<C>Red Hand</C>"
    with A "The Red Hand") is ambiguous, or None: a label followed by another option's text."""
    labels = {lab for lab, _ in opts}
    for m in _LABEL_SLOT.finditer(text):
        named = {lab for lab, _, _ in ot.find_options(text, *m.span("c"), phrases)}
        if m.group("l") in labels and named and m.group("l") not in named:
            return f"answer slot <{m.group('l')}> holds option {sorted(named)[0]}'s text"
    return None


def label_is_other_text(text: str, lr: al.LabelRead, opts: tuple[tuple[str, str], ...],
                        phrases: Sequence[ot.OptionPhrase]) -> str | None:
    """The option whose text is the label read, when the label stands bare: with options numbered
    ``1) 2 | 2) 0 | 3) 4 | 4) 1``, "the answer is **1**" may be label 1 or the count one (option 4).
    A label followed by its own text ("4) 1") is whole."""
    others = [lab for lab, t in opts if lab != lr.label and normalise_text(t) == normalise_text(lr.label)]
    if not others:
        return None
    end = lr.pos + len(lr.label)
    if ot.starts_with_option(text, end, min(len(text), end + 300), phrases) == lr.label:
        return None
    return others[0]


# "Based on the audio clip, there were **4** goal attempts": a number the output counts with, not a label
_COUNTED_BEFORE = re.compile(r"(?i:\b(?:there\s+(?:is|are|was|were)|i\s+(?:can\s+)?(?:hear|heard|count|counted|identify"
                             r"|identified|detect|detected)|a\s+total\s+of)\s+(?:only\s+|exactly\s+|about\s+)?[*_]*$)")
_COUNTED_AFTER = re.compile(r"[*_]*(?:[ \t]+[a-z][a-z-]*){0,2}?[ \t]+[a-z][a-z-]*s\b")


# a count's noun after the number word: "**three** \"Not\" group chats"
_NOUN_AFTER = r"[*_\"']*(?:[ \t]+[\w\"'-]+){0,2}?[ \t]+[a-z][a-z-]*s\b"
_DIGIT_WORDS = {digits: word for word, digits in ot.NUMBER_WORDS.items() if word not in ("zero", "one")}


def counted(text: str, lr: al.LabelRead) -> bool:
    """Whether a bare label that is also another option's text is written as a count ("there were **4**
    goal attempts", "I hear 3 sounds", "There are **2** different male speakers"): then it is that option's
    text, the number counted."""
    end = lr.pos + len(lr.label)
    if _COUNTED_BEFORE.search(text, max(0, lr.pos - 40), lr.pos) is not None \
            and _COUNTED_AFTER.match(text, end) is not None:
        return True
    # "The speaker mentions **three** group chats: ... Therefore, the answer is **3**.": the count said before
    word = _DIGIT_WORDS.get(lr.label)
    return word is not None and re.search(rf"(?i:\b{word}\b){_NOUN_AFTER}", text[:lr.pos]) is not None
