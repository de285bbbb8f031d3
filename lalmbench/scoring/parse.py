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
("I'm sorry", "as an AI", "I cannot hear the audio") vetoes the whole output unless a committed
answer naming one option follows it (lalmbench.scoring.refusal_pick: "I'd guess B" is no pick, the
pick made when pressed is); quoted speech and option texts never veto.

When the prompt showed no option labels (``labels_shown=False``), the label stages are off and
option texts that are letters or notes (``C``, ``G#``) are read as texts.

Deliberately unparseable (``reason`` says which): several different labels without one explicit
answer statement ("A or B", "(A) ... (C)"), a negated label ("the answer is not B"), explicit answer
statements that disagree, a label followed by another option's text anywhere ("Answer: (B) a
short pause" when that is option A's text), a label contradicted by the conclusion's option text,
a conclusion that names several options or only negated ones, refusals with no committed answer after them.

Changelog: docs/parser-changelog.md (what each version changed and which round called for it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from lalmbench.scoring import answer_labels as al
from lalmbench.scoring import answer_slots as sl
from lalmbench.scoring import answer_text as at
from lalmbench.scoring import conclusion as cl
from lalmbench.scoring import label_checks as lc
from lalmbench.scoring import option_text as ot
from lalmbench.scoring import question_read as qr
from lalmbench.scoring import refusal_pick as rp
from lalmbench.scoring.option_text import normalise_text, tokens
from lalmbench.core.provenance import source_hash

PARSER_VERSION = "2.26.0"

STAGES: tuple[str, ...] = ("exact-label", "label-pattern", "exact-text", "normalised-text", "token-set",
                           "conclusion")
#: Every value ``parse_status`` can take (``error`` is set by scoring for a failed generation).
STATUSES: tuple[str, ...] = STAGES + ("unparseable", "empty", "error", "non-answer")
#: an answer (think blocks and a trailing repetition loop removed) longer than this is not read:
#: no model's answer to a multiple-choice question is 64 KB of text, and it bounds the cost
MAX_ANSWER_CHARS = 65_536
#: label-pattern reasons that are explicit answer statements (they decide on their own)
EXPLICIT: tuple[str, ...] = ("answer-is", "i-choose", "answer-cjk", "boxed", "answer-tag", "is-final", "answer-json")


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


# --- option-text stages -----------------------------------------------------------------------

def _unique(matches: list[str], stage: str, what: str) -> ParseResult | None:
    if len(matches) == 1:
        return ParseResult(matches[0], stage, what)
    if len(matches) > 1:
        return _unparseable(f"{stage}: several options match ({sorted(matches)})")
    return None


def _negation_told_apart(text: str, lab: str, opt_tokens: list[tuple[str, frozenset]], pred: frozenset,
                         options: tuple[tuple[str, str], ...]) -> bool:
    """Whether the one token-set match differs from another option whose words the output also
    holds only by a negation word, and the output never says the match as a phrase: a "not" from
    elsewhere in the output ("shouting 'Not food!' ... affected by something sour") must not turn
    "Affected by sour" into "Not affected by sour"."""
    toks = dict(opt_tokens)[lab]
    rivals = [other for other_lab, other in opt_tokens
              if other_lab != lab and other and other < toks and other <= pred and toks - other <= cl.NEGATION_WORDS]
    if not rivals:
        return False
    phrase = [p for p in ot.option_phrases(options) if p.label == lab]
    return not ot.find_options(text, 0, len(text), phrase)


def _token_set(text: str, options: tuple[tuple[str, str], ...], v: at.Vetoes) -> ParseResult | None:
    pred = tokens(text)
    if not pred:
        return None
    opt_tokens = [(lab, tokens(t)) for lab, t in options]
    matches = []
    # an option "A" or "I" (a note, a numeral) is not the article "a" or the pronoun "I": it must
    # occur as that capital letter, not at the start of a phrase like "A dog barks"
    # nor is an option "one" the quantifier of "at least one" (the word must be found as the option is)
    article_like = {p.label: p for p in ot.option_phrases(options)
                    if p.raw in ("A", "I") or p.raw.lower() == "one"}
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
    if len(matches) > 1 and len({dict(opt_tokens)[lab] for lab in matches}) == 1:
        return None  # "From near to far" / "From far to near": the same words, only their order tells
    if len(matches) == 1 and _negation_told_apart(text, matches[0], opt_tokens, pred, options):
        return None
    res = _unique(matches, "token-set", "mmau-token-set")
    if res is not None and res.label is not None:
        own = dict(opt_tokens)[res.label] - ot.ARTICLES
        for a, b in v.negated + v.uncertain + v.negated_wide:
            if own & tokens(text[a:b]):
                return None  # under a negation or doubt: the conclusion stage reads it, or nothing does
    return res


# --- entry point --------------------------------------------------------------------------------

#: the files whose code decides a score: a change to any of them re-scores every run
SCORER_FILES = ("scoring/parse.py", "scoring/conclusion.py", "scoring/label_checks.py", "scoring/answer_labels.py",
                "scoring/answer_text.py", "scoring/option_text.py", "scoring/answer_slots.py",
                "scoring/question_read.py", "scoring/refusal_pick.py", "scoring/mcq.py")


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
                 labels_shown: bool = True, question: str | None = None) -> ParseResult:
    """Map one raw output to an option label of ``options`` (``[{label, text, ...}]``).

    ``stages`` restricts which stages may match (canonical order is kept); ``None`` means all.
    ``labels_shown=False`` says the prompt showed no option labels: label stages are off and
    option texts that look like labels are read as texts.
    ``question``, the item's question, lets an output the options alone leave unread be read in the
    question's words (:func:`with_question`).
    Never guesses: ``label`` is None whenever no enabled stage gives one unambiguous answer.
    """
    opts = tuple((str(o["label"]), str(o.get("text", "") or "")) for o in options)
    stages = check_stages(stages)
    return with_question(raw, opts, question, stages, labels_shown, _parse_cached(raw, opts, stages, labels_shown))


_LABEL_AND_TEXT = re.compile(r"label (?P<l>\S+) is also option (?P<o>\S+)'s text")


def with_question(raw: str | None, opts: tuple[tuple[str, str], ...], question: str | None, stages: tuple[str, ...],
                  labels_shown: bool, res: ParseResult) -> ParseResult:
    """``res``, or, when it read nothing, what the output says in the question's words: a negation the
    question asked for vetoes nothing ("Which is not present?" -> "... not present is the Flute"), and a
    yes/no question is answered by a statement restating it (:mod:`lalmbench.scoring.question_read`).
    Refusals, empty outputs and runaway ones stay unread."""
    if res.label is not None or not question or "conclusion" not in stages or not isinstance(raw, str) \
            or not (res.status == "unparseable" or res.reason.startswith("non-answer: none of the options")) \
            or "repetition loop" in res.reason:
        return res
    text, _ = at.clean(raw)
    if not text or len(text) > MAX_ANSWER_CHARS:
        return res
    both = _LABEL_AND_TEXT.fullmatch(res.reason)
    if both is not None and qr.counted_option(question, text, opts, both.group("l"), both.group("o")):
        return ParseResult(both.group("o"), "label-pattern", f"{res.reason}: the question asks how many")
    spans = qr.echoed_negations(question, text)
    if spans:
        again = _parse_text(at.blank(text, spans), opts, stages, labels_shown)
        if again.label is not None:
            return ParseResult(again.label, again.status, f"{again.reason} (the question's own negation)")
    polar = qr.polar_reading(question, text, opts)
    return ParseResult(polar[0], "conclusion", polar[1]) if polar else res


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
        return _closing_slot(text, opts, stages, labels_shown, _parse_text(text, opts, stages, labels_shown))
    start, period = loop
    if start + period > MAX_ANSWER_CHARS:
        return _unparseable(f"degenerate repetition loop after {start:,} characters")
    res = _parse_text(text[:start + period], opts, stages, labels_shown)
    unit = text[start:start + period].strip()[:40]
    if res.label is not None and res.reason in EXPLICIT:
        return ParseResult(res.label, res.status, f"{res.reason} (repetition loop of {unit!r} collapsed)")
    if res.label is not None and _answered_before_junk(res, text[:start], text[start:start + period], opts):
        return ParseResult(res.label, res.status, f"{res.reason} (then {unit!r} repeated)")
    return _unparseable(f"degenerate repetition loop ({unit!r} repeated)")


def _answered_before_junk(res: ParseResult, before: str, unit: str, opts: tuple[tuple[str, str], ...]) -> bool:
    """Whether the text before a repetition loop is a whole answer (it ends with a closed answer
    block, or it is the option's exact text) and the loop names no option and no label
    ("</answer>\nHuman\nHuman\n..."): the model answered, then ran on."""
    block = at.last_match(cl.ANSWER_TAG, before) or at.last_match(cl.BOXED, before)
    # only the loop's unit after the block (the loop may restart after a blank line)
    junk = re.fullmatch(rf"(?:\s*{re.escape(unit.strip())})*\s*", before[block.end():]) if block else None
    whole = res.status in ("exact-text", "normalised-text") or junk is not None
    labels = "|".join(re.escape(lab) for lab, _ in opts)
    return whole and not ot.find_options(unit, 0, len(unit), ot.option_phrases(opts)) \
        and not re.search(rf"(?<![A-Za-z0-9])(?:{labels})(?![A-Za-z0-9])", unit)


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


def _prepared(text: str, opts: tuple[tuple[str, str], ...]) -> tuple:
    """(option phrases, their occurrences, the masked text, sentence spans) of an output."""
    labels, texts = zip(*opts)
    phrases = ot.option_phrases(opts)
    occurrences = ot.find_options(text, 0, len(text), phrases)
    quotes = at.quoted_spans(text)
    ospans = [(a, b) for lab, a, b in occurrences if len(texts[labels.index(lab)].strip()) > 2] \
        + sl.stated_negation_words(text, occurrences, opts, quotes)
    tags = [m.span() for m in cl.TAG.finditer(text)]
    # quoted speech and option texts blanked; markup tags turned into line breaks
    masked = at.blank(at.blank(text, quotes + ospans), tags, "\n")
    # sentences never end inside an option text ("Customer service at D.S.L. Extreme")
    # (filled, not spaced: an option text that is a whole sentence after ". " stays a sentence)
    sentences = at.sentence_spans(at.blank(at.blank(text, ospans, "_"), tags, "\n"), text)
    return phrases, occurrences, masked, sentences


def _closing_slot(text: str, opts: tuple[tuple[str, str], ...], stages: tuple[str, ...], labels_shown: bool,
                  res: ParseResult) -> ParseResult:
    """``res``, or, when it read nothing, the label slot closing the output after the reasoning
    (``</Reasoning>\n<B>``) where the reasoning singles out that option and no other
    (:func:`lalmbench.scoring.answer_slots.closing_slot`)."""
    if res.label is not None or not labels_shown or "label-pattern" not in stages \
            or not (res.status == "unparseable" or res.reason.startswith("non-answer: none of the options")):
        return res
    slot = sl.CLOSING_SLOT.search(text)
    if slot is None:
        return res  # (most unread outputs: nothing to prepare again)
    phrases, _, masked, sentences = _prepared(text, opts)
    v = at.vetoes(text, masked, lift_refusal=True)
    label = sl.closing_slot(text, slot, sentences, phrases, v)
    return ParseResult(label, "label-pattern", "answer slot closing the reasoning, which singles out its option") \
        if label is not None else res


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

    phrases, occurrences, masked, sentences = _prepared(text, opts)
    v = at.vetoes(text, masked)

    if v.refusal:
        pick = rp.pick_after_refusal(text, masked, sentences, opts, phrases, occurrences, v.refusal, stages,
                                     labels_shown, lambda span: _parse_text(span, opts, stages, labels_shown))
        if pick is not None:
            return ParseResult(*pick)

    lr = None
    if labels_shown and "label-pattern" in stages and not v.refusal:
        lr = al.label_read(text, opts, phrases, v, bool(occurrences))
        if lr is not None and lr.kind == "hard":
            return _unparseable(lr.reason)
        if lr is not None and lr.label is not None and (other := lc.label_is_other_text(text, lr, opts, phrases)):
            if lc.counted(text, lr):
                return ParseResult(other, "label-pattern", f"{lr.reason}: a count, option {other}'s text")
            return _unparseable(f"label {lr.label} is also option {other}'s text")
        if lr is not None and lr.kind == "explicit":
            why = occurrences and lc.contradicted(text, masked, sentences, lr.label, lr.pos, phrases, v)
            return _unparseable(why) if why else ParseResult(lr.label, "label-pattern", lr.reason)

    if labels_shown and (slot := lc.label_slot_with_other_text(text, opts, phrases)):
        return _unparseable(slot)
    if occurrences and _ANY_OF_THEM.search(masked) and not at.MARKER.search(masked):
        # "The sound of frying food can occur in any of these places. It depends on ...": every option
        # allowed, none chosen; the one option named in passing is no answer
        return _non_answer("undetermined", repr(_ANY_OF_THEM.search(masked).group(0)))

    concl = None
    if occurrences and not v.refusal and ("conclusion" in stages or (lr is not None and lr.kind == "formatted")):
        concl = cl.read_conclusion(text, masked, sentences, phrases, v, labels_shown)
    cut = cl.cut_off(text)
    if lr is not None and lr.kind == "formatted":
        named = ot.named_options(text, 0, lr.pos, phrases, v) if lr.reason == "angle" else None
        if named is not None and lr.label in named.vetoed:
            # "... no strong emotional indicators that would suggest disgust, happiness, or fear.</Reasoning><B>"
            # with B "happy": a slot whose option the reasoning names only to rule it out
            return _unparseable(f"label slot {lr.label} but the reasoning names that option only under a negation")
        if named is not None and len(named.asserted) == 1 and lr.label not in named.asserted | named.vetoed:
            # "The audio contains a conversation between two people. ...</Reasoning>\n<C C>" with C "one"
            return _unparseable(f"label slot {lr.label} but the reasoning names only option {min(named.asserted)}")
        if cut and "\n" in text[:lr.pos] and (concl is None or concl.label != lr.label):
            # "* **(d) Air bubbling through water:** This scenario is characterized by": a label the
            # analysis had reached when it was cut off, not its answer (one on the first line is)
            return _unparseable(f"analysis cut off before its conclusion (label {lr.label} in it)")
        if concl is not None and concl.label is not None and concl.label != lr.label:
            return _unparseable(f"label {lr.label} but the {concl.reason} names option {concl.label}")
        why = occurrences and lc.contradicted(text, masked, sentences, lr.label, lr.pos, phrases, v)
        return _unparseable(why) if why else ParseResult(lr.label, "label-pattern", lr.reason)

    res = _text_stages(text, opts, stages)
    if res is not None:
        return res

    if v.refusal:
        return _non_answer(at.refusal_kind(v.refusal.strip()), repr(v.refusal.strip()))

    if "token-set" in stages and not cut and not (concl is not None and concl.cut):
        res = _token_set(text, opts, v)
        # every word of one option somewhere in the output yields to a conclusion naming another, several, or
        # options only under a negation
        if res is not None and (concl is None or concl.stated in (None, res.label) and concl.label in (None, res.label)
                                and not concl.refutes):
            return res

    if "conclusion" in stages and concl is not None:
        if concl.label is not None:
            return ParseResult(concl.label, "conclusion", concl.reason)
        if concl.hard:
            return _unparseable(concl.reason)

    # labels of several options went by ("Option (A) directly addresses ..., while the other options (B, C, D)
    # are less related"), but the final statement may say which one in its words
    listed = lr is not None and lr.reason.startswith("several labels") and not occurrences
    if lr is not None and not listed:
        return _unparseable(lr.reason)
    if concl is not None:
        return _unparseable(concl.reason)
    if not occurrences:
        if "conclusion" in stages and not v.refusal and sentences:
            if cut:
                return _unparseable("analysis cut off before its conclusion")
            # no option text anywhere, but the final statement may still say which one
            marks = [i for i, (s, e) in enumerate(sentences) if at.MARKER.search(masked, s, e)]
            if listed and not marks:
                return _unparseable(lr.reason)
            k = marks[-1] if marks else len(sentences) - 1
            a, b = cl.statement(text, masked, sentences, k)
            read = cl.statement_reading(text, masked, a, b, phrases, v, labels_shown, sentences, partial=True)
            if read is not None and not at.hedged(masked, a, b, read[1]):
                return ParseResult(read[0], "conclusion", f"final statement, {read[2]}")
            ans = at.last_match(at.ANSWER_IS, masked[a:b])
            after = a + ans.start() + len(ans.group(0).rstrip()) if ans is not None else b
            if ans is not None and "answer" in ans.group(0).lower() and cl.WORDS_AFTER.match(text, after, b) \
                    and not at.non_answer(text[after:b]) and not _shares_option_words(text[after:b], phrases) \
                    and not ot.near_misses(text[after:b], opts):
                # "Therefore, the correct answer is \"eleven\"": an answer, but none of the options
                return _unparseable(f"final answer statement gives an answer that is no option "
                                    f"({text[after:b].strip()[:40]!r})")
        if listed:
            return _unparseable(lr.reason)
        return _unnamed(text, opts, stages, labels_shown)
    return _unparseable("no stage matched")


# "can occur in any of these places", "all of the options are possible": no option chosen over another
_ANY_OF_THEM = re.compile(r"(?i:\b(?:any|all)\s+of\s+(?:these|those|the)\s+(?:places|locations|options|choices"
                          r"|answers|settings)\b)")


def _shares_option_words(span: str, phrases: Sequence[ot.OptionPhrase]) -> bool:
    """Whether an answer shares a content word with some option ("Caat meowing" with "Cat
    meowing"): a garbled option, not an answer outside the options."""
    words = {ot.stem(w) for w in re.findall(r"\w+", span.lower())} - cl.FUNCTION_WORDS
    return any(words & set(p.words) for p in phrases)


def _unnamed(text: str, opts: tuple[tuple[str, str], ...], stages: tuple[str, ...],
             labels_shown: bool) -> ParseResult:
    """An output that names no option and no label: a near-miss spelling of one option
    (``Accordian``), read again with the option's spelling; else a non-answer of a known kind;
    else unparseable."""
    # only in the final statement, outside quoted speech: "turn right at the light" quoted from the
    # audio, or a word of the analysis, is not the option "eight" misspelt
    spans = at.sentence_spans(text)
    last = spans[-1][0] if spans else 0
    quoted = at.quoted_spans(text)
    # nor after a negation in that sentence: "rather than Korean, Japanese or Indian traditions"
    fixes = [(a, b, w) for a, b, w in ot.near_misses(text, opts)
             if a >= last and not any(qa <= a < qb for qa, qb in quoted) and not at.negation_between(text, last, a)]
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
    # "<Conclusion>N/A</Conclusion>" after reasoning: the answer block is what says nothing
    kind = next((k for m in cl.ANSWER_TAG.finditer(text) if (k := at.non_answer(m.group("c")))), None) \
        or at.non_answer(text)
    if kind is not None:
        return _non_answer(kind)
    return _unparseable("no stage matched")
