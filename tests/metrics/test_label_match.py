"""label_match: an open reply is right when it names the gold label and no other label of the task."""
from __future__ import annotations

import pandas as pd
import pytest

from lalmbench.scoring.metrics.label import named_labels, score_labels
from lalmbench.scoring.metrics.open import score_open

LABELS = ["dog", "chirping_birds", "clock_tick", "clock_alarm", "rain", "train", "crying_baby"]


@pytest.mark.parametrize("reply,named", [
    ("dog", ["dog"]), ("A dog is barking.", ["dog"]), ("DOG!", ["dog"]), ("chirping birds", ["chirping_birds"]),
    ("Chirping-birds", ["chirping_birds"]), ("a train passing in the rain", ["rain", "train"]),
    ("dogs barking", []), ("hotdog", []), ("clock tick", ["clock_tick"]), ("clock alarm or clock tick",
                                                                        ["clock_tick", "clock_alarm"]),
    ("crying baby", ["crying_baby"]), ("", []), (None, []), ("brain", [])])
def test_named_labels_are_whole_words(reply, named):
    assert sorted(named_labels(reply, LABELS)) == sorted(named)


def test_one_label_named_and_it_is_the_gold_one():
    refs = [["dog"], ["rain"], ["train"], ["clock_tick"]]
    per, head = score_labels(refs, ["It sounds like a dog.", "rain and a train", "", "Clock tick."], LABELS)
    assert [p["correct"] for p in per] == [True, False, False, True]
    assert [p["label_status"] for p in per] == ["one_label", "several_labels", "no_label", "one_label"]
    assert head["value"] == 0.5 and head["parse_failure_rate"] == 0.25 and head["ci_low"] < 0.5 < head["ci_high"]


def test_score_open_label_match_takes_the_label_set_from_the_references():
    items = [{"id": "a", "references": ["dog"]}, {"id": "b", "references": ["rain"]}]
    preds = pd.DataFrame({"id": ["a", "b"], "raw_output": ["a dog, not rain", "rain"], "error": [None, None]})
    dec, metrics, extra = score_open("label_match", items, preds, {})
    assert dec["correct"].tolist() == [False, True] and metrics["metric"] == "label_accuracy"
    assert metrics["n_labels"] == 2 and metrics["value"] == 0.5
