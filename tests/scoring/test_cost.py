"""Tokens and latency per run: summarised from the predictions rows into results/tables/cost.tsv."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from lalmbench.report.aggregate import COST, MEASURED_COLUMNS, write_all_tsv
from lalmbench.scoring.cost import NO_TOKENS, cost_summary


def test_cost_means_over_outputs_and_outputs_per_second_of_model_time():
    preds = pd.DataFrame({"backend": "hf", "input_tokens": [10, 30], "output_tokens": [4, 8],
                          "latency_s": [0.5, 1.5],
                          "extra": ['{"input_audio_tokens": 6}', '{"input_audio_tokens": 20}']})
    c = cost_summary(preds)
    assert (c["n_outputs"], c["input_tokens_mean"], c["output_tokens_mean"]) == (2, 20.0, 6.0)
    assert c["input_audio_tokens_mean"] == 13.0
    assert c["latency_s_mean"] == 1.0 and c["outputs_per_s"] == 1.0
    # what hf could not count says why: no </think> token in these outputs' tokenizer, no streaming
    assert c["cost_note"] == ("no reasoning tokens: the tokenizer has no </think> token (or the outputs predate "
                              "the count); no time to first token: hf generates each batch whole, without streaming")


def test_reasoning_tokens_and_time_to_first_token_are_means_over_the_outputs_that_have_them():
    extra = ['{"reasoning_tokens": 30, "ttft_s": 0.2, "input_audio_tokens": 50}',
             '{"reasoning_tokens": 10, "ttft_s": 0.4, "input_audio_tokens": 50}']
    c = cost_summary(pd.DataFrame({"backend": "openai", "input_tokens": [60, 60], "output_tokens": [40, 20],
                                   "latency_s": [1.0, 2.0], "extra": extra}))
    assert (c["reasoning_tokens_mean"], c["input_audio_tokens_mean"]) == (20.0, 50.0)
    assert c["ttft_s_mean"] == pytest.approx(0.3)
    assert c["cost_note"] == ""


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


RUN = {"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": "p", "metric": "accuracy",
       "value": 0.5, "n": 2}


def _table(tmp_path, backend: str, latency: float, **more) -> pd.DataFrame:
    """all.tsv of one run whose outputs took ``latency`` seconds each, read back as text."""
    cost = cost_summary(pd.DataFrame({"backend": backend, "input_tokens": [3], "output_tokens": [2],
                                      "latency_s": [latency], **more}))
    (tmp_path / "m.json").write_text(json.dumps({**RUN, "cost": cost}))
    write_all_tsv([str(tmp_path / "m.json")], str(tmp_path / "all.tsv"), cost_out=str(tmp_path / "cost.tsv"))
    return pd.read_csv(tmp_path / "all.tsv", sep="\t", dtype=str, keep_default_na=False)


def test_a_language_models_cost_is_in_all_tsv_and_cost_tsv(tmp_path):
    table = _table(tmp_path, "hf", 0.123, extra=['{"input_audio_tokens": 1, "reasoning_tokens": 0}'])
    assert list(table.columns[-len(COST):]) == COST == ["input_tokens_mean", "input_audio_tokens_mean",
                                                        "output_tokens_mean", "reasoning_tokens_mean",
                                                        "latency_s_mean", "ttft_s_mean", "cost_note"]
    assert table.loc[0, COST].tolist() == ["3", "1", "2", "0", "0.123", "",
                                           "no time to first token: hf generates each batch whole, without streaming"]
    cost = pd.read_csv(tmp_path / "cost.tsv", sep="\t")
    assert cost.loc[0, ["model", "backend", "output_tokens_mean", "latency_s_mean"]].tolist() == ["m", "hf", 2.0, 0.123]


@pytest.mark.parametrize("backend", sorted(NO_TOKENS))
def test_a_backend_without_tokens_leaves_the_cost_columns_empty_and_all_tsv_byte_stable(tmp_path, backend):
    first = _table(tmp_path, backend, 0.5)
    again = (tmp_path / "all.tsv").read_bytes()
    assert _table(tmp_path, backend, 0.25).equals(first) and (tmp_path / "all.tsv").read_bytes() == again
    assert first.loc[0, COST[:-1]].tolist() == [""] * 6
    note = first.loc[0, "cost_note"]
    assert note.startswith(NO_TOKENS[backend])
    # the cascade's CPU pipeline is timed: where its latency is, and why not here
    assert ("results/tables/cost.tsv" in note and "reproduces to the byte" in note) == (backend != "imported")
    assert pd.read_csv(tmp_path / "cost.tsv", sep="\t").loc[0, "latency_s_mean"] == 0.25


def test_a_language_models_all_tsv_differs_only_in_its_measured_columns(tmp_path):
    a = _table(tmp_path, "vllm", 0.5, extra=['{"ttft_s": 0.1}'])
    b = _table(tmp_path, "vllm", 0.7, extra=['{"ttft_s": 0.2}'])
    assert set(MEASURED_COLUMNS) == {"latency_s_mean", "ttft_s_mean"}
    assert a.drop(columns=list(MEASURED_COLUMNS)).equals(b.drop(columns=list(MEASURED_COLUMNS)))
    assert a.loc[0, "ttft_s_mean"] == "0.1" and b.loc[0, "ttft_s_mean"] == "0.2"
