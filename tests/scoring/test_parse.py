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


def _opts(*texts):
    return [{"label": "ABCDEFGH"[i], "text": t} for i, t in enumerate(texts)]


YN = _opts("Yes", "No")
ANIMALS = _opts("Cat", "Dog", "Bird")
STRINGS = _opts("Piano", "Violin", "Flute")
PERC = _opts("percussion", "percussion and bass", "bass")
CHORDS = _opts("C#:maj", "A:7/1", "G:min/b3", "Bm")
# issue 38's families (2.4.0): (why, raw, options, labels shown, label, status or None)
RULES_2_4 = [
    # an option that is a negation word, stated as the answer, is that option
    ("'The answer is No' after reasoning", "Let me think. The speaker sounds calm.\nThe answer is No", YN, True, "B",
     None),
    ("'The answer is No' after a negated sentence", "Based on the audio, there is no dog barking. The answer is No",
     YN, True, "B", None),
    ("the same with the labels hidden", "Let me think. The speaker sounds calm.\nThe answer is No", YN, False, "B",
     None),
    ("'No' beside a 'Not sure' option", "There is no second speaker in the recording. The answer is No.",
     _opts("Yes", "No", "Not sure"), True, "B", None),
    ("'the answer is not No' stays negated", "The answer is not No.", YN, True, None, "unparseable"),
    # a committed answer after a refusal or doubt is that answer
    ("quoted tool output, then the answer", "Tool output: cannot hear the audio directly. Using the transcript, the "
     "speaker is happy.\nThe answer is A", _opts("Happy", "Sad", "Angry"), True, "A", "label-pattern"),
    ("'cannot directly access the audio, but the tool reports'", "I cannot directly access the audio, but the "
     "analysis tool reports a dog. The answer is B", ANIMALS, True, "B", "label-pattern"),
    ("'As a language model, I cannot determine ... However, option A is the only possible answer'",
     "As a language model, I cannot determine the exact instrument. However, option A is the only possible answer.",
     STRINGS, True, "A", "label-pattern"),
    ("a refusal alone stays a refusal", "I'm sorry, but I cannot hear the audio.", ANIMALS, True, None, "non-answer"),
    ("a guess after a refusal is no answer", "I can't hear any sound in the clip, so I'd guess B.", ANIMALS, True,
     None, "non-answer"),
    ("a hedged answer after a refusal is no answer", "I cannot hear the audio. The answer might be B.", ANIMALS, True,
     None, "non-answer"),
    ("a negated answer after a refusal is no answer", "I cannot hear the audio. The answer is not B.", ANIMALS, True,
     None, "non-answer"),
    ("the pick made when pressed after a refusal is that pick", "There is no audio provided, so I can't answer. If I "
     "had to pick, B.", ANIMALS, True, "B", "label-pattern"),
    ("a guess between two after a refusal is no pick", "I cannot hear the audio. If I had to guess, it would be B or "
     "C.", ANIMALS, True, None, "non-answer"),
    ("two labels after a refusal are no pick", "I cannot hear the audio. The answer is B or C.", ANIMALS, True, None,
     "non-answer"),
    ("a pick under a supposition after a refusal is no answer", "I cannot hear the audio. If the sound were a bark, "
     "the answer would be B.", ANIMALS, True, None, "non-answer"),
    ("a pick that names another option after it is no pick", "None of the options fit. The best option would be Dog, "
     "though a Cat is possible too.", ANIMALS, True, None, "non-answer"),
    ("a bare numeral after a refusal that is one option's label and another's text stays ambiguous",
     "I cannot hear the audio. The answer is 4.", [{"label": str(i + 1), "text": t} for i, t in enumerate("4321")],
     True, None, "non-answer"),
    ("the same in a boxed answer", "I cannot hear the audio. Final Answer: $\\boxed{4}$",
     [{"label": str(i + 1), "text": t} for i, t in enumerate("4321")], True, None, "non-answer"),
    ("options described after a refusal are no pick", "I'm sorry, I cannot listen to the audio. Option A is a cat, "
     "option B is a dog.", ANIMALS, True, None, "non-answer"),
    ("a conclusion naming one option after a refusal is the pick, though called no definite answer", "As a language "
     "model, the sound is most likely a dog, but with the recording unclear, there is no definite answer.", ANIMALS,
     True, "B", "conclusion"),
    ("a conclusion hedged after a refusal is no pick", "I cannot hear the audio. The sound might most likely be a "
     "dog.", ANIMALS, True, None, "non-answer"),
    ("a doubt about the audio after the answer withdraws it", "The answer is B. However, I cannot hear the audio "
     "clearly.", ANIMALS, True, None, "non-answer"),
    ("the options' own non-answer, then a doubt that agrees with it", "The correct answer is **B. I do not have an "
     "answer**. It is impossible to determine the speaker's plan based on the audio provided.",
     _opts("Travel", "I do not have an answer", "Work"), True, "B", "label-pattern"),
    # a pick after "none of the options"
    ("'Selecting \"violin\" as the least-wrong option'", "None of the choices properly reflect the style. Selecting "
     "\"violin\" as the least-wrong option.", STRINGS, False, "B", "conclusion"),
    ("'I'd choose X' after 'none of the options'", "None of the options match exactly. I'd choose Violin.", STRINGS,
     True, "B", None),
    ("'the closest option is X' after 'none of the options'", "None of the options fit well. The closest option is "
     "Violin.", STRINGS, True, "B", None),
    ("'none of the options' alone", "None of the options match the sound.", STRINGS, True, None, "non-answer"),
    # an explicit answer line is not over-read by a later description that widens it
    ("'Answer: percussion' then 'percussion and bass'", "Answer: percussion\nThe instruments are percussion and bass.",
     PERC, False, "A", "conclusion"),
    ("the same with the labels shown", "Answer: percussion\nThe instruments are percussion and bass.", PERC, True, "A",
     "conclusion"),
    ("'The answer is percussion.' then 'percussion and bass'", "The answer is percussion. The instruments are "
     "percussion and bass.", PERC, False, "A", "conclusion"),
    ("a later sentence naming another option still blocks the answer line", "Answer: percussion\nThe instruments are "
     "drums and bass.", PERC, False, None, "unparseable"),
    # option texts with ':', '/', '#', and JSON answers
    ("a chord whose text opens with a label ('A:7/1')", "The chord played in the audio is A:7/1.", CHORDS, True, "B",
     None),
    ("a JSON answer in a code fence after reasoning", "The root is B and the third is D, a minor triad.\n\n```json\n"
     "{\"chord\": \"Bm\"}\n```", CHORDS, True, "D", "conclusion"),
    ("a JSON answer after reasoning naming other chords", "The harmony moves between G:min/b3 and Bm, but the held "
     "chord is C#:maj.\n```json\n{\"answer\": \"C#:maj\", \"confidence\": 0.9}\n```", CHORDS, True, "A", "conclusion"),
    ("the answer field of a JSON object, not its reasoning", "{\"reasoning\": \"It has a minor third, not the "
     "major C#:maj.\", \"answer\": \"Bm\"}", CHORDS, False, "D", "conclusion"),
    ("a JSON answer field holding a label", "Dominant seventh on A.\n```json\n{\"answer\": \"B\"}\n```", CHORDS, True,
     "B", "label-pattern"),
    ("the same with the labels hidden is no answer", "Dominant seventh on A.\n```json\n{\"answer\": \"B\"}\n```",
     CHORDS, False, None, "unparseable"),
]


@pytest.mark.parametrize("why,raw,options,shown,label,status", RULES_2_4, ids=[c[0] for c in RULES_2_4])
def test_rules_of_2_4(why, raw, options, shown, label, status):
    res = parse_answer(raw, options, labels_shown=shown)
    assert res.label == label, res.reason
    if status is not None:
        assert res.status == status, res.reason


SOUR = [{"label": "A", "text": "Not affected by sour"}, {"label": "B", "text": "Affected by sour"}]


@pytest.mark.parametrize("raw,label", [
    ("So it appears the person was not affected by the sour at all.", "A"),
    ("So it appears the person was clearly affected by the sour.", "B"),
    # a "Not" elsewhere does not make it the negated option
    ("They shout \"Not food!\" and it appears the person was affected by something sour.", "B"),
])
def test_options_told_apart_by_a_negation_word_are_read_only_where_the_output_says_which(raw, label):
    assert parse_answer(raw, SOUR).label == label


CHORDS = [{"label": lab, "text": t} for lab, t in zip("ABCD", ("A:min/P5", "E:maj/P1", "D:maj/M3", "G:maj/P1"))]


@pytest.mark.parametrize("raw,label", [
    ("A minor", "A"),
    ("The chord played is E major.", "B"),
    ("It is a major chord.", None),  # "a major" is no root: the name is matched case-sensitively
    ("There is a minor change in the voicing, so the answer is g:maj/p1", "D"),
    ("D major seventh", None),  # D:maj7 is no option, and D:maj/M3 is no seventh
])
def test_a_chord_in_harte_notation_is_named_by_its_root_and_quality(raw, label):
    assert parse_answer(raw, CHORDS).label == label



TIMES_OPTS = _opts("1 time", "4 times", "2 times", "3 times")
NO_YES = _opts("No", "Yes")

# (output, options, label): a count of times in one word; "no" in lower case closing an answer phrase
ONE_WORD_ANSWERS = [
    ("As the melody is B-B-D-B B-B, it appears once in the audio.", TIMES_OPTS, "A"),
    ("The bell rings twice.", TIMES_OPTS, "C"),
    ("Once upon a time there was a bell; it rings 4 times.", TIMES_OPTS, "B"),
    ("The drums start at once and the bell rings 3 times.", TIMES_OPTS, "D"),
    ('Step 1: The man reads the word.\nSo, the answer to the question "Did the man misread the word?" is no.', NO_YES,
     "A"),
    ("Step 1: The man reads the word.\nSo, the answer is no.", NO_YES, "A"),
    ("There is no way to tell from this recording.", NO_YES, None),
]


def test_one_word_answers_name_their_option():
    assert [parse_answer(raw, opts, labels_shown=True).label for raw, opts, _ in ONE_WORD_ANSWERS] \
        == [label for *_, label in ONE_WORD_ANSWERS]
