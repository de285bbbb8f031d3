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
    decisions, metrics = lalmbench.score_mcq(items, [{"id": "q1", "raw_output": "A"},
                                                     {"id": "q2", "raw_output": "left"}])
    assert list(decisions["correct"]) == [True, False]
    assert metrics["value"] == 0.5 and metrics["n"] == 2


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
