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


def clean(raw: str) -> tuple[str, bool]:
    """NFKC (full-width ``Ｂ``/``：`` become ``B``/``:``), special tokens and reasoning blocks
    removed, whitespace stripped. Returns (text, an unclosed think block was cut)."""
    text = unicodedata.normalize("NFKC", raw)
    text = _SPECIAL_TOKENS.sub(" ", text)
    text, unclosed = strip_thinking(text)
    text = _SPACE_RUN.sub(lambda m: "\n\n" if "\n" in m.group(0) else " ", text)
    return text.strip(), unclosed


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

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？]+\s*|\n\s*")
_QUOTED = re.compile(r"\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”|‘[^’\n]{0,400}’|「[^」\n]{0,400}」")
_CLAUSE_BREAK = re.compile(
    r"[,;:()\[\]\"“”—–]|\s-\s|(?i:\b(?=(?:but|however|whereas|while|although|though|yet|so|therefore|thus|hence"
    r"|because|since|rather\s+than|instead\s+of|unlike|except|as\s+opposed\s+to)\b))")
# a negation vetoes the options named in its own clause (cues inside option texts are masked out)
_NEGATION = re.compile(
    r"(?i:\b(?:not|no|never|neither|nor|none|cannot|without|unlikely|incorrect|wrong|rather\s+than|instead\s+of"
    r"|unlike|except|as\s+opposed\s+to|rule[sd]?\s+out|eliminat\w*|absent|excluded?)\b|n't\b)")
# uncertainty vetoes its clause (and, in the same sentence, clauses that only hedge: "not sure, maybe C")
_UNCERTAIN = re.compile(
    r"(?i:\bnot\s+(?:sure|certain)|\bunsure\b|\buncertain\b|\bi\s+(?:do\s+not|don't)\s+know\b"
    r"|\b(?:can\s*not|cannot|can't|unable\s+to|not\s+able\s+to|impossible\s+to|not\s+possible\s+to|hard\s+to"
    r"|difficult\s+to)\s+(?:determine|tell|answer|identify|say|decide|know|judge|be\s+sure))")
_HEDGE = re.compile(r"(?i:\b(?:maybe|perhaps|possibly|guess|might|could|may\s+be)\b)")


def hedged(masked: str, start: int, end: int) -> bool:
    """Whether a sentence hedges ("it might be X", "X, though a third might be hidden"): a
    conclusion that hedges commits to nothing."""
    return _HEDGE.search(masked, start, end) is not None
# refusals of the task itself veto the whole output (a guess after "I cannot hear audio" is luck)
_REFUSAL = re.compile(
    r"(?i:\bi\s*(?:'m|am)\s+sorry\b|\bi\s+apologi[sz]e\b|\bas\s+an?\s+(?:ai\b|text[- ]based|language\s+model"
    r"|large\s+language)|\b(?:can\s*not|cannot|can't|unable\s+to|not\s+able\s+to|(?:do\s+not|don't)\s+have\s+"
    r"(?:the\s+)?(?:ability|capability)\s+to)\s+(?:directly\s+)?(?:hear|listen|access|process|play|perceive"
    r"|analy[sz]e\s+(?:the\s+|this\s+)?audio)\b|\bno\s+audio\b|\b(?:none|neither)\s+of\s+(?:the|these)\b)")
# uncertainty about the audio itself ("I can't tell from the audio") is a refusal too
_AUDIO_WORDS = re.compile(r"(?i:\b(?:audio|clip|recording|sound\s+file|listen\w*|hear\w*)\b)")
#: sentences that state a conclusion ("Therefore, ...", "the answer is", "**...**", 答案)
MARKER = re.compile(
    r"(?i:\bso\b(?=\s*,|\s+(?:the|it|this|i|we|my)\b)|\b(?:answer|therefore|thus|hence|consequently"
    r"|in\s+conclusion|in\s+summary|overall|final(?:ly)?"
    r"|conclusion|most\s+likely|most\s+probably|i\s+think|i\s+believe|i\s+would\s+say|i\s+(?:would\s+|will\s+)?"
    r"(?:choose|pick|select|go\s+with)|correct\s+(?:option|choice)|best\s+(?:option|choice|describes|matches|fits)"
    r"|closest\s+(?:option|choice|match))\b)|\*\*|答案|选")
# the answer phrase after an answer statement: "the (most appropriate) answer is X", "Answer: X"
ANSWER_IS = re.compile(
    r"(?i:\b(?:answer|option|choice)\b[^.!?\n]{0,40}?\b(?:is|would\s+be|should\s+be|will\s+be|seems\s+to\s+be"
    r"|appears\s+to\s+be|must\s+be)\b\s*:?|\b(?:answer|option|choice)\s*[:=]|\bi\s+(?:would\s+|will\s+)?"
    r"(?:choose|pick|select|go\s+with)\b)|答案\s*(?:是|为|:|应该是|应为)?|选择?")


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
    clauses (``[start, end)`` spans) that are negated or uncertain. Quoted speech never vetoes."""

    refusal: str | None
    negated: tuple[tuple[int, int], ...]
    uncertain: tuple[tuple[int, int], ...]

    def vetoed_at(self, pos: int) -> str | None:
        for kind, spans in (("negated", self.negated), ("uncertain", self.uncertain)):
            k = bisect_right(spans, (pos, float("inf"))) - 1
            if k >= 0 and spans[k][0] <= pos < spans[k][1]:
                return kind
        return None


def vetoes(text: str, masked: str) -> Vetoes:
    """Vetoes of ``text``; ``masked`` is the same text with quoted speech and option texts blanked
    (so "None of the above" as an option, or a quoted "I'm sorry", never vetoes). One pass per
    cue kind; a cue's clause is found by bisecting the sorted clause boundaries."""
    m = _REFUSAL.search(masked)
    if m:
        return Vetoes(m.group(0), (), ())
    neg = [c.start() for c in _NEGATION.finditer(masked)]
    unc = [c.start() for c in _UNCERTAIN.finditer(masked)]
    if not (neg or unc):
        return Vetoes(None, (), ())
    sent_cuts = [0]
    for c in _SENTENCE_END.finditer(masked):
        sent_cuts += [c.start(), c.end()]
    sent_cuts.append(len(masked))
    cuts = sorted(set(sent_cuts) | {c.start() for c in _CLAUSE_BREAK.finditer(masked)})

    def around(pos: int, bounds: list[int]) -> tuple[int, int]:
        k = bisect_right(bounds, pos)
        return bounds[k - 1], bounds[k] if k < len(bounds) else len(masked)

    uncertain = set()
    for pos in unc:
        s, e = around(pos, sent_cuts)
        a, b = around(pos, cuts)
        if _AUDIO_WORDS.search(masked, a, b):
            return Vetoes(masked[a:b].strip(), (), ())
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
    negated = {around(pos, cuts) for pos in neg} - uncertain
    return Vetoes(None, tuple(sorted(negated)), tuple(sorted(uncertain)))


# --- non-answers -----------------------------------------------------------------------------------

#: outputs that answer nothing, by kind; matched only on outputs that name no option and no label
NON_ANSWERS: tuple[tuple[str, re.Pattern], ...] = (
    ("asks for input", re.compile(
        r"(?i:\b(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:provide|share|upload|send|give|play|describe"
        r"|clarify|attach|specify|tell\s+me)\b|\b(?:please|kindly)\s+(?:provide|share|upload|send|attach|describe"
        r"|play|give|specify|clarify)\b|\bi\s+(?:would\s+|will\s+)?need\s+(?:the|a|an|more|some|to\s+(?:hear|listen"
        r"|know|see|have))\b)")),
    ("none of the options", re.compile(
        r"(?i:^\W*(?:none|neither)\W*$|\b(?:none|neither)\s+of\s+(?:the|these|those|them)\b)")),
    ("undetermined", re.compile(
        r"(?i:\bunable\s+to\s+(?:determine|tell|answer|identify|say|decide)|\b(?:can\s*not|can't|cannot|could\s+not)"
        r"\s+(?:be\s+)?(?:determined?|told|tell|answer\w*|identif\w+|say|decided?)\b|\bimpossible\s+to\s+(?:determine"
        r"|tell|say|answer|know)|\binsufficient\s+(?:data|information|context|evidence)|\bnot\s+enough\s+(?:data"
        r"|information|context|evidence)|\bundetermined\b|\bunknown\b|^\W*n\s*/?\s*a\W*$|\bnot\s+applicable\b"
        r"|\bi\s+(?:do\s+not|don't)\s+know\b|\bnot\s+(?:sure|certain)\b|\b(?:hard|difficult)\s+to\s+(?:say|tell)"
        r"|\bunclear\b|\bunsure\b|\bno\s+(?:clear\s+)?answer\b)")),
)


def non_answer(text: str) -> str | None:
    """The kind of non-answer an output is (``asks for input``, ``none of the options``,
    ``undetermined``), or None. Callers ask only about outputs that name no option and no label:
    then a request for the audio or an "unable to determine" is the whole message."""
    for kind, pattern in NON_ANSWERS:
        if pattern.search(text):
            return kind
    return None


def refusal_kind(refusal: str) -> str:
    """A whole-output veto as a non-answer class: ``none of the options``, ``undetermined`` (doubt
    about the audio: "I can't tell from the audio") or ``refusal`` (of the task itself)."""
    if re.match(r"(?i:none|neither)\b", refusal):
        return "none of the options"
    if _UNCERTAIN.search(refusal) and not re.search(r"(?i:sorry|apologi|\bas\s+an?\b)", refusal):
        return "undetermined"
    return "refusal"
