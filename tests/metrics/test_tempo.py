"""tempo: MIREX Accuracy1/Accuracy2 of the first number of an open reply."""
from __future__ import annotations

import pandas as pd
import pytest

from lalmbench.scoring.metrics.open import score_open
from lalmbench.scoring.metrics.tempo import parse_bpm, score_tempi


@pytest.mark.parametrize("reply,bpm", [("128", 128.0), ("About 127.5 BPM.", 127.5), ("120-130 bpm", 120.0),
                                       ("no idea", None), (None, None), ("tempo: 0.5x of 140", 0.5)])
def test_first_number_is_the_estimate(reply, bpm):
    assert parse_bpm(reply) == bpm


def test_accuracy1_within_four_percent_accuracy2_forgives_octaves():
    refs = [["126"], ["126"], ["126"], ["86"], ["0.0"], ["100"]]
    per, rows, info = score_tempi(refs, ["130", "131.1", "252 BPM", "43", "120", "fast"])
    assert [p["correct"] for p in per] == [True, False, False, False, None, False]
    assert [p["accuracy2"] for p in per] == [True, False, True, True, None, False]
    assert rows[0]["metric"] == "tempo_accuracy1" and rows[0]["n"] == 5 and rows[0]["value"] == 1 / 5
    assert rows[1]["value"] == 3 / 5 and rows[0]["parse_failure_rate"] == 1 / 5
    assert info["excluded"] == {"no_reference_tempo": 1}


def test_score_open_tempo_reports_both_accuracies_and_flags_left_out_items():
    items = [{"id": "a", "references": ["126"]}, {"id": "b", "references": ["0.0"]}]
    preds = pd.DataFrame({"id": ["a", "b"], "raw_output": ["63 BPM", "120"], "error": [None, None]})
    dec, metrics, extra = score_open("tempo", items, preds, {})
    assert metrics["metric"] == "tempo_accuracy1" and metrics["value"] == 0.0 and metrics["n"] == 1
    assert extra[0]["metric"] == "tempo_accuracy2" and extra[0]["value"] == 1.0
    assert metrics["flags"] == ["no_reference_tempo=1"] and dec["tempo_status"].tolist() == ["read", "no_reference_tempo"]
