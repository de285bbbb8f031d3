"""The built-in 'does the model listen?' check: answers that ignore the audio must be flagged."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lalmbench.report.aggregate import build_table, flags_table
from lalmbench.core.io import InputError, write_json
from lalmbench.checks.listening import (NotListeningError, compare_answers, listening_check,
                                       listening_check_files, raise_if_flagged, write_listening_check)


def _decisions(labels, ids=None, raw=None, errors=None):
    n = len(labels)
    return pd.DataFrame({"id": ids or [f"q{i}" for i in range(n)], "pred_label": labels,
                         "raw_output": raw or [f"Answer: {x}" for x in labels],
                         "error": errors or [None] * n})


def test_model_that_ignores_audio_is_flagged():
    rng = np.random.default_rng(0)
    ans = list(rng.choice(list("ABCD"), size=50))
    res = listening_check({"audio": _decisions(ans), "silence": _decisions(ans)}, model="qwen2-audio")
    assert res["flagged"] and res["status"] == "flagged" and res["flagged_conditions"] == ["silence"]
    c = res["comparisons"]["silence"]
    assert (c["n_compared"], c["n_identical"], c["identical_rate"]) == (50, 50, 1.0)
    assert c["ci_low"] < 1.0 == c["ci_high"]
    assert res["message"].startswith("NOT LISTENING: qwen2-audio")
    assert "silence: 50/50 identical (100.0%)" in res["message"]
    with pytest.raises(NotListeningError, match="NOT LISTENING: qwen2-audio"):
        raise_if_flagged(res)


def test_listening_model_passes_and_threshold_is_configurable():
    audio = list("ABCD" * 10)
    silence = audio[:]
    for i in range(0, 40, 8):  # 5 of 40 answers change: 87.5% identical
        silence[i] = "D" if audio[i] != "D" else "A"
    res = listening_check({"audio": _decisions(audio), "silence": _decisions(silence)})
    assert not res["flagged"] and res["status"] == "ok"
    assert res["comparisons"]["silence"]["identical_rate"] == pytest.approx(35 / 40)
    assert raise_if_flagged(res) is res
    strict = listening_check({"audio": _decisions(audio), "silence": _decisions(silence)}, threshold=0.85)
    assert strict["flagged"]


def test_each_ablation_is_compared_and_any_flag_flags_the_model():
    audio = list("AB" * 15)
    flipped = ["B" if x == "A" else "A" for x in audio]
    res = listening_check({"audio": _decisions(audio), "noise": _decisions(flipped),
                           "no-audio": _decisions(audio)}, min_items=10)
    assert res["comparisons"]["noise"]["status"] == "ok"
    assert res["comparisons"]["noise"]["identical_rate"] == 0.0
    assert res["flagged_conditions"] == ["no-audio"]


def test_too_few_items_is_inconclusive_not_a_pass():
    res = listening_check({"audio": _decisions(list("ABCA")), "silence": _decisions(list("ABCA"))})
    assert res["status"] == "insufficient" and not res["flagged"]
    assert "inconclusive" in res["message"]


def test_joins_by_id_and_skips_failed_items():
    ids = [f"q{i}" for i in range(30)]
    audio = _decisions(["A"] * 30, ids=ids)
    # silence frame in another order, 5 items missing, 3 failed, all others identical
    sil_ids = ids[5:][::-1]
    errors = ["CUDA OOM" if i < 3 else None for i in range(25)]
    silence = _decisions(["A"] * 25, ids=sil_ids, errors=errors)
    c = listening_check({"audio": audio, "silence": silence})["comparisons"]["silence"]
    assert (c["n_common"], c["n_compared"], c["n_identical"]) == (25, 22, 22)
    assert c["status"] == "flagged"


def test_unparsed_answers_compare_by_raw_text_and_predictions_frames_work():
    # a model that always outputs the same unparseable text does not listen either
    preds = pd.DataFrame({"id": [f"q{i}" for i in range(25)], "raw_output": ["I cannot hear anything."] * 25})
    res = listening_check({"audio": preds, "silence": preds.copy()})
    assert res["flagged"]
    varied = preds.assign(raw_output=[f"It is option {i}" for i in range(25)])
    assert not listening_check({"audio": preds, "silence": varied})["flagged"]


def test_bad_input_errors_name_the_problem(tmp_path):
    ok = _decisions(list("AB"))
    with pytest.raises(InputError, match="no answers under the reference condition 'audio'"):
        listening_check({"silence": ok})
    with pytest.raises(InputError, match="at least one ablation"):
        listening_check({"audio": ok})
    with pytest.raises(InputError, match="condition 'silence': duplicate ids"):
        compare_answers(ok, pd.concat([ok, ok]), condition="silence")
    with pytest.raises(InputError, match="need a 'pred_label'"):
        listening_check({"audio": ok, "noise": pd.DataFrame({"id": ["q0"], "answer": ["A"]})})
    ok.to_parquet(tmp_path / "audio.parquet")
    with pytest.raises(InputError, match="nope.parquet: listening check input for condition 'silence' not found"):
        listening_check_files({"audio": tmp_path / "audio.parquet", "silence": tmp_path / "nope.parquet"})


def test_result_is_json_writable_from_files(tmp_path):
    for cond in ("audio", "silence"):
        _decisions(list("ABCD") * 2).to_parquet(tmp_path / f"{cond}.parquet")
    res = listening_check_files({c: tmp_path / f"{c}.parquet" for c in ("audio", "silence")}, model="m")
    _decisions([]).to_parquet(tmp_path / "empty.parquet")
    empty = listening_check_files({"audio": tmp_path / "audio.parquet", "silence": tmp_path / "empty.parquet"})
    assert empty["comparisons"]["silence"]["identical_rate"] is None
    write_json(tmp_path / "check.json", {"a": res, "b": empty})  # no NaN, no numpy types
    back = json.loads((tmp_path / "check.json").read_text())
    assert back["a"]["status"] == "insufficient"  # 8 items < min_items=20


def test_pooling_tasks_judges_the_model_on_all_its_items(tmp_path):
    """One task where audio cannot change the answer must not alone flag a model that listens elsewhere."""
    ids = [f"q{i}" for i in range(24)]  # same ids in both tasks: pooling must keep them apart
    deaf_task = _decisions(["A"] * 24, ids=ids)
    listening_audio = _decisions(list("AB" * 12), ids=ids)
    listening_silence = _decisions(list("BA" * 12), ids=ids)
    paths = {}
    for cond, frames in {"audio": (deaf_task, listening_audio), "silence": (deaf_task, listening_silence)}.items():
        paths[cond] = {}
        for task, df in zip(("gap-length", "pitch-order"), frames):
            p = tmp_path / f"{task}.{cond}.parquet"
            df.to_parquet(p)
            paths[cond][task] = p
    res = listening_check_files(paths, model="cascade")
    c = res["comparisons"]["silence"]
    assert (c["n_compared"], c["n_identical"]) == (48, 24) and res["status"] == "ok"
    per_task = listening_check_files({"audio": paths["audio"]["gap-length"],
                                      "silence": paths["silence"]["gap-length"]})
    assert per_task["flagged"]


def _metrics(tmp_path, model):
    path = tmp_path / f"{model}.metrics.json"
    write_json(path, {"model": model, "dataset": "d", "task": "t", "condition": "audio", "prompt": "p",
                      "metric": "accuracy", "value": 0.5, "n": 19})
    return str(path)


def test_insufficient_and_flagged_checks_both_reach_all_tsv_flags(tmp_path):
    """19 of 19 identical answers is not a pass: all.tsv says so, with the minimum sample size."""
    few = _decisions(list("ABCD" * 5)[:19])
    answers = {"deaf-few": (few, few), "deaf": (_decisions(list("AB" * 10)),) * 2,
               "ok": (_decisions(list("AB" * 10)), _decisions(list("BA" * 10)))}
    checks = []
    for model, frames in answers.items():
        paths = {}
        for cond, df in zip(("audio", "silence"), frames):
            paths[cond] = {"t": tmp_path / f"{model}.{cond}.parquet"}
            df.to_parquet(paths[cond]["t"])
        checks.append(str(tmp_path / f"{model}.json"))
        write_listening_check(paths, checks[-1], on_flag="mark", model=model)
    result = json.loads((tmp_path / "deaf-few.json").read_text())
    assert result["status"] == "insufficient" and result["message"] == (
        "deaf-few: listening check inconclusive: it needs at least 20 comparable items under one ablation "
        "(checks.listening.min_items) and has silence: 19 (19 identical). Run more items (or lower min_items) "
        "before reading its audio-condition scores as listening results.")
    table = build_table([_metrics(tmp_path, m) for m in answers], checks=checks)
    assert dict(zip(table["model"], table["flags"])) == {
        "deaf": "not-listening:silence",
        "deaf-few": "listening-insufficient:silence(19/19 identical, needs n>=20)",
        "ok": ""}
    expected = pd.DataFrame({"model": ["deaf", "deaf-few"], "dataset": "d", "task": "t", "condition": "audio",
                             "prompt": "p", "flags": ["not-listening:silence",
                                                      "listening-insufficient:silence(19/19 identical, needs n>=20)"]})
    pd.testing.assert_frame_equal(flags_table(table), expected)
