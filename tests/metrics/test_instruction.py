"""MMAU-Pro's instruction-following checks, hand-worked, and the `instruction` scoring kind."""
import pandas as pd
import pytest

from lalmbench.scoring.metrics.instruction import CHECKS, check_item, count_sentences, score_instructions
from lalmbench.scoring.metrics.open import score_open


def item(tid, question="Describe the sound.", **kwargs):
    return {"id": "i", "question": question, "options": [], "meta": {"instruction": {"task_identifier": tid,
                                                                                        "kwargs": kwargs}}}


@pytest.mark.parametrize("tid, kwargs, reply, ok", [
    ("Include Keywords", {"keywords": "rain, thunder"}, "Rain and distant Thunder.", True),
    ("Include Keywords", {"keywords": "rain, thunder"}, "Rain only.", False),
    ("Include Keywords", {"keywords": "cat"}, "a category", True),  # substring, as the official check
    ("Keyword Frequency", {"keyword": "dog", "N": 2}, "Dog, dog! dogs", True),  # whole words only
    ("Keyword Frequency", {"keyword": "dog", "N": 2}, "dog", False),
    ("Forbidden Words", {"forbidden_words": "loud, noisy"}, "A quiet street.", True),
    ("Forbidden Words", {"forbidden_words": "loud, noisy"}, "Very LOUD.", False),
    ("Number Paragraphs", {"N": 2}, "one *** two", True),
    ("Number Paragraphs", {"N": 2}, "one *** two *** ", True),  # an empty paragraph is not counted
    ("Number Words (at least)", {"N": 3}, "a b c", True),
    ("Number Words (at most)", {"N": 3}, "a b c d", False),
    ("Number Words (range)", {"N1": 2, "N2": 3}, "a b c", True),
    ("Number Sentences (at least)", {"N": 2}, "It rains. It pours!", True),
    ("Number Sentences (at most)", {"N": 1}, "It rains. It pours!", False),
    ("Number Sentences (range)", {"N1": 1, "N2": 2}, "One. Two. Three.", False),
    ("Postscript", {"postscript_marker": "P.S."}, "Body.\nps: bye", True),  # letters only, any case
    ("Number Placeholder", {"N": 2}, "At [place] on [date].", True),
    ("Number Bullets", {"N": 2}, "* one\n* two", True),
    ("Number Bullets", {"N": 2}, "* one\n* two\n* three", False),
    ("Title", {}, "<<Storm>> It rains.", True),
    ("Title", {}, "Storm: it rains.", False),
    ("Minimum Number Highlighted Section", {"N": 2}, "*a* and *b*", True),
    ("Multiple Sections", {"N": 2, "section_splitter": "Section"}, "Section 1 rain Section 2 wind", True),
    ("Repeat Prompt", {}, "describe the sound. It is rain.", True),
    ("Two Responses", {}, "Rain. ****** Wind.", True),
    ("Two Responses", {}, "Rain. ****** rain.", False),  # the two must differ
    ("All Uppercase", {}, "IT RAINS.", True),
    ("All Lowercase", {}, "it Rains.", False),
    ("All-capital Words (at least)", {"N": 2}, "VERY LOUD rain", True),
    ("All-capital Words (at most)", {"N": 1}, "VERY LOUD rain", False),
    ("All-capital Words (range)", {"N1": 1, "N2": 2}, "VERY loud", True),
    ("Start Checker", {"start_phrase": "In summary"}, "In summary, rain.", True),
    ("End Checker", {"end_phrase": "Is there anything else?"}, "Rain. Is there anything else", True),
    ("Quotation", {}, ' "It rains." ', True),
    ("No Commas", {}, "Rain, wind.", False),
])
def test_checks_hand_worked(tid, kwargs, reply, ok):
    assert check_item(item(tid, **kwargs), reply) == (ok, None)


def test_every_check_is_listed_and_missing_counts_default_to_zero():
    assert len(CHECKS) == 27
    assert check_item(item("Number Words (at least)"), "") == (True, None)  # N missing: 0, as the official
    assert check_item(item("Number Words (at least)", N=None), "x") == (True, None)


def test_sentence_count_is_a_punctuation_rule():
    assert count_sentences("Mr. Smith came. He left!  Why?") == 4  # punkt would say 3 (abbreviation)
    assert count_sentences("") == 0


def test_kwargs_as_json_string_and_unknown_identifiers():
    it = {"id": "a", "question": "q", "meta": {"instruction": {"task_identifier": "Number Words (at most)",
                                                                "kwargs": '{"N": 2}'}}}
    assert check_item(it, "one two") == (True, None)
    assert check_item(item("Rhyme Scheme"), "x") == (None, "instruction:unknown_task_identifier")
    assert check_item({"id": "b", "question": "q", "meta": {}}, "x") == (None, "instruction:missing_task_identifier")


def test_score_instructions_excludes_uncheckable_items_and_counts_failed_generation_as_not_followed():
    items = [dict(item("No Commas"), id="1"), dict(item("No Commas"), id="2"), dict(item("Rhyme"), id="3"),
             dict(item("All Lowercase"), id="4")]
    per, head = score_instructions(items, ["a b", "a, b", "x", None])
    assert list(per["followed"]) == [True, False, None, False]
    assert (head["value"], head["n"], head["excluded"]) == (pytest.approx(1 / 3), 3,
                                                            {"instruction:unknown_task_identifier": 1})


def test_instruction_kind_in_score_open_flags_the_exclusions():
    items = [dict(item("No Commas"), id="1"), dict(item("Rhyme"), id="2")]
    preds = pd.DataFrame({"id": ["1", "2"], "raw_output": ["fine", "x"], "error": [None, None]})
    dec, m, extra = score_open("instruction", items, preds, {})
    assert (m["metric"], m["value"], m["n"]) == ("instruction_following_rate", 1.0, 1)
    assert m["flags"] == ["instruction:unknown_task_identifier=1"] and extra == []
    assert list(dec["task_identifier"]) == ["No Commas", "Rhyme"]


@pytest.mark.parametrize("kwargs", [{"N": "many"}, {"N": [3]}, {"N": 10 ** 400}, {"N": {"n": 1}}, {"N": "inf"},
                                    {"N": True}])
def test_instruction_kwargs_of_the_wrong_type_leave_the_item_out_counted(kwargs):
    items = [dict(item("Number Words (at least)", **kwargs), id="bad"), dict(item("No Commas"), id="ok")]
    per, head = score_instructions(items, ["a b", "a b"])
    assert list(per["followed"]) == [None, True]
    assert (head["n"], head["excluded"]) == (1, {"instruction:unreadable_kwargs": 1})


@pytest.mark.parametrize("tid, kwargs", [("Keyword Frequency", {"keyword": ["a", "b"], "N": 1}),
                                         ("Start Checker", {"start_phrase": {"x": 1}}),
                                         ("Forbidden Words", {"forbidden_words": {"a": 1}})])
def test_a_list_or_mapping_where_a_phrase_is_due_is_unreadable(tid, kwargs):
    assert check_item(item(tid, **kwargs), "a b") == (None, "instruction:unreadable_kwargs")


def test_kwargs_text_that_is_no_json_mapping_is_unreadable():
    deep = "[" * 100_000 + "]" * 100_000
    for text in ("{'N': 2}", deep):
        it = {"id": "a", "question": "q", "meta": {"instruction": {"task_identifier": "No Commas", "kwargs": text}}}
        assert check_item(it, "a b") == (None, "instruction:unreadable_kwargs")
