"""The public API re-exported at the package top: what another harness calls."""
import json
from pathlib import Path

import pandas as pd
import pytest

import lalmbench

MMAU = Path(__file__).resolve().parents[2].parent / "shared" / "reference-data" / "mmau" / "mmau-test-mini.json"


def test_parse_answer_takes_plain_option_texts():
    res = lalmbench.parse_answer("The answer is (B) a dog barking.", ["a cat", "a dog barking", "rain"])
    assert res.label == "B"


def test_parse_answer_never_guesses():
    res = lalmbench.parse_answer("I cannot tell from this audio.", [{"label": "A", "text": "yes"},
                                                                      {"label": "B", "text": "no"}])
    assert res.label is None and res.status != "error"


def test_parse_answer_rejects_malformed_options():
    with pytest.raises(ValueError, match="option 2: expected a string or a mapping"):
        lalmbench.parse_answer("A", ["x", 3])


def test_score_mcq_from_dicts():
    items = [{"id": "q1", "options": [{"label": "A", "text": "left"}, {"label": "B", "text": "right"}],
              "answer_label": "A"},
             {"id": "q2", "options": [{"label": "A", "text": "left"}, {"label": "B", "text": "right"}],
              "answer_label": "B"}]
    preds = [{"id": "q1", "raw_output": "A"}, {"id": "q2", "raw_output": "left"}]
    decisions, metrics = lalmbench.score_mcq(items, preds, parser={"labels": "shown"})
    assert list(decisions["correct"]) == [True, False]
    assert metrics["value"] == 0.5 and metrics["n"] == 2


def test_score_mcq_and_score_official_read_labels_as_an_imported_model_does():
    """One default: a bare letter is no choice unless the caller says letters were shown, as for an
    imported model in the workflow (before, the API read 'A' as option A and the workflow did not)."""
    from lalmbench.models.imported import parser_cfg

    assert parser_cfg(None, {"backend": "imported", "params": {}}, "{question}\n{options}")["labels"] == "hidden"
    items = [{"id": "q1", "options": [{"label": "A", "text": "left"}, {"label": "B", "text": "right"}],
              "answer_label": "A"}]
    decisions, metrics = lalmbench.score_mcq(items, [{"id": "q1", "raw_output": "A"}])
    assert (metrics["value"], metrics["n_unparseable"], metrics["parser_labels"]) == (0.0, 1, "hidden")
    assert decisions["parse_status"].tolist() == ["unparseable"]


@pytest.mark.skipif(not MMAU.is_file(), reason=f"{MMAU} (shared reference data) not present")
def test_read_items_from_a_published_question_file(tmp_path):
    records = json.loads(MMAU.read_text(encoding="utf-8"))[:3]
    for rec in records:
        wav = tmp_path / rec["audio_id"].lstrip("./")
        wav.parent.mkdir(parents=True, exist_ok=True)
        wav.write_bytes(b"")
    (tmp_path / "mini.json").write_text(json.dumps(records), encoding="utf-8")
    items = lalmbench.read_items("mmau", {"items": str(tmp_path / "mini.json"), "audio_root": str(tmp_path),
                                          "check_audio": False}, dataset="mmau")
    assert [it["answer_text"] for it in items] == [rec["answer"] for rec in records]


def _mmsu_items(tmp_path):
    recs = [{"id": f"m{i}", "question": "Which?", "choice_a": "yes", "choice_b": "no", "choice_c": "maybe",
             "choice_d": "never", "answer_gt": gold, "category": cat, "sub-category": "s", "audio_path": "a.wav"}
            for i, (gold, cat) in enumerate([("no", "Perception"), ("yes", "Perception"), ("no", "Reasoning"),
                                             ("no", "Reasoning")])]
    src = tmp_path / "mmsu.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return lalmbench.read_items("mmsu", {"items": str(src), "audio_root": str(tmp_path), "check_audio": False},
                                dataset="mmsu")


def test_score_official_gives_per_item_verdicts_value_official_and_the_papers_breakdown(tmp_path):
    items = _mmsu_items(tmp_path)
    preds = [{"id": "m0", "raw_output": "B"}, {"id": "m1", "raw_output": ""},
             {"id": "m2", "raw_output": "no"}, {"id": "m3", "raw_output": "None"}]
    decisions, summary = lalmbench.score_official("mmsu", items, preds, parser={"labels": "shown"})
    # MMSU's prompt lists letters, so ours reads them as shown; by default a bare "B" is no choice
    assert lalmbench.score_official("mmsu", items, preds)[1]["value"] == 0.25
    # m1's empty reply takes the letter B carried from m0 (wrong for m1), m2 is unreadable (left out),
    # m3's "None" takes B too (right); ours reads m2's "no" as B and counts blanks as wrong
    assert decisions["official_score"].tolist()[:2] == [1.0, 0.0] and decisions["official_score"][3] == 1.0
    assert pd.isna(decisions["official_score"][2]) and decisions["official_reason"][2] == "wrong format"
    assert list(decisions["correct"]) == [True, False, True, False]
    assert summary["value_official"] == 2 / 3 and summary["n_official"] == 3 and summary["value"] == 0.5
    assert summary["official_scorer"] == "mmsu_accuracy"
    by_group = {(b["field"], b["group"]): b for b in summary["breakdown"]}
    assert by_group[("category", "Reasoning")]["value_official"] == 1.0
    assert by_group[("category", "Reasoning")]["n_official"] == 1 and by_group[("category", "Reasoning")]["n"] == 2
    reset, s2 = lalmbench.score_official("mmsu", items, preds, settings={"carry_letter": False},
                                         parser={"labels": "shown"})
    assert s2["value_official"] == 1 / 3


def test_score_official_asks_for_a_kind_when_the_preset_mixes_them_and_names_missing_predictions(tmp_path):
    recs = [{"id": "p1", "audio_path": ["a.wav"], "question": "What plays?", "choices": ["piano", "drums"],
             "answer": "drums", "category": "music"},
            {"id": "p2", "audio_path": ["a.wav"], "question": "Say it loud.", "choices": [], "answer": "",
             "category": "instruction following", "task_identifier": "All Uppercase", "kwargs": {}},
            {"id": "p3", "audio_path": ["a.wav"], "question": "Rhyme.", "choices": [], "answer": "",
             "category": "instruction following", "task_identifier": "Rhyme Scheme", "kwargs": {}}]
    src = tmp_path / "test.json"
    src.write_text(json.dumps(recs))
    items = lalmbench.read_items("mmau_pro", {"items": str(src), "audio_root": str(tmp_path), "check_audio": False})
    preds = [{"id": "p1", "raw_output": "drums"}, {"id": "p2", "raw_output": "LOUD"}, {"id": "p3", "raw_output": "x"}]
    with pytest.raises(lalmbench.core.io.InputError, match="several kinds .*pass kind="):
        lalmbench.score_official("mmau_pro", items, preds)
    decisions, summary = lalmbench.score_official("mmau_pro", items, preds, kind="instruction")
    # an unknown check counts as not followed in the official script; ours leaves it out
    assert decisions["official_score"].tolist() == [1.0, 0.0] and summary["value_official"] == 0.5
    assert summary["value"] == 1.0 and summary["n"] == 1
    with pytest.raises(lalmbench.core.io.InputError, match="no row for item 'p3'"):
        lalmbench.score_official("mmau_pro", items, preds[:2], kind="instruction")


def test_read_items_reads_released_items_without_their_audio(tmp_path):
    """Released outputs come without the benchmark's audio: read_items says how to read the items anyway,
    and reads them with audio_needed=False (before: 'item:missing_audio' and no way out but a code comment)."""
    mmau = Path(__file__).resolve().parents[1] / "data" / "imported" / "mmau_test_mini_24.json"
    (tmp_path / "audio").mkdir()
    with pytest.raises(lalmbench.core.io.InputError, match=r"item:missing_audio': 24\}; to read the items without their "
                                                           r"audio .* call lalmbench.read_items\(\.\.\., audio_needed=False\)"):
        lalmbench.read_items("mmau", {"items": str(mmau), "audio_root": str(tmp_path / "audio")}, dataset="mmau")
    with pytest.raises(lalmbench.core.io.InputError, match=r"audio_root is not set.*audio_needed=False"):
        lalmbench.read_items("mmau", {"items": str(mmau)}, dataset="mmau")
    items = lalmbench.read_items("mmau", {"items": str(mmau)}, dataset="mmau", audio_needed=False)
    assert len(items) == 24 and items[0]["answer_text"] == json.loads(mmau.read_text())[0]["answer"]
    with pytest.raises(ValueError, match="audio_needed=False reads a benchmark preset's items"):
        lalmbench.read_items("clotho", {}, dataset="c", audio_needed=False)


def test_an_item_without_a_prediction_names_it_and_the_way_to_score_a_released_file(tmp_path):
    items = _mmsu_items(tmp_path)
    preds = [{"id": "m0", "raw_output": "B"}, {"id": "m1", "raw_output": "A"}]
    with pytest.raises(lalmbench.core.io.InputError, match=r"no prediction for item 'm2' \(2 of 4 items without "
                                                           r"one\); .*pass only the items it has outputs for"):
        lalmbench.score_mcq(items, preds)
    with pytest.raises(lalmbench.core.io.InputError, match=r"no row for item 'm2' \(2 of 4 items without "
                                                           r"one\); .*pass only the items it has outputs for"):
        lalmbench.score_official("mmsu", items, preds)
    kept = [it for it in items if it["id"] in {"m0", "m1"}]
    assert lalmbench.score_official("mmsu", kept, preds)[1]["n"] == 2
