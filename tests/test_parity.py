"""Backend parity (hf vs vllm): agreement of parsed answers on the shared subset, with a Wilson CI."""
from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from lalmbench.core.io import InputError
from lalmbench.checks.parity import answer_agreement, answer_agreement_files


def _dec(ids, labels, gold=None, errors=None):
    df = pd.DataFrame({"id": ids, "pred_label": labels, "error": errors or [None] * len(ids)})
    if gold is not None:
        df["correct"] = [p == g for p, g in zip(labels, gold)]
    return df


def test_agreement_on_shared_subset_with_wilson_ci():
    ids = [f"q{i}" for i in range(40)]
    gold = ["A"] * 40
    hf = _dec(ids, ["A"] * 40, gold)
    vl_labels = ["A"] * 34 + ["B"] * 6           # 6 disagreements, all where hf was right
    vllm = _dec(ids[::-1], vl_labels[::-1], gold)  # other order: joined by id, not by position
    extra = _dec(["only-vllm"], ["C"], ["A"])
    res = answer_agreement(hf, pd.concat([vllm, extra]))
    assert (res["n_a"], res["n_b"], res["n_common"], res["n_compared"], res["n_agree"]) == (40, 41, 40, 40, 34)
    assert res["agreement"] == pytest.approx(34 / 40)
    lo, hi = proportion_confint(34, 40, alpha=0.05, method="wilson")
    assert (res["ci_low"], res["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    assert res["accuracy"] == {"hf": 1.0, "vllm": pytest.approx(34 / 40)}
    assert res["mcnemar"]["hf_only_correct"] == 6 and res["mcnemar"]["vllm_only_correct"] == 0
    assert res["mcnemar"]["p_value"] == pytest.approx(2 * 0.5 ** 6)
    assert {"id": "q34", "hf": "A", "vllm": "B"} in res["disagreements"]


def test_unparsed_and_errors():
    ids = ["a", "b", "c", "d"]
    hf = _dec(ids, ["A", None, None, "C"], errors=[None, None, None, "timeout"])
    vllm = _dec(ids, ["A", None, "B", "C"])
    res = answer_agreement(hf, vllm)
    # d: hf failed -> excluded; b: both unparsed -> agree; c: unparsed vs B -> disagree
    assert (res["n_errors"], res["n_compared"], res["n_agree"]) == (1, 3, 2)
    assert (res["n_both_parsed"], res["agreement_parsed"]) == (1, 1.0)
    assert res["disagreements"] == [{"id": "c", "hf": "<unparsed>", "vllm": "B"}]
    assert "accuracy" not in res


def test_no_overlap_gives_none_not_nan():
    res = answer_agreement(_dec(["a"], ["A"]), _dec(["b"], ["A"]))
    assert res["n_common"] == 0 and res["agreement"] is None and res["ci_low"] is None


def test_bad_input():
    with pytest.raises(InputError, match="decisions of 'vllm' lack column"):
        answer_agreement(_dec(["a"], ["A"]), pd.DataFrame({"id": ["a"]}))
    with pytest.raises(InputError, match="'hf' have duplicate ids"):
        answer_agreement(_dec(["a", "a"], ["A", "B"]), _dec(["a"], ["A"]))
    with pytest.raises(ValueError, match="different names"):
        answer_agreement(_dec(["a"], ["A"]), _dec(["a"], ["A"]), names=("x", "x"))


def test_from_files(tmp_path):
    _dec(["a", "b"], ["A", "B"]).to_parquet(tmp_path / "hf.parquet")
    _dec(["a", "b"], ["A", "A"]).to_parquet(tmp_path / "vllm.parquet")
    res = answer_agreement_files(tmp_path / "hf.parquet", tmp_path / "vllm.parquet")
    assert (res["n_agree"], res["n_compared"]) == (1, 2) and res["files"][1].endswith("vllm.parquet")
    with pytest.raises(InputError, match="missing.parquet: decisions file for the parity check not found"):
        answer_agreement_files(tmp_path / "hf.parquet", tmp_path / "missing.parquet")


def _record_run(results, family, figures, machine="x86_64 Test CPU, 2 CPUs, vLLM CPU engine"):
    from bench.record import record

    from lalmbench.checks.parity import ENGINE_FIGURES, engine_parity_label

    for key, value in figures.items():
        record("vllm_cpu_parity", engine_parity_label(family, key, machine), value, ENGINE_FIGURES[key][1],
               results_dir=results)


def test_engine_parity_record_reads_back_as_one_row_per_family(tmp_path, capsys):
    from lalmbench.checks.parity import main, read_engine_parity

    same = {"items": 33, "vllm_answered": 33, "prompt_ids_equal": 33, "greedy_equal": 33, "hf_items_per_s": 1.3,
            "vllm_items_per_s": 2.3}
    differs = {**same, "greedy_equal": 9, "first_diff_item": 1, "first_diff_position": 0, "hf_gap": 0.41,
               "vllm_gap": 0.0003}
    _record_run(tmp_path, "qwen2_audio", differs)  # an older run that differed ...
    _record_run(tmp_path, "gemma3n", differs)
    _record_run(tmp_path, "qwen2_audio", same)  # ... rerun: its old first difference is not carried over
    table = read_engine_parity(tmp_path / "vllm_cpu_parity.jsonl").set_index("family")
    assert list(table.index) == ["qwen2_audio", "gemma3n"]
    assert table.loc["qwen2_audio", "greedy_equal"] == 33 and pd.isna(table.loc["qwen2_audio", "first_diff_item"])
    assert table.loc["gemma3n", ["greedy_equal", "first_diff_position", "hf_gap"]].tolist() == [9, 0, 0.41]
    assert table.loc["gemma3n", "machine"] == "x86_64 Test CPU, 2 CPUs, vLLM CPU engine"
    assert main([str(tmp_path / "vllm_cpu_parity.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "| qwen2_audio | yes | 33/33 | 33/33 | — | 1.3 / 2.3 |" in out
    assert "| gemma3n | yes | 33/33 | 9/33 | i01, token 0, 0.41 / 0.0003 | 1.3 / 2.3 |" in out
    assert "On x86_64 Test CPU, 2 CPUs, vLLM CPU engine: load average (1 min) up to" in out


def test_engine_parity_record_refuses_a_foreign_line_and_a_missing_file(tmp_path, capsys):
    from bench.record import record

    from lalmbench.checks.parity import main, read_engine_parity

    _record_run(tmp_path, "voxtral", {"items": 32})
    record("vllm_cpu_parity", "voxtral: tokens per second [x86_64 Test CPU]", 5.0, "tokens/s", results_dir=tmp_path)
    with pytest.raises(InputError, match=r"vllm_cpu_parity.jsonl:2: 'voxtral: tokens per second \[x86_64 Test CPU\]'"):
        read_engine_parity(tmp_path / "vllm_cpu_parity.jsonl")
    assert main([str(tmp_path / "none.jsonl")]) == 2
    assert "no engine parity record (run `python bench/vllm_cpu_parity.py`)" in capsys.readouterr().err
