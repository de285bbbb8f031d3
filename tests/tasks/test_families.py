"""NEXT, DURATION, COUNT, PRESENCE, GROUNDING, LOUDER, IMPORT: right answers, drop reasons, determinism."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lalmbench.core.io import InputError, dumps_json
from lalmbench.tasks import FAMILY_MODULES, build_items


def _b(tables, family, rows, params=None, seed=0, **kw):
    ev, cl = tables(rows, **kw)
    return build_items(family, ev, cl, params or {}, seed=seed, dataset="toy", task=family)


# --- NEXT ------------------------------------------------------------------------------------

def test_next_answer_is_following_event_or_none(tables):
    rows = [("c", 0, 1, "tone"), ("c", 2, 3, "chirp"), ("c", 5, 6, "hum"), ("c", 7, 8, "tone")]
    items, stats = _b(tables, "next", rows, {"n_options": 3, "max_items_per_clip": 9})
    got = {it["meta"]["base_text"]: (it["answer_text"], it["meta"]["answer_type"]) for it in items}
    # the repeat of "tone" at 7 s is what really follows "hum"
    assert got == {"tone": ("chirp", "event"), "chirp": ("hum", "event"), "hum": ("tone", "event")}
    rows2 = [("d", 0, 1, "tone"), ("d", 2, 3, "chirp"), ("d", 5, 6, "hum")]
    items2, st2 = _b(tables, "next", rows2, {"n_options": 3, "max_items_per_clip": 9})
    last = [it for it in items2 if it["meta"]["base_text"] == "hum"][0]
    assert last["meta"]["answer_type"] == "none"
    assert last["answer_text"] == "This is the last event, no immediate event after."
    assert [o["type"] for o in last["options"]].count("none") == 1
    assert st2["answer_type_counts"] == {"event": 2, "none": 1}
    for it in items2:                                      # distractors never include the base sound itself
        assert it["meta"]["base_text"] not in [o["text"] for o in it["options"]]


@pytest.mark.parametrize("rows,params,reason", [
    ([("c", 0, 1, "a"), ("c", 0.05, 1, "b"), ("c", 3, 4, "d"), ("c", 5, 6, "e")], {}, "candidate:onset_tie"),
    ([("c", 0, 1, "a"), ("c", 2, 3, "b"), ("c", 2.05, 3, "d"), ("c", 5, 6, "e")], {}, "candidate:onset_tie"),
    ([("c", 0, 2, "a"), ("c", 1, 3, "b"), ("c", 4, 5, "d"), ("c", 6, 7, "e")], {"allow_overlap": False},
     "candidate:overlap"),
    ([("c", 0, 1, "a"), ("c", 0.3, 2, "b"), ("c", 4, 5, "d"), ("c", 6, 7, "e")], {"min_gap_s": 0.5},
     "candidate:gap_below_min"),
    ([("c", 0, 1, "a"), ("c", 2, 3, "a"), ("c", 4, 5, "d"), ("c", 6, 7, "e")], {}, "candidate:next_is_same_sound"),
    ([("c", 0, 1, "a"), ("c", 2, 3, "b")], {"n_options": 4}, "candidate:too_few_distractors"),
])
def test_next_drop_reasons(tables, rows, params, reason):
    _, stats = _b(tables, "next", rows, dict({"n_options": 3, "max_items_per_clip": 9}, **params))
    assert stats["dropped"].get(reason, 0) >= 1, stats["dropped"]


def _next_outcome(tables, rows, **params):
    items, stats = _b(tables, "next", rows, dict({"n_options": 3, "max_items_per_clip": 9}, **params))
    return sorted((it["meta"]["base_text"], it["answer_text"]) for it in items), stats["dropped"]


LAST = "This is the last event, no immediate event after."


def test_next_equal_onsets_are_ties_on_both_sides(tables):
    # b and d start together at 2 s: which one "comes next" would depend on how they sort
    rows = [("c", 0, 1, "a"), ("c", 2, 3, "b"), ("c", 2, 3.5, "d"), ("c", 5, 6, "e"), ("c", 7, 8, "f")]
    items, dropped = _next_outcome(tables, rows)
    assert items == [("e", "f"), ("f", LAST)]
    assert dropped == {"candidate:onset_tie": 2,                 # a (next two tie), b (its next ties with it)
                       "candidate:onset_tie_before_base": 1}     # d (b starts at the same time, sorted first)
    # an exactly equal onset is a tie even with no tolerance; different onsets are not
    items, dropped = _next_outcome(tables, rows, tie_tolerance_s=0.0)
    assert items == [("e", "f"), ("f", LAST)]
    assert dropped == {"candidate:onset_tie": 2, "candidate:onset_tie_before_base": 1}


def test_next_near_ties_before_and_after_the_base(tables):
    # p starts 50 ms before x, n 80 ms after it: every base whose window holds another onset goes
    rows = [("c", 0, 1, "a"), ("c", 2.95, 4, "p"), ("c", 3.0, 4, "x"), ("c", 3.08, 4, "n"), ("c", 6, 7, "e"),
            ("c", 8, 9, "f")]
    items, dropped = _next_outcome(tables, rows)
    assert items == [("e", "f"), ("f", LAST)]
    assert dropped == {"candidate:onset_tie": 3,                 # a, p, x: their next (or the one after) is tied
                       "candidate:onset_tie_before_base": 1}     # n: x started 80 ms before it
    # with a 60 ms window n is clear (x is 80 ms away); x is not: p started 50 ms before it, which
    # only the backward look sees (x's next, n, is outside the window)
    items, dropped = _next_outcome(tables, rows, tie_tolerance_s=0.06)
    assert items == [("e", "f"), ("f", LAST), ("n", "e")]
    assert dropped == {"candidate:onset_tie": 2, "candidate:onset_tie_before_base": 1}


def test_next_onsets_exactly_one_window_apart_are_not_tied(tables):
    rows = [("c", 0, 1, "a"), ("c", 0.1, 1, "b"), ("c", 3, 4, "d"), ("c", 5, 6, "e")]
    items, dropped = _next_outcome(tables, rows)
    assert items == [("a", "b"), ("b", "d"), ("d", "e"), ("e", LAST)] and dropped == {}


def test_next_no_option_starts_inside_the_base_tie_window(tables):
    """On a random table with many near-coincident onsets, no other event of the clip (so no
    distractor and no answer) starts within tie_tolerance_s of an item's base."""
    rng = np.random.default_rng(4)
    rows = [(f"c{c}", float(on), float(on) + 0.5, f"s{int(lab)}")
            for c in range(300) for on, lab in zip(np.round(rng.uniform(0, 3, 6), 2), rng.integers(0, 9, 6))]
    items, stats = _b(tables, "next", rows, {"n_options": 3, "max_items_per_clip": 9})
    assert len(items) > 100 and stats["dropped"]["candidate:onset_tie_before_base"] > 50
    onsets: dict[str, list[float]] = {}
    for c, on, _, _ in rows:
        onsets.setdefault(c, []).append(on)
    for it in items:
        near = [on for on in onsets[it["clip_id"]] if abs(on - it["meta"]["base_onset_s"]) < 0.1]
        assert near == [it["meta"]["base_onset_s"]], (it["clip_id"], it["meta"]["base_text"], near)
        for o in it["options"]:
            if o["type"] == "event" and o["text"] != it["answer_text"]:
                assert abs(o["meta"]["onset_s"] - it["meta"]["base_onset_s"]) >= 0.1


# --- DURATION --------------------------------------------------------------------------------

def test_duration_longest_and_ratio_margin(tables):
    rows = [("c", 0, 3, "long"), ("c", 4, 5, "short"), ("d", 0, 1, "x"), ("d", 2, 3.2, "y")]
    items, stats = _b(tables, "duration", rows, {"min_ratio": 1.5})
    assert len(items) == 1 and items[0]["answer_text"] == "long" and items[0]["meta"]["duration_ratio"] == 3.0
    assert items[0]["question"] == "Which of these sounds lasts longer?"
    assert stats["dropped"]["candidate:duration_ratio_below_min"] == 1
    items, _ = _b(tables, "duration", rows, {"min_ratio": 1.5, "ask": "shortest"})
    assert items[0]["answer_text"] == "short" and items[0]["question"] == "Which of these sounds lasts shorter?"


def test_duration_drops_repeated_sounds_and_optionally_overlap(tables):
    rows = [("c", 0, 3, "tone"), ("c", 4, 5, "tone"), ("c", 6, 6.5, "hum")]
    _, stats = _b(tables, "duration", rows)
    assert stats["dropped"]["event:repeated_text"] == 2
    rows = [("c", 0, 3, "a"), ("c", 1, 1.5, "b")]
    assert len(_b(tables, "duration", rows)[0]) == 1
    _, stats = _b(tables, "duration", rows, {"allow_overlap": False})
    assert stats["dropped"] == {"candidate:overlap": 1}


# --- COUNT -----------------------------------------------------------------------------------

def test_count_true_count_and_options(tables):
    rows = [("c", 0, 1, "bark"), ("c", 2, 3, "bark"), ("c", 4, 5, "bark"), ("c", 6, 7, "car")]
    items, stats = _b(tables, "count", rows, {"max_items_per_clip": 5})
    by = {it["meta"]["text"]: it for it in items}
    assert by["bark"]["answer_text"] == "3" and by["car"]["answer_text"] == "1"
    for it in items:
        vals = [int(o["text"]) for o in it["options"]]
        assert len(set(vals)) == 4 and min(vals) >= 0 and it["meta"]["count"] in vals
    assert stats["answer_value_histogram"] == {"1": 1, "3": 1}


def test_count_rejects_touching_occurrences_and_hidden_short_ones(tables):
    rows = [("c", 0, 1, "bark"), ("c", 1.05, 2, "bark"), ("c", 4, 5, "car")]
    items, stats = _b(tables, "count", rows, {"max_items_per_clip": 5, "min_separation_s": 0.1})
    assert [it["meta"]["text"] for it in items] == ["car"]
    assert stats["dropped"] == {"candidate:occurrences_too_close": 1}
    rows = [("c", 0, 1, "bark"), ("c", 3, 3.05, "bark"), ("c", 4, 5, "car")]
    items, stats = _b(tables, "count", rows, {"max_items_per_clip": 5, "min_event_s": 0.2})
    assert [it["meta"]["text"] for it in items] == ["car"]
    assert stats["dropped"] == {"candidate:has_unusable_occurrence": 1, "event:shorter_than_min_event_s": 1}


# --- PRESENCE --------------------------------------------------------------------------------

def test_presence_is_balanced_and_negatives_are_absent(tables):
    rng = np.random.default_rng(0)
    labels = [f"sound {i}" for i in range(12)]
    rows = []
    for c in range(60):
        for j, lab in enumerate(rng.choice(labels, 4, replace=False)):
            rows.append((f"c{c:03d}", float(j * 2), float(j * 2 + 1), str(lab)))
    ev, cl = tables(rows)
    items, stats = build_items("presence", ev, cl, {}, seed=0, dataset="toy", task="p")
    present = ev.groupby("clip_id")["label"].apply(set).to_dict()
    assert stats["polarity_counts"]["present"] == stats["polarity_counts"]["absent"] == len(items) // 2
    for it in items:
        assert [o["text"] for o in it["options"]] == ["Yes", "No"]
        assert (it["answer_text"] == "Yes") == (it["meta"]["label"] in present[it["clip_id"]])
    assert stats["answer_position_histogram"]["A"] == stats["answer_position_histogram"]["B"]


def test_presence_negative_checks_events_removed_by_filters(tables):
    # clip a has a very short "hum": too short to ask about, but present, so never a negative for a
    rows = [("a", 0, 1, "tone"), ("a", 2, 2.01, "hum"), ("b", 0, 1, "hum"), ("b", 2, 3, "chirp")]
    ev, cl = tables(rows)
    for s in range(20):
        items, _ = build_items("presence", ev, cl, {"min_event_s": 0.1, "sample_seed": s}, seed=0, dataset="t", task="p")
        for it in items:
            if it["clip_id"] == "a" and it["answer_text"] == "No":
                assert it["meta"]["label"] != "hum"


# --- GROUNDING -------------------------------------------------------------------------------

def test_grounding_open_items_carry_interval(tables):
    rows = [("c", 1.25, 2.5, "tone", "a high tone"), ("c", 3, 4, "chirp"), ("c", 5, 6, "chirp"), ("d", 0, 9.5, "hum")]
    items, stats = _b(tables, "grounding", rows, {"max_items_per_clip": 5})
    assert len(items) == 1
    it = items[0]
    assert it["options"] == [] and it["answer_label"] is None and it["answer_text"] is None
    assert it["meta"]["onset_s"] == 1.25 and it["meta"]["offset_s"] == 2.5 and it["references"] == ["1.250, 2.500"]
    assert '"a high tone"' in it["question"]
    assert stats["dropped"] == {"event:repeated_text": 2, "candidate:covers_clip": 1}


# --- LOUDER ----------------------------------------------------------------------------------

def test_louder_needs_level_column_and_picks_loudest(tables):
    ev, cl = tables([("m", 0, 2, "tone"), ("m", 1, 3, "hum"), ("n", 0, 2, "a"), ("n", 1, 3, "b")])
    with pytest.raises(InputError, match="needs a level_db column"):
        build_items("louder", ev, cl, {}, seed=0, dataset="t", task="l")
    ev["level_db"] = [0.0, 6.0, 0.0, 1.0]
    items, stats = build_items("louder", ev, cl, {}, seed=0, dataset="t", task="l")
    assert len(items) == 1 and items[0]["answer_text"] == "hum" and items[0]["meta"]["level_diff_db"] == 6.0
    assert stats["dropped"] == {"candidate:level_diff_below_min": 1}


# --- all MCQ families: determinism and balance ------------------------------------------------

def _scene_rows(n_clips=200, seed=3):
    rng = np.random.default_rng(seed)
    labels = ["tone", "chirp", "noise burst", "click train", "sweep", "hum", "bark", "siren"]
    rows = []
    for c in range(n_clips):
        t = 0.0
        k = int(rng.integers(3, 7))
        for lab in rng.choice(labels, k, replace=True):
            t += rng.uniform(0.3, 1.5)
            d = rng.uniform(0.2, 2.0)
            rows.append((f"clip{c:04d}", round(t, 3), round(t + d, 3), str(lab)))
            t += d
    return rows


@pytest.mark.parametrize("family", ["order", "next", "duration", "count", "presence", "grounding"])
def test_same_seed_same_bytes_other_seed_only_moves_options(tables, family):
    ev, cl = tables(_scene_rows())
    a, sa = build_items(family, ev, cl, {}, seed=1, dataset="d", task=family)
    b, _ = build_items(family, ev.sample(frac=1, random_state=0), cl, {}, seed=1, dataset="d", task=family)
    c, _ = build_items(family, ev, cl, {}, seed=2, dataset="d", task=family)
    assert len(a) > 50
    assert "\n".join(map(dumps_json, a)) == "\n".join(map(dumps_json, b))    # row order of the input is irrelevant
    key = lambda it: (it["id"], it["question"], it["answer_text"], sorted(o["text"] for o in it["options"]))  # noqa: E731
    assert [key(x) for x in a] == [key(x) for x in c]
    if family not in ("presence", "grounding"):                               # fixed / no options
        assert [x["answer_label"] for x in a] != [x["answer_label"] for x in c]
        hist = sa["answer_position_histogram"]
        assert max(hist.values()) - min(hist.values()) <= 1, hist
    assert len({x["id"] for x in a}) == len(a)
    for it in a:                                    # options are distinct and the answer is among them
        texts = [o["text"] for o in it["options"]]
        assert len(set(texts)) == len(texts), it
        if it["answer_label"] is not None:
            assert dict((o["label"], o["text"]) for o in it["options"])[it["answer_label"]] == it["answer_text"]


@pytest.mark.parametrize("family", ["order", "next", "duration", "count", "presence", "grounding"])
def test_items_written_from_columns_are_the_item_dicts_bytes(tables, tmp_path, family):
    import orjson

    from lalmbench.core.io import json_default
    from lalmbench.core.items import write_items
    from lalmbench.tasks.options import ItemRows

    awkward = {"tone": 'a "tone", 100%', "hum": "hüm \\ 日本"}
    ev, cl = tables([(c, on, off, awkward.get(lab, lab)) for c, on, off, lab in _scene_rows(n_clips=40)])
    items, _ = build_items(family, ev, cl, {}, seed=1, dataset="d", task=family)
    write_items(tmp_path / "i.jsonl", items)
    opts = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE
    assert isinstance(items, ItemRows) and len(items) > 10
    assert (tmp_path / "i.jsonl").read_bytes() == b"".join(orjson.dumps(it, option=opts, default=json_default)
                                                           for it in items)


def test_every_registered_family_module_imports():
    from lalmbench.tasks import get_builder
    for fam in FAMILY_MODULES:
        assert callable(get_builder(fam))


def test_unknown_clip_in_events_is_an_error(tables):
    ev, cl = tables([("a", 0, 1, "tone"), ("b", 2, 3, "chirp")])
    cl = cl[cl.clip_id == "a"]
    with pytest.raises(InputError, match=r"events table row 2: clip_id 'b' is not in the clips table"):
        build_items("order", ev, cl, {}, seed=0, dataset="t", task="o")


def test_answers_agree_with_direct_recomputation_on_a_random_table(tables):
    """Every item's answer re-derived from the raw rows with plain Python (the slow, obvious way)."""
    rows = _scene_rows(n_clips=400, seed=11)
    ev, cl = tables(rows)
    by_clip: dict[str, list[tuple]] = {}
    for c, on, off, lab in rows:
        by_clip.setdefault(c, []).append((on, off, lab))
    for fam in ("order", "next", "duration", "count", "presence"):
        items, _ = build_items(fam, ev, cl, {"n_options": 3} if fam in ("order", "next", "duration") else {},
                               seed=5, dataset="d", task=fam)
        assert items, fam
        for it in items:
            evs = sorted(by_clip[it["clip_id"]])
            if fam == "order":
                first_on = {lab: min(on for on, _, l2 in evs if l2 == lab) for _, _, lab in evs}
                opts = [o["text"] for o in it["options"]]
                assert it["answer_text"] == min(opts, key=lambda t: first_on[t])
            elif fam == "next":
                base = it["meta"]["base_text"]
                i = next(j for j, e in enumerate(evs) if e[2] == base)
                truth = evs[i + 1][2] if i + 1 < len(evs) else None
                assert (it["answer_text"] if it["meta"]["answer_type"] == "event" else None) == truth
            elif fam == "duration":
                dur = {lab: off - on for on, off, lab in evs}
                assert it["answer_text"] == max((o["text"] for o in it["options"]), key=lambda t: dur[t])
            elif fam == "count":
                assert int(it["answer_text"]) == sum(1 for e in evs if e[2] == it["meta"]["text"])
            else:
                assert (it["answer_text"] == "Yes") == any(e[2] == it["meta"]["label"] for e in evs)


def test_presence_caption_negatives_avoid_paraphrases(tables):
    rows = [("a", 0, 1, "x1", "a dog barks loudly"), ("a", 2, 3, "x2", "rain falls on a roof"),
            ("b", 0, 1, "y1", "the dog is barking loudly"), ("b", 2, 3, "y2", "a car horn honks"),
            ("c", 0, 1, "z1", "birds sing in the morning"), ("c", 2, 3, "z2", "a door slams")]
    ev, cl = tables(rows)
    for s in range(15):
        items, st = build_items("presence", ev, cl, {"negative_max_jaccard": 0.5, "sample_seed": s}, seed=0,
                                dataset="t", task="p")
        for it in items:
            if it["clip_id"] == "a" and it["answer_text"] == "No":
                assert it["meta"]["text"] != "the dog is barking loudly"
            if it["clip_id"] == "b" and it["answer_text"] == "No":
                assert it["meta"]["text"] != "a dog barks loudly"


def test_unknown_param_is_an_error_naming_it(tables):
    ev, cl = tables([("a", 0, 1, "tone"), ("a", 2, 3, "chirp")])
    with pytest.raises(ValueError, match=r"task 'o' \(family order\): unknown param\(s\) \['min_gap'\]"):
        build_items("order", ev, cl, {"min_gap": 0.5}, seed=0, dataset="t", task="o")
