"""Tokens and latency per run: summarised from the predictions rows into results/tables/cost.tsv."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from lalmbench.report.aggregate import write_all_tsv
from lalmbench.scoring.cost import cost_summary


def test_cost_means_over_outputs_and_outputs_per_second_of_model_time():
    preds = pd.DataFrame({"backend": "hf", "input_tokens": [10, 30], "output_tokens": [4, 8],
                          "latency_s": [0.5, 1.5],
                          "extra": ['{"input_audio_tokens": 6}', '{"input_audio_tokens": 20}']})
    c = cost_summary(preds)
    assert (c["n_outputs"], c["input_tokens_mean"], c["output_tokens_mean"]) == (2, 20.0, 6.0)
    assert c["input_audio_tokens_mean"] == 13.0
    assert c["latency_s_mean"] == 1.0 and c["outputs_per_s"] == 1.0 and c["cost_note"] == ""


def test_a_sampled_run_counts_every_sample():
    samples = [json.dumps([{"input_tokens": 10, "output_tokens": n, "latency_s": 0.25} for n in (2, 4, 6)])] * 2
    c = cost_summary(pd.DataFrame({"backend": "vllm", "samples": samples}))
    assert c["n_outputs"] == 6 and c["output_tokens_mean"] == 4.0 and c["outputs_per_s"] == 4.0


@pytest.mark.parametrize("backend, note", [("random", "a baseline that picks an option: no tokens"),
                                           ("openai", "backend openai reported no token counts")])
def test_a_backend_without_token_counts_says_why(backend, note):
    filled = 1 if backend == "random" else None  # the baselines' placeholder counts are not tokens
    c = cost_summary(pd.DataFrame({"backend": backend, "input_tokens": [None], "output_tokens": [filled],
                                   "latency_s": [0.01]}))
    assert c["output_tokens_mean"] is None and c["cost_note"].startswith(note) and c["latency_s_mean"] == 0.01


def test_cost_goes_to_its_own_table_and_all_tsv_stays_as_it_was(tmp_path):
    run = {"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": "p", "metric": "accuracy",
           "value": 0.5, "n": 2}
    (tmp_path / "a.json").write_text(json.dumps(run))
    write_all_tsv([str(tmp_path / "a.json")], str(tmp_path / "before.tsv"))
    timed = {**run, "cost": cost_summary(pd.DataFrame({"backend": "hf", "input_tokens": [3], "output_tokens": [2],
                                                       "latency_s": [0.123]}))}
    (tmp_path / "b.json").write_text(json.dumps(timed))
    write_all_tsv([str(tmp_path / "b.json")], str(tmp_path / "after.tsv"), cost_out=str(tmp_path / "cost.tsv"))
    assert (tmp_path / "after.tsv").read_bytes() == (tmp_path / "before.tsv").read_bytes()
    cost = pd.read_csv(tmp_path / "cost.tsv", sep="\t")
    assert cost.loc[0, ["model", "backend", "output_tokens_mean", "latency_s_mean"]].tolist() == ["m", "hf", 2.0, 0.123]
