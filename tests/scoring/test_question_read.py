"""Readings that need the item's question (lalmbench.scoring.question_read), on small exact cases."""
import pytest

from lalmbench.scoring.parse import parse_answer
from lalmbench.scoring.question_read import echoed_negations, polar_content

YES_NO = [{"label": "A", "text": "Yes"}, {"label": "B", "text": "No"}]
SOUNDS = [{"label": "A", "text": "Dog barking"}, {"label": "B", "text": "Flute"}, {"label": "C", "text": "Piano"}]


def test_a_yes_no_question_keeps_its_own_words_in_order():
    assert polar_content("Is this man telling the truth?") == (["man", "tell", "truth"], {"man"})
    assert polar_content("Did the bird finally listen to the woman?") == (["bird", "final", "listen", "woman"],
                                                                          {"bird", "final"})


@pytest.mark.parametrize("question", ["Is the speaker male or female?", "Isn't the speaker happy?",
                                      "Which speaker is happy?"])
def test_choices_negated_and_open_questions_are_no_yes_no_question(question):
    assert polar_content(question) is None


def test_only_the_negation_the_question_asked_for_is_echoed():
    question = "Which instrument is not present in this piece?"
    text = "The piano is not loud. The instrument not present here is the flute."
    (a, b), = echoed_negations(question, text)
    assert text[a:b] == "not" and text[b:].startswith(" present")


@pytest.mark.parametrize("raw,label", [
    ("I believe he is not telling the truth.", "B"),
    ("So, I conclude the man is telling the truth.", "A"),
    ("Clearly, the man was never telling the truth.", "B"),
    ("I can say he is not telling the truth but instead making a joke.", "B"),
])
def test_a_restated_yes_no_question_is_read(raw, label):
    res = parse_answer(raw, YES_NO, question="Is this man telling the truth?")
    assert (res.label, res.status) == (label, "conclusion")


@pytest.mark.parametrize("raw", [
    "He might be telling the truth.",                 # a hedge
    "The woman is telling the truth.",                # another subject, the question's last word unsaid
    "He is not lying, so he is not hiding the truth.",  # two negations
    "It is unclear whether he is telling the truth.",
    "The speaker sounds calm.",                        # no restatement
])
def test_statements_that_do_not_restate_the_question_plainly_stay_unread(raw):
    assert parse_answer(raw, YES_NO, question="Is this man telling the truth?").label is None


def test_without_the_question_nothing_is_read_in_its_words():
    raw = "The instrument not present in this piece is the flute."
    assert parse_answer(raw, SOUNDS).label is None
    assert parse_answer(raw, SOUNDS, question="Which instrument is not present in this piece?").label == "B"


def test_scoring_reads_with_each_items_question():
    import pandas as pd

    from lalmbench.scoring.mcq import score_mcq

    items = [{"id": "q1", "question": "Which instrument is not present in this piece?", "options": SOUNDS,
              "answer_label": "B"},
             {"id": "q2", "question": "Which instrument is played?", "options": SOUNDS, "answer_label": "B"}]
    raw = "The instrument not present in this piece is the flute."
    decisions, metrics = score_mcq(items, pd.DataFrame({"id": ["q1", "q2"], "raw_output": [raw, raw]}))
    assert decisions["pred_label"].tolist() == ["B", None]
    assert decisions["parse_reason"].iloc[0].endswith("(the question's own negation)")
    assert metrics["n_correct"] == 1


def test_a_question_word_with_a_negating_prefix_answers_no_and_options_may_give_their_reasons():
    options = [{"label": "A", "text": 'Yes, "Driver" is not a word.'}, {"label": "B", "text": 'No. "Driver" is a word.'}]
    raw = "The man then corrects her. Therefore, the woman's answer is incorrect."
    assert parse_answer(raw, options, question="Is this woman's answer correct?").label == "B"
    assert parse_answer("Therefore, the woman's answer is correct.", options,
                        question="Is this woman's answer correct?").label == "A"


def test_a_label_its_own_sentence_rejects_is_not_read():
    assert parse_answer("Option A is not correct.", SOUNDS).label is None
    assert parse_answer("Option A is not correct. The flute plays the melody.", SOUNDS).label == "B"


COUNTS = [{"label": "1", "text": "4"}, {"label": "2", "text": "3"}, {"label": "3", "text": "2"},
          {"label": "4", "text": "1"}]


def test_a_number_that_is_a_label_and_a_count_is_the_count_when_the_question_asks_how_many():
    raw = "The audio has **2** speakers."
    assert parse_answer(raw, COUNTS).label is None
    assert parse_answer(raw, COUNTS, question="How many speakers are in the audio?").label == "3"
    assert parse_answer(raw, COUNTS, question="Which option describes the audio?").label is None


def test_the_label_may_be_meant_where_the_output_counts_its_options_text():
    raw = "There are **4** distinct sounds: sirens, shouting, a crash, glass.\n\nTherefore, the correct answer is **1**."
    assert parse_answer(raw, COUNTS, question="How many distinct sounds are heard?").label is None
