"""The label stage's reading: option labels written in an output (``Answer: B``, ``(C)``,
``<answer>B</answer>``, ``I choose D``), which of them are explicit answer statements, and labels
followed by another option's text. Regexes are compiled once per label set.

Used by :mod:`lalmbench.scoring.parse`, which decides what a label read is worth against the rest
of the output (the conclusion, contradicting text).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from lalmbench.scoring import answer_text as at
from lalmbench.scoring import option_text as ot
from lalmbench.scoring.option_text import normalise_text

#: the tags a template puts its answer in: ``<answer>``, ``<Conclusion>`` (XML reasoning templates),
#: ``<final_answer>``, ``<RESPONSE>`` (Audio-Reasoner)
ANSWER_TAG_NAMES = r"(?i:answer|conclusion|final[ _]?answer|response)"

_NEG_BEFORE = re.compile(r"(?:\bnot|n't|\bnever|\bexcept|\bneither|\bnor|\brather\s+than|\binstead\s+of|\bno)"
                         r"\s+(?:option\s+|choice\s+|answer\s+|letter\s+)?[(\[*\"']*$", re.IGNORECASE)
# "the other options are not mentioned" rejects them, it echoes no list
_ECHO = re.compile(r"(?i:(?<!other\s)\b(?:options|choices)\s*(?:are|:)|\bhere\s+are\s+the\b"
                   r"|\bthe\s+following\s+(?:options"
                   r"|choices)\b)")


# --- label patterns, compiled once per label set ----------------------------------------------

@dataclass(frozen=True)
class _LabelRegexes:
    labels: tuple[str, ...]
    lower: dict  # lower-case spelling -> label, for labels written "(c)" inside explicit statements
    explicit: tuple[tuple[str, re.Pattern], ...]
    formatted: tuple[tuple[str, re.Pattern], ...]
    hedge: re.Pattern
    loose: re.Pattern
    labelled_line: re.Pattern
    labelled_prefix: re.Pattern
    labelled_period: re.Pattern


@lru_cache(maxsize=256)
def _label_regexes(labels: tuple[str, ...]) -> _LabelRegexes:
    alt = "|".join(re.escape(lab) for lab in sorted(labels, key=len, reverse=True))
    lower = {lab.lower(): lab for lab in labels if len(lab) == 1 and lab.isupper() and lab.lower() not in labels}
    lalt = "|".join(re.escape(x) for x in sorted(lower)) or "(?!x)x"
    lab = rf"(?<![A-Za-z0-9])(?P<l>{alt})(?![A-Za-z0-9])"
    plab = rf"[(\[](?P<pl>{alt}|{lalt})[)\]]"  # parenthesised: lower case allowed ("the answer is (c)")
    # case-insensitive only around the keywords; bare labels stay case-sensitive, because a
    # lower-case "a" in running text is an article, not option A
    # "option:"/"choice:" is an answer statement only as "the correct option:" or at a line start:
    # "considering every option: (b) ..." lists options, it does not answer
    answer_is = (r"(?i:(?:\b(?:answer|choice|option)\s*(?:is|would\s+be|should\s+be|will\s+be)|\banswer\s*[:=\-]"
                 # "The correct statement is **3) ...**"
                 r"|\b(?:correct|right|true|accurate)\s+(?:statement|description)\s+(?:is|would\s+be)"
                 # "the correct choice for the medium used for TV transmission is:A."
                 r"|\b(?:correct|right|best|final)\s+(?:answer|choice|option)\b[^.!?\n:]{1,60}?\b(?:is|would\s+be)\s*:"
                 r"|\b(?:correct|best|final|chosen|selected|my)\s+(?:option|choice)\s*[:=\-]"
                 r"|(?m:^)[ \t*>#\-]*(?:option|choice)\s*[:=\-])\s*(?:[:\-]\s*)?"
                 # "the most accurate answer is likely (F)"
                 r"(?:(?:most\s+)?(?:likely|probably)\s+)?(?:option\s+|choice\s+|letter\s+)?)")
    # a lower-case letter with no parentheses ends an answer statement ("The correct choice is b."),
    # never "a" (the article) or "i"
    lend = "|".join(re.escape(x) for x in sorted(lower) if x not in ("a", "i")) or "(?!x)x"
    choose = r"(?i:\bi\s+(?:would\s+|will\s+)?(?:choose|pick|select|go\s+with)\s+(?:option\s+|choice\s+)?)"
    # "如果你选 A 选项" (if you choose option A) supposes a choice, it makes none
    cjk = r"(?:答案|选项|正确答案|最终答案)\s*(?:是|为|:|应该是|应为)?\s*(?:选项)?\s*" \
        r"|(?<!你)选择?\s*"
    explicit = (
        ("answer-is", re.compile(rf"{answer_is}(?:[\s*\"'>]*{plab}|[\s(\[*\"'>]*{lab})")),
        ("answer-is", re.compile(rf"{answer_is}[\s*\"']*(?P<pl>{lend})[*\"']*(?=[.!]?\s*$)")),
        # a restated question (with its echoed choices) closed by "... is: D" at the very end
        ("is-final", re.compile(rf"(?i:\bis)\s*:\s*[*\"']*(?:{plab}|[(\[]?{lab}[)\]]?)[*\"']*[.!]?\s*$")),
        ("i-choose", re.compile(rf"{choose}(?:[\s*\"']*{plab}|[(\[*\"']*{lab})")),
        # "Option D is correct - the philosopher's name is mentioned ..." after the others found incorrect
        ("option-correct", re.compile(rf"(?i:\b(?:option|choice)\s+)(?:{plab}|{lab})"
                                      rf"(?i:\s+is\s+(?:the\s+)?(?:correct|right)(?:\s+(?:answer|option|choice))?)"
                                      rf"(?![\w'])(?!\s+(?:in|for|about|if|when|that)\b)")),
        ("answer-cjk", re.compile(rf"(?:{cjk})(?:{plab}|[(\[*\"']*{lab})")),
        ("boxed", re.compile(rf"\\boxed\{{\s*(?:\\text\{{\s*)?(?:{plab}|[(\[]?{lab}[)\]]?)\s*\}}")),
        ("answer-tag", re.compile(rf"<{ANSWER_TAG_NAMES}>\s*(?:{plab}|[(\[*]*{lab}[)\].*]*)")),
        # a label closing an answer block whose opening tag was lost ("...walking.</Reasoning>A</Conclusion>")
        ("answer-tag", re.compile(rf"(?:^|(?<=[\s>]))(?:{plab}|[(\[*]*{lab}[)\].*]*)\s*</{ANSWER_TAG_NAMES}>")),
        # an answer slot whose tags were lost, closing the output ("</Reasoning>，Conclusion，A，")
        ("answer-tag", re.compile(rf"(?:^|(?<=[\s>,]))(?i:conclusion)\s*[:,]\s*(?:{plab}|[(\[*]*{lab}[)\].*]*)"
                                  rf"\s*[,.]?\s*$")),
        # a label alone after the reasoning's closing tag ("... a person.</Reasoning>A"), or in a slot
        # whose tag degraded to one letter ("<C> D </C>")
        ("answer-tag", re.compile(rf"</[A-Za-z][A-Za-z_ ]{{0,24}}>\s*(?:{plab}|[(\[*]*{lab}[)\].*]*)\s*$")),
        ("answer-tag", re.compile(rf"<(?P<t>[A-Za-z])>\s*(?:{plab}|[(\[*]*{lab}[)\].*]*)\s*</(?P=t)>")),
        # a JSON answer field holding a label ('{"answer": "B"}', '```json {"choice": "(b)"}```')
        ("answer-json", re.compile(rf"\"(?i:answer|final_answer|choice|option|prediction)\"\s*:\s*\"\s*"
                                   rf"(?:{plab}|[(\[]?{lab}[)\].]?)\s*\"")),
        # a lone lower-case letter filling an answer block is a label too ("<answer>b</answer>")
        ("answer-tag", re.compile(rf"<{ANSWER_TAG_NAMES}>\s*(?P<pl>{lalt})[.]?\s*</{ANSWER_TAG_NAMES}>")),
    )
    formatted = (
        ("bold", re.compile(rf"\*\*\s*[(\[]?{lab}[)\]]?[.):]?\s*\*\*")),
        ("parenthesised", re.compile(rf"[(\[]{lab}[)\]]")),
        ("line-start", re.compile(rf"(?m)^[ \t>*\-]*{lab}\s*(?:[.):]|$)")),
        ("option-word", re.compile(rf"(?i:\b(?:option|choice|letter)\s+){lab}")),
        # a label alone in angle brackets on its own line, the way a template's answer slot degrades
        # ("</Reasoning>\n<B>", "<C C>")
        ("angle", re.compile(rf"(?m)^[ \t]*<{lab}(?:[ \t]+(?P=l))?>[ \t]*$")),
        ("trailing", re.compile(rf"(?:^|\s){lab}[.!]?\s*$")),
    )
    # "A or B", "B/D", and "B, D." (a second label closing the list)
    hedge = re.compile(rf"{lab}[)\]]?\s*(?:(?:,\s*)?(?i:or|and|/|&|或|和|还是)\s*(?i:option\s+)?[(\[]?"
                       rf"(?<![A-Za-z0-9])(?:{alt})(?![A-Za-z0-9])|,[ \t]*[(\[]?(?:{alt})[)\]]?(?=[ \t]*(?:[.;]|$)))")
    loose = re.compile(lab)
    labelled_line = re.compile(rf"(?m)^[ \t>*\-]*[(\[]?{lab}[)\]]?[ \t]*[.):\-][ \t]*(?P<rest>[^\n]{{1,300}})$")
    # "(B) a short pause", "B: text", "B) text" anywhere: the words right after the label
    labelled_prefix = re.compile(rf"(?:{plab}|{lab}[ \t]*(?:[):,]|[ \t][-–—]))[ \t]*(?:[.:\-][ \t]*)?"
                                 rf"(?P<rest>[^\n.!?;]{{1,200}})")
    # "Answer: B. two beeps": a label, a period and the rest of its line
    labelled_period = re.compile(rf"{lab}\.[ \t]+(?P<rest>[^\n]{{1,200}})$", re.M)
    return _LabelRegexes(labels, lower, explicit, formatted, hedge, loose, labelled_line, labelled_prefix,
                         labelled_period)


# substrings a pattern cannot match without (checked on the lower-cased text before scanning)
_NEEDS = {"answer-is": ("answer", "choice", "option"), "option-correct": ("correct", "right"), "is-final": ("is",),
          "i-choose": ("choose", "pick", "select", "go with"),
          "answer-cjk": ("答案", "选"), "boxed": ("\\boxed",), "answer-json": ('":',),
          "answer-tag": ("answer>", "conclusion", "response>", "</"),
          "bold": ("**",), "angle": ("<",),
          "parenthesised": ("(", "["), "option-word": ("option", "choice", "letter")}


def _group(m: re.Match) -> tuple[str, int]:
    """(label as written, its offset) of a match of either label group (bare ``l`` or parenthesised ``pl``)."""
    if m.groupdict().get("pl") is not None:
        return m.group("pl"), m.start("pl")
    return m.group("l"), m.start("l")


# "Option A is not correct", "(B) is wrong": a label its own sentence rejects
_NEG_AFTER = re.compile(r"(?i:[)\]*]*\s+(?:is|was|would\s+be|seems)\s+(?:not|incorrect|wrong|ruled\s+out)\b"
                        r"|[)\]*]*\s+(?:isn't|wasn't)\b)")


def _is_negated(text: str, start: int, end: int) -> bool:
    return bool(_NEG_BEFORE.search(text[max(0, start - 24):start])) or bool(_NEG_AFTER.match(text, end))


def _scrub_option_texts(text: str, option_texts: tuple[str, ...]) -> str:
    """Blank out option texts quoted back ("B. A dog barks"), so the article in an option text is
    never read as label A. Texts of one short token (music notes "C#") are kept: there the label
    reading is ambiguous anyway and exact-label decides. Same length: offsets stay valid.
    Plain substring search (no regex to compile per option set)."""
    if len(text) <= 3 and " " not in text:
        return text
    low = ot.lower_same_length(text)
    spans = []
    for t in sorted({t.strip().lower() for t in option_texts}, key=len, reverse=True):
        if (len(t) > 3 or " " in t) and len(t) == len(t.strip()):
            i = low.find(t)
            while i != -1:
                spans.append((i, i + len(t)))
                i = low.find(t, i + len(t))
    return at.blank(text, spans) if spans else text


def _loose_labels(scrubbed: str, rx: _LabelRegexes) -> set[str]:
    """Every standalone label token, skipping sentence-initial articles/pronouns ("A dog", "I think")."""
    found = set()
    for m in rx.loose.finditer(scrubbed):
        label = m.group("l")
        if label in ("A", "I"):
            after = scrubbed[m.end():m.end() + 2]
            before = scrubbed[max(0, m.start() - 8):m.start()].rstrip()
            sentence_start = not before or before[-1] in ".!?:;\n"
            if (re.match(r" [a-z]", after) or after.startswith("'")) and (sentence_start or label == "I"):
                continue
        found.add(label)
    return found


def _label_text_conflict(text: str, rx: _LabelRegexes, phrases: Sequence[ot.OptionPhrase],
                         norm_texts: Sequence[str]) -> tuple[str, str, int] | None:
    """A label followed by another option's text, anywhere: "B. two beeps" where B is "one beep",
    "Answer: (B) a short pause" where that is option A. The label and the text disagree, so
    neither can be trusted. (why, the option whose text it is, where the text ends)"""
    labels = rx.labels
    low = ot.lower_same_length(text)
    # "A:7/1", "B/C": an option text that opens with a label is that text, not the label
    texts = [t for t in {p.raw.strip().lower() for p in phrases} if len(t) > 1]

    def in_text(pos: int) -> bool:
        return any(low.startswith(t, pos) for t in texts)

    for m in itertools.chain(rx.labelled_line.finditer(text), rx.labelled_period.finditer(text)):
        if in_text(m.start("l")):
            continue
        rest = normalise_text(m.group("rest"))
        own = norm_texts[labels.index(m.group("l"))]
        if rest and rest != own and rest in norm_texts:
            other = labels[norm_texts.index(rest)]
            return f"label {m.group('l')} with the text of option {other}", other, m.end()
    for m in rx.labelled_prefix.finditer(text):
        if in_text(_group(m)[1]) or m.group("l") and _NAMED_LABEL.search(text, max(0, m.start() - 30), m.start()):
            continue
        label = rx.lower.get(_group(m)[0], _group(m)[0])
        other = ot.starts_with_option(text, m.start("rest"), m.end("rest"), phrases)
        # "**Xylem vessel members (D)**, **Sclerenchyma cells (G)**": a list of texts each with its own label
        if other is not None and other != label \
                and not re.match(rf"[^\n()\[\].!?]{{0,80}}?[(\[]{re.escape(other)}[)\]]", text[m.start("rest"):]):
            return f"label {label} with the text of option {other}", other, m.end()
    return None


# "Array A: 256 elements", "Speaker B: hello": a bare letter after a capitalised noun is that thing's name, no label
_NAMED_LABEL = re.compile(r"\b(?!(?i:option|choice|answer|letter)\b)[A-Z][a-z]{2,}[ \t]$")


@dataclass(frozen=True, slots=True)
class LabelRead:
    """What the label stage found: ``kind`` is ``explicit`` / ``formatted`` (a label, at ``pos``),
    ``hard`` (unparseable, no other stage may overrule it) or ``soft`` (no label; later stages may
    still read the text)."""

    kind: str
    label: str | None = None
    reason: str = ""
    pos: int = -1


def label_read(text: str, opts: tuple[tuple[str, str], ...], phrases, v: at.Vetoes,
                names_options: bool) -> LabelRead | None:
    labels, texts = tuple(o[0] for o in opts), tuple(o[1] for o in opts)
    rx = _label_regexes(labels)
    conflict = _label_text_conflict(text, rx, phrases, norm_texts(texts)) if names_options else None
    if conflict:
        why, other, end = conflict
        # "Therefore, the correct answer is (I) Synthesis of fatty acids from acetyl-CoA. The answer is (F).": a
        # closing answer line with the label of the text just written corrects the slip
        last = list(rx.explicit[0][1].finditer(text, end))
        if last and {rx.lower.get(_group(m)[0], _group(m)[0]) for m in last} == {other} \
                and not text[last[-1].end():].strip(" \t\n.*)\"'"):
            return LabelRead("explicit", other, f"answer-is after a label with option {other}'s text",
                             _group(last[-1])[1])
        return LabelRead("hard", reason=why)
    return _label_mentions(_scrub_own_variants(_scrub_cut_own_text(_scrub_option_texts(text, texts), opts), opts),
                           labels, v)


_BOLD_LABEL_TEXT = re.compile(r"\*\*[ \t]*[(\[]?(?P<l>\w{1,2})[)\].:][ \t]*(?P<t>[^*\n]{2,200}?)[ \t]*\*\*")


def _compact(s: str) -> str:
    return re.sub(r"[\W_]+", "", s.casefold())


def _scrub_own_variants(text: str, opts: tuple[tuple[str, str], ...]) -> str:
    """"**3) Being punk**" for option 3 "Beeing punk", "**4) the makeup**" for "The make up": a bold
    label followed by its own text, misspelt or spaced differently (one edit in twelve characters, and
    closer to it than to any other option), is that label with its text; the text is blanked like a
    verbatim one so that the bold label is read. Same length."""
    from rapidfuzz.distance import Levenshtein

    own, spans = dict(opts), []
    for m in _BOLD_LABEL_TEXT.finditer(text):
        mine = own.get(m.group("l"))
        said = _compact(m.group("t"))
        if not mine or not said.strip():
            continue
        d = Levenshtein.distance(said, _compact(mine))
        if d <= max(1, len(said) // 12) and all(Levenshtein.distance(said, _compact(t)) > d
                                                 for lab, t in opts if lab != m.group("l")):
            spans.append(m.span("t"))
    return at.blank(text, spans) if spans else text


_LABEL_THEN_TEXT = re.compile(r"^[ \t*]*[(\[]?(?P<l>[A-Z])[)\].:][ \t]+(?P<rest>[^\n]+?)[ \t]*$")


def _scrub_cut_own_text(text: str, opts: tuple[tuple[str, str], ...]) -> str:
    """A whole output that is a label and the start of that option's text cut off by a token limit
    ("E. A Q" for "E. A Q&A segment"): the fragment is the label's own text, so its article "A" is
    no label. Same length."""
    m = _LABEL_THEN_TEXT.match(text)
    own = dict(opts).get(m.group("l")) if m else None
    rest = m.group("rest").casefold() if m else ""
    if own and own.casefold().startswith(rest) and len(rest) < len(own.strip()):
        return at.blank(text, [m.span("rest")])
    return text


@lru_cache(maxsize=4096)
def norm_texts(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(normalise_text(t) for t in texts)


_SENTENCE_OPEN = re.compile(r"[.!?\n][\s*>#-]*")
_IF = re.compile(r"(?i:if|unless|assuming)\b")


def _conditional(text: str, pos: int) -> bool:
    """Whether the sentence around ``pos`` opens with a condition ("If the sound is clearly a fan,
    then either 1) or 2) could be possible"): options weighed under a supposition, after an
    explicit answer, withdraw nothing."""
    start = 0
    for m in _SENTENCE_OPEN.finditer(text, max(0, pos - 400), pos):
        start = m.end()
    if start == 0:
        start = len(text) - len(text.lstrip(" \t*>#-"))
    return _IF.match(text, start) is not None


_OPTIONS_BEFORE = re.compile(r"(?i:\b(?:options|choices)\s*)$")


def _names_the_others(text: str, hedge: re.Match, labels: tuple[str, ...]) -> bool:
    """Whether labels joined by "and"/"or" after an explicit answer go through the other options
    rather than hedge it: introduced as "options" ("While options 1, 2, and 3 are also true, option 4
    ..."), or, where the labels are numbers, bare numbers ("the set containing 1 and 2")."""
    if _OPTIONS_BEFORE.search(text, max(0, hedge.start() - 12), hedge.start()):
        return True
    return all(lab.isdigit() for lab in labels) and not re.search(r"[()\[\]]|(?i:option|choice)", hedge.group(0))


# "Let's look at why the other options are less likely or not the *most* prominent:" and the list after it
_OTHERS_LEAD_IN = re.compile(r"(?im:^[^\n]*\b(?:the\s+)?(?:other|remaining)\s+(?:options|choices)\b[^\n]*:[ \t*]*\n"
                             r"(?P<items>(?:[ \t]*\n|[ \t]*(?:[*•+-]|\d{1,2}[.)])[ \t][^\n]*(?:\n|$))+))")


def _blank_others_list(text: str) -> str:
    """``text`` with the list that goes through "the other options" blanked: the labels it heads
    are the options set aside, not mentions of an answer. A list item that states an answer in so
    many words ("the correct answer") stays."""
    spans = [m.span("items") for m in _OTHERS_LEAD_IN.finditer(text)
             if not at.STRONG_MARKER.search(text, *m.span("items"))]
    return at.blank(text, spans)


def _label_mentions(text: str, labels: tuple[str, ...], v: at.Vetoes) -> LabelRead | None:
    """Label decision on text whose option texts were already blanked out. Labels inside
    uncertain clauses ("not sure, maybe C") are not mentions."""
    rx = _label_regexes(labels)
    # 1) explicit answer statements decide on their own when they agree
    explicit: dict[str, tuple[str, int]] = {}
    low = ot.lower_same_length(text)
    for name, pat in rx.explicit:
        if not any(k in low for k in _NEEDS[name]):
            continue  # a cheap substring test spares a regex scan of a long output
        for m in pat.finditer(text):
            written, pos = _group(m)
            if v.vetoed_at(pos) == "uncertain":
                continue
            label = rx.lower.get(written, written)
            if label not in explicit or pos > explicit[label][1]:
                explicit[label] = (name, pos)
    if len(explicit) > 1:
        return LabelRead("hard", reason=f"explicit answers disagree ({sorted(explicit)})")
    hedges = [m for m in rx.hedge.finditer(text) if not v.vetoed_at(m.start())]
    if len(explicit) == 1:
        (label, (name, pos)), = explicit.items()
        late = [h for h in hedges if h.end() > pos and not _conditional(text, h.start())
                and not _names_the_others(text, h, labels)]
        if late:
            return LabelRead("hard", reason=f"several labels ({late[0].group(0)!r})")
        return LabelRead("explicit", label, name, pos)
    if hedges:
        return LabelRead("soft", reason=f"several labels ({hedges[0].group(0)!r})")
    if _ECHO.search(text):
        return LabelRead("soft", reason="echoed option list without an answer statement")
    text = _blank_others_list(text)
    # 2) formatted mentions: exactly one distinct label, not negated, and no other label anywhere
    mentions: dict[str, tuple[str, int]] = {}
    negated: set[str] = set()
    uncertain = False
    for name, pat in rx.formatted:
        if name in _NEEDS and not any(k in low for k in _NEEDS[name]):
            continue
        for m in pat.finditer(text):
            label = m.group("l")
            if v.vetoed_at(m.start("l")) == "uncertain":
                uncertain = True
            elif _is_negated(text, m.start("l"), m.end("l")):
                negated.add(label)
            else:
                mentions.setdefault(label, (name, m.start("l")))
    if len(mentions) > 1:
        return LabelRead("soft", reason=f"several labels ({sorted(mentions)})")
    if not mentions:
        if negated:
            return LabelRead("soft", reason=f"negated label ({sorted(negated)})")
        if uncertain:
            return LabelRead("soft", reason="label only in an uncertain clause")
        return None
    (label, (name, pos)), = mentions.items()
    if label in negated:
        return LabelRead("soft", reason=f"label both asserted and negated ({label})")
    others = _loose_labels(text, rx) - {label}
    if others:
        return LabelRead("soft", reason=f"several labels ({sorted(others | {label})})")
    return LabelRead("formatted", label, name, pos)
