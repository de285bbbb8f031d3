"""Reading a model's free-text answer the way a grader does: what is scratchpad, where sentences and
clauses end, which clauses are negated, uncertain or a refusal, and which outputs answer nothing
(which option texts a span names is :mod:`lalmbench.scoring.option_text`).

Used by :mod:`lalmbench.scoring.parse` (the stages and their order live there). Everything here is linear
in the length of the output: one regex pass or one ``str.find`` loop per question asked, never a
copy of a prefix per match, so a 1 MB degenerate output costs milliseconds.
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from typing import Sequence

# --- clean-up --------------------------------------------------------------------------------------

# end-of-sequence / chat markers that leak into decoded outputs (SALMONN's "</s>", Qwen's "<|im_end|>")
_SPECIAL_TOKENS = re.compile(r"</s>|<s>|<\|im_end\|>|<\|im_start\|>|<\|endoftext\|>|<eos>|<end_of_turn>"
                             r"|<\|eot_id\|>|<pad>|\[/?INST\]")
_OPEN, _CLOSE = "<think>", "</think>"
_SPACE_RUN = re.compile(r"[ \t]{2,}|[ \t]*\n[\s]*\n[ \t]*")


def strip_thinking(text: str) -> tuple[str, bool]:
    """Drop closed ``<think>...</think>`` blocks; an unclosed ``<think>`` drops everything after it
    (a scratchpad is never the answer). A ``</think>`` with no opening tag (chat templates that put
    ``<think>`` in the prompt) drops what precedes it, unless nothing follows it (then it is a
    stray tag, and the text before it is the answer). Returns (text, an unclosed block was cut)."""
    low = text.lower()
    if _OPEN not in low and _CLOSE not in low:
        return text, False
    out, i = [], 0
    first_close, first_open = low.find(_CLOSE), low.find(_OPEN)
    if first_close != -1 and (first_open == -1 or first_close < first_open):
        i = first_close + len(_CLOSE)
        if not text[i:].strip() and low.find(_CLOSE, i) == -1:
            # a stray closing tag that ends the output ("... the answer is 'Man'.</think>"): the
            # text before it is all the model wrote, and a reader reads it
            return text[:first_close], False
    while True:
        o = low.find(_OPEN, i)
        if o == -1:
            out.append(text[i:])
            return " ".join(out), False
        out.append(text[i:o])
        c = low.find(_CLOSE, o)
        if c == -1:
            return " ".join(out), True
        i = c + len(_CLOSE)


# a new dialogue turn the model wrote itself ("...</answer>\nHuman: What is ...?"): what follows it
# answers a question nobody asked
_NEW_TURN = re.compile(r"(?m)^[ \t#*]*(?:Human|HUMAN|User|USER)[ \t]*:"
                       # or the speaker's name alone on its line, with the turn after it ("C\nHuman\nB"); not
                       # the word inside an answer block ("<answer>\nHuman\n</answer>")
                       r"|^[ \t]*(?:Human|HUMAN|User|USER|user)[ \t]*\n(?=\s*\S)(?!\s*</)")
# closing pleasantries after an answer ("If you have any other questions, feel free to ask!")
_SIGN_OFF = re.compile(
    r"(?is)(?:^|(?<=[.!?\n]))[ \t\n]*(?:(?:well|so|and)[, ]+)?(?:if\s+you\s+have\s+any\s+(?:other\s+|more\s+|further\s+)?"
    r"questions|feel\s+free\s+to\s+ask|let\s+me\s+know\s+if|(?:i\s+)?hope\s+(?:this|that|it)\s+helps"
    r"|is\s+there\s+anything\s+else|what\s+do\s+you\s+think(?:\s+about\s+(?:that|it|this))?\s*\?"
    # a privacy disclaimer a fine-tuned model appends to its answer ("D\nI'm sorry, but I can't disclose
    # personal details or sensitive information."): it withdraws nothing it said
    r"|i\s*(?:'m|am)\s+sorry,?\s+but\s+i\s+(?:can't|cannot|can\s+not)\s+(?:disclose|share|reveal)\b[^\n]{0,30}?"
    r"\b(?:personal|private|sensitive)\b)[^\n]{0,160}$")


def cut_new_turn(text: str) -> str:
    """The text before a dialogue turn the model went on to invent (``Human: ...``); an output that
    starts with such a line is kept whole."""
    m = _NEW_TURN.search(text)
    return text[:m.start()] if m and text[:m.start()].strip() else text


def strip_sign_off(text: str) -> str:
    """The text without closing pleasantries that name nothing ("feel free to ask!")."""
    # (a sign-off ends the output: only its last few hundred characters are searched)
    while (m := _SIGN_OFF.search(text, max(0, len(text) - 400))) and text[:m.start()].strip():
        text = text[:m.start()].rstrip()
    return text


def clean(raw: str) -> tuple[str, bool]:
    """NFKC (full-width ``Ｂ``/``：`` become ``B``/``:``), special tokens and reasoning blocks
    removed, an invented next dialogue turn and closing pleasantries cut, whitespace stripped.
    Returns (text, an unclosed think block was cut)."""
    text = unicodedata.normalize("NFKC", raw)
    text = _SPECIAL_TOKENS.sub(" ", text)
    text, unclosed = strip_thinking(text)
    text = _SPACE_RUN.sub(lambda m: "\n\n" if "\n" in m.group(0) else " ", text)
    return strip_sign_off(cut_new_turn(text.strip())).strip(), unclosed


_LOOP_WINDOW = 4096
_MIN_REPEATS = 4
_MIN_LOOP_CHARS = 40


def _z_function(s: str) -> list[int]:
    n = len(s)
    z = [0] * n
    lo = hi = 0
    for i in range(1, n):
        if i < hi:
            z[i] = min(hi - i, z[i - lo])
        while i + z[i] < n and s[z[i]] == s[i + z[i]]:
            z[i] += 1
        if i + z[i] > hi:
            lo, hi = i, i + z[i]
    return z


def repetition_loop(text: str) -> tuple[int, int] | None:
    """(start, period) of a degenerate loop the output ends in (one unit repeated >= 4 times, the
    way a model stuck at max tokens writes), or None. Linear: a Z-function over the last 4 KB,
    then whole-unit comparisons backwards."""
    n = len(text)
    if n < 8:
        return None
    probe = text[-8:]
    if text.count(probe, max(0, n - _LOOP_WINDOW)) < _MIN_REPEATS:
        return None  # the tail does not recur: no loop (the common case costs one str.count)
    tail = text[-_LOOP_WINDOW:][::-1]
    z = _z_function(tail)
    best = None
    for p in range(1, len(tail) // _MIN_REPEATS + 1):
        covered = p + z[p]
        if covered >= _MIN_REPEATS * p and (best is None or covered > best[1]):
            best = (p, covered)
    if best is None or best[1] < _MIN_LOOP_CHARS:
        return None
    p, covered = best
    start = n - covered
    if covered >= len(tail):  # the loop may go on before the window
        for block in (text[start:start + p] * max(1, 4096 // p), text[start:start + p]):
            while start >= len(block) and text[start - len(block):start] == block:
                start -= len(block)
    if start > 0 and not text[start - 1].isspace():  # begin the unit at a word: "The answer is B. "
        ws = re.search(r"\s\S", text[start:start + p])
        if ws:
            start += ws.start() + 1
    return start, p


# --- sentences, clauses, vetoes --------------------------------------------------------------------

_QUOTED_SENTENCE_END = re.compile(r"(?<=[.!?][\"”’])[ \t]+(?=[A-Z])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？]+\s*|\n\s*")
_QUOTED = re.compile(r"\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”|‘[^’\n]{0,400}’|「[^」\n]{0,400}」")
_CLAUSE_BREAK = re.compile(
    r"[,;:()\[\]\"“”—–]|\s-\s|(?i:\b(?=(?:but|however|whereas|while|although|though|yet|so|therefore|thus|hence"
    r"|because|since|rather\s+than|(?<!rather\s)than|instead\s+of|unlike|except|as\s+opposed\s+to)\b))")
# a negation vetoes the options named in its own clause (cues inside option texts are masked out)
# ("without speculation", "no doubt" say how certain the model is, they negate nothing: "makes chainsaw the
# only logical fit ... without speculation" keeps the chainsaw)
_NEGATION = re.compile(
    r"(?i:\b(?:not|no(?!\s+doubt)|never|neither|nor|none|cannot|without(?!\s+(?:a\s+|any\s+)?(?:doubt|question"
    r"|hesitation|speculat|assum|overinterpret|making\s+assum|over-?thinking))|unlikely|(?<!least\s)(?<!least-)"
    # "the least-wrong option" is the one chosen
    r"(?:incorrect|wrong)|rather\s+than"
    r"|instead\s+of|unlike|except|as\s+opposed\s+to|rule[sd]?\s+out|eliminat\w*|absent|excluded?|than)\b|n't\b)")
# uncertainty vetoes its clause (and, in the same sentence, clauses that only hedge: "not sure, maybe C")
_UNCERTAIN = re.compile(
    r"(?i:\bnot\s+(?:sure|certain)|\bunsure\b|\buncertain\b|\bi\s+(?:do\s+not|don't)\s+know\b"
    r"|\b(?:can\s*not|cannot|can't|unable\s+to|not\s+able\s+to|impossible\s+to|not\s+possible\s+to|hard\s+to"
    r"|difficult\s+to)\s+(?:determine|tell|answer|identify|say|decide|know|judge|be\s+sure))")
# "I'm going to take a guess that the speaker is likely a **Female**", "my best guess is B", "an educated guess": a
# guess made is a pick; "no need to second guess" doubts nothing
_HEDGE = re.compile(r"(?i:\b(?:maybe|perhaps|possibly"
                   r"|(?<!take\sa\s)(?<!best\s)(?<!educated\s)(?<!second\s)(?<!second-)guess|might|could"
                   r"|may\s+be)\b)")


# a line ending in ":" and the bulleted or numbered lines right after it
_LIST_AFTER_LEAD_IN = re.compile(r"(?m)^[^\n]*:[ \t]*\n(?:[ \t]*\n)?(?P<items>(?:[ \t]*(?:[*\-•+]|\d{1,2}[.)])[ \t][^\n]*"
                                 r"(?:\n|$)(?:[ \t]*\n(?=[ \t]*(?:[*\-•+]|\d{1,2}[.)])[ \t]))?)+)")


# a hedge that a "but" later in its sentence answers: a concession, not the claim
_CONCEDED = re.compile(r"(?i:\b(?:maybe|perhaps|possibly|might|could|may\s+be)\b(?=[^.!?\n]*\b(?:but|however)\b))")


def last_match(pattern: re.Pattern, text: str) -> re.Match | None:
    """The last match of ``pattern`` in ``text`` (the final answer tag, the last answer phrase), or None."""
    m = None
    for m in pattern.finditer(text):
        pass
    return m


def negation_between(text: str, start: int, end: int) -> bool:
    """Whether a negation cue ("not", "rather than", "n't", ...) occurs in ``text[start:end]``."""
    return _NEGATION.search(text, start, end) is not None


def hedged(masked: str, start: int, end: int, claim: int | None = None) -> bool:
    """Whether a sentence hedges ("it might be X", "X, though a third might be hidden"): a
    conclusion that hedges commits to nothing. A hedge in a conceding clause before the claim at
    ``claim`` ("While there might be some rock influence, the core points clearly toward X")
    hedges the concession only, and one in a relative clause after it ("X is the most likely scenario
    where someone might feel fear") describes the claim."""
    for m in _HEDGE.finditer(masked, start, end):
        if claim is not None and claim < m.start() and _RELATIVE.search(masked, max(claim, m.start() - 60), m.start()):
            continue  # "X is the most likely scenario where someone might feel fear": the hedge describes X
        concession = _CONCEDING.search(masked, start, m.start())
        clause_end = _CLAUSE_END.search(masked, m.end(), end) if concession else None
        if concession is None or _CLAUSE_END.search(masked, concession.end(), m.start()) \
                or claim is None or clause_end is None or claim < clause_end.end():
            return True
    return False


_RELATIVE = re.compile(r"(?i:\b(?:where|in\s+which|who|whom|whose)\b)")
_CONCEDING = re.compile(r"(?i:\b(?:while|although|though|even\s+if|even\s+though|whereas)\b)")
_CLAUSE_END = re.compile(r"[,;:]")
# refusals of the task itself veto the whole output, up to a committed pick after them (refusal_pick)
_REFUSAL = re.compile(
    r"(?i:\bi\s*(?:'m|am)\s+sorry\b|\bi\s+apologi[sz]e\b|\bas\s+an?\s+(?:ai\b|text[- ]based|language\s+model"
    r"|large\s+language)|\b(?:can\s*not|cannot|can't|unable\s+to|not\s+able\s+to|(?:do\s+not|don't)\s+have\s+"
    r"(?:the\s+)?(?:ability|capability)\s+to)\s+(?:directly\s+)?(?:hear(?!\s+(?:the|any|an?)\s+"
    r"(?!(?:audio|clip|recording|sound|file|track|music|song|speech)\b)\w)|listen|access|process|play|perceive"
    r"|analy[sz]e\s+(?:the\s+|this\s+)?audio)\b|\bno\s+audio\b(?!\s+evidence)"
    r"|\b(?:none|neither)\s+of\s+(?:the|these)\b(?!\s+other\b))")
# "Based on the provided URLs (which I cannot directly access)": links refused, not the audio
_LINKS_BEFORE = re.compile(r"(?i:\b(?:urls?|links?|websites?|web\s+pages?)\b[^.!?\n]{0,30}$)")
# uncertainty about the audio itself ("I can't tell from the audio") is a refusal too
_AUDIO_WORDS = re.compile(r"(?i:\b(?:audio|clip|recording|sound\s+file|listen\w*|hear\w*)\b)")
#: sentences that commit to an answer in so many words: the only markers that count in an output
#: whose last sentence was cut off ("the answer is", "I conclude", "Final answer", 答案)
STRONG_MARKER = re.compile(
    r"(?i:\b(?:answer|conclu(?:de|ded|sion)|final(?:ly)?"
    r"|i(?:\s+would|\s+will|'d|'ll)?\s+(?:choose|pick|select|go\s+with)|selecting"
    r"|(?:correct|right|best|closest|least[\s-](?:wrong|bad|incorrect))\s+(?:option|choice|answer))\b)|答案")
#: sentences that state a conclusion ("Therefore, ...", "the answer is", "**...**", "... fits best", 答案)
MARKER = re.compile(
    r"(?i:\bso\b(?=\s*,|\s+(?:the|it|this|i|we|my|only)\b)|\b(?:answer|therefore|thus|hence|consequently"
    r"|in\s+conclusion|in\s+summary|overall|final(?:ly)?|conclu(?:de|ded|sion)|i\s+(?:have\s+|'ve\s+)?determined?"
    r"|most\s+likely|most\s+probably|i\s+think|i\s+believe|i\s+would\s+say|i'd\s+say|i(?:\s+would|\s+will|'d|'ll)?"
    r"\s+(?:choose|pick|select|go\s+with)|selecting|least[\s-](?:wrong|bad|incorrect)\s+(?:option|choice|answer)"
    r"|(?:would|will|can)\s+(?:categori[sz]e|classify|identify)"
    r"|(?:correct|right|accurate|best|only)\s+(?:option|choice|answer|classification|description|pairing|fit"
    r"|match|selection|assessment)|best\s+(?:describes|matches|fits)|fits\s+best|closest\s+(?:option|choice|match)"
    r"|(?:is|seems|appears)\s+(?:to\s+be\s+)?(?:the\s+)?(?:most\s+)?(?:correct|right|accurate|plausible|fitting"
    r"|appropriate)|points?\s+(?:squarely\s+|strongly\s+|clearly\s+)?(?:towards?|to)\b|makes\s+it\s+clear"
    r"|(?:makes?|made)\s+me\s+confident|i\s*(?:'m|am)\s+confident"
    r"|(?:definitely|absolutely|unmistakabl[ye]|undoubtedly|unquestionably)(?!\s+(?:not|no)\b)"
    r"|fits?\s+(?:every|all\s+the|perfectly)|aligns?\s+(?:precisely|exactly)"
    r"|among\s+(?:all\s+)?(?:the\s+)?(?:given|presented|available|listed)?\s*(?:options|choices)"
    r"|most\s+(?:characteristic|consistent|typical|relevant|suitable)|matches\s+(?:option|choice|perfectly|best)"
    r"|is\s+(?:clearly|indeed)|strongly\s+(?:indicates|suggests)|feels?\s+right|seems?\s+right"
    r"|perfectly\s+match(?:es)?|aligns?\s+(?:perfectly|best|most\s+closely)"
    r"|only\s+(?:logical|reasonable|possible|plausible)\s+(?:fit|option|choice|answer|match)"
    r"|accurately\s+(?:describes|captures|reflects)"
    r"|correct\s+\w+\s+(?:is|would\s+be|should\s+be))\b)"
    r"|\*\*|答案|选")
# the answer phrase after an answer statement: "the (most appropriate) answer is X", "Answer: X"
ANSWER_IS = re.compile(
    r"(?i:\b(?:answer|option|choice)\b[^.!?\n]{0,40}?\b(?:is|would\s+be|should\s+be|will\s+be|seems\s+to\s+be"
    r"|appears\s+to\s+be|must\s+be)\b\s*:?|\b(?:answer|option|choice)\s*[:=]|\bi(?:\s+would|\s+will|'d|'ll)?"
    r"\s+(?:choose|pick|select|go\s+with)\b)|答案\s*(?:是|为|:|应该是|应为)?|选择?")


def sentence_spans(text: str, content: str | None = None) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` that is not blank in ``content`` (default ``text``;
    pass the original when ``text`` has spans blanked so that no sentence ends inside them):
    sentences end at ``.!?`` + space, CJK stops, newlines."""
    content = text if content is None else content
    spans, i = [], 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > i and content[i:m.start()].strip():
            spans.append((i, m.start()))
        i = m.end()
    if i < len(text) and content[i:].strip():
        spans.append((i, len(text)))
    return spans


def blank(text: str, spans: Sequence[tuple[int, int]], fill: str = " ") -> str:
    """``text`` with these spans replaced by ``fill`` (same length, so offsets stay valid)."""
    if not spans:
        return text
    parts, i = [], 0
    for a, b in sorted(spans):
        if a < i:
            a = i
        if b <= a:
            continue
        parts.append(text[i:a])
        parts.append(fill * (b - a))
        i = b
    parts.append(text[i:])
    return "".join(parts)


def quoted_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _QUOTED.finditer(text)]


@dataclass(frozen=True)
class Vetoes:
    """Where a reader must not take an option as asserted: the whole output (a refusal), or the
    clauses (``[start, end)`` spans) that are negated or uncertain, or wider negated spans (below).
    Quoted speech never vetoes."""

    refusal: str | None
    negated: tuple[tuple[int, int], ...]
    uncertain: tuple[tuple[int, int], ...]
    #: wider than a clause: the items of a negated list ("no happiness, sadness, or anger"), a list
    #: under a negated lead-in, a sentence that rejects the other options ("The other options, like
    #: X, Y and Z, do not ..."); merged, so that each position is in at most one
    negated_wide: tuple[tuple[int, int], ...] = ()
    #: with the refusal lifted (``vetoes(..., lift_refusal=True)``), where the last refusal or doubt
    #: about the audio ends (-1: none): only an answer after it can lift it
    refusal_end: int = -1

    def vetoed_at(self, pos: int) -> str | None:
        for kind, spans in (("negated", self.negated), ("uncertain", self.uncertain),
                            ("negated", self.negated_wide)):
            k = bisect_right(spans, (pos, float("inf"))) - 1
            if k >= 0 and spans[k][0] <= pos < spans[k][1]:
                return kind
        return None


def vetoes(text: str, masked: str, lift_refusal: bool = False) -> Vetoes:
    """Vetoes of ``text``; ``masked`` is the same text with quoted speech and option texts blanked
    (so "None of the above" as an option, or a quoted "I'm sorry", never vetoes). One pass per
    cue kind; a cue's clause is found by bisecting the sorted clause boundaries.
    ``lift_refusal``: the vetoes a reader keeps once a committed answer after the refusal has lifted
    it (the refusal's own clauses stay negated or uncertain), and ``refusal_end``."""
    refusals = [r for r in _REFUSAL.finditer(masked) if not _answered_after(masked, r)
                and not ("access" in r.group(0).lower() and _LINKS_BEFORE.search(masked, max(0, r.start() - 60),
                                                                                r.start()))]
    end = refusals[-1].end() if refusals else -1
    if refusals and not lift_refusal:
        return Vetoes(refusals[0].group(0), (), ())
    neg = [c.start() for c in _NEGATION.finditer(masked)]
    unc = [c.start() for c in _UNCERTAIN.finditer(masked)]
    conceded = [c.start() for c in _CONCEDED.finditer(masked)]
    if not (neg or unc or conceded):
        return Vetoes(None, (), (), refusal_end=end)
    wide = [m.span("items") for m in _LIST_AFTER_LEAD_IN.finditer(masked)
            if _NEGATION.search(masked, m.start(), m.start("items"))]
    sent_cuts = [0]
    for c in _SENTENCE_END.finditer(masked):
        sent_cuts += [c.start(), c.end()]
    # a quotation that ends a sentence ("... the answer: \"They seem anxious.\" The speaker is uncertain ...")
    # ends a veto's clause, though the quotation is blank in the masked text
    for c in _QUOTED_SENTENCE_END.finditer(text):
        sent_cuts += [c.start(), c.end()]
    sent_cuts = sorted(set(sent_cuts)) + [len(masked)]
    cuts = sorted(set(sent_cuts) | {c.start() for c in _CLAUSE_BREAK.finditer(masked)})

    def around(pos: int, bounds: list[int]) -> tuple[int, int]:
        k = bisect_right(bounds, pos)
        return bounds[k - 1], bounds[k] if k < len(bounds) else len(masked)

    uncertain = set()
    for pos in unc:
        s, e = around(pos, sent_cuts)
        a, b = around(pos, cuts)
        if _AUDIO_WORDS.search(masked, a, b):
            if not lift_refusal:
                return Vetoes(masked[a:b].strip(), (), ())
            end = max(end, b)
        uncertain.add((a, b))
        # clauses of the same sentence that only hedge ("not sure, maybe C") are uncertain too
        k = bisect_right(cuts, s)
        lo = k - 1 if k and cuts[k - 1] == s else k
        for i in range(max(lo, 0), len(cuts) - 1):
            a, b = cuts[i], cuts[i + 1]
            if a >= e:
                break
            if _HEDGE.search(masked, a, b):
                uncertain.add((a, b))
    # "happy could be possible but the intensity points toward shock": the hedged clause concedes
    uncertain |= {around(pos, cuts) for pos in conceded}
    negated = {_negated_span(masked, pos, around(pos, cuts), around(pos, sent_cuts)[0]) for pos in neg} - uncertain
    for a, b in negated:
        wide.append((a, _list_end(masked, b, cuts)))
    # "we cannot determine if the number will increase, decrease, or remain constant" doubts all three
    for a, b in uncertain:
        if _UNCERTAIN.search(masked, a, b) and (end := _list_end(masked, b, cuts)) > b:
            wide.append((b, end))
    for m in OTHER_OPTIONS.finditer(masked):
        # from the clause that brings them up to the end of the sentence: "X fits best, since the
        # other options don't match" keeps X
        s, e = around(m.start(), sent_cuts)
        c = around(m.start(), cuts)[0]
        if _NEGATION.search(masked, c, e):
            wide.append((c, e))
    return Vetoes(None, tuple(sorted(negated)), tuple(sorted(uncertain)), _merged(wide), refusal_end=end)



def _negated_span(masked: str, pos: int, clause: tuple[int, int], sentence_start: int) -> tuple[int, int]:
    """The clause a negation at ``pos`` vetoes; a "without" in a sentence that has already committed
    ("This aligns perfectly with walking without any sign of running") vetoes only what follows it."""
    if masked.startswith(("without", "Without"), pos) and MARKER.search(masked, sentence_start, pos):
        return pos, clause[1]
    return clause


# "the other options", "the rest": a sentence about them that negates anything rejects them all
OTHER_OPTIONS = re.compile(r"(?i:\bother\s+(?:options?|choices?|answers?|possibilities|alternatives|roles)\b|\bthe\s+(?:others|rest)\b"
                            r"|\bremaining\s+(?:options|choices)\b)")
_LIST_END_WORD = re.compile(r"\s*(?i:(or|nor|and))\b")
_LAST_ITEM = re.compile(r"\s*\w+(?:\s+\S+){1,2}")
_JOINED_LAST = re.compile(r"\s*\w+(?:\s+\w+)?\s+(?i:or|nor|and)\s+\w+")


def _list_end(masked: str, end: int, cuts: list[int]) -> int:
    """Where a negated clause's list ends: "no happiness, sadness, anger, or fear" negates all four.
    The clause goes on over short comma-separated items up to one that starts with "or"/"nor" (or
    "and" after at least one more item); ``end`` itself when there is no such list."""
    k, items, at = bisect_right(cuts, end - 1), 0, end
    while k < len(cuts) and cuts[k] == at and at < len(masked) and masked[at] == ",":
        nxt = cuts[k + 1] if k + 1 < len(cuts) else len(masked)
        seg = masked[at + 1:nxt]
        last = _LIST_END_WORD.match(seg)
        if last and (last.group(1).lower() != "and" or items):
            # the last item, and not the rest of its clause: "..., or anger in the speaker's voice"
            return nxt if len(seg.split()) <= 5 else at + 1 + _LAST_ITEM.match(seg).end()
        joined = _JOINED_LAST.match(seg)
        if joined:
            # "rather than Korean, Japanese or Indian traditions which ...": the last two items joined
            return at + 1 + joined.end()
        if len(seg.split()) > 5:
            break
        items += 1
        at, k = nxt, k + 1
    return end


def _merged(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


# --- non-answers -----------------------------------------------------------------------------------

#: outputs that answer nothing, by kind; matched only on outputs that name no option and no label
NON_ANSWERS: tuple[tuple[str, re.Pattern], ...] = (
    ("asks for input", re.compile(
        r"(?i:\b(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:provide|share|upload|send|give|play|describe"
        r"|clarify|attach|specify|tell\s+me)\b|\b(?:please|kindly)\s+(?:provide|share|upload|send|attach|describe"
        r"|play|give|specify|clarify)\b|\b(?:i|we)\s+(?:would\s+|will\s+)?need\s+(?:the|a|an|more|some|to\s+(?:hear"
        r"|listen|know|see|have))\b)")),
    ("none of the options", re.compile(
        r"(?i:^\W*(?:none|neither)\W*$|\b(?:none|neither)\s+of\s+(?:the|these|those|them)\b(?!\s+other\b))")),
    ("undetermined", re.compile(
        r"(?i:\bunable\s+to\s+(?:determine|tell|answer|identify|say|decide)|\b(?:can\s*not|can't|cannot|could\s+not)"
        r"\s+(?:be\s+)?(?:determined?|told|tell|answer\w*|identif\w+|say|decided?|calculat\w*)\b|\b(?:impossible"
        r"|difficult|hard)\s+to\s+(?:accurately\s+)?(?:determine|tell|say|answer|know)|\binsufficient\s+(?:data"
        r"|information|context|evidence)|\b(?:not|no)\s+(?:have\s+|provide\s+|give\s+|contain\s+)?(?:enough|sufficient)"
        r"\s+(?:data|information|context|evidence|details)|\b(?:it'?s|it\s+is)\s+not\s+clear\b|\b(?:more|additional"
        r"|further)\s+(?:context|information|details)\s+(?:is|are)\s+needed"
        r"|\bundetermined\b|\bunknown\b|^\W*n\s*/?\s*a\W*$|\bnot\s+applicable\b"
        r"|\bi\s+(?:do\s+not|don't)\s+know\b|\bnot\s+(?:sure|certain)\b|\b(?:hard|difficult)\s+to\s+(?:say|tell)"
        r"|\bunclear\b|\bunsure\b|\bno\s+(?:clear\s+)?answer\b)")),
)


def non_answer(text: str) -> str | None:
    """The kind of non-answer an output is (``asks for input``, ``none of the options``,
    ``undetermined``), or None. Callers ask only about outputs that name no option and no label:
    then a request for the audio or an "unable to determine" is the whole message. A long
    analysis that says "I need to listen for ..." along the way asks for nothing."""
    for kind, pattern in NON_ANSWERS:
        if pattern.search(text) and (kind != "asks for input" or len(text) <= _REQUEST_CHARS):
            return kind
    return None


#: a request for input is a short message; past this it is an analysis that mentions a need
_REQUEST_CHARS = 600


# "Given the constraints of available choices, Choice A aligns best": an option picked by its label
_LABEL_PICKED = re.compile(r"(?i:\b(?:option|choice)\s*\(?[A-J1-9]\)?\s+(?:aligns|fits|matches|is|seems|appears)"
                           r"\s+(?:to\s+be\s+)?(?:the\s+)?(?:best|most\s+closely|closest|correct|right|most\s+reasonable)\b)")


def _answered_after(masked: str, refusal: re.Match) -> bool:
    """Whether "none of the options match exactly" is followed by an answer statement ("... the
    closest is ... The answer is (B)"): then it only negates its clause, it refuses nothing."""
    if not re.match(r"(?i:none|neither)\b", refusal.group(0)):
        return False
    return any("answer" in ans.group(0).lower()
               and not re.match(r"[\s*\"':]*(?i:none|neither|n/?a)\b", masked[ans.end():ans.end() + 20])
               for ans in ANSWER_IS.finditer(masked, refusal.end())) or bool(_LABEL_PICKED.search(masked, refusal.end()))


def refusal_kind(refusal: str) -> str:
    """A whole-output veto as a non-answer class: ``none of the options``, ``undetermined`` (doubt
    about the audio: "I can't tell from the audio") or ``refusal`` (of the task itself)."""
    if re.match(r"(?i:none|neither)\b", refusal):
        return "none of the options"
    if _UNCERTAIN.search(refusal) and not re.search(r"(?i:sorry|apologi|\bas\s+an?\b)", refusal):
        return "undetermined"
    return "refusal"
