"""Answer statements a grader reads where the usual stages do not look: the pick that follows a
refusal or doubt ("I cannot hear the audio directly ... The answer is B"), an option that is itself a
negation word stated as the answer ("The answer is No"), and a JSON object closing the output
(``{"chord": "Bm"}``). Pure functions over the output and its masked copy; the order in which the
parser asks them is :mod:`lalmbench.scoring.parse`'s.
"""
from __future__ import annotations

import re
from typing import Sequence

from lalmbench.scoring import answer_text as at
from lalmbench.scoring import option_text as ot


# a JSON object closing the output ('{"chord": "Bm"}', '```json\n{"answer": "C#:maj", "confidence": 0.9}\n```')
_JSON_OBJECT = re.compile(r'\{[^{}]{1,1200}\}\s*(?:```)?\s*$')
_JSON_FIELD = re.compile(r'"(?P<k>[A-Za-z_ ]{1,30})"\s*:\s*"(?P<c>[^"\n{}]{1,300})"')
_ANSWER_KEY = re.compile(r"(?i:answer|choice|option|prediction|pred|label)")


def json_slot(text: str) -> re.Match | None:
    """The answer field of a JSON object closing the output (its content is group ``c``): the first
    field named like an answer ("answer", "final_answer", "choice", "prediction"), else the only
    string field ('{"chord": "Bm"}'); None when there is no such object or field."""
    brace = text.rfind("{", max(0, len(text) - 1300))
    if brace == -1 or not _JSON_OBJECT.match(text, brace):
        return None
    fields = list(_JSON_FIELD.finditer(text, brace))
    keyed = [m for m in fields if _ANSWER_KEY.search(m.group("k"))]
    return keyed[0] if keyed else fields[0] if len(fields) == 1 else None


# an option that is itself a non-answer: the benchmark's "I don't know" choice
NON_ANSWER_OPTION = re.compile(r"(?i:\W*(?:i\s+(?:do\s+not|don't)\s+(?:know|have\s+(?:an?|the|enough)\s+(?:answer"
                               r"|information))|not\s+enough\s+information|none\s+of\s+the\s+above|cannot\s+be"
                               r"\s+determined|unknown)\b)")
# an answer statement: "So, the correct choice is", "My response is", "I'll choose" ("option B is a dog"
# describes option B: it picks nothing)
_PICKS = re.compile(r"(?i:\b(?:answer|choice|option|response)\b(?!\s+\(?[A-J0-9]\b)[^.!?\n]{0,40}?"
                    r"\b(?:is|would\s+be)\b\s*:?"
                    r"|\bi(?:'ll|\s+will|\s+would|'d)?\s+(?:choose|pick|select|go\s+with)\b)")
# what an answer phrase may be followed by before the option it picks: "is: A. ...", "is (A) ..."
_PICKED_LABEL = re.compile(r"[\s*\"'“:]*\(?(?P<l>[A-J])(?:[).:]|\s*$|\s+(?=\S))")


def picked(text: str, masked: str, sentences: list[tuple[int, int]], opts: tuple[tuple[str, str], ...],
           phrases: Sequence[ot.OptionPhrase], v: at.Vetoes, labels_shown: bool) -> tuple[str, int, str] | None:
    """(label, position, the parser stage that reads it) of the option the last answer statement picks
    ("So, the correct choice is A. I do not have an answer", "My response is C. Their dad"): a label
    (with its own text, if any) or the one option its sentence names, neither negated nor hedged."""
    ans = at.last_match(_PICKS, masked)
    if ans is None:
        return None
    k = next((i for i, (s, e) in enumerate(sentences) if s <= ans.start() < e), None)
    if k is None or at.hedged(masked, *sentences[k]) or _SUPPOSED.search(masked, *sentences[k]):
        return None
    # where the answer phrase ends (the blanks after it may be a blanked option text)
    after = ans.start() + len(ans.group(0).rstrip())
    end = min(len(text), after + 300)
    m = _PICKED_LABEL.match(text, after, end) if labels_shown else None
    if m is not None and m.group("l") in dict(opts):
        if _ALTERNATIVE.match(text, m.end(), end):
            return None  # "The answer is B or C"
        said = ot.starts_with_option(text, m.end(), end, phrases)
        return (m.group("l"), ans.start(), "label-pattern") if said in (None, m.group("l")) else None
    e = sentences[k + 1][1] if masked[after:sentences[k][1]].strip() in ("", ":") and k + 1 < len(sentences) \
        else sentences[k][1]
    named = {lab for lab, a, _ in ot.find_options(text, after, e, phrases) if not v.vetoed_at(a)}
    if len(named) != 1:
        return None
    label, = named
    if dict(opts)[label].strip() in dict(opts) and dict(opts)[label].strip() != label:
        return None  # "the answer is 4" with option 1 "4" and a label 4: the text cannot say which
    return label, ans.start(), "conclusion"


# "If I had to make a guess, ...", "if we were to make an educated guess": the pick the output makes when pressed
_GUESS_FRAME = re.compile(r"(?i:\bif\s+(?:i|we)\s+(?:had|have|were)\s+to\s+"
                          r"(?:make\s+(?:an?\s+)?(?:educated\s+|best\s+)?guess|\W?guess|choose|pick|select)\b"
                          r"|\bif\s+(?:forced|pressed)\s+to\s+(?:choose|pick|guess)\b)")


def guess_statement(masked: str, sentences: list[tuple[int, int]], v: at.Vetoes) -> tuple[int, int] | None:
    """(start, end) of the last statement after a refusal or doubt that opens with a guess frame ("However,
    if I had to *guess* ..., it would be **4) Unwavering confidence**"), with the sentence after it when it
    ends in a colon; None when there is none. A grader takes such a pick as the output's answer."""
    for k in range(len(sentences) - 1, -1, -1):
        s, e = sentences[k]
        if s < v.refusal_end:
            return None
        frame = _GUESS_FRAME.search(masked, s, e)
        if frame is not None:
            if masked[s:e].rstrip(" *").endswith(":") and k + 1 < len(sentences):
                e = sentences[k + 1][1]
            return frame.end(), e
    return None


# a pick under a supposition ("If the sound were a bark, the answer would be B") commits to nothing
_SUPPOSED = re.compile(r"(?i:\b(?:if|unless|assuming|supposing|suppose)\b)")
_ALTERNATIVE = re.compile(r"(?i:(?:or|and)\b|[/&])")


def committed(masked: str, sentences: list[tuple[int, int]], pos: int, v: at.Vetoes,
              markers: re.Pattern = at.STRONG_MARKER) -> bool:
    """Whether the statement around ``pos`` (its sentence, and the one before when that ends in a
    colon) carries one of ``markers`` (by default an answer stated in so many words; "there is no definite
    answer" states none) and does not hedge it (a reason given after it, "as it explains why the singer
    might have laughed", hedges nothing)."""
    k = next((i for i, (s, e) in enumerate(sentences) if s <= pos < e), None)
    if k is None:
        return False
    s, e = sentences[k]
    if k and masked[sentences[k - 1][0]:sentences[k - 1][1]].rstrip().endswith(":"):
        s = sentences[k - 1][0]
    reason = _REASON.search(masked, pos, e)
    return any(not v.vetoed_at(m.start()) for m in markers.finditer(masked, s, e)) \
        and not at.hedged(masked, s, reason.start() if reason else e) and not _SUPPOSED.search(masked, s, e)


_REASON = re.compile(r"(?i:\b(?:as|because|since)\b)")


# an option that is itself a negation word, stated as the answer ("The answer is No"): that option, not a
# negation (longer ones, "None", "Not sure", "No one", are blanked as option texts anyway)
_NEGATION_WORD = re.compile(r"(?i:no|not|nor)")
_BEFORE_STATED = re.compile(r"[\s*\"'“:]*")


def stated_negation_words(text: str, occurrences: list, opts: tuple[tuple[str, str], ...],
                          quotes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of an option text that is a negation word right after an answer phrase on its line, or that opens
    the output as its reply ("No, the elderly people here do not have cognitive impairment."); ``quotes`` are
    the output's quoted spans (:func:`answer_text.quoted_spans`)."""
    own, out = dict(opts), []
    unquoted = None
    for lab, a, b in occurrences:
        if not _NEGATION_WORD.fullmatch(own[lab].strip()):
            continue
        line = text.rfind("\n", 0, a) + 1
        # the question quoted in the answer phrase ("the answer to the question \"Did he ...?\" is no") is blank
        unquoted = unquoted or at.blank(text, quotes)
        ans = at.last_match(at.ANSWER_IS, unquoted[line:a])
        to = _ANSWER_TO.search(unquoted, line, a) if ans is None else None
        end = line + ans.end() if ans is not None else to.end() if to is not None else None
        if end is not None and _BEFORE_STATED.fullmatch(text, end, a) \
                or not text[:a].strip(" \t\n*\"'") and _REPLY_END.match(text, b):
            out.append((a, b))
    return out


# "the answer to the question \"...\" is": an answer phrase with the question it answers
_ANSWER_TO = re.compile(r"(?i:\banswer\s+to\s+(?:the|this|that|your)\s+question\b[^.!?\n]{0,200}?\bis\b\s*:?)")


# the reply word's end: a comma or full stop, then the sentence that says why
_REPLY_END = re.compile(r"[*\"']*[,.!]\s")


# "</Reasoning>\n<B>": a label alone in angle brackets closing the output after the reasoning's closing tag
CLOSING_SLOT = re.compile(r"</[A-Za-z][A-Za-z_ ]{0,24}>\s*<(?P<l>[A-J])>\s*$")
_OPTION_NAMED = re.compile(r"(?i:\b(?:option|choice)\s+)\(?(?P<l>[A-J])\)?(?![\w'])")


def closing_slot(text: str, m: re.Match, sentences: list[tuple[int, int]], phrases: Sequence[ot.OptionPhrase],
                 v: at.Vetoes) -> str | None:
    """The label of a slot closing the output after the reasoning ("... none of these sounds match
    the mooing.</Reasoning>\n<B>") when every sentence of the reasoning that names one option alone
    (by its text or as "Option B"), neither negated nor in doubt, names that one: the template's
    answer, agreed by its reasoning. A reasoning that singles out another option, or none, leaves
    the slot unread. ``m`` is :data:`CLOSING_SLOT`'s match in ``text``."""
    labels = {p.label for p in phrases}
    if m.group("l") not in labels:
        return None
    single: set[str] = set()
    for s, e in sentences:
        if s >= m.start():
            break
        named = set(ot.named_options(text, s, e, phrases, v).asserted)
        named |= {r.group("l") for r in _OPTION_NAMED.finditer(text, s, e)
                  if r.group("l") in labels and not v.vetoed_at(r.start())}
        if len(named) == 1:
            single |= named
    return m.group("l") if single == {m.group("l")} else None
