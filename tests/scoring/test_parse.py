"""The layered parser on a table of hand-written cases (the frozen real-output corpus is in
test_parse_corpus.py)."""
import pytest

from lalmbench.scoring.parse import PARSER_VERSION, STAGES, ParseResult, parse_answer

O4 = [{"label": lab, "text": t} for lab, t in zip("ABCD", ["A dog barking", "A cat meowing", "Rain falling", "Silence"])]
TF = [{"label": "A", "text": "True"}, {"label": "B", "text": "False"}]
C3 = [{"label": lab, "text": t} for lab, t in zip("ABC", ["three beeps", "one beep", "two beeps"])]
OFFICE = [{"label": lab, "text": t} for lab, t in zip("ABC", ["He can't be back to the office soon.",
                                                             "He will be back to the office soon.",
                                                             "He is already at the office."])]
INSTR = [{"label": lab, "text": t} for lab, t in zip("ABCD", ["Guitar", "Accordion", "Violin", "Trumpet"])]
O8 = [{"label": lab, "text": f"{i} events"} for i, lab in enumerate("ABCDEFGH", start=1)]

CASES = [
    ("A", O4, "A", "exact-label"),
    ("b", O4, "B", "exact-label"),
    (" C \n", O4, "C", "exact-label"),
    ("C</s>", O4, "C", "exact-label"),
    ("(B)", O4, "B", "label-pattern"),
    ("B.", O4, "B", "label-pattern"),
    ("B)", O4, "B", "label-pattern"),
    ("Answer: C", O4, "C", "label-pattern"),
    ("The answer is D.", O4, "D", "label-pattern"),
    ("The correct option is (A).", O4, "A", "label-pattern"),
    ("**B**", O4, "B", "label-pattern"),
    ("B\nBecause a cat is heard.", O4, "B", "label-pattern"),
    ("B. A cat meowing", O4, "B", "label-pattern"),
    ("Answer: B. Option A is wrong.", O4, "B", "label-pattern"),
    ("I think it's B.", O4, "B", "label-pattern"),
    ("Option B", O4, "B", "label-pattern"),
    ("<think>maybe A or B</think>Answer: C", O4, "C", "label-pattern"),
    ("The answer is A dog barking", O4, "A", "normalised-text"),
    ("rain falling!", O4, "C", "normalised-text"),
    ("False", TF, "B", "exact-text"),
    ("false.", TF, "B", "normalised-text"),
    ("TRUE", TF, "A", "normalised-text"),
    ("The answer is two beeps.", C3, "C", "normalised-text"),
    ("There are two beeps in the clip", C3, "C", "token-set"),
    ("E", O8, "E", "exact-label"),
    ("I choose (H)", O8, "H", "label-pattern"),
    ("G. 7 events", O8, "G", "label-pattern"),
    # deliberately unparseable
    ("not A but B", O4, None, "unparseable"),
    ("A or B", O4, None, "unparseable"),
    ("(A) and (C) are both plausible", O4, None, "unparseable"),
    ("The answer is not A.", O4, None, "unparseable"),
    ("Answer: A. Wait, answer: B", O4, None, "unparseable"),
    ("I'm sorry, I cannot determine that from the audio.", O4, None, "non-answer"),
    ("I am not sure, maybe C", O4, None, "unparseable"),
    ("not true", TF, None, "unparseable"),
    # the negation vetoes only its own clause ("not three beeps"): the one-sentence answer is "one beep"
    ("It sounds like one beep, not three beeps", C3, "B", "conclusion"),
    ("It is not one beep", C3, None, "unparseable"),
    ("Z", O4, None, "unparseable"),
    ("A dog is barking while rain is falling", O4, None, "unparseable"),
    # MMAU's word rule is literal: "rains" is not the word "rain", so only option A's words occur
    ("A dog is barking while it rains", O4, "A", "token-set"),
    # round 3: markup fragments, echoed lists, options carrying a negation, spellings, non-answers
    ("Therefore, the answer is 'Rain falling'.\n</answer>", O4, "C", "token-set"),
    ("<answer>Silence</answer> <answer>Rain falling</answer>", O4, None, "unparseable"),
    ("Considering every option: (b) is out. Therefore, the best answer is (c) Rain falling.", O4, "C",
     "label-pattern"),
    ("The answer to 'Which sound? Choices: (A) A dog barking (B) A cat meowing (C) Rain falling (D) Silence' is: D",
     O4, "D", "label-pattern"),
    ("The correct choice is d.", O4, "D", "label-pattern"),
    ("The correct choice is a.", O4, None, "unparseable"),
    ("The man can't be back to the office soon.", OFFICE, "A", "conclusion"),
    ("He is not already at the office. He will be back to the office soon.", OFFICE, "B", "conclusion"),
    ("It is not true that he can't be back to the office soon.", OFFICE, None, "unparseable"),
    ("Accordian", INSTR, "B", "exact-text"),
    ("The answer is Viola.", INSTR, None, "unparseable"),
    ("The answer is not Accordian.", INSTR, None, "unparseable"),
    ("Could you please provide the dialogue?", O4, None, "non-answer"),
    ("Insufficient Data", O4, None, "non-answer"),
    ("", O4, None, "empty"),
    ("   ", O4, None, "empty"),
    (None, O4, None, "empty"),
]


@pytest.mark.parametrize("raw,options,label,status", CASES)
def test_table(raw, options, label, status):
    res = parse_answer(raw, options)
    assert (res.label, res.status) == (label, status), res.reason


def test_never_random_and_deterministic():
    outs = {parse_answer("something unrelated", O4) for _ in range(20)}
    assert outs == {ParseResult(None, "unparseable", "no stage matched")}


def test_stage_restriction_keeps_order_and_rejects_unknown():
    assert parse_answer("(B)", O4, stages=["exact-label"]).status == "unparseable"
    assert parse_answer("False", TF, stages=["exact-text", "exact-label"]) == ParseResult("B", "exact-text",
                                                                                         "option text")
    text_stages = [s for s in STAGES if s not in ("token-set", "conclusion")]
    assert parse_answer("There are two beeps", C3, stages=text_stages).label is None
    assert parse_answer("There are two beeps", C3, stages=STAGES[:-1]) == ParseResult("C", "token-set", "mmau-token-set")
    with pytest.raises(ValueError, match="unknown parser stage"):
        parse_answer("A", O4, stages=["guess"])


def test_version_is_recorded():
    assert PARSER_VERSION and isinstance(PARSER_VERSION, str)


@pytest.mark.parametrize("raw,reason", [
    ("Could you please provide the dialogue?", "non-answer: asks for input"),
    ("I would need the audio to answer this.", "non-answer: asks for input"),
    ("Unable to determine", "non-answer: undetermined"),
    ("None", "non-answer: none of the options"),
    ("I'm sorry, but I cannot listen to audio.", "non-answer: refusal (\"I'm sorry\")"),
])
def test_non_answers_name_their_class(raw, reason):
    res = parse_answer(raw, O4)
    assert (res.label, res.status, res.reason) == (None, "non-answer", reason)


def test_an_option_that_is_a_non_answer_phrase_is_an_answer():
    opts = [{"label": "A", "text": "None"}, {"label": "B", "text": "One"}]
    assert parse_answer("None", opts).label == "A"


def test_near_miss_spelling_is_named_in_the_reason_and_never_between_close_options():
    res = parse_answer("The instrument is an accordian.", INSTR)
    assert res.label == "B" and "near-miss spelling 'accordian' read as 'Accordion'" in res.reason
    close = [{"label": lab, "text": t} for lab, t in zip("ABC", ["Bleep", "Sleep", "Steep"])]
    assert parse_answer("Bleap", close).label is None


def test_the_scorer_fingerprint_covers_every_scoring_module_the_parser_reads():
    """An edit to any module a parse goes through re-scores every run (the fingerprint is a score-rule
    param); a module left out would let a rule change keep stale scores."""
    import ast
    from pathlib import Path

    from lalmbench.scoring.parse import SCORER_FILES

    pkg = Path(__file__).resolve().parents[2] / "lalmbench"
    seen, todo = set(), ["scoring/parse.py"]
    while todo:
        rel = todo.pop()
        seen.add(rel)
        for node in ast.walk(ast.parse((pkg / rel).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lalmbench.scoring"):
                names = [node.module.split(".")[-1]] if node.module != "lalmbench.scoring" else \
                    [a.name for a in node.names]
                todo += [f"scoring/{n}.py" for n in names if f"scoring/{n}.py" not in seen]
    assert seen <= set(SCORER_FILES) and "scoring/answer_labels.py" in seen


SOUR = [{"label": "A", "text": "Not affected by sour"}, {"label": "B", "text": "Affected by sour"}]


@pytest.mark.parametrize("raw,label", [
    ("So it appears the person was not affected by the sour at all.", "A"),
    ("So it appears the person was clearly affected by the sour.", "B"),
    # a "Not" elsewhere does not make it the negated option
    ("They shout \"Not food!\" and it appears the person was affected by something sour.", "B"),
])
def test_options_told_apart_by_a_negation_word_are_read_only_where_the_output_says_which(raw, label):
    assert parse_answer(raw, SOUR).label == label
