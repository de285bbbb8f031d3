"""Properties any correct answer parser has, for every option set (hypothesis).

The hand-written cases (test_parse.py) and the frozen corpus (test_parse_corpus.py) pin exact
readings; these pin the contract behind them, so a rewrite of the parser cannot quietly break it:
a clear answer is read whatever the labels, surrounding whitespace or the answer keyword's case;
a label never comes from outside the options; nothing crashes on arbitrary text; the options'
order and the enabled stages never invent a reading; negations, hedges, refusals and empty
outputs are never read as an answer.
"""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import tests.properties  # noqa: F401  (hypothesis profile)
from lalmbench.scoring.parse import STAGES, STATUSES, parse_answer

# option texts as tasks write them: short lower-case phrases, no label-like tokens, no negations
WORDS = ["dog", "barking", "cat", "rain", "engine", "bell", "siren", "birds", "music", "speech", "two", "three",
         "beeps", "water", "wind", "footsteps", "door", "knock", "piano", "guitar", "loud", "quiet", "first", "last"]
LABEL_SETS = ["ABCDEFGHIJ", "123456789"]
WHITESPACE = st.text(alphabet=" \t\n\r", max_size=4)


@st.composite
def option_sets(draw, unique_texts: bool = True) -> list[dict]:
    """2-8 options with distinct labels (letters or digits) and short texts, distinct unless
    ``unique_texts`` is off (then two options may share a text, which must not be read as either)."""
    alphabet = draw(st.sampled_from(LABEL_SETS))
    labels = draw(st.lists(st.sampled_from(alphabet), min_size=2, max_size=8, unique=True))
    phrases = st.lists(st.sampled_from(WORDS[:draw(st.sampled_from([4, len(WORDS)]))]), min_size=1, max_size=3,
                       unique=True).map(" ".join)
    texts = draw(st.lists(phrases, min_size=len(labels), max_size=len(labels), unique=unique_texts))
    return [{"label": lab, "text": t} for lab, t in zip(labels, texts)]


@st.composite
def options_and_label(draw) -> tuple[list[dict], str]:
    opts = draw(option_sets())
    return opts, draw(st.sampled_from([o["label"] for o in opts]))


# any text, lone surrogates and control characters included (models emit both)
ANY_CHAR = st.characters(exclude_categories=())


@st.composite
def outputs(draw, opts: list[dict]) -> str:
    """Arbitrary text mixed with the pieces a parser looks for (labels, option texts, answer
    keywords, negations, brackets, reasoning blocks, chat markers), or an option text alone, or
    a label with an option's text ("B. two beeps", right or wrong)."""
    pieces = st.one_of(
        st.text(ANY_CHAR, max_size=6),
        st.sampled_from([o["label"] for o in opts]),
        st.sampled_from([o["text"] for o in opts]),
        st.sampled_from(["Answer:", "The answer is", "not", " or ", "(", ")", "**", ".", "\n", " ", "I choose",
                         "Option", "<think>", "</think>", "</s>", "I'm not sure", "None of the above"]),
    )
    texts = [o["text"] for o in opts]
    return draw(st.one_of(st.lists(pieces, max_size=12).map("".join),
                          st.sampled_from(texts),
                          st.tuples(st.sampled_from(sorted(_labels(opts))), st.sampled_from(texts))
                          .map(lambda lt: f"{lt[0]}. {lt[1]}")))


@st.composite
def options_and_output(draw) -> tuple[list[dict], str]:
    opts = draw(option_sets(unique_texts=False))
    return opts, draw(outputs(opts))


def _labels(opts: list[dict]) -> set[str]:
    return {o["label"] for o in opts}


@given(options_and_label(), st.sampled_from(["Answer: {}", "The answer is {}.", "({})", "{}", "Answer: ({})",
                                             "The correct option is {}", "I choose {}.", "**{}**"]))
def test_a_clean_answer_is_read_as_its_label(case, form):
    opts, label = case
    res = parse_answer(form.format(label), opts)
    assert res.label == label and res.status in STAGES


@given(options_and_label(), WHITESPACE, WHITESPACE, st.sampled_from(["answer", "Answer", "ANSWER", "aNsWeR"]),
       st.text(alphabet=" ", max_size=3))
def test_whitespace_and_keyword_case_do_not_change_a_clean_read(case, before, after, keyword, gap):
    opts, label = case
    assert parse_answer(f"{before}{keyword}:{gap}{label}{after}", opts).label == label


@given(options_and_output())
def test_a_label_always_comes_from_the_options(case):
    opts, raw = case
    res = parse_answer(raw, opts)
    assert res.label is None or res.label in _labels(opts)
    assert res.status in STATUSES and res.status != "error"  # "error" is scoring's, for failed generations
    # a label comes with the stage that read it; no label comes with the reason why not
    assert (res.label is not None) == (res.status in STAGES)


@given(st.lists(st.tuples(st.text(ANY_CHAR, min_size=1, max_size=3), st.text(ANY_CHAR, max_size=20)),
                min_size=1, max_size=6, unique_by=lambda o: o[0]),
       st.text(ANY_CHAR, max_size=80))
def test_arbitrary_unicode_options_and_output_never_crash(opts, raw):
    options = [{"label": lab, "text": t} for lab, t in opts]
    res = parse_answer(raw, options)
    assert res.label is None or res.label in _labels(options)


@given(options_and_output(), WHITESPACE, WHITESPACE)
def test_surrounding_whitespace_never_changes_a_reading(case, before, after):
    opts, raw = case
    res, padded = parse_answer(raw, opts), parse_answer(before + raw + after, opts)
    assert (padded.label, padded.status) == (res.label, res.status)


@given(options_and_output(), st.randoms(use_true_random=False))
def test_the_order_of_the_options_never_changes_a_reading(case, rng):
    opts, raw = case
    shuffled = list(opts)
    rng.shuffle(shuffled)
    res, again = parse_answer(raw, opts), parse_answer(raw, shuffled)
    assert (again.label, again.status) == (res.label, res.status)


@given(options_and_output(), st.lists(st.sampled_from(STAGES), unique=True))
def test_a_reading_comes_only_from_an_enabled_stage(case, stages):
    opts, raw = case
    res = parse_answer(raw, opts, stages=stages)
    assert res.label is None or res.status in stages


@given(options_and_label())
def test_a_bare_label_is_read_in_either_case(case):
    opts, label = case
    assert parse_answer(label, opts).label == label
    assert parse_answer(label.lower(), opts).label == label


@given(options_and_label())
def test_an_option_text_alone_is_read_as_its_label(case):
    opts, label = case
    text = next(o["text"] for o in opts if o["label"] == label)
    assert parse_answer(text, opts).label == label
    assert parse_answer(f"{text.upper()}.", opts).label == label


@given(options_and_label(), st.sampled_from(["not {}", "The answer is not {}.", "It is not ({})."]))
def test_a_negated_label_is_never_read(case, form):
    opts, label = case
    assert parse_answer(form.format(label), opts).label is None


@given(st.data())
def test_two_different_labels_without_an_answer_statement_are_not_read(data):
    opts = data.draw(option_sets())
    first, second = data.draw(st.lists(st.sampled_from([o["label"] for o in opts]), min_size=2, max_size=2,
                                       unique=True))
    form = data.draw(st.sampled_from(["{} or {}", "({}) or ({})", "{} and {}", "Either {} or {}."]))
    assert parse_answer(form.format(first, second), opts).label is None


@given(options_and_label(), st.sampled_from(["I cannot determine the answer from the audio.",
                                             "I'm not sure, maybe {}.", "As an AI I cannot listen. {}"]))
def test_refusals_are_not_read(case, form):
    opts, label = case
    assert parse_answer(form.format(label), opts).label is None


@given(option_sets(), WHITESPACE)
def test_an_empty_output_is_empty(opts, blank):
    res = parse_answer(blank, opts)
    assert (res.label, res.status) == (None, "empty")
    assert parse_answer(None, opts).status == "empty"


@given(options_and_label(), st.data())
def test_only_the_answer_after_a_reasoning_block_counts(case, data):
    opts, label = case
    scratch = data.draw(outputs(opts)).replace("</think>", "")
    res = parse_answer(f"<think>{scratch}</think>\nAnswer: {label}", opts)
    assert res.label == label
