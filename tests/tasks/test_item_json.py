"""Items written from their columns (ItemRows) are byte for byte what orjson writes for each item dict."""
from __future__ import annotations

import numpy as np
import orjson

from lalmbench.core.io import json_default
from lalmbench.core.items import write_items
from lalmbench.tasks.options import ItemRows, emit

OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE


def _per_item(items) -> bytes:
    return b"".join(orjson.dumps(it, option=OPTS, default=json_default) for it in items)


def test_awkward_values_are_written_as_orjson_writes_them(tmp_path):
    texts = np.array([['say "hi", then \\ leave', "100% sure", '","'], ["é ü 日本", "tab\there", ""],
                      ["x", None, "z"]], dtype=object)
    items = emit(ids=["a", "b", "c"], task="t%s", dataset="d", clip_ids=["c1", "c1", "c2"],
                 audio_paths=["p/1.wav", "p/1.wav", "p/2.wav"], questions=["q %b ?", 'q "2"', "q3"],
                 opt_text=texts, opt_type="event", gold_pos=np.array([0, 2, 1]),
                 opt_meta={"onset_s": np.array([[0.1, 1e-7, 1e17], [np.nan, -0.0, 2.5], [1.0, 2.0, 3.0]]),
                           "label": np.array([["a", None, "c"], ["d", "e", None], [None, None, None]], dtype=object)},
                 meta={"n": np.int64(3), "x": [1, 2.5, None], "nested": [{"b": 1, "a": [1, "2"]}, {}, {"k": None}],
                       "flag": np.array([True, False, True]), "const": "same", "%key": 0.0},
                 references=[["r1", "r,2"], [], ['"']])
    assert isinstance(items, ItemRows)
    write_items(tmp_path / "i.jsonl", items)
    assert (tmp_path / "i.jsonl").read_bytes() == _per_item(items)
    assert b"".join(items.json_lines(chunk=2)) == _per_item(items)



def test_coded_texts_are_written_as_the_texts_they_index(tmp_path):
    from lalmbench.tasks.options import Coded, Nullable

    values = ['say "hi", then \\ leave', "é 日本", '","', None, "none of these"]
    items = emit(ids=["a", "b"], task="t", dataset="d", clip_ids=["c1", "c2"], audio_paths=["p/1.wav", "p/2.wav"],
                 questions=Coded(["q1?", 'q "2"?'], np.array([1, 0])),
                 opt_text=Coded(values, np.array([[0, 4, 2], [1, 2, 4]])), opt_type="event",
                 gold_pos=np.array([2, 0]), opt_meta={"label": Coded(values, np.array([[3, 0, 1], [3, 3, 2]])),
                                                      "onset_s": Nullable(np.array([[0.1, np.nan, 3.0], [1e17, -0.0, 2]]),
                                                                          np.array([[0, 0, 1], [1, 0, 0]]))},
                 meta={"base": Coded(values, np.array([2, 1])), "gap": Nullable(np.array([1.5, 2.5]), np.array([1, 0]))})
    assert items[0]["question"] == 'q "2"?' and items[0]["answer_text"] == '","'
    assert [o["meta"]["label"] for o in items[1]["options"]] == [None, None, '","']
    assert [o["meta"]["onset_s"] for o in items[1]["options"]] == [None, -0.0, 2.0]
    assert (items[0]["meta"]["gap"], items[1]["meta"]["gap"]) == (None, 2.5)
    write_items(tmp_path / "i.jsonl", items)
    assert (tmp_path / "i.jsonl").read_bytes() == _per_item(items)
