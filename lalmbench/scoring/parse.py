"""Layered multiple-choice answer parser: raw model text -> one option label, or an honest "no".

Why layered: published audio-LLM numbers move by 10-25 points with the answer parser alone
(MMAU string match vs an LLM judge on the same predictions). Every stage here is named, and the
stage that matched is stored per item (``parse_status`` in ``decisions.parquet``) and counted in
``metrics.json``, so any number can be traced back to the rule that produced it. The rules, their
precedence and worked examples are in ``docs/parser.md``.

Stages, tried in this order (a task may switch any of them off, never reorder them):

``exact-label``      the whole output is one option label (``B``, ``b``).
``label-pattern``    an explicit answer statement (``Answer: B``, ``the answer is (c)``, ``答案是B``,
                     ``\\boxed{B}``, ``<answer>B</answer>``), or else exactly one label in a
                     recognised form (``(B)``, ``B.``, ``**B**``, a first line that is a label, a
                     trailing ``... B``) that the conclusion does not contradict.
``exact-text``       the output is exactly one option's text (``False``).
``normalised-text``  equal to one option's text after case folding, Unicode NFKC, punctuation and
                     whitespace normalisation and dropping an ``Answer:`` prefix.
``token-set``        MMAU's rule (Sakshi113/MMAU ``evaluation.py::string_match``), made
                     label-agnostic: every word of one option occurs in the output and no word
                     that only other options have does; the match must be unique; a negation or
                     doubt vetoes it only when its clause holds the option's words.
``conclusion``       the final answer statement (an ``<answer>`` tag, ``\\boxed{}``, the last sentence
                     that says ``answer is`` / ``Therefore`` / ``**...**`` ..., or a one-sentence
                     output) names exactly one option's text (whole words; case, plurals, quotes and
                     articles ignored; the longest option wins when one contains another), outside
                     negated or uncertain clauses, and no later sentence names another option.

Anything else is ``unparseable`` (``empty`` for no text at all). There is never a random
fallback: an unparseable answer counts as wrong in accuracy and is reported separately.

Before any stage: closed ``<think>`` blocks are dropped, an unclosed one is never read (its
scratchpad is cut), full-width characters are folded (``Ｂ`` is ``B``), and an output that ends in a
degenerate repetition loop is unparseable unless the loop collapses to an explicit answer.

Vetoes are scoped: a negation vetoes the options named in its own clause only ("There are no other
sounds, so it is most likely a hair dryer" reads the hair dryer); an uncertainty phrase vetoes its
clause (and hedging clauses of the same sentence: "not sure, maybe C"); a refusal of the task
("I'm sorry", "as an AI", "I cannot hear the audio") vetoes the whole output, so a guess after a
refusal is never credited; quoted speech and option texts never veto.

When the prompt showed no option labels (``labels_shown=False``), the label stages are off and
option texts that are letters or notes (``C``, ``G#``) are read as texts.

Deliberately unparseable (``reason`` says which): several different labels without one explicit
answer statement ("A or B", "(A) ... (C)"), a negated label ("the answer is not B"), explicit answer
statements that disagree, a label followed by another option's text anywhere ("Answer: (B) a
short pause" when that is option A's text), a label contradicted by the conclusion's option text,
a conclusion that names several options or only negated ones, refusals.

Changelog: 2.1.0 non-answers named (status ``non-answer``, reason ``non-answer: asks for input`` /
``undetermined`` / ``none of the options`` / ``refusal``), so ``unparseable`` means only outputs the
rules failed to read; answer blocks naming different options are unparseable; "every option: (b)"
is a list, not an answer; a final "is: D" after a restated question and a closing lower-case
"is b." are answer statements; an option sentence restated with its subject named ("The man can't
be back ..." for "He can't be back ..."); near-miss spellings of one one-word option
(``Accordian``); an option text that is a whole sentence stays a sentence. 2.0.0 conclusion stage; scoped vetoes; label/text consistency anywhere; prompt-aware
labels; unclosed think blocks, CJK answer markers, full-width letters, repetition loops; linear
time; lower-case parenthesised labels in explicit statements (``the answer is (d)``). 1.1.0 refusal
phrases inside option texts no longer veto; exact/normalised option text is read even next to a
refusal phrase. 1.0.0 first version.

Bump :data:`PARSER_VERSION` whenever a rule changes: it is written into every ``metrics.json``,
and the score rules re-run (without re-running inference) when it or the scoring code changes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from lalmbench.scoring import answer_labels as al
from lalmbench.scoring import answer_text as at
from lalmbench.scoring import option_text as ot
from lalmbench.scoring.option_text import normalise_text, tokens
from lalmbench.core.provenance import source_hash

PARSER_VERSION = "2.1.0"

STAGES: tuple[str, ...] = ("exact-label", "label-pattern", "exact-text", "normalised-text", "token-set",
                           "conclusion")
#: Every value ``parse_status`` can take (``error`` is set by scoring for a failed generation).
STATUSES: tuple[str, ...] = STAGES + ("unparseable", "empty", "error", "non-answer")
#: an answer (think blocks and a trailing repetition loop removed) longer than this is not read:
#: no model's answer to a multiple-choice question is 64 KB of text, and it bounds the cost
MAX_ANSWER_CHARS = 65_536
#: label-pattern reasons that are explicit answer statements (they decide on their own)
EXPLICIT: tuple[str, ...] = ("answer-is", "i-choose", "answer-cjk", "boxed", "answer-tag", "is-final")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """``label`` is the chosen option label or None; ``status`` the stage that decided;
    ``reason`` a short audit note (which pattern matched, or why nothing did)."""

    label: str | None
    status: str
    reason: str = ""


def _unparseable(reason: str) -> ParseResult:
    return ParseResult(None, "unparseable", reason)


def _non_answer(kind: str, detail: str = "") -> ParseResult:
    """An output that answers nothing, named as such (``non-answer: asks for input``, ...): never
    credited, and counted apart from the outputs the parser failed to read."""
    return ParseResult(None, "non-answer", f"non-answer: {kind}" + (f" ({detail})" if detail else ""))


# --- conclusion: the final answer statement, read for option texts -----------------------------

@dataclass(frozen=True, slots=True)
class _Conclusion:
    label: str | None
    reason: str
    hard: bool = False
    pos: int = -1


_ANSWER_TAG = re.compile(r"(?i:<answer>)(?P<c>[^<]{0,2000})(?i:</answer>)")
_BOXED = re.compile(r"\\boxed\{(?P<c>[^{}\n]{0,500}(?:\{[^{}\n]{0,500}\}[^{}\n]{0,500})?)\}")


def _last(pattern: re.Pattern, text: str):
    m = None
    for m in pattern.finditer(text):
        pass
    return m


_LABELLED_BEFORE = re.compile(r"(?:\b(?i:option|choice)\s+|[(\[]|^|\s)(?P<l>[A-Za-z])[)\].:,]?\s*"
                              r"(?i:(?:a|an|the)\s+)?$")


def _labelled(text: str, pos: int, label: str) -> bool:
    """Whether the option text at ``pos`` follows its own label ("Option A, ...", "(A) ...", "A. ...")."""
    m = _LABELLED_BEFORE.search(text[max(0, pos - 16):pos])
    return m is not None and m.group("l").upper() == label


def _contrast(a: ot.OptionPhrase, b: ot.OptionPhrase) -> bool:
    """Options that differ by a modifier ("female singer" / "male singer", "two beeps" / "one beep"):
    describing one excludes the other."""
    return bool((set(a.words) & set(b.words)) - ot.ARTICLES)


def _conclusion(text: str, masked: str, sentences: list[tuple[int, int]], phrases: Sequence[ot.OptionPhrase],
                v: at.Vetoes) -> _Conclusion | None:
    if not sentences:
        return None
    blocks = {lab for m in _ANSWER_TAG.finditer(text)
              for lab in ot.named_options(text, *m.span("c"), phrases, v).asserted}
    if len(blocks) > 1:
        return _Conclusion(None, f"answer tags name different options ({sorted(blocks)})", hard=True)
    tag = _last(_ANSWER_TAG, text) or _last(_BOXED, text)
    marked = True
    if tag is not None:
        a, b = tag.span("c")
        k = next((i for i, (s, e) in enumerate(sentences) if s <= a < e or a < s), len(sentences) - 1)
        where = "answer tag" if tag.re is _ANSWER_TAG else "boxed answer"
    else:
        marks = [i for i, (s, e) in enumerate(sentences) if at.MARKER.search(masked, s, e)]
        if marks:
            k = marks[-1]
            where = "final answer statement"
        else:
            k, marked = len(sentences) - 1, False
            where = "final sentence" if len(sentences) > 1 else "one-sentence answer"
        a, b = sentences[k]
        ans = _last(at.ANSWER_IS, masked[a:b])
        if ans is not None and ot.find_options(text, a + ans.end(), b, phrases):
            a = a + ans.end()
    named = ot.named_options(text, a, b, phrases, v)
    s0, e0 = sentences[k] if tag is None else (a, b)
    if named.asserted and at.hedged(masked, s0, e0):
        return _Conclusion(None, f"{where} hedges ({masked[s0:e0].strip()[:60]!r})", hard=True)
    if len(named.asserted) > 1:
        return _Conclusion(None, f"{where} names several options ({sorted(named.asserted)})", hard=True)
    if not named.asserted:
        if named.vetoed:
            return _Conclusion(None, f"{where} names options only under a negation or doubt ({sorted(named.vetoed)})",
                               hard=True)
        return None
    label, = named.asserted
    pos = named.spans[-1][1]
    for s, e in sentences[k + 1:]:
        if s < b:
            continue
        later = ot.named_options(text, s, e, phrases, v).asserted
        if later - {label}:
            return _Conclusion(None, f"{where} names {label} but a later sentence names {sorted(later - {label})}",
                               hard=True)
    if not marked and len(sentences) > 1:
        for s, e in sentences[:k]:
            if ot.named_options(text, s, e, phrases, v).asserted - {label}:
                return _Conclusion(None, "several options named and no answer statement")
    return _Conclusion(label, where, pos=pos)


def _contradicted(text: str, masked: str, sentences: list[tuple[int, int]], label: str, pos: int,
                  phrases: Sequence[ot.OptionPhrase],
                  v: at.Vetoes) -> str | None:
    """Why a label read at ``pos`` is contradicted by the text around it, or None: its sentence or
    the one before asserts a contrasting option ("... a solo female singer. The answer is B." with B
    "Male singer"), or a later conclusion sentence names another option."""
    by_label = {p.label: p for p in phrases}
    mine = by_label.get(label)
    k = next((i for i, (s, e) in enumerate(sentences) if s <= pos < e), None)
    if k is None:
        return None
    if mine is not None:
        for s, e in sentences[max(0, k - 1):k + 1]:
            # "Option A, <A's text>, ..." discusses an option; only unlabelled text describes the audio
            named = {lab for lab, a, _ in ot.named_options(text, s, e, phrases, v).spans
                     if not _labelled(text, a, lab)}
            if len(named) == 1 and label not in named:
                other, = named
                if other in by_label and _contrast(mine, by_label[other]):
                    return f"label {label} but the text says option {other}"
    for s, e in sentences[k + 1:]:
        if not at.MARKER.search(masked, s, e):
            continue
        named = ot.named_options(text, s, e, phrases, v).asserted
        if len(named) == 1 and label not in named:
            return f"label {label} but a later conclusion names option {next(iter(named))}"
    return None


# --- option-text stages -----------------------------------------------------------------------

def _unique(matches: list[str], stage: str, what: str) -> ParseResult | None:
    if len(matches) == 1:
        return ParseResult(matches[0], stage, what)
    if len(matches) > 1:
        return _unparseable(f"{stage}: several options match ({sorted(matches)})")
    return None


def _token_set(text: str, options: tuple[tuple[str, str], ...], v: at.Vetoes) -> ParseResult | None:
    pred = tokens(text)
    if not pred:
        return None
    opt_tokens = [(lab, tokens(t)) for lab, t in options]
    matches = []
    # an option "A" or "I" (a note, a numeral) is not the article "a" or the pronoun "I": it must
    # occur as that capital letter, not at the start of a phrase like "A dog barks"
    article_like = {p.label: p for p in ot.option_phrases(options) if p.raw in ("A", "I")}
    for lab, toks in opt_tokens:
        if not toks or not toks <= pred:
            continue
        if lab in article_like and not ot.find_options(text, 0, len(text), [article_like[lab]]):
            continue
        distinctive_of_others = set()
        for other_lab, other in opt_tokens:
            if other_lab != lab and other != toks:
                distinctive_of_others |= other - toks
        if pred.isdisjoint(distinctive_of_others):
            matches.append(lab)
    res = _unique(matches, "token-set", "mmau-token-set")
    if res is not None and res.label is not None:
        own = dict(opt_tokens)[res.label] - ot.ARTICLES
        for a, b in v.negated + v.uncertain:
            if own & tokens(text[a:b]):
                return _unparseable("token-set match under a negation or doubt")
    return res


# --- entry point --------------------------------------------------------------------------------

#: the files whose code decides a score: a change to any of them re-scores every run
SCORER_FILES = ("scoring/parse.py", "scoring/answer_labels.py", "scoring/answer_text.py", "scoring/option_text.py",
                "scoring/mcq.py")


@lru_cache(maxsize=1)
def scorer_fingerprint() -> str:
    """``<PARSER_VERSION>+<hash of the scoring code>``: a param of the score rules, so a parser
    upgrade (or any edit of the scoring code) re-scores every run without re-running inference."""
    return f"{PARSER_VERSION}+{source_hash(*SCORER_FILES)}"


def check_stages(stages: Sequence[str] | None) -> tuple[str, ...]:
    if stages is None:
        return STAGES
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"unknown parser stage(s) {unknown}; known stages: {list(STAGES)}")
    return tuple(s for s in STAGES if s in set(stages))


def parse_answer(raw: str | None, options: list[dict], stages: Sequence[str] | None = None, *,
                 labels_shown: bool = True) -> ParseResult:
    """Map one raw output to an option label of ``options`` (``[{label, text, ...}]``).

    ``stages`` restricts which stages may match (canonical order is kept); ``None`` means all.
    ``labels_shown=False`` says the prompt showed no option labels: label stages are off and
    option texts that look like labels are read as texts.
    Never guesses: ``label`` is None whenever no enabled stage gives one unambiguous answer.
    """
    opts = tuple((str(o["label"]), str(o.get("text", "") or "")) for o in options)
    return _parse_cached(raw, opts, check_stages(stages), labels_shown)


@lru_cache(maxsize=65536)
def _parse_cached(raw: str | None, opts: tuple[tuple[str, str], ...], stages: tuple[str, ...],
                  labels_shown: bool) -> ParseResult:
    return parse_options_key(raw, opts, stages, labels_shown)


def parse_options_key(raw: str | None, opts: tuple[tuple[str, str], ...],
                      stages: tuple[str, ...] = STAGES, labels_shown: bool = True) -> ParseResult:
    """:func:`parse_answer` on pre-extracted ``((label, text), ...)``; stages already validated."""
    if raw is None or (isinstance(raw, float) and raw != raw):
        return ParseResult(None, "empty", "no output")
    text, unclosed = at.clean(raw if type(raw) is str else str(raw))
    if not text:
        if unclosed:
            return _unparseable("unclosed think block: a scratchpad and no answer")
        return ParseResult(None, "empty", "blank output")
    loop = at.repetition_loop(text)
    if loop is None:
        if len(text) > MAX_ANSWER_CHARS:
            return _unparseable(f"{len(text):,} characters without an end: not an answer")
        return _parse_text(text, opts, stages, labels_shown)
    start, period = loop
    if start + period > MAX_ANSWER_CHARS:
        return _unparseable(f"degenerate repetition loop after {start:,} characters")
    res = _parse_text(text[:start + period], opts, stages, labels_shown)
    unit = text[start:start + period].strip()[:40]
    if res.label is not None and res.reason in EXPLICIT:
        return ParseResult(res.label, res.status, f"{res.reason} (repetition loop of {unit!r} collapsed)")
    return _unparseable(f"degenerate repetition loop ({unit!r} repeated)")


def _text_stages(text: str, opts: tuple[tuple[str, str], ...], stages: tuple[str, ...]) -> ParseResult | None:
    """``exact-text`` then ``normalised-text``: the whole output is one option's text."""
    if "exact-text" in stages:
        stripped = re.sub(r"[.!]+$", "", text.strip().strip("\"'`*").strip()).strip()
        res = _unique([lab for lab, t in opts if t and stripped == t.strip()], "exact-text", "option text")
        if res is not None:
            return res
    if "normalised-text" in stages:
        norm = normalise_text(text)
        res = _unique([lab for lab, t in opts if t and normalise_text(t) == norm], "normalised-text",
                      "normalised option text")
        if res is not None:
            return res
    return None


def _parse_text(text: str, opts: tuple[tuple[str, str], ...], stages: tuple[str, ...],
                labels_shown: bool) -> ParseResult:
    labels, texts = zip(*opts)
    if labels_shown and "exact-label" in stages:
        if text in labels:
            return ParseResult(text, "exact-label", "label")
        if len(text) <= 3:
            upper = text.upper()
            if upper in labels and upper.lower() == text:
                return ParseResult(upper, "exact-label", "lower-case label")

    norm = normalise_text(text)
    norm_texts = al.norm_texts(texts)
    if norm in norm_texts and len(texts[norm_texts.index(norm)].strip()) > 2:
        # the output is a (long) option's text: scrubbed of it, no label is left to read
        res = _text_stages(text, opts, stages)
        if res is not None:
            return res

    phrases = ot.option_phrases(opts)
    occurrences = ot.find_options(text, 0, len(text), phrases)
    ospans = [(a, b) for lab, a, b in occurrences if len(texts[labels.index(lab)].strip()) > 2]
    masked = at.blank(text, at.quoted_spans(text) + ospans)
    # sentences never end inside an option text ("Customer service at D.S.L. Extreme")
    # (filled, not spaced: an option text that is a whole sentence after ". " stays a sentence)
    sentences = at.sentence_spans(at.blank(text, ospans, "_"), text)
    v = at.vetoes(text, masked)

    lr = None
    if labels_shown and "label-pattern" in stages and not v.refusal:
        lr = al.label_read(text, opts, phrases, v, bool(occurrences))
        if lr is not None and lr.kind == "hard":
            return _unparseable(lr.reason)
        if lr is not None and lr.kind == "explicit":
            why = occurrences and _contradicted(text, masked, sentences, lr.label, lr.pos, phrases, v)
            return _unparseable(why) if why else ParseResult(lr.label, "label-pattern", lr.reason)

    concl = None
    if occurrences and not v.refusal and ("conclusion" in stages or (lr is not None and lr.kind == "formatted")):
        concl = _conclusion(text, masked, sentences, phrases, v)
    if lr is not None and lr.kind == "formatted":
        if concl is not None and concl.label is not None and concl.label != lr.label:
            return _unparseable(f"label {lr.label} but the {concl.reason} names option {concl.label}")
        why = occurrences and _contradicted(text, masked, sentences, lr.label, lr.pos, phrases, v)
        return _unparseable(why) if why else ParseResult(lr.label, "label-pattern", lr.reason)

    res = _text_stages(text, opts, stages)
    if res is not None:
        return res

    if v.refusal:
        return _non_answer(at.refusal_kind(v.refusal.strip()), repr(v.refusal.strip()))

    if "token-set" in stages:
        res = _token_set(text, opts, v)
        if res is not None:
            return res

    if "conclusion" in stages and concl is not None:
        if concl.label is not None:
            return ParseResult(concl.label, "conclusion", concl.reason)
        if concl.hard:
            return _unparseable(concl.reason)

    if lr is not None:
        return _unparseable(lr.reason)
    if concl is not None:
        return _unparseable(concl.reason)
    if not occurrences:
        return _unnamed(text, opts, stages, labels_shown)
    return _unparseable("no stage matched")


def _unnamed(text: str, opts: tuple[tuple[str, str], ...], stages: tuple[str, ...],
             labels_shown: bool) -> ParseResult:
    """An output that names no option and no label: a near-miss spelling of one option
    (``Accordian``), read again with the option's spelling; else a non-answer of a known kind;
    else unparseable."""
    fixes = ot.near_misses(text, opts)
    if fixes and not at.hedged(text, 0, len(text)):
        parts, i = [], 0
        for a, b, word in fixes:
            parts += [text[i:a], word]
            i = b
        res = _parse_text("".join(parts) + text[i:], opts, stages, labels_shown)
        if res.label is not None:
            spelt = ", ".join(f"{text[a:b]!r} read as {w!r}" for a, b, w in fixes)
            return ParseResult(res.label, res.status, f"{res.reason}; near-miss spelling {spelt}")
        if res.status != "unparseable" or res.reason != "no stage matched":
            return res
    kind = at.non_answer(text)
    if kind is not None:
        return _non_answer(kind)
    return _unparseable("no stage matched")
