"""Items an imported file has no output for: left out of value and value_official alike (the default), or
counted as wrong (``missing: wrong``), with a flag that says how many, never a failed run."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import lalmbench
from lalmbench.core import io
from lalmbench.core.io import InputError
from lalmbench.scoring.official import string_match
from lalmbench.scoring.run import score_run_files

MMAU = Path(__file__).resolve().parents[1] / "data" / "imported" / "mmau_test_mini_24.json"
OFFICIAL = {"scorer": "mmau_string_match", "breakdown": []}


def _run(tmp_path, missing: str | None, n_absent: int = 3) -> tuple[dict, pd.DataFrame, list[dict]]:
    """Score the fixture's 24 MMAU items where the file has outputs for all but the first ``n_absent``
    (the right answer text for the rest, but a wrong choice for two)."""
    records = json.loads(MMAU.read_text())
    items = lalmbench.read_items("mmau", {"items": str(MMAU)}, dataset="mmau", audio_needed=False)
    io.write_jsonl(tmp_path / "items.jsonl", items)
    src = "released/qwen2_audio_test_mini.json"
    rows = []
    for k, rec in enumerate(records):
        if k < n_absent:
            rows.append({"id": rec["id"], "raw_output": None, "error": None, "extra": json.dumps({"no_output": src})})
        else:
            wrong = next(c for c in rec["choices"] if c != rec["answer"])
            rows.append({"id": rec["id"], "raw_output": wrong if k in (5, 6) else rec["answer"], "error": None,
                         "extra": None})
    pd.DataFrame(rows).to_parquet(tmp_path / "preds.parquet")
    metrics = score_run_files(items_path=str(tmp_path / "items.jsonl"), predictions_path=str(tmp_path / "preds.parquet"),
                              parser_cfg={"labels": "hidden"}, config_hash="h", run=["m", "mmau", "mmau", "audio", "p"],
                              decisions_path=str(tmp_path / "d.parquet"), metrics_path=str(tmp_path / "m.json"),
                              official_cfg=OFFICIAL, missing=missing)
    return metrics, pd.read_parquet(tmp_path / "d.parquet"), rows


def test_items_without_an_output_leave_value_and_value_official_by_default(tmp_path):
    metrics, decisions, rows = _run(tmp_path, None)
    assert (metrics["n"], metrics["value"], metrics["n_official"], metrics["value_official"]) == (21, 19 / 21, 21, 19 / 21)
    assert metrics["flags"] == ["3 of 24 items have no output in released/qwen2_audio_test_mini.json: left out of "
                                "value and value_official"]
    assert (metrics["n_no_output"], metrics["missing"]) == (3, "leave-out")
    assert len(decisions) == 21 and not set(decisions["id"]) & {r["id"] for r in rows[:3]}
    # what MMAU's script gives on the file: every record in it, by its string match
    records = {r["id"]: r for r in json.loads(MMAU.read_text())}
    script = [string_match(records[r["id"]]["answer"], r["raw_output"], records[r["id"]]["choices"]) for r in rows[3:]]
    assert metrics["value_official"] == sum(script) / len(script)


def test_the_strict_reading_counts_them_wrong(tmp_path):
    metrics, decisions, _ = _run(tmp_path, "wrong")
    assert (metrics["n"], metrics["value"], metrics["n_official"], metrics["value_official"]) == (24, 19 / 24, 24, 19 / 24)
    assert metrics["flags"] == ["3 of 24 items have no output in released/qwen2_audio_test_mini.json: counted as "
                                "wrong (missing: wrong)"]
    assert decisions["parse_status"].iloc[:3].tolist() == ["empty"] * 3


def test_a_run_with_no_output_at_all_names_the_file(tmp_path):
    with pytest.raises(InputError, match=r"released/qwen2_audio_test_mini.json: none of the 24 items of this run has "
                                         r"an output"):
        _run(tmp_path, None, n_absent=24)
