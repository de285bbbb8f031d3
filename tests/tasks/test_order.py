"""ORDER family: right answers, each drop reason, determinism and answer balance."""
from __future__ import annotations

import numpy as np
import pytest

from lalmbench.core.io import InputError, dumps_json
from lalmbench.tasks import build_items
from lalmbench.core.items import make_item



def _build(tables, rows, params=None, seed=0, **kw):
    ev, cl = tables(rows, **kw)
    return build_items("order", ev, cl, params or {}, seed=seed, dataset="toy", task="order")


def test_answer_is_earliest_event_and_uses_caption_else_label(tables):
    items, stats = _build(tables, [("c1", 4.0, 5.0, "chirp"), ("c1", 0.5, 1.5, "tone", "a high-pitched tone")],
                          {"n_options": 2})
    assert len(items) == 1
    it = items[0]
    assert it["answer_text"] == "a high-pitched tone"
    assert sorted(o["text"] for o in it["options"]) == ["a high-pitched tone", "chirp"]
    assert it["audio_path"] == "audio/c1.wav" and it["question"] == "Which of these sounds happens first?"
    assert it["meta"]["gap_s"] == pytest.approx(3.5) and it["meta"]["overlap"] is False
    # same shape as the contract helper produces
    ref = make_item(id=it["id"], task="order", dataset="toy", clip_id="c1", audio_path="audio/c1.wav",
                    question=it["question"], options=it["options"], answer_label=it["answer_label"],
                    meta=it["meta"])
    assert ref == it
    assert stats["rows_read"] == 2 and stats["items_written"] == 1 and stats["dropped"] == {}


def test_ask_last_picks_latest_of_three(tables):
    rows = [("c", 0, 1, "tone"), ("c", 2, 3, "chirp"), ("c", 6, 7, "click train")]
    items, _ = _build(tables, rows, {"n_options": 3, "ask": "last", "max_items_per_clip": 5})
    assert len(items) == 1
    assert items[0]["answer_text"] == "click train"
    assert items[0]["question"] == "Which of these sounds happens last?"


@pytest.mark.parametrize("rows,params,reason", [
    ([("c", 0.0, 1.0, "tone"), ("c", 0.05, 1.0, "chirp")], {"allow_overlap": True}, "candidate:onset_tie"),
    ([("c", 0.0, 0.2, "tone"), ("c", 0.3, 1.0, "chirp")], {"min_gap_s": 0.5}, "candidate:gap_below_min"),
    ([("c", 0.0, 3.0, "tone"), ("c", 1.0, 2.0, "chirp")], {}, "candidate:overlap"),
    ([("c", 0.0, 0.1, "tone"), ("c", 3.0, 4.0, "chirp")], {"min_event_s": 0.5}, "event:shorter_than_min_event_s"),
    ([("c", 0.0, 1.0, "tone")], {}, "clip:too_few_events"),
    ([("c", 0.0, 1.0, "Dog bark."), ("c", 3.0, 4.0, "dog  bark")], {}, "event:repeat_not_first"),
    ([("c", 0.0, 1.0, "tone"), ("c", 3.0, 4.0, "tone"), ("c", 5, 6, "chirp")], {"repeats": "drop"},
     "event:repeated_text"),
])
def test_each_drop_reason_is_counted(tables, rows, params, reason):
    items, stats = _build(tables, rows, params)
    assert items == []
    assert stats["dropped"].get(reason, 0) >= 1, stats["dropped"]


def test_overlap_allowed_is_recorded_in_meta(tables):
    items, _ = _build(tables, [("c", 0.0, 3.0, "tone"), ("c", 1.0, 2.0, "chirp")], {"allow_overlap": True})
    assert len(items) == 1
    assert items[0]["meta"]["overlap"] is True and items[0]["meta"]["overlap_s"] == pytest.approx(1.0)
    assert items[0]["answer_text"] == "tone"


def test_repeated_sound_uses_first_occurrence(tables):
    rows = [("c", 0.0, 1.0, "tone"), ("c", 3.0, 4.0, "chirp"), ("c", 6.0, 7.0, "tone")]
    items, stats = _build(tables, rows)
    assert len(items) == 1 and items[0]["answer_text"] == "tone"
    assert items[0]["meta"]["repeats_in_clip"] is True
    assert stats["dropped"] == {"event:repeat_not_first": 1}


def _many_rows(n_clips=300):
    rng = np.random.default_rng(5)
    labels = ["tone", "chirp", "noise burst", "click train", "sweep", "hum"]
    rows = []
    for c in range(n_clips):
        t = 0.0
        for lab in rng.permutation(labels)[:5]:
            t += rng.uniform(0.3, 1.5)
            d = rng.uniform(0.2, 1.0)
            rows.append((f"clip{c:04d}", round(t, 3), round(t + d, 3), str(lab)))
            t += d
    return rows


def test_same_seed_byte_identical_different_seed_reorders_options_only(tables):
    rows = _many_rows()
    a, _ = _build(tables, rows, {"n_options": 3}, seed=1)
    b, _ = _build(tables, rows, {"n_options": 3}, seed=1)
    c, _ = _build(tables, rows, {"n_options": 3}, seed=2)
    assert "\n".join(map(dumps_json, a)) == "\n".join(map(dumps_json, b))
    assert [x["id"] for x in a] == [x["id"] for x in c]
    assert [x["answer_text"] for x in a] == [x["answer_text"] for x in c]
    assert all(sorted(o["text"] for o in x["options"]) == sorted(o["text"] for o in y["options"])
               for x, y in zip(a, c))
    assert [x["answer_label"] for x in a] != [x["answer_label"] for x in c]


def test_answer_positions_balanced(tables):
    items, stats = _build(tables, _many_rows(), {"n_options": 3, "max_items_per_clip": 3})
    hist = stats["answer_position_histogram"]
    assert set(hist) == {"A", "B", "C"} and max(hist.values()) - min(hist.values()) <= 1
    assert stats["chi_square"]["n_options=3"]["p"] > 0.99
    for it in items:   # every answer really is the earliest option
        onsets = {o["label"]: o["meta"]["onset_s"] for o in it["options"]}
        assert onsets[it["answer_label"]] == min(onsets.values())


def test_bad_rows_raise_naming_the_row(tables):
    with pytest.raises(InputError, match=r"row 2: onset_s=5.0, offset_s=1.0"):
        _build(tables, [("c", 0.0, 1.0, "tone"), ("c", 5.0, 1.0, "chirp")])
    with pytest.raises(InputError, match=r"row 1: onset_s=nan"):
        _build(tables, [("c", float("nan"), 1.0, "tone")])


def test_ask_last_never_answers_a_sound_that_recurs_later(tables):
    # tone at 0 s and again at 8 s, chirp at 4 s: "last" must not be answered by first onsets
    rows = [("c", 0, 1, "tone"), ("c", 4, 5, "chirp"), ("c", 8, 9, "tone"), ("c", 6, 7, "hum")]
    items, stats = _build(tables, rows, {"ask": "last", "max_items_per_clip": 9})
    assert stats["dropped"]["event:repeated_text"] == 2
    assert [it["answer_text"] for it in items] == ["hum"]
    with pytest.raises(ValueError, match="ask 'last' with repeats 'first'"):
        _build(tables, rows, {"ask": "last", "repeats": "first"})


def test_overlap_tolerance_treats_small_overlaps_as_touching(tables):
    rows = [("c", 0.0, 1.05, "tone"), ("c", 1.0, 2.0, "chirp")]
    assert _build(tables, rows)[1]["dropped"] == {"candidate:overlap": 1}
    items, _ = _build(tables, rows, {"overlap_tolerance_s": 0.1})
    assert len(items) == 1 and items[0]["meta"]["overlap_s"] == pytest.approx(0.05)
