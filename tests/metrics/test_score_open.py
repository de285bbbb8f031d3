"""Open-ended scoring of one run (lalmbench.scoring.metrics.open + scripts/score_open.py) for every kind."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.core.io import InputError
from lalmbench.scoring.metrics.captioning import CaptioningEnvMissing, captioning_python
from lalmbench.scoring.metrics.open import score_open
from lalmbench.models.base import Model, ModelOutput, register_backend
from tests.workflow import copy_workflow, planned_jobs, snakemake

ROOT = Path(__file__).resolve().parents[2]


def _items(refs, meta=None):
    return [{"id": f"i{k}", "question": "q?", "options": [], "answer_label": None, "answer_text": None,
             "references": r, "meta": (meta or [{}] * len(refs))[k]} for k, r in enumerate(refs)]


def _preds(raws, errors=None):
    return pd.DataFrame({"id": [f"i{k}" for k in range(len(raws))], "raw_output": raws,
                         "error": errors or [None] * len(raws)})


def test_grounding_kind():
    items = _items([["1.000, 3.000"], ["0.000, 2.000"]], meta=[{"onset_s": 1.0, "offset_s": 3.0},
                                                               {"onset_s": 0.0, "offset_s": 2.0}])
    dec, m, extra = score_open("grounding", items, _preds(["from 1 to 3 s", "no idea"]), {})
    assert (m["metric"], m["value"], m["parse_failure_rate"]) == ("mean_iou", 0.5, 0.5)
    assert list(dec["parse_status"]) == ["ok", "no interval"]
    assert {e["metric"] for e in extra} >= {"recall_iou0.5", "median_onset_error_s"}


def test_asr_kind_scores_generation_errors_as_empty():
    items = _items([["Mr. Smith has two dogs."], ["hello world"]])
    dec, m, extra = score_open("asr", items, _preds(["mister smith has 2 dogs", "x"], [None, "timeout"]), {})
    assert m["metric"] == "wer" and m["value"] == pytest.approx(2 / 7)  # 2 deletions of 'hello world'
    assert m["normalizer"] == "whisper_en" and m["n_generation_errors"] == 1
    assert extra[0]["metric"] == "cer"
    assert dec.loc[1, "raw_output"] is None


def test_pi_asr_kind():
    items = _items([["hello there", "good morning"]])
    dec, m, extra = score_open("pi_asr", items, _preds(["Speaker 1: good morning\nSpeaker 2: hello there"]), {})
    assert m["value"] == 0.0 and extra[0] == {"metric": "speaker_count_match_rate", "value": 1.0, "n": 1}


def test_translation_kind_records_tokenizer():
    items = _items([["他昨天买了一本书。"], ["我不知道那是什么声音。"]], meta=[{"target_lang": "zh"}] * 2)
    dec, m, extra = score_open("translation", items, _preds(["他昨天买了一本新书。", "我不知道这是什么声音。"]), {})
    assert m["tokenize"] == "zh" and "tok:zh" in m["signature"] and 0 < m["value"] < 100
    _, m2, _ = score_open("translation", items, _preds(["他昨天买了一本新书。", "我不知道这是什么声音。"]),
                          {"convention": "char-cjk"})
    assert m2["tokenize"] == "char"
    with pytest.raises(InputError, match="one target_lang"):
        score_open("translation", _items([["a"]]), _preds(["a"]), {})


@register_backend("fake-open-judge")
class _Judge(Model):
    def generate(self, batch):
        import re

        return [ModelOutput(raw_output="Yes" if re.search(r"our_slot\*\*: \n```\ntuesday\n```", x.prompt.lower()) else "No")
                for x in batch]


def test_judge_kind_stores_judge_settings(tmp_path):
    items = _items([["tuesday"], ["jesse"]], meta=[{"slot_type": "date"}, {"slot_type": "person"}])
    cfg = {"judge_model": "j", "judge_model_cfg": {"backend": "fake-open-judge", "model_id": "fake/j"},
           "prompt": "slot_filling", "fields": {"slot_type": "meta.slot_type"}, "cache_dir": str(tmp_path)}
    dec, m, _ = score_open("judge", items, _preds(["Tuesday", "not specified"]), cfg)
    assert (m["metric"], m["value"], m["judge_model_id"], m["judge_prompt"]) == ("judge_accuracy", 0.5, "fake/j",
                                                                                    "slot_filling")
    assert list(dec["verdict"]) == [True, False] and set(dec["judge_generation"]) == {
        '{"do_sample": false, "temperature": 0.0}'}


def test_prediction_ids_are_checked():
    items = _items([["a"], ["b"]])
    with pytest.raises(InputError, match="no prediction for item 'i1'"):
        score_open("asr", items, _preds(["a"]), {})
    bad = pd.DataFrame({"id": ["i0", "i1", "zz"], "raw_output": ["a", "b", "c"]})
    with pytest.raises(InputError, match="'zz' is not among"):
        score_open("asr", items, bad, {})


def test_script_writes_all_tsv_format(tmp_path):
    items = _items([["hello world"], ["good morning"]])
    io.write_jsonl(tmp_path / "items.jsonl", items)
    _preds(["hello world", "good evening"]).assign(model_id="m/x", backend="fake").to_parquet(tmp_path / "p.parquet")
    res = subprocess.run([sys.executable, "scripts/score_open.py", "--items", str(tmp_path / "items.jsonl"),
                          "--predictions", str(tmp_path / "p.parquet"), "--scoring-json", json.dumps({"kind": "asr"}),
                          "--config-hash", "h1", "--run", "m", "d", "t", "audio", "p",
                          "--decisions", str(tmp_path / "dec.parquet"), "--metrics", str(tmp_path / "m.json")],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    assert (m["model"], m["task"], m["metric"], m["value"], m["config_hash"], m["model_id"]) == \
        ("m", "t", "wer", 0.25, "h1", "m/x")
    assert m["extra_metrics"][0]["metric"] == "cer" and m["chance"] is None
    from lalmbench.report.aggregate import build_table

    table = build_table([str(tmp_path / "m.json")])
    assert list(table["metric"]) == ["cer", "wer"]


@pytest.mark.slow
def test_captioning_kind_through_the_env():
    try:
        captioning_python()
    except CaptioningEnvMissing as exc:
        pytest.skip(f"captioning env not built: {exc}")
    items = _items([["a dog is barking far away", "a dog barks loudly"], ["a person plays the piano", "piano music"]])
    dec, m, extra = score_open("captioning", items, _preds(["a dog barks in the distance", None]),
                               {"metrics": ["cider_d", "bleu_4", "spice"]})
    assert m["metric"] == "cider_d" and m["value"] > 0 and "cider_d" in dec
    assert "spice" in m["unavailable"] or any(e["metric"] == "spice" for e in extra)


def test_open_tasks_are_routed_to_score_open_in_the_dag(tmp_path):
    import yaml

    wd = copy_workflow(tmp_path)  # a fresh copy: the working tree's results (make run) must not matter
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    scenes = next(d for d, c in cfg["datasets"].items() if c["adapter"] == "synth_scenes")
    cfg["tasks"]["scene-grounding"] = {"dataset": scenes, "family": "grounding", "scoring": {"kind": "grounding"},
                                       "models": ["cascade"]}  # the option-picking floors cannot answer open items
    cfg["run_jobs"] = "per-run"  # MCQ runs in their own score jobs, beside the open task's score_open
    (wd / "c.yaml").write_text(yaml.safe_dump(cfg))
    jobs = planned_jobs(snakemake(wd, "-n", "--configfile=c.yaml", "results/all.tsv").stdout)
    scoring = {(j["rule"], j["wildcards"].get("task")) for j in jobs if j["rule"] in ("score", "score_open")}
    assert {task for rule, task in scoring if rule == "score_open"} == {"scene-grounding"}
    assert ("score", "scene-grounding") not in scoring and ("score", next(iter(cfg["tasks"]))) in scoring


CAPTIONS = {"corpus": {"bleu_1": 0.5, "cider_d": 0.25}, "sentences": {"bleu_1": [0.4, 0.6], "cider_d": [0.2, 0.3]},
            "unavailable": {"fense": "FENSE needs its fluency-error detector checkpoint in /data; offline"}, "info": {}}


def test_a_headline_that_falls_back_says_so_in_all_tsv_flags(tmp_path):
    items = _items([["a dog barks"], ["piano music"]])
    io.write_jsonl(tmp_path / "items.jsonl", items)
    _preds(["a dog", "a piano"]).to_parquet(tmp_path / "p.parquet")
    io.write_json(tmp_path / "captions.json", CAPTIONS)
    scoring = {"kind": "captioning", "headline": "fense", "metrics": ["bleu_1", "cider_d", "fense"]}
    res = subprocess.run([sys.executable, "scripts/score_open.py", "--items", str(tmp_path / "items.jsonl"),
                          "--predictions", str(tmp_path / "p.parquet"), "--scoring-json", json.dumps(scoring),
                          "--run", "m", "d", "t", "audio", "p", "--captioning-result", str(tmp_path / "captions.json"),
                          "--decisions", str(tmp_path / "dec.parquet"), "--metrics", str(tmp_path / "m.json")],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    flag = ("headline-fallback:fense->bleu_1 (fense unavailable: FENSE needs its fluency-error detector checkpoint "
            "in /data, offline)")
    m = json.loads((tmp_path / "m.json").read_text())
    assert (m["metric"], m["value"], m["flags"]) == ("bleu_1", 0.5, [flag])
    from lalmbench.report.aggregate import build_table

    table = build_table([str(tmp_path / "m.json")])
    assert table[["metric", "flags"]].values.tolist() == [["bleu_1", flag], ["cider_d", flag]]


@pytest.mark.parametrize("scoring, metric, flags", [
    ({}, "cider_d", None),  # the default headline was computed: nothing to say
    ({"headline": "spice", "metrics": ["bleu_1", "cider_d"]}, "bleu_1",
     ["headline-fallback:spice->bleu_1 (spice is not among scoring.metrics)"]),
])
def test_headline_is_the_configured_metric_or_a_flagged_fallback(scoring, metric, flags):
    _, m, _ = score_open("captioning", _items([["a dog barks"], ["piano music"]]), _preds(["a dog", "a piano"]),
                         {"kind": "captioning", **scoring}, captioning_result=CAPTIONS)
    assert (m["metric"], m.get("flags")) == (metric, flags)
