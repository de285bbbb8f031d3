"""Interval parsing, onset/offset errors and IoU for temporal grounding answers."""
import pytest

from lalmbench.core.io import InputError
from lalmbench.scoring.metrics.grounding import grounding_scores, interval_iou, parse_interval


@pytest.mark.parametrize("text,expected", [
    ("The dog barks from 1.2 s to 3.4 s", (1.2, 3.4)),
    ("[1.20, 3.40]", (1.2, 3.4)),
    ("00:01.2 - 00:03.4", (1.2, 3.4)),
    ("between 2 and 5 seconds", (2.0, 5.0)),
    ("It starts at 1.5 seconds and ends at 4 seconds.", (1.5, 4.0)),
    ("onset: 0.5 s, offset: 2.25 s", (0.5, 2.25)),
    ("1:05-1:10", (65.0, 70.0)),
])
def test_parse_interval(text, expected):
    assert parse_interval(text) == (expected, "ok")


@pytest.mark.parametrize("text,reason", [
    ("no idea", "no interval"), (None, "empty"), ("1-2 and 3-4", "several intervals"),
    ("It starts at 3.0s and ends at 1.0s", "offset 1.0 before onset 3.0"),
])
def test_unparseable_intervals_say_why(text, reason):
    pred, why = parse_interval(text)
    assert pred is None and why.startswith(reason)


def test_iou():
    assert interval_iou((0, 2), (1, 3)) == pytest.approx(1 / 3)
    assert interval_iou((0, 1), (2, 3)) == 0.0
    assert interval_iou((1, 2), (1, 2)) == 1.0


def test_scores_count_unparseable_as_zero_iou():
    res = grounding_scores([(1, 3), (0, 2), (5, 6)], ["1 to 3", "1-2", "nothing"])
    s = res["summary"]
    assert s["value"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert s["parse_failure_rate"] == pytest.approx(1 / 3)
    assert (s["median_onset_error_s"], s["median_offset_error_s"]) == (0.5, 0.0)
    rec = {r["metric"]: r for r in res["recalls"]}
    assert rec["recall_iou0.5"]["value"] == pytest.approx(2 / 3) and rec["recall_iou0.7"]["value"] == pytest.approx(1 / 3)
    with pytest.raises(InputError, match="item #0 has an invalid gold interval"):
        grounding_scores([(3, 1)], ["1-3"])
