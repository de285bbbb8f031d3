"""`snakemake rubrics` end to end on a tiny config: Clotho references (4 clips, noise audio), a tiny
random Qwen2 LM that captions blind (no-audio) and is also the rubric LLM, through the real rules."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml

from tests.workflow import ROOT, copy_workflow, planned_jobs, snakemake

pytestmark = pytest.mark.slow
CLOTHO_CSV = ROOT / "tests" / "data" / "datasets" / "clotho" / "clotho_captions_evaluation.csv"
OUT = "results/rubrics/clotho-caption/tiny-lm/no-audio.json"


@pytest.fixture(scope="module")
def wd(tmp_path_factory):
    from tests.models.tiny import build_text_lm

    wd = copy_workflow(tmp_path_factory.mktemp("wf"))
    ckpt = build_text_lm(tmp_path_factory.mktemp("tiny_lm"))
    audio_root = wd / "clotho_audio"
    audio_root.mkdir()
    rng = np.random.default_rng(0)
    for name in pd.read_csv(CLOTHO_CSV)["file_name"]:
        sf.write(audio_root / name, (0.1 * rng.standard_normal(16000)).astype(np.float32), 16000)
    cfg = {
        "seed": 0,
        "datasets": {"clotho": {"adapter": "clotho", "params": {"captions": str(CLOTHO_CSV),
                                                                 "audio_root": str(audio_root)}}},
        "tasks": {"clotho-caption": {"dataset": "clotho", "family": "import", "prompts": ["caption"],
                                     "scoring": {"kind": "captioning"}}},
        "models": {"tiny-lm": {"backend": "hf", "family": "text", "model_id": str(ckpt), "batch_size": 2,
                               "conditions": ["no-audio"], "generation": {"max_new_tokens": 8}}},
        "conditions": ["audio"],
        "prompts": ["caption"],
        "rubrics": {"llm": "tiny-lm", "max_new_tokens": 16, "answers_per_prompt": 2},
    }
    (wd / "rubrics.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake(wd, "--configfile=rubrics.yaml", "--", "rubrics")
    return wd


def test_rubric_json_and_table(wd):
    doc = json.loads((wd / OUT).read_text())
    assert doc["llm"]["llm"] == "tiny-lm" and doc["llm"]["sampling"]["do_sample"] is False
    answers = doc["answers"]
    assert answers["items"] == 4 and answers["used"] + answers["failed_or_empty"] == 4
    (one,) = doc["runs"]
    # random weights write no rubric: every proposal is counted, none dropped
    assert len(one["proposals"]) == -(-answers["used"] // 2)
    assert sum(one["summary"]["proposal_status"].values()) == len(one["proposals"])
    table = pd.read_csv(wd / "results" / "rubrics" / "rubrics.tsv", sep="\t")
    assert table[["task", "model", "condition", "prompt", "mode"]].values.tolist() == [
        ["clotho-caption", "tiny-lm", "no-audio", "caption", "deterministic"]]
    assert table.loc[0, "proposals_unreadable"] == one["summary"]["proposal_status"]["unreadable"]


def test_rerun_is_all_cache_hits_and_rule_all_never_plans_rubrics(wd):
    snakemake(wd, "--configfile=rubrics.yaml", "--forcerun", "rubric", "--", "rubrics")
    log = (wd / "results" / "logs" / "rubric" / "clotho-caption" / "tiny-lm" / "no-audio.log").read_text()
    assert "0 LLM calls (the rest from the cache)" in log
    rules = {j["rule"] for j in planned_jobs(snakemake(wd, "--configfile=rubrics.yaml", "-n", "--forceall").stdout)}
    assert "all" in rules and not rules & {"rubric", "rubric_table", "rubrics"}


def test_only_what_changes_a_rubric_reruns_it(wd):
    cfg = yaml.safe_load((wd / "rubrics.yaml").read_text())
    cfg["models"]["tiny-lm"]["batch_size"] = 1  # how the LLM runs, not what it answers
    (wd / "provisioning.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(wd, "--configfile=provisioning.yaml", "-n", "--", "rubrics").stdout
    assert "Nothing to be done" in out or not [j for j in planned_jobs(out) if j["rule"] == "rubric"]
    cfg["rubrics"]["merge_threshold"] = 0.9
    (wd / "threshold.yaml").write_text(yaml.safe_dump(cfg))
    jobs = planned_jobs(snakemake(wd, "--configfile=threshold.yaml", "-n", "--", "rubrics").stdout)
    (rubric,) = [j for j in jobs if j["rule"] == "rubric"]
    assert rubric["reason"].startswith("Params have changed since last execution")
    assert '"merge_threshold":0.9' in rubric["reason"]
