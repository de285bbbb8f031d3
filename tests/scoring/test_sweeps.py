"""CircularEval, prompt spread and determinism on real scoring code paths with fake model answers."""
import math

import numpy as np
import pandas as pd
import pytest

from lalmbench.core.io import InputError
from lalmbench.scoring.mcq import score_mcq
from lalmbench.checks.sweeps import circular_metrics, circular_shifts, determinism, prompt_spread

TEXTS = ["dog", "cat", "rain", "engine"]


def _items(n=8):
    return [{"id": f"q{i}", "question": "What is heard?", "answer_label": "ABCD"[i % 4],
             "answer_text": TEXTS[i % 4], "meta": {"family": "x"},
             "options": [{"label": lab, "text": t, "type": "event", "meta": {}} for lab, t in zip("ABCD", TEXTS)]}
            for i in range(n)]


def test_shifts_rotate_texts_and_move_gold():
    shifted = circular_shifts(_items(2))
    assert [s["id"] for s in shifted[:4]] == ["q0@shift0", "q0@shift1", "q0@shift2", "q0@shift3"]
    s1 = shifted[1]
    assert [o["text"] for o in s1["options"]] == ["engine", "dog", "cat", "rain"]
    assert [o["label"] for o in s1["options"]] == list("ABCD")
    assert s1["answer_label"] == "B" and s1["answer_text"] == "dog"
    assert s1["meta"] == {"family": "x", "circular_base_id": "q0", "circular_shift": 1}
    # gold visits every position exactly once per item
    assert sorted(s["answer_label"] for s in shifted[:4]) == list("ABCD")
    assert len(circular_shifts(_items(2), k=2)) == 4 and len(circular_shifts(_items(2), k=9)) == 8
    with pytest.raises(InputError, match="already a shifted item"):
        circular_shifts(shifted)


def _score(shifted, answer_fn):
    preds = pd.DataFrame({"id": [s["id"] for s in shifted], "raw_output": [answer_fn(s) for s in shifted]})
    dec, _ = score_mcq(shifted, preds)
    return circular_metrics(dec)


def test_always_a_model_has_zero_circular_accuracy_and_strong_position_bias():
    res = _score(circular_shifts(_items(8)), lambda s: "A")
    summ = res["summary"]
    assert summ["value"] == 0.0 and summ["n"] == 8
    assert summ["plain_accuracy"] == pytest.approx(0.25)  # what a single ordering would report
    assert summ["position_p"] < 1e-10
    hist = res["pred_position_hist"].set_index("position")
    assert hist.loc[0, "n_predicted"] == 32 and hist.loc[1, "n_predicted"] == 0
    by_gold = res["by_gold_position"].set_index("gold_pos")
    assert by_gold.loc[0, "value"] == 1.0 and by_gold.loc[3, "value"] == 0.0
    assert summ["consistency_rate"] == 0.0


def test_perfect_text_reader_passes_every_shift():
    res = _score(circular_shifts(_items(8)), lambda s: s["answer_text"])
    s = res["summary"]
    assert s["value"] == 1.0 and s["consistency_rate"] == 1.0 and s["spread_by_shift"] == 0.0
    assert s["chance"] == pytest.approx(0.25 ** 4)
    assert s["position_p"] == pytest.approx(1.0)


def test_one_failed_shift_fails_the_item():
    def ans(s):
        return "rain" if s["id"] == "q1@shift2" else s["answer_text"]
    res = _score(circular_shifts(_items(4)), ans)
    assert res["summary"]["value"] == 0.75 and res["summary"]["n_correct"] == 3
    assert list(res["by_shift"]["value"]) == [1.0, 1.0, 0.75, 1.0]


def test_missing_shift_is_an_error():
    shifted = circular_shifts(_items(2))[:-1]
    preds = pd.DataFrame({"id": [s["id"] for s in shifted], "raw_output": "A"})
    dec, _ = score_mcq(shifted, preds)
    with pytest.raises(InputError, match="item 'q1' has 3 shifts"):
        circular_metrics(dec)


def test_prompt_spread_matches_numpy():
    t = pd.DataFrame({"model": "m", "dataset": "d", "task": "t", "condition": "audio", "metric": "accuracy",
                      "prompt": ["p1", "p2", "p3"], "value": [0.5, 0.7, 0.65]})
    out = prompt_spread(pd.concat([t, t.assign(model="solo").iloc[:1]])).set_index("model")
    assert out.loc["m", "std"] == pytest.approx(np.std([0.5, 0.7, 0.65], ddof=1))
    assert (out.loc["m", "min_prompt"], out.loc["m", "max_prompt"]) == ("p1", "p2")
    assert out.loc["m", "range"] == pytest.approx(0.2)
    assert out.loc["solo", "n_prompts"] == 1 and math.isnan(out.loc["solo", "std"])


def test_determinism_rate_and_id_check():
    a = pd.DataFrame({"id": ["1", "2", "3", "4"], "raw_output": ["A", "B", None, "The answer is C"]})
    b = pd.DataFrame({"id": ["4", "3", "2", "1"], "raw_output": ["The answer is C.", None, "B", "A"]})
    res = determinism(a, b)
    assert (res["n"], res["n_identical"], res["value"]) == (4, 3, 0.75)
    assert res["examples"] == [{"id": "4", "a": "The answer is C", "b": "The answer is C."}]
    with pytest.raises(InputError, match="id '5' is in only one"):
        determinism(a, pd.concat([b, pd.DataFrame({"id": ["5"], "raw_output": ["A"]})]))
