"""The ``conclusion`` stage's reading: which option an output's final answer statement names.

Apart from :mod:`lalmbench.scoring.parse` because it is the largest rule set the parser has (which
sentence concludes, walk-throughs, echoes of the option list, contradictions after it, references by
place): :func:`read_conclusion` is asked by the parser's stages, which decide what its answer counts
for. Pure functions over the output, its masked copy and its sentence spans; rules and examples in
``docs/parser.md``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from lalmbench.scoring import answer_labels as al
from lalmbench.scoring import answer_slots as sl
from lalmbench.scoring import answer_text as at
from lalmbench.scoring import option_text as ot
from lalmbench.scoring.option_text import normalise_text, tokens


@dataclass(frozen=True, slots=True)
class Conclusion:
    """What the final answer statement says: ``label``, or why none (``hard``: no later stage may read
    the output instead; ``cut``: not even MMAU's word match, the output stopped before answering or
    answered with something that is no option)."""

    label: str | None
    reason: str
    hard: bool = False
    pos: int = -1
    cut: bool = False
    #: the option an answer phrase ("Answer: X", "the answer is X") names, even where a later sentence
    #: blocks it: MMAU's word match may not read another option over it
    stated: str | None = None
    #: the statement names several options, or options only under a negation (a discourse "yes" before a
    #: negated statement among them), or a later sentence names another option: MMAU's word match may not read
    #: one option over it either
    refutes: bool = False


# an answer block, or a slot whose tag degraded to one letter ("<C> Two </C>", "<D>Two</D>" for "<Conclusion>")
ANSWER_TAG = re.compile(rf"<(?P<t>{al.ANSWER_TAG_NAMES}|[A-Z])>(?P<c>[^<]{{0,2000}})</(?P=t)>", re.IGNORECASE)
# markup tags (``</Reasoning>``, ``<Conclusion>``) end a sentence the way a line break does
TAG = re.compile(r"</?[A-Za-z][A-Za-z_ ]{0,24}>")
# an output whose last sentence trails off ("So based purely on what I heard...") or stops on a word
# no sentence ends with ("This scenario is characterized by") was cut off
_UNFINISHED = re.compile(r"(?:\.\.\.|…)[\s\"'*)]*$|(?<![\w'])(?:a|an|the|of|to|by|for|with|from|in|on|at|into|about"
                         r"|and|or|but|nor|is|are|was|were|be|been|that|which|whose|as|than|because|its|their|this"
                         r"|these|those|his|her|my|our|your|such)[ \t]*$")


def cut_off(text: str) -> bool:
    """Whether the output stops mid-analysis (only its last characters are searched)."""
    return _UNFINISHED.search(text, max(0, len(text) - 80)) is not None


BOXED = re.compile(r"\\boxed\{(?P<c>[^{}\n]{0,500}(?:\{[^{}\n]{0,500}\}[^{}\n]{0,500})?)\}")


#: negation words as option-text words ("doesn't" is "doesn" and "t"): what tells "Not affected by sour"
#: from "Affected by sour"
NEGATION_WORDS = frozenset({"not", "no", "never", "t", "cannot", "nor", "neither", "none", "without", "non"})
#: words two options can share without one being a variant of the other ("Leaping between surfaces" /
#: "Flying between trees")
FUNCTION_WORDS = ot.ARTICLES | {"of", "to", "in", "on", "at", "by", "for", "with", "from", "between", "and", "or",
                                "is", "are", "it", "its", "his", "her", "their", "as"}


def read_conclusion(text: str, masked: str, sentences: list[tuple[int, int]], phrases: Sequence[ot.OptionPhrase],
                    v: at.Vetoes, labels_shown: bool = True) -> Conclusion | None:
    if not sentences:
        return None
    explicit = False
    blocks = {lab for m in ANSWER_TAG.finditer(text)
              for lab in ot.named_options(text, *m.span("c"), phrases, v).asserted}
    if len(blocks) > 1:
        return Conclusion(None, f"answer tags name different options ({sorted(blocks)})", hard=True)
    tag = at.last_match(ANSWER_TAG, text) or at.last_match(BOXED, text) or sl.json_slot(text)
    marked = True
    if tag is not None:
        a, b = tag.span("c")
        k = next((i for i, (s, e) in enumerate(sentences) if s <= a < e or a < s), len(sentences) - 1)
        where = {ANSWER_TAG: "answer tag", BOXED: "boxed answer"}.get(tag.re, "JSON answer")
    else:
        cut = cut_off(text)
        if cut:
            # the last sentence trails off: only an answer stated in so many words before it counts
            sentences = sentences[:-1]
        marker = at.STRONG_MARKER if cut else at.MARKER
        marks = [i for i, (s, e) in enumerate(sentences)
                 if not list_heading(text, masked, s, phrases)
                 and (marker.search(masked, s, e) or (not cut and _SO_START.match(masked, s, e))
                 or (not cut and _LEAD_IN.search(masked, s, e) and i + 1 < len(sentences)
                     and len({lab for lab, _, _ in ot.find_options(text, *sentences[i + 1], phrases)}) == 1))]
        if marks and marks[-1] < len(sentences) - 1 and _is_option_text(text, sentences[-1], phrases):
            # "Therefore, the patterns are not the same.\n\nNo, these are not the same exact drum set
            # patterns.": a closing line that is one option's whole text is the answer
            marks.append(len(sentences) - 1)
        if marks:
            k = marks[-1]
            if not at.ANSWER_IS.search(masked, *sentences[k]):
                # the last statement that names an option, where the sentences after it name none:
                # "... points toward electronic dance elements. This isn't folk. It's definitely got
                # a club-ready beat." concludes in the first of them
                k = next((i for i in reversed(marks) if _names_one(text, masked, sentences, i, phrases, v, labels_shown)
                          and not _opens_list(text, masked, sentences, i, phrases)), k)
            where = "final answer statement"
        elif cut:
            return Conclusion(None, "analysis cut off before its conclusion", hard=True, cut=True)
        else:
            k, marked = len(sentences) - 1, False
            where = "final sentence" if len(sentences) > 1 else "one-sentence answer"
            # "Based on the given audio, it is likely that a person is mowing the grass. The sound of a lawn
            # mower is consistent with this activity.": an answer first, and sentences that only explain it
            if k > 0 and not TAG.search(text) and not _SUPPOSES.search(masked, *sentences[0]) \
                    and ot.named_options(text, *sentences[0], phrases, v).asserted \
                    and not any(ot.named_options(text, s, e, phrases, v).asserted for s, e in sentences[1:]):
                k = 0
                where = "answer-first sentence"
        a, b = statement(text, masked, sentences, k)
        while k + 1 < len(sentences) and b > sentences[k][1]:
            k += 1
        ans = at.last_match(at.ANSWER_IS, masked[a:b])
        # where the answer phrase ends (its trailing blanks may be a quoted or blanked option text)
        after = a + ans.start() + len(ans.group(0).rstrip()) if ans is not None else b
        if ans is not None and ot.find_options(text, after, b, phrases):
            a, explicit = after, True
        elif ans is not None and "answer" in ans.group(0).lower() and WORDS_AFTER.match(text, after, b):
            # "the correct answer is \"eleven\"": an answer, but not one of the options
            return Conclusion(None, f"{where} gives an answer that is no option "
                                     f"({text[after:b].strip()[:40]!r})", hard=True, cut=True)
    if tag is None:
        # "Cats, frogs and hens make different sounds, but the clucking is most like a hen": what
        # comes after the last "but" is the conclusion
        turn = at.last_match(_BUT, masked[a:b])
        if turn is not None and (at.MARKER.search(masked, a + turn.end(), b)
                                 or _turns_from_the_others(text, a, a + turn.start(), b, phrases)) \
                and ot.find_options(text, a + turn.end(), b, phrases):
            a = a + turn.end()
    named = ot.named_options(text, a, b, phrases, v)
    if (yes := _discourse_yes(text, masked, b, named, phrases)) is not None:
        return Conclusion(None, f"{where}: {yes!r} opens a negated statement, no answer", hard=True,
                          refutes=True)
    s0, e0 = sentences[k] if tag is None else (a, b)
    if tag is None:
        s0 = min(s0, a)
    if named.asserted and at.hedged(masked, s0, e0, named.spans[0][1] if named.spans else None):
        return Conclusion(None, f"{where} hedges ({masked[s0:e0].strip()[:60]!r})", hard=True)
    if len(named.asserted) > 1:
        return Conclusion(None, f"{where} names several options ({sorted(named.asserted)})", hard=True,
                          refutes=True)
    if not named.asserted and named.vetoed:
        named = _negated_counterpart(text, a, b, named, phrases, v) or named
    if not named.asserted:
        if named.vetoed:
            kept = _other_options_dismissed(text, masked, sentences, k, named.vetoed, phrases, v)
            if kept is None:
                return Conclusion(None, f"{where} names options only under a negation or doubt "
                                         f"({sorted(named.vetoed)})", hard=True, refutes=True)
            named, where = kept, f"{where} dismisses the other options"
        else:
            read = statement_reading(text, masked, a, b, phrases, v, labels_shown, sentences)
            if read is None and (kept := _after_dismissal(text, masked, sentences, k, phrases, v)) is not None:
                read = (next(iter(kept.asserted)), kept.spans[0][1], "the sentence before")
                where = f"{where} dismisses the other options"
            if read is None:
                return None
            if at.hedged(masked, s0, e0, read[1]):
                return Conclusion(None, f"{where} hedges ({masked[s0:e0].strip()[:60]!r})", hard=True)
            named = ot.Named(frozenset({read[0]}), frozenset(), ((read[0], read[1], b),))
            where = f"{where}, {read[2]}"
    label, = named.asserted
    pos = named.spans[-1][1]
    echoed = _echoes_options(text, sentences[k + 1:], b, phrases, v)
    # a quoted passage (it holds a sentence end), not a quoted option name ("\"Water Concerto\" emerges")
    quotes = [(qa, qb) for qa, qb in at.quoted_spans(text) if re.search(r"[.!?](?:\s|[\"”’」]?$)", text[qa:qb])]
    for s, e in sentences[k + 1:]:
        if s < b or list_heading(text, masked, s, phrases) or echoed:
            continue
        if _SUPPOSITION.match(masked, s, e) and not _PICK_WORDS.search(masked, s, e):
            # "If the ocean were in front, the sound would likely be more direct": a supposition that explains
            # the answer, no second one
            continue
        if _WALK_THROUGH.match(masked, s, e) and not at.MARKER.search(masked, s, e):
            # "Let me double-check all options: reading a book would involve silence; ...": the options
            # gone through once more, not a new conclusion
            continue
        # options named inside a quoted passage ("The text states: \"The mic-holder has no children. ...\"")
        # are its evidence, not another conclusion
        named_later = ot.named_options(text, s, e, phrases, v)
        later = {lab for lab, oa, ob in named_later.spans if lab in named_later.asserted
                 and not any(qa <= oa and ob <= qb for qa, qb in quotes)}
        if explicit and not at.MARKER.search(masked, s, e) and _widens(later - {label}, label, phrases):
            # "Answer: percussion\nThe instruments are percussion and bass.": a description that adds to the
            # answer's option, not another answer
            continue
        if later - {label} and _concedes(text, masked, s, e, named_later, label):
            # "I would categorize the emotion as **sad**. The tone is neutral, but the slow pace ... is often
            # associated with sadness.": a concession that the sentence turns back from to the answer
            continue
        if later - {label}:
            return Conclusion(None, f"{where} names {label} but a later sentence names {sorted(later - {label})}",
                               hard=True, stated=label if explicit else None, refutes=True)
    if not marked and len(sentences) > 1:
        for s, e in sentences[:k]:
            if ot.named_options(text, s, e, phrases, v).asserted - {label}:
                return Conclusion(None, "several options named and no answer statement")
    return Conclusion(label, where, pos=pos, stated=label if explicit else None)


def _names_one(text: str, masked: str, sentences: list[tuple[int, int]], i: int, phrases: Sequence[ot.OptionPhrase],
               v: at.Vetoes, labels_shown: bool) -> bool:
    """Whether marked sentence ``i`` names an option: its text, or all the words of one ("Therefore the
    pattern is mono first, then stereo later" for "Mono first, stereo later")."""
    a, b = statement(text, masked, sentences, i)
    named = ot.named_options(text, a, b, phrases, v)
    return bool(named.asserted) or not named.vetoed \
        and statement_reading(text, masked, a, b, phrases, v, labels_shown, sentences) is not None


def _discourse_yes(text: str, masked: str, b: int, named: ot.Named, phrases: Sequence[ot.OptionPhrase]) -> str | None:
    """The option "Yes" said as a discourse word before a negated statement ("So based on auditory perception
    alone – yes, this doesn't match expected norms"): it does not answer Yes."""
    raws = {p.label: p.raw.strip().casefold() for p in phrases}
    for lab, _, end in named.spans:
        if raws.get(lab) == "yes" and re.match(r"\s*[,–—-]\s*\w", text[end:b]) \
                and at.negation_between(masked, end, b):
            return text[max(0, end - 3):end]
    return None


def _turns_from_the_others(text: str, a: int, turn: int, b: int, phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether a sentence goes through every option but one before its last "but" and names that one
    alone after it ("market would have different noise, grasslands wouldn't feature marching, amusement
    parks involve laughter, but here everything screams battlefield")."""
    before = {lab for lab, _, _ in ot.find_options(text, a, turn, phrases)}
    after = {lab for lab, _, _ in ot.find_options(text, turn, b, phrases)}
    return len(after) == 1 and not after & before and before | after == {p.label for p in phrases}


def _concedes(text: str, masked: str, s: int, e: int, named: ot.Named, label: str) -> bool:
    """Whether a sentence names other options only before its last "but" and, after it, the answer
    ``label`` alone."""
    turn = at.last_match(_BUT, masked[s:e])
    if turn is None or not masked[s:s + turn.start()].strip():
        return False
    cut = s + turn.end()
    return {lab for lab, a, _ in named.spans if a >= cut} == {label} and label in named.asserted \
        and not named.vetoed - {label}


def _negated_counterpart(text: str, a: int, b: int, named: ot.Named, phrases: Sequence[ot.OptionPhrase],
                         v: at.Vetoes) -> ot.Named | None:
    """"these aren't the same pronunciation" with options "The same" and "Not the same": one option named
    under a negation, where another option is that option's words and a negation word, is that other option."""
    if len(named.vetoed) != 1:
        return None
    label, = named.vetoed
    found = [(oa, ob) for lab, oa, ob in ot.find_options(text, a, b, phrases) if lab == label]
    if not found or any(not any(s <= oa < e for s, e in v.negated + v.negated_wide) for oa, _ in found):
        return None  # under a doubt, not a negation
    words = {p.label: set(p.words) for p in phrases}
    other = [p.label for p in phrases if p.label != label and words[label] < words[p.label]
             and words[p.label] - words[label] <= NEGATION_WORDS]
    if len(other) != 1:
        return None
    return ot.Named(frozenset(other), frozenset(), tuple((other[0], oa, ob) for oa, ob in found))


def _widens(others: set[str], label: str, phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether every option in ``others`` holds all the words of option ``label`` and more
    ("percussion and bass" for "percussion")."""
    words = {p.label: set(p.words) for p in phrases}
    return bool(others) and all(words[label] < words[o] for o in others)


_BUT = re.compile(r"(?i:\b(?:but|however|yet|whereas)\b)")
_LIST_NUMBER = re.compile(r"\s*\d{1,2}[.)]\s*")
# a sentence that supposes ("If the ocean were in front, ...") and one that picks even so ("If I had to choose")
_SUPPOSITION = re.compile(r"[\s*>-]*(?i:if|suppose|supposing|assuming|were\s+it|had\s+it)\b")
_PICK_WORDS = re.compile(r"(?i:\b(?:choose|pick|select|guess|answer|go\s+with|i'd\s+say|i\s+would\s+say)\b)")
# "Let me double-check all options:", "Looking at the other options:": a sentence that goes through the options
_WALK_THROUGH = re.compile(r"[\s*>-]*(?i:(?:let\s+me\s+|let's\s+)?(?:double-?check|check|go\s+through|look\s+at"
                           r"|looking\s+at|review|reviewing|consider|considering)\s+(?:all|each\s+of|every\s+one\s+of"
                           r"|the\s+other)?\s*(?:the\s+)?(?:options|choices)(?:\s+again)?\s*:"
                           # "Let me check again: no Cantonese-like tonal variations (Guangdong), ..."
                           r"|let\s+me\s+(?:double-?\s*)?(?:check|confirm|verify)\s+(?:again|once\s+more)\s*(?::|-|—|–))")


# "If they think she is smarter, then they may not ...": a supposition or a possibility, no statement
_SUPPOSES = re.compile(r"(?i:\b(?:if|may|might|could|would|perhaps|possibly|maybe|depends?|whether)\b)")


def _is_option_text(text: str, sentence: tuple[int, int], phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether a sentence is, word for word, one option's whole text (a long one: "No, these are not
    the same exact melody.")."""
    s, e = sentence
    said = normalise_text(text[s:e])
    same = [p for p in phrases if len(p.raw) > 2 and normalise_text(p.raw) == said]
    if len(same) != 1:
        return False
    prefix = text[text.rfind("\n", 0, s) + 1:s].strip()
    # "B. No, the key stays the same.": its own label may lead it; "4. Cherry cola and Kettle corn" after
    # a list's other items is an item of that list, not a line of its own
    return not prefix or re.fullmatch(rf"[*(\[]*{re.escape(same[0].label)}[.):\]*]*", prefix) is not None \
        and not re.search(r"(?m)^\s*[*(\[]*[A-J1-9][.):]", text[:text.rfind("\n", 0, s) + 1][-400:])


def _echoes_options(text: str, later: list[tuple[int, int]], b: int, phrases: Sequence[ot.OptionPhrase],
                    v: at.Vetoes) -> bool:
    """Whether the sentences after a conclusion name every option of three or more, one at a time and
    in the options' order ("The ranking is:\n1. Caramel Apple ...\n2. ...", the option list copied out): an echo of
    the list, in which no option stands out as a later answer."""
    seen = []
    for s, e in later:
        if s < b:
            continue
        named = ot.named_options(text, s, e, phrases, v)
        found = named.asserted | named.vetoed
        if len(found) > 1:
            return False
        seen += sorted(found)
    order = list(dict.fromkeys(p.label for p in phrases))
    # with two options, "below ... from above" is an explanation, and could be a change of mind
    return len(order) >= 3 and seen == order


def _other_options_dismissed(text: str, masked: str, sentences: list[tuple[int, int]], k: int,
                             vetoed: frozenset[str], phrases: Sequence[ot.OptionPhrase],
                             v: at.Vetoes) -> ot.Named | None:
    """"... is highly consistent with the role of a fitness coach or trainer. The other options
    (Dentist, Teacher, Nurse) do not ...": a last sentence that rejects every option but one, as "the
    other options", after a sentence that names that one alone, concludes in it."""
    rest = {p.label for p in phrases} - set(vetoed)
    if len(rest) != 1 or not at.OTHER_OPTIONS.search(masked, *sentences[k]):
        return None
    before = _one_named_before(text, masked, sentences, k, phrases, v)
    return before if before is not None and before.asserted == rest else None


def _after_dismissal(text: str, masked: str, sentences: list[tuple[int, int]], k: int,
                     phrases: Sequence[ot.OptionPhrase], v: at.Vetoes) -> ot.Named | None:
    """"The combination of track-based mechanics plus screaming indicates classic roller coaster experience.
    All other options don't match these specific auditory clues.": a last sentence that rejects "the other
    options" without naming one concludes in the sentence before, where that names one option alone."""
    if not at.OTHER_OPTIONS.search(masked, *sentences[k]) or not at.negation_between(masked, *sentences[k]):
        return None
    return _one_named_before(text, masked, sentences, k, phrases, v)


def _one_named_before(text: str, masked: str, sentences: list[tuple[int, int]], k: int,
                      phrases: Sequence[ot.OptionPhrase], v: at.Vetoes) -> ot.Named | None:
    """What sentence ``k - 1`` names, where that is one option, asserted and not hedged, and nothing vetoed."""
    if k == 0:
        return None
    before = ot.named_options(text, *sentences[k - 1], phrases, v)
    if len(before.asserted) != 1 or before.vetoed or at.hedged(masked, *sentences[k - 1], before.spans[0][1]):
        return None
    return before


# "the main issue the speaker is facing is:\n* Luggage lost": a lead-in that the next line completes
_LEAD_IN = re.compile(r"(?i:\b(?:is|are|be|as|was)\s*:\s*$)")
# "So counting the confirmed wins: 2 times." a sentence that opens with "So" concludes
_SO_START = re.compile(r"[\s*>-]*(?i:so)\b(?!\s+(?:much|many|far|that)\b)")


def statement(text: str, masked: str, sentences: list[tuple[int, int]], k: int) -> tuple[int, int]:
    """Sentence ``k``, and the next one where it ends in a colon ("Therefore, the correct answer
    is:\n\n* Woman": the statement goes on on the next line; "Answer: percussion" ends in an option
    text, blanked in ``masked``)."""
    a, b = sentences[k]
    if masked[a:b].rstrip().endswith(":") and text[a:b].rstrip().endswith(":") and k + 1 < len(sentences):
        b = sentences[k + 1][1]
        # "the correct answer is:\n\n3. \"told, ships\"": the model's own list number, then the answer
        if _LIST_NUMBER.fullmatch(text, *sentences[k + 1]) and k + 2 < len(sentences):
            b = sentences[k + 2][1]
    return a, b
# "* **Flanger:** Creates a sweeping sound": a list item whose bold heading is an option it goes on to
# describe (the rest of its line); "Let's look at why the other options are less likely:" lists them so
_LIST_HEADING = re.compile(r"[ \t]*(?:[*•+-]|\d{1,2}[.)])[ \t]+\*\*(?P<h>[^*\n]{1,400}?)\*\*(?P<rest>[^\n]*)")


def _opens_list(text: str, masked: str, sentences: list[tuple[int, int]], k: int,
                phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether sentence ``k`` is a lead-in ("Here's why each option is plausible or implausible:")
    whose colon runs on into a list of options gone through, not into an answer."""
    a, b = sentences[k]
    return (masked[a:b].rstrip().endswith(":") and k + 1 < len(sentences)
            and not at.STRONG_MARKER.search(masked, a, b) and list_heading(text, masked, sentences[k + 1][0], phrases))


def list_heading(text: str, masked: str, start: int, phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether the sentence at ``start`` opens a list item that discusses the option its bold heading
    names (or some of its words), with a description after the heading and no answer statement in
    it: such an item is one option gone through, not a conclusion, wherever the list stands."""
    line = text.rfind("\n", 0, start) + 1
    if text[line:start].strip():
        return False
    m = _LIST_HEADING.match(text, line)
    if m is None or not re.search(r"\w", m.group("rest")) or at.STRONG_MARKER.search(masked, *m.span()):
        return False
    if ot.find_options(text, *m.span("h"), phrases):
        return True
    # "* **Park:** While possible, ..." for "In a park": the heading is an option's words, shortened or in
    # another form ("**Mosquitoes:**" for "Mosquitos")
    head = {ot.lemma(w) for w in tokens(m.group("h"))} - FUNCTION_WORDS
    return bool(head) and any(head <= {ot.lemma(w) for w in tokens(p.raw)} for p in phrases)


# the text after "the answer is" holds a word (not just a label, which the label stage reads)
WORDS_AFTER = re.compile(r"[\s*\"'“”:]*(?![(\[]?[A-Z][)\].,:]?[\s*\"']*(?:$|\n))[\w]", re.UNICODE)


# "option A", "choice 3", "the last option": a reference to an option by its place
_OPTION_REF = re.compile(r"(?i:\b(?:option|choice)\s*#?\s*(?P<x>[A-J](?![\w'])|\d{1,2}\b|one|two|three|four|five)"
                         r"|\b(?:the\s+)?(?P<o>first|second|third|fourth|fifth|last)\s+(?:option|choice)\b)")
_PLACES = {"one": 0, "two": 1, "three": 2, "four": 3, "five": 4, "first": 0, "second": 1, "third": 2, "fourth": 3,
           "fifth": 4}


def _place(m: re.Match, n: int) -> int | None:
    x = (m.group("x") or m.group("o")).lower()
    if x == "last":
        i = n - 1
    elif x in _PLACES:
        i = _PLACES[x]
    else:
        i = int(x) - 1 if x.isdigit() else ord(x) - ord("a")
    return i if 0 <= i < n else None


def statement_reading(text: str, masked: str, a: int, b: int, phrases: Sequence[ot.OptionPhrase], v: at.Vetoes,
                      labels_shown: bool, sentences: list[tuple[int, int]],
                      partial: bool = False) -> tuple[str, int, str] | None:
    """(label, position, how) of an output whose final statement (``text[a:b]``) names no option
    text but still says which:

    - with the labels hidden, a reference by place (:func:`_place_reference`);
    - every word of exactly one option, and no word only other options have ("points toward reed
      stops within a pipe organ" for "Reed stops of pipe organ"), outside negated clauses.
    """
    if not labels_shown:
        read = _place_reference(text, masked, sentences, phrases, v)
        if read is not None:
            return read
    said = {ot.lemma(w) for w in re.findall(r"\w+", masked[a:b].lower())}
    words = set(said)
    for s, e in v.negated + v.negated_wide:
        if s < b and e > a:
            words -= {ot.lemma(w) for w in re.findall(r"\w+", masked[max(s, a):min(e, b)].lower())}
    # a possessive's "s" is no content word ("their luggage" says "First speaker's luggage")
    own = {p.label: {ot.lemma(w) for w in p.words} - FUNCTION_WORDS - {"s"} for p in phrases}
    # an option whose own words hold the negation ("... doesn't care enough about her") is said by a
    # clause with that negation: its words count although the clause is negated; a one-word option is
    # said by another form of its word ("imminent arrival" for "Arriving"; its own form is read in place)
    hits = [lab for lab, ws in own.items() if (len(ws) >= 2 or _long_word(ws, own.values()))
            and ws <= (said if ws & NEGATION_WORDS else words)
            and not any((other - ws) & words for o, other in own.items() if o != lab and other != ws)]
    if len(hits) == 1:
        return hits[0], a, "all the words of one option"
    # "The conversation is intermittent because the line is getting weak." for "Line failure": in an output that
    # names no option text anywhere, a short one or a marked statement of a long one, stating and not supposing,
    # half or more of the words only one option has, and none of another's; numbers are no such words
    if not partial or len(sentences) > 3 and not at.MARKER.search(masked, a, b) or _SUPPOSES.search(masked, a, b) \
            or at.non_answer(masked[a:b]) \
            or _OPTION_REF.search(masked, a, b):
        return None
    own = {lab: {w for w in ws if w.isalpha()} for lab, ws in own.items()}
    only = {lab: ws - set().union(*(o for k, o in own.items() if k != lab)) for lab, ws in own.items()}
    some = [lab for lab, ws in only.items() if ws & words]
    if len(some) != 1:
        return None
    lab, = some
    # "high-pitched female vocal" says neither "High-pitched male vocal" nor a female one
    others = set().union(*(o for k, o in own.items() if k != lab)) - own[lab]
    if len(only[lab]) >= 2 and 2 * len(only[lab] & words) >= len(only[lab]) and not others & said \
            and not only[lab] & NEGATION_WORDS:
        return lab, a, "most of the words only one option has"
    return None


def _long_word(words: set[str], options) -> bool:
    """One content word long enough that another form of it is that word, not a chance likeness, and in
    no other option's word: with "Familiar" and "Unfamiliar", "limited familiarity" says neither."""
    if len(words) != 1:
        return False
    w, = words
    return len(w) >= 4 and not any(w in o and o != w for other in options if other != words for o in other)


# what a sentence that picks an option by place says of it ("option A makes the most sense",
# "Option 4 seems correct", "the second option matches perfectly")
_COMMITS = re.compile(r"(?i:\bmakes?\s+(?:the\s+most\s+)?sense|\b(?:seems?|is|appears?|remains?)\s+(?:to\s+be\s+)?(?:the\s+)?"
                      r"(?:most\s+)?(?:correct|right|best|accurate|appropriate|plausible|reasonable)|\bbest\b|\bperfectly\b"
                      r"|\bcaptures?\s+exactly|\bthe\s+answer\b)")


def _place_reference(text: str, masked: str, sentences: list[tuple[int, int]], phrases: Sequence[ot.OptionPhrase],
                     v: at.Vetoes) -> tuple[str, int, str] | None:
    """With the labels hidden, the last sentence that picks one option by place ("So option A
    seems most accurate", "Option 3 best matches", "the second option matches perfectly"): the
    letters and numbers are the model's own, in the order the options were shown. Never when an
    option text is itself a letter or a note, when the output pairs a letter with another option's
    text, or when that sentence or the one before counts a number that is another option's."""
    if any(len(p.raw) <= 2 for p in phrases) or not _own_letters_agree(text, phrases):
        return None
    for k in range(len(sentences) - 1, -1, -1):
        s, e = sentences[k]
        refs = [m for m in _OPTION_REF.finditer(masked, s, e) if not v.vetoed_at(m.start())]
        commit = at.MARKER.search(masked, s, e) or _COMMITS.search(masked, s, e)
        if not refs or not commit or v.vetoed_at(commit.start()):
            continue
        places = {_place(m, len(phrases)) for m in refs}
        if len(places) != 1 or None in places:
            return None
        i, = places
        counted = _numbers(at.blank(masked, [m.span() for m in refs])[sentences[max(0, k - 1)][0]:e])
        if any(_leading_number(p.raw) in counted for j, p in enumerate(phrases) if j != i) \
                and _leading_number(phrases[i].raw) not in counted:
            return None  # "... exactly three iterations. This matches option C." where C is "2 times"
        return phrases[i].label, refs[-1].start(), "its reference to an option by place"
    return None


def _numbers(span: str) -> set[str]:
    words = re.findall(r"\w+", span.lower())
    return {ot.NUMBER_WORDS.get(w, w) for w in words if w.isdigit() or w in ot.NUMBER_WORDS}


def _leading_number(option: str) -> str | None:
    m = re.match(r"\s*(\w+)", option.lower())
    w = m.group(1) if m else ""
    return ot.NUMBER_WORDS.get(w, w) if w.isdigit() or w in ot.NUMBER_WORDS else None


def _own_letters_agree(text: str, phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether every "Option B: <text>" the output writes pairs the letter with the option shown in
    that place (a model that lettered the options in another order cannot be read by letter)."""
    for m in re.finditer(r"(?i:\b(?:option|choice)\s+(?P<x>[A-J])\b\s*[:=(\-–—]\s*)", text):
        i = ord(m.group("x").upper()) - ord("A")
        said = ot.starts_with_option(text, m.end(), min(len(text), m.end() + 300), phrases)
        if said is not None and (i >= len(phrases) or said != phrases[i].label):
            return False
    return True
