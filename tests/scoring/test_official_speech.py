"""The report ASR/ST rules' corpus values and breakdowns (the conformance corpora check them against
the scripts; these pin what a reader of value_official relies on)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from lalmbench.scoring.cn_numbers import normalize_numbers
from lalmbench.scoring.official import run_official, score_official
from lalmbench.scoring.official_speech import bleu_from_stats


def _items(refs, speakers=None, **meta):
    return [{"id": f"u{i}", "references": [r], "meta": {"speaker": (speakers or ["s"] * len(refs))[i], **meta}}
            for i, r in enumerate(refs)]


def test_value_official_is_the_corpus_wer_not_the_mean_of_item_wers():
    eleven = "he hoped there would be stew for dinner turnips and carrots"
    items = _items([eleven, "hello"])
    _, s = score_official({"scorer": "qwen2_audio_wer", "language": "en"}, items, [eleven, "goodbye"])
    assert s["value_official"] == pytest.approx(1 / 12)          # the mean of item WERs would be 0.5
    assert s["official_metric"] == "wer" and s["n_official"] == 2


def test_breakdown_groups_are_corpus_wers_of_their_items():
    items = _items(["a b c d", "e", "f g"], speakers=["s1", "s2", "s2"])
    dec = pd.DataFrame({"id": ["u0", "u1", "u2"], "raw_output": ["a b c d", "x", "f g"], "error": [None] * 3})
    _, s = run_official({"scorer": "kimi_audio_wer", "language": "en", "breakdown": ["speaker"]}, items, dec)
    groups = {b["group"]: b["value_official"] for b in s["breakdown"]}
    assert groups == {"s1": 0.0, "s2": pytest.approx(1 / 3)}     # not the mean of 1.0 and 0.0


def test_qwen_scores_chinese_on_characters_and_kimi_on_tokens():
    """Qwen2-Audio joins every token into characters (zh, yue); Kimi-Audio's zh tokenizer splits the
    Chinese characters and keeps a Latin word whole, so one wrong letter costs a whole word there."""
    items = _items(["我用iPhone"])
    qwen = score_official({"scorer": "qwen2_audio_wer", "language": "zh"}, items, ["我用iPhome"])[1]
    kimi = score_official({"scorer": "kimi_audio_wer", "language": "zh"}, items, ["我用iPhome"])[1]
    assert qwen["value_official"] == pytest.approx(1 / 8) and kimi["value_official"] == pytest.approx(1 / 3)


def test_kimi_leaves_out_a_null_prediction_qwen_scores_it_as_text():
    items = _items(["stuff it into you", "his belly"])
    qwen = score_official({"scorer": "qwen2_audio_wer", "language": "en"}, items, ["stuff it into you", "null"])[1]
    kimi = score_official({"scorer": "kimi_audio_wer", "language": "en"}, items, ["stuff it into you", "null"])[1]
    assert qwen["value_official"] == pytest.approx(2 / 6) and kimi["value_official"] == 0.0
    assert kimi["official_excluded"] == {"prediction 'null': the script leaves it out": 1}


def test_cantonese_is_compared_in_simplified_characters():
    items = _items(["呢間餐廳嘅點心好好食"], locale="yue")
    cfg = {"scorer": "qwen2_audio_wer", "language_field": "locale"}
    assert score_official(cfg, items, ["呢间餐厅嘅点心好好食。"])[1]["value_official"] == 0.0


@pytest.mark.parametrize("text, want", [
    ("2018年3月5日", "二零一八年三月五日"), ("增长12.5%", "增长百分之十二点五"), ("3个苹果", "三个苹果"),
    ("编号20180305", "编号二零一八零三零五"), ("1/3的人", "三分之一的人"), ("P2P平台", "P2P平台"), ("222", "两百二十二"),
    ("2000", "二零零零"), ("2000元", "两千元"), ("电话13812345678", "电话一三八一二三四五六七八"), ("第10名", "第十名"),
    ("0.5", "零点五")])
def test_chinese_numbers_as_the_speechio_normaliser_writes_them(text, want):
    """Values the normaliser (cn_tn.py) printed for these inputs: four or more digits without a
    measure word are read digit by digit, 2 before 百/千 is 两."""
    assert normalize_numbers(text) == want


def test_bleu_of_an_output_sharing_no_ngram_is_smoothed_as_sacrebleu_1_5_1_does():
    no_match = [5, 6, 0, 0, 0, 0, 5, 4, 3, 2]
    assert 0 < bleu_from_stats(no_match) < 5
    assert bleu_from_stats([4, 4, 4, 3, 2, 1, 4, 3, 2, 1]) == pytest.approx(100.0)
    assert math.isnan(score_official({"scorer": "qwen2_audio_bleu", "target_field": "lang"}, [], [])[1]
                      ["value_official"])


def test_public_score_official_takes_a_speech_preset_with_its_rule_settings():
    import lalmbench

    items = [{"id": "1089-134686-0000", "references": ["HE HOPED THERE WOULD BE STEW FOR DINNER"],
              "meta": {"kind": "open", "speaker": "1089", "subset": "test-clean"}}]
    per, s = lalmbench.score_official("librispeech", items, [{"id": "1089-134686-0000",
                                                              "raw_output": "He hoped there'd be stew for lunch."}])
    assert s["official_scorer"] == "qwen2_audio_wer" and s["official_metric"] == "wer"
    assert s["value_official"] == pytest.approx(1 / 8)    # "there'd" is "there would" to Whisper's normaliser
    assert [b["group"] for b in s["breakdown"]] == ["test-clean", "1089"]
    # the preset's official_also rule by name, with the language the preset gives it
    _, k = lalmbench.score_official("librispeech", items, [{"id": "1089-134686-0000",
                                                            "raw_output": "He hoped there'd be stew for lunch."}],
                                    rule="kimi_audio_wer")
    assert k["official_scorer"] == "kimi_audio_wer" and k["value_official"] == pytest.approx(1 / 8)


def test_asr_run_on_librispeech_items_reports_the_report_wer_in_all_tsv(tmp_path):
    """An ASR task over the librispeech preset, scored by the score_open job as the workflow calls it:
    metrics.json and results/all.tsv carry value_official (Qwen2-Audio's corpus WER) beside ours,
    and the breakdown per speaker."""
    import json
    import os
    import subprocess
    import sys

    from lalmbench.core import io
    from lalmbench.data.adapters import adapt
    from lalmbench.report.aggregate import write_all_tsv
    from lalmbench.workflow import rulegrid
    from tests.datasets.test_speech_presets import librispeech
    from tests.workflow import ROOT

    ls = librispeech(tmp_path / "data")
    items = adapt("librispeech", {"items": str(ls), "audio_root": str(ls), "subset": "test-clean"}, dataset="ls").items
    io.write_jsonl(tmp_path / "items.jsonl", items)
    outputs = {"1089-134686-0000": "He hoped there would be stew for dinner.",
               "1089-134686-0001": "Stuff it into you, his belly counseled him.",     # US spelling: no error
               "121-121726-0000": "Also a popular contrivances"}
    pd.DataFrame({"id": list(outputs), "raw_output": list(outputs.values()),
                  "error": [None] * 3}).to_parquet(tmp_path / "p.parquet")
    config = {"seed": 0, "datasets": {"ls": {"adapter": "librispeech",
                                             "official": [{"scorer": "qwen2_audio_wer", "language": "en",
                                                           "breakdown": ["speaker"]}]}},
              "tasks": {"ls": {"dataset": "ls", "family": "import", "scoring": {"kind": "asr"}}}, "models": {}}
    cmd = [sys.executable, str(ROOT / "scripts" / "score_open.py"), "--items", str(tmp_path / "items.jsonl"),
           "--predictions", str(tmp_path / "p.parquet"), "--scoring-json", rulegrid.open_scoring_json(config, "ls"),
           "--official-json", rulegrid.official_json(config, "ls"), "--run", "m", "ls", "ls", "audio", "asr",
           "--decisions", str(tmp_path / "dec.parquet"), "--metrics", str(tmp_path / "metrics.json")]
    subprocess.run(cmd, check=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])))
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["official_scorer"] == "qwen2_audio_wer" and m["n_official"] == 3
    assert m["value_official"] == pytest.approx(1 / 20)                  # one substitution in 20 words
    assert {b["group"]: b["value_official"] for b in m["breakdown"]} == {"1089": 0.0, "121": pytest.approx(1 / 4)}
    table = write_all_tsv([str(tmp_path / "metrics.json")], str(tmp_path / "all.tsv")).set_index("metric")
    assert table.loc["wer", "value_official"] == pytest.approx(1 / 20) and table.loc["wer", "n_official"] == 3
    assert table.loc["wer", "value"] == pytest.approx(1 / 20)       # ours agrees here: one wrong word
