"""The rubrics: config block: defaults, validation messages, and which runs it plans."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lalmbench.workflow.config import ConfigError, validate_config
from lalmbench.rubrics.plan import rubric_nothing_to_do, rubric_path, rubric_runs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cfg():
    c = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    c["datasets"]["clotho"] = {"adapter": "clotho", "params": {"captions": "c.csv", "audio_root": "a"}}
    # the option-picking floors (random, text-prior) cannot caption: the task names the models that can
    c["tasks"]["clotho-caption"] = {"dataset": "clotho", "family": "import", "prompts": ["caption"],
                                    "scoring": {"kind": "captioning"}, "models": ["cascade", "llm"]}
    c["models"]["llm"] = {"backend": "hf", "family": "text", "model_id": "Qwen/Qwen2.5-0.5B-Instruct"}
    return c


def check(cfg):
    return validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)


def test_defaults_are_filled_and_runs_planned(cfg):
    cfg["rubrics"] = {"llm": "llm"}
    check(cfg)
    assert cfg["rubrics"] == {"llm": "llm", "mode": "deterministic", "repeats": 3, "seed": 0, "temperature": 0.7,
                              "top_p": 0.95, "max_new_tokens": 256, "merge_threshold": 0.75, "tasks": [],
                              "max_answers": 20, "answers_per_prompt": 4, "max_criteria": 8,
                              "embedding_model": "default", "cache_dir": "results/cache/rubrics"}
    paths = [rubric_path(r) for r in rubric_runs(cfg)]
    assert "results/rubrics/clotho-caption/cascade/audio.json" in paths
    assert "results/rubrics/clotho-caption/llm/no-audio.json" in paths
    assert all(p.startswith("results/rubrics/clotho-caption/") for p in paths)  # MCQ tasks never


@pytest.mark.parametrize("block, message", [
    ({}, r"rubrics.llm: unknown model 'offline-llm' \(known: cascade, llm, random, signal, text-prior\); add the "
         r"entry \(config/examples/offline-llm.yaml has the offline LLM\) or name another"),
    ({"llm": "llm", "tasks": ["pitch-order"]}, r"rubrics.tasks: 'pitch-order' is not a captioning task"),
    ({"llm": "llm", "tasks": ["nope"]}, r"rubrics.tasks: unknown task 'nope'"),
    ({"llm": "llm", "mode": "random"}, r"rubrics.mode: 'random' is not one of \['deterministic', 'stochastic'\]"),
    ({"llm": "llm", "merge_threshold": 2}, r"rubrics.merge_threshold: 2 is greater than the maximum of 1"),
    ({"llm": "llm", "repeat": 3}, r"rubrics: Additional properties .*'repeat' was unexpected"),
])
def test_a_bad_rubrics_block_names_the_key(cfg, block, message):
    cfg["rubrics"] = block
    with pytest.raises(ConfigError, match=message):
        check(cfg)


def test_nothing_to_evaluate_says_why(cfg):
    assert rubric_nothing_to_do({"tasks": {}}).startswith("rubrics: the config has no rubrics block")
    del cfg["tasks"]["clotho-caption"]
    cfg["rubrics"] = {"llm": "llm"}
    check(cfg)
    assert rubric_runs(cfg) == []
    assert rubric_nothing_to_do(cfg) == ("rubrics.tasks: the config has no captioning task (scoring.kind: "
                                         "captioning) to evaluate")


def test_the_clotho_example_overlays_a_config_with_the_llm_entry(cfg):
    from snakemake.utils import update_config

    cfg["models"]["offline-llm"] = {"backend": "hf", "family": "text", "model_id": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                                    "conditions": ["no-audio"]}
    update_config(cfg, yaml.safe_load((ROOT / "config" / "examples" / "rubrics-clotho.yaml").read_text()))
    check(cfg)
    assert [rubric_path(r) for r in rubric_runs(cfg)] == ["results/rubrics/clotho-caption/offline-llm/no-audio.json"]
