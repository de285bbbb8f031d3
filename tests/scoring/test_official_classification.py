"""The classification presets' official rules as a user reaches them: Qwen2-Audio's exact match by
default on MELD, Kimi-Audio's judge by name (API ``rule=``, config ``official:``) with the question
its download script writes, and the quirks the rules keep (hand-worked; the conformance corpora
cover them against the scripts)."""
from __future__ import annotations

import math

import pytest

import lalmbench
from lalmbench.core.io import InputError
from lalmbench.scoring.official_judge import kimi_audio_verdict
from lalmbench.workflow.config import expand_import_tasks

MELD_HEADER = "Sr No.,Utterance,Speaker,Emotion,Sentiment,Dialogue_ID,Utterance_ID,Season,Episode,StartTime,EndTime"


@pytest.fixture
def meld_items(tmp_path):
    rows = ["1,Hi.,Ross,joy,positive,0,0,1,1,\"00:00:01,000\",\"00:00:02,000\"",
            "2,No.,Rachel,anger,negative,0,1,1,1,\"00:00:03,000\",\"00:00:04,000\"",
            "3,Oh.,Monica,neutral,neutral,1,0,1,1,\"00:00:05,000\",\"00:00:06,000\""]
    src = tmp_path / "test_sent_emo.csv"
    src.write_text(MELD_HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return lalmbench.read_items("meld", {"items": str(src), "audio_root": str(tmp_path), "check_audio": False})


def test_meld_official_is_qwen2_audio_exact_match(meld_items):
    preds = [{"id": "dia0_utt0", "raw_output": " joy"}, {"id": "dia0_utt1", "raw_output": "anger."},
             {"id": "dia1_utt0", "raw_output": "B"}]
    per, summary = lalmbench.score_official("meld", meld_items, preds)
    assert per["official_score"].tolist() == [1.0, 0.0, 0.0]
    assert summary["official_scorer"] == "qwen2_audio_exact" and summary["value_official"] == pytest.approx(1 / 3)
    # ours: the rule parser reads the label "anger." too, and "B" as the letter of joy (wrong for neutral)
    assert summary["value"] == pytest.approx(2 / 3)


def test_meld_kimi_judge_by_name_sees_kimis_question_and_leaves_invalid_replies_out(meld_items):
    sent = []

    def ask(prompts, ids):
        sent.extend(prompts)
        return ["Explanation: synonym\nResult: yes", "Result: no\nNote: the speaker shouts", "Result: maybe"]

    preds = [{"id": it["id"], "raw_output": out} for it, out in zip(meld_items, ["happy", "E", None])]
    per, summary = lalmbench.score_official("meld", meld_items, preds, rule="kimi_audio_judge", ask=ask)
    assert per["official_score"].tolist()[:2] == [1.0, 0.0] and math.isnan(per["official_score"].tolist()[2])
    assert summary["n_official"] == 2 and summary["official_excluded"] == {"judge reply says neither yes nor no": 1}
    assert "Question: Identify the predominant emotion in this speech.\nOptions:\n(A) neutral\n(B) joy\n" in sent[0]
    assert "(G) disgust\n.Answer with the option's letter" in sent[0]
    assert "\nNone\n" in sent[2]                         # a failed generation as the results file reads it
    with pytest.raises(InputError, match="names no official rule 'sakura_judge'"):
        lalmbench.score_official("meld", meld_items, preds, rule="sakura_judge", ask=ask)


@pytest.mark.parametrize("reply,verdict", [("Result: yes", "yes"), ("no", "no"), ("Result: no, wait, yes", "yes"),
                                           ("Result: unknown", "no"), ("Result: correct", None), ("", None),
                                           ("Result: yes\nNote: done", "no"), ("  yes  \n\n", "yes"), (None, None)])
def test_kimi_reads_the_last_line_yes_before_no(reply, verdict):
    assert kimi_audio_verdict(reply) == verdict


def test_config_fills_the_presets_judge_question_under_a_users_rule():
    cfg = {"judge": {"judge_model": "j"},
           "datasets": {"tut": {"adapter": "tut2017", "params": {"items": "meta.txt"}},
                        "meld": {"adapter": "meld", "params": {"items": "x.csv"}, "official": "kimi_audio_judge"},
                        "ns": {"adapter": "nonspeech7k", "params": {"items": "x.csv"},
                               "official": {"scorer": "kimi_audio_judge", "judge_model": "j2"}}},
           "tasks": {"t": {"dataset": "tut", "family": "import"}}}
    expand_import_tasks(cfg)
    tut = cfg["datasets"]["tut"]["official"]
    assert tut[0]["scorer"] == "kimi_audio_judge" and "(C) cafe or restaurant" in tut[0]["question"]
    meld = cfg["datasets"]["meld"]["official"]
    assert meld["scorer"] == "kimi_audio_judge" and meld["question"].endswith("(G) disgust\n.Answer with the "
                                                                             "option's letter from the given choices "
                                                                             "directly and only give the best option.")
    ns = cfg["datasets"]["ns"]["official"]
    assert ns["judge_model"] == "j2" and ns["question"].startswith("Identify the human vocal sound")


def test_without_a_judge_block_tut2017_gets_no_judge_rule_filled_in():
    cfg = {"datasets": {"tut": {"adapter": "tut2017", "params": {"items": "meta.txt"}}},
           "tasks": {"t": {"dataset": "tut", "family": "import"}}}
    expand_import_tasks(cfg)
    assert "official" not in cfg["datasets"]["tut"]


def test_qwen2_audio_prompts_ask_without_options_so_the_label_text_is_the_answer(meld_items):
    from pathlib import Path

    from lalmbench.inference.prompts import load_template, render, shows_labels

    prompts = Path(lalmbench.__file__).resolve().parents[1] / "resources" / "prompts"
    ser = load_template(prompts / "qwen2-audio-ser.txt")
    assert render(ser, meld_items[0]) == "Recognize the emotion with keywords in English:" and not shows_labels(ser)
    vsc = load_template(prompts / "qwen2-audio-vsc.txt")
    assert render(vsc, meld_items[0]) == "Classify the human vocal sound to VocalSound in English:"
