"""generation.samples through the workflow: a tiny hf model drawing k outputs per item reaches
results/all.tsv as accuracy@k_mean, pass@k and majority@k, costs in results/tables/cost.tsv and the
sampling figure, and a larger k generates only the new samples."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml

from tests.workflow import copy_workflow, snakemake


def _set_samples(wd, model_dir, k: int) -> None:
    path = wd / ".test" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["models"]["sampled"] = {"backend": "hf", "model_id": str(model_dir), "family": "text", "batch_size": 4,
                                "conditions": ["no-audio"], "prompts": ["mcq-default"], "tasks": ["pitch-order"],
                                "generation": {"max_new_tokens": 6, "do_sample": True, "temperature": 1.0,
                                               "samples": k}}
    path.write_text(yaml.safe_dump(cfg))


@pytest.mark.slow
def test_a_sampled_model_through_the_workflow(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.models import tiny

    model_dir = tiny.build_text_lm(tmp_path / "tiny-text")
    wd = copy_workflow(tmp_path / "wf")
    _set_samples(wd, model_dir, 3)
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv", "results/tables/sampling.tsv")
    df = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    mine = df[df["model"] == "sampled"].set_index("metric")
    assert set(mine.index) == {"accuracy", "accuracy@3_mean", "pass@3", "majority@3"}
    assert (mine["n"] == 8).all() and (mine["ci_low"] <= mine["value"]).all()
    assert mine.loc["pass@3", "value"] >= mine.loc["accuracy@3_mean", "value"]
    cost = pd.read_csv(wd / "results" / "tables" / "cost.tsv", sep="\t").set_index("model")
    assert cost.loc["sampled", "n_outputs"] == 24 and cost.loc["sampled", "output_tokens_mean"] > 0
    assert cost.loc["random", "cost_note"].iloc[0] == "a baseline that picks an option: no tokens"
    # the generate job's throughput: 24 outputs over its wall time, on no GPU
    assert cost.loc["sampled", "items_per_s"] > 0 and pd.isna(cost.loc["sampled", "gpu_s_per_1000_items"])
    assert cost.loc["sampled", "job_note"].startswith("the job asked for no GPU")
    # all.tsv: the language model's tokens and latency on each of its rows; the baseline's empty, with why
    assert (mine["output_tokens_mean"] == cost.loc["sampled", "output_tokens_mean"]).all()
    assert (mine["latency_s_mean"] > 0).all() and mine["ttft_s_mean"].isna().all()
    assert (mine["cost_note"] == "no audio token count: the processor names no audio token; no reasoning tokens: "
            "the tokenizer has no </think> token (or the outputs predate the count); no time to first token: "
            "hf generates each batch whole, without streaming").all()
    base = df[df["model"] == "random"]
    assert base["latency_s_mean"].isna().all() and base["cost_note"].str.contains("results/tables/cost.tsv").all()
    fig = pd.read_csv(wd / "results" / "tables" / "sampling.tsv", sep="\t").set_index("model")
    assert fig.loc["sampled", "k"] == 3 and fig.loc["sampled", "output_tokens_mean"] > 0
    assert fig.loc["random", "k"] == 1 and fig.loc["random", "cost_note"].startswith("a baseline")
    assert (wd / "results" / "figures" / "sampling.png").stat().st_size > 10_000
    curve = pd.read_csv(wd / "results" / "tables" / "sampling_curve.tsv", sep="\t").set_index("j")
    assert list(curve.index) == [1, 2, 3] and curve["pass_j"].is_monotonic_increasing
    assert curve.loc[1, "pass_j"] == pytest.approx(mine.loc["accuracy@3_mean", "value"])
    assert curve.loc[3, "pass_j"] == pytest.approx(mine.loc["pass@3", "value"])
    (summary,) = (wd / "results" / "predictions" / "sampled" / "generate").glob("*.json")
    assert json.loads(summary.read_text())["slices"][0]["generated"] == 24

    _set_samples(wd, model_dir, 5)
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    assert json.loads(summary.read_text())["slices"][0]["generated"] == 16  # samples 3 and 4 of 8 items
    df = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    assert {"accuracy@5_mean", "pass@5", "majority@5"} <= set(df.loc[df["model"] == "sampled", "metric"])
    assert not (set(df.loc[df["model"] == "sampled", "metric"]) & {"pass@3", "majority@3"})

    # a rerun from the prediction cache: every output and its latency read back, all.tsv to the byte
    table = (wd / "results" / "all.tsv").read_bytes()
    for name in ("predictions", "scores", "all.tsv"):
        path = wd / "results" / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    assert json.loads(summary.read_text())["job"]["generated"] == 0
    assert (wd / "results" / "all.tsv").read_bytes() == table


def test_the_sampling_table_pools_runs_and_sets_a_sampled_model_beside_a_greedy_one():
    from lalmbench.report.plots.sampling import plot_sampling, sampling_table

    keys = {"dataset": "d", "task": "t", "prompt": "p"}
    table = pd.DataFrame([
        {**keys, "model": "greedy", "model_id": "x", "condition": "audio", "metric": "accuracy", "value": 0.5, "n": 10},
        {**keys, "model": "greedy", "model_id": "x", "condition": "no-audio", "metric": "accuracy", "value": 0.1,
         "n": 10},
        {**keys, "model": "s", "model_id": "x", "condition": "audio", "metric": "accuracy", "value": 0.4, "n": 10},
        {**keys, "model": "s", "model_id": "x", "condition": "audio", "metric": "accuracy", "value": 0.7, "n": 30,
         "task": "u"},
        {**keys, "model": "s", "model_id": "x", "condition": "audio", "metric": "accuracy@5_mean", "value": 0.6,
         "n": 40},
        {**keys, "model": "s", "model_id": "x", "condition": "audio", "metric": "pass@5", "value": 0.9, "n": 40},
        {**keys, "model": "s", "model_id": "x", "condition": "audio", "metric": "majority@5", "value": 0.65,
         "n": 40}])
    cost = pd.DataFrame([
        {**keys, "model": "s", "condition": "audio", "n_outputs": 50, "output_tokens_mean": 100.0, "cost_note": ""},
        {**keys, "model": "s", "condition": "audio", "n_outputs": 150, "output_tokens_mean": 200.0, "cost_note": ""},
        {**keys, "model": "greedy", "condition": "audio", "n_outputs": 10, "output_tokens_mean": None,
         "cost_note": "a baseline that picks an option: no tokens"}])
    t = sampling_table(table, cost).set_index("model")
    assert t.loc["greedy", "accuracy"] == 0.5 and t.loc["greedy", "k"] == 1  # its audio run, not no-audio
    assert pd.isna(t.loc["greedy", "pass_k"]) and t.loc["greedy", "cost_note"].startswith("a baseline")
    s = t.loc["s"]
    assert s["k"] == 5 and s["accuracy"] == pytest.approx((0.4 * 10 + 0.7 * 30) / 40)
    assert (s["accuracy_k_mean"], s["pass_k"], s["majority_k"]) == (0.6, 0.9, 0.65)
    assert s["output_tokens_mean"] == pytest.approx(175.0)
    assert len(plot_sampling(sampling_table(table, cost)).axes) == 2


def test_sampling_curves_pool_each_models_runs_by_items_and_prefer_its_audio_runs():
    from lalmbench.report.plots.sampling import plot_sampling, sampling_curves, sampling_table

    def run(task, condition, n, curve):
        return {"model": "s", "task": task, "condition": condition, "n": n,
                "sampling_curve": [{"k": j + 1, "pass": p, "majority": m} for j, (p, m) in enumerate(curve)]}

    metrics = [run("t", "audio", 10, [(0.4, 0.4), (0.6, 0.4)]), run("u", "audio", 30, [(0.8, 0.8), (1.0, 0.9)]),
               run("t", "no-audio", 50, [(0.0, 0.0), (0.0, 0.0)]), {"model": "greedy", "n": 10}]
    c = sampling_curves(metrics).set_index("j")
    assert list(c.index) == [1, 2] and (c["n"] == 40).all()
    assert c.loc[1, "pass_j"] == pytest.approx((0.4 * 10 + 0.8 * 30) / 40)
    assert c.loc[2, "majority_j"] == pytest.approx((0.4 * 10 + 0.9 * 30) / 40)
    table = pd.DataFrame([
        {"model": "s", "model_id": "x", "condition": "audio", "metric": m, "value": v, "n": 40}
        for m, v in [("accuracy", 0.5), ("accuracy@2_mean", 0.7), ("pass@2", 0.9), ("majority@2", 0.78)]])
    cost = pd.DataFrame(columns=["model", "condition", "n_outputs", "output_tokens_mean", "cost_note"])
    fig = plot_sampling(sampling_table(table, cost), sampling_curves(metrics))
    pass_line, = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "s: pass@j"]
    assert list(pass_line.get_xdata()) == [1, 2] and pass_line.get_ydata()[1] == pytest.approx(0.9)
