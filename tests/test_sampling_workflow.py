"""generation.samples through the workflow: a tiny hf model drawing k outputs per item reaches
results/all.tsv as accuracy@k_mean, pass@k and majority@k, costs in results/tables/cost.tsv, and a
larger k generates only the new samples."""
from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from tests.workflow import copy_workflow, snakemake

pytestmark = pytest.mark.slow


def _set_samples(wd, model_dir, k: int) -> None:
    path = wd / ".test" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["models"]["sampled"] = {"backend": "hf", "model_id": str(model_dir), "family": "text", "batch_size": 4,
                                "conditions": ["no-audio"], "prompts": ["mcq-default"], "tasks": ["pitch-order"],
                                "generation": {"max_new_tokens": 6, "do_sample": True, "temperature": 1.0,
                                               "samples": k}}
    path.write_text(yaml.safe_dump(cfg))


def test_a_sampled_model_through_the_workflow(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.models import tiny

    model_dir = tiny.build_text_lm(tmp_path / "tiny-text")
    wd = copy_workflow(tmp_path / "wf")
    _set_samples(wd, model_dir, 3)
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    df = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    mine = df[df["model"] == "sampled"].set_index("metric")
    assert set(mine.index) == {"accuracy", "accuracy@3_mean", "pass@3", "majority@3"}
    assert (mine["n"] == 8).all() and (mine["ci_low"] <= mine["value"]).all()
    assert mine.loc["pass@3", "value"] >= mine.loc["accuracy@3_mean", "value"]
    cost = pd.read_csv(wd / "results" / "tables" / "cost.tsv", sep="\t").set_index("model")
    assert cost.loc["sampled", "n_outputs"] == 24 and cost.loc["sampled", "output_tokens_mean"] > 0
    assert cost.loc["random", "cost_note"].iloc[0] == "a baseline that picks an option: no tokens"
    (summary,) = (wd / "results" / "predictions" / "sampled" / "generate").glob("*.json")
    assert json.loads(summary.read_text())["slices"][0]["generated"] == 24

    _set_samples(wd, model_dir, 5)
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    assert json.loads(summary.read_text())["slices"][0]["generated"] == 16  # samples 3 and 4 of 8 items
    df = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    assert {"accuracy@5_mean", "pass@5", "majority@5"} <= set(df.loc[df["model"] == "sampled", "metric"])
    assert not (set(df.loc[df["model"] == "sampled", "metric"]) & {"pass@3", "majority@3"})
