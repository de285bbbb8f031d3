"""software: conda on the cluster example: each job runs in the env of the work it does.

A stand-in `conda` (tests/data/conda/bin) answers what Snakemake asks when listing envs, so the
listing, the per-job env and --containerize are checked without conda installed."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.workflow import ROOT, copy_workflow

CONDA_BIN = ROOT / "tests" / "data" / "conda" / "bin"
CLUSTER = "config/examples/cluster.yaml"
CONDA_JOBS = str(ROOT / "tests" / "conda_jobs.py")


@pytest.fixture
def wd(tmp_path) -> Path:
    return copy_workflow(tmp_path / "wf")


def _run(wd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=os.pathsep.join([str(CONDA_BIN), str(Path(sys.executable).parent), os.environ["PATH"]]))
    proc = subprocess.run([sys.executable, *args], cwd=wd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_list_conda_envs_names_the_four_envs(wd):
    out = _run(wd, "-m", "snakemake", "--sdm", "conda", "--list-conda-envs", f"--configfile={CLUSTER}",
               "--config", "software=conda").stdout
    envs = sorted(line.split("\t")[0] for line in out.splitlines()[1:] if line.strip())
    assert envs == ["envs/captioning.yaml", "envs/core.yaml", "envs/hf.yaml", "envs/vllm.yaml"], out


def test_each_job_gets_the_env_of_its_work(wd):
    rows = [line.split("\t") for line in _run(wd, CONDA_JOBS, CLUSTER).stdout.splitlines() if "\t" in line]
    models = yaml.safe_load((ROOT / CLUSTER).read_text())["models"]
    generate: dict[str, set[str]] = {}
    for rule, wc, env in rows:
        if rule.startswith("generate_"):  # wildcards model=<m>,unit=<dataset>: one job per model and dataset
            generate.setdefault(dict(kv.split("=", 1) for kv in wc.split(","))["model"], set()).add(env)
    # every model's generate jobs run in its own env
    assert generate == {m: {f"envs/{c.get('env', 'core')}.yaml"} for m, c in models.items()}
    generate = {m: envs.pop() for m, envs in generate.items()}
    assert {"envs/hf.yaml", "envs/vllm.yaml", "envs/core.yaml"} <= set(generate.values())
    caption = [env for rule, _, env in rows if rule == "caption_metrics"]
    assert caption and set(caption) == {"envs/captioning.yaml"}
    # everything else, the local model_fingerprint and infer jobs included, runs in core
    others = {env for rule, _, env in rows if not rule.startswith("generate_") and rule != "caption_metrics"}
    assert others == {"envs/core.yaml"}, others


def test_containerize_renders_every_env(wd):
    out = _run(wd, "-m", "snakemake", "--containerize", f"--configfile={CLUSTER}", "--config", "software=conda").stdout
    assert out.startswith("FROM condaforge/miniforge3")
    for env in ("captioning", "core", "hf", "vllm"):
        assert f"source: envs/{env}.yaml" in out
    assert out.count("conda env create") == 4


def test_an_llm_judge_scores_in_its_own_env(wd, tmp_path):
    cfg = yaml.safe_load((ROOT / CLUSTER).read_text())
    cfg["models"]["judge-hf"] = {"backend": "hf", "model_id": "Qwen/Qwen2.5-7B-Instruct", "family": "text", "env": "hf",
                                 "conditions": ["no-audio"], "tasks": ["pitch-order"], "resources": {"gpus": 1}}
    cfg["tasks"]["clotho-judged"] = {"dataset": "clotho-eval", "family": "import", "prompts": ["caption"],
                                     "models": ["qwen2-audio-7b"],
                                     "scoring": {"kind": "judge", "judge_model": "judge-hf", "prompt": "sqqa"}}
    (tmp_path / "judged.yaml").write_text(yaml.safe_dump(cfg))
    rows = [line.split("\t") for line in _run(wd, CONDA_JOBS, str(tmp_path / "judged.yaml")).stdout.splitlines()
            if "\t" in line]
    judged = {(rule, env) for rule, wc, env in rows if "task=clotho-judged" in wc and rule.startswith("score")}
    assert judged == {("score_open_hf", "envs/hf.yaml")}
    assert {env for rule, wc, env in rows if rule == "score_open"} == {"envs/core.yaml"}
