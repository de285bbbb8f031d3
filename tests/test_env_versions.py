"""One DAG, three software stacks: a real `software: venv` run in which each rule's python is its own env.

The random floor runs in core, a tiny Qwen2-Audio checkpoint runs in hf (an MCQ task and a captioning
task), and the captioning metrics run in captioning. core and hf pin different torch builds, captioning a
transformers<5 and numpy<2 (on core's CPU torch), so the versions the pipeline records in its own outputs show which
interpreter produced each file: predictions parquet (`versions`), the captioning worker's `info` and
the run's metrics.json (`captioning_info`).

The envs are the ones `make test` builds: ROOT/.venv (core) and ROOT/.venvs/{hf,captioning} with
their `.ready` stamps. They are never written to: the run's venv_root holds, per env, a directory of
symlinks to the env's bin/lib/include/pyvenv.cfg plus its own `.ready` (python finds pyvenv.cfg next to
bin/.., so `<venv_root>/hf/bin/python` is the hf env with sys.prefix under venv_root).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml

from tests.workflow import ROOT, copy_workflow, link_env, snakemake

ENVS = {"core": ROOT / ".venv", "hf": ROOT / ".venvs" / "hf", "captioning": ROOT / ".venvs" / "captioning"}
STAMPS = {"core": ENVS["core"] / ".installed", "hf": ENVS["hf"] / ".ready",
          "captioning": ENVS["captioning"] / ".ready"}
PACKAGES = ("torch", "transformers", "numpy")
CLOTHO_CSV = ROOT / "tests" / "data" / "datasets" / "clotho" / "clotho_captions_evaluation.csv"
CAPTION_TASK = "clotho-caption"


def _missing_envs() -> list[str]:
    return [f"{name} ({STAMPS[name].relative_to(ROOT)})" for name in ENVS
            if not (ENVS[name] / "bin" / "python").exists() or not STAMPS[name].exists()]


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(_missing_envs()),
                       reason="needs the envs `make test` builds: missing " + ", ".join(_missing_envs())),
]


def pins(env: str) -> dict[str, str]:
    """torch/transformers/numpy pins of envs/<env>/requirements.txt (`name==version` lines)."""
    out = {}
    for line in (ROOT / "envs" / env / "requirements.txt").read_text().splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;#]+)", line)
        if m and m.group(1).lower() in PACKAGES:
            out[m.group(1).lower()] = m.group(2)
    assert set(out) == set(PACKAGES), f"envs/{env}/requirements.txt does not pin all of {PACKAGES}: {out}"
    return out


def public(versions: dict) -> dict[str, str]:
    """The tracked packages' versions without a local label (torch wheels say 2.13.0+cpu for ==2.13.0)."""
    return {p: str(versions.get(p, "")).split("+")[0] for p in PACKAGES}


def env_python_reports(py: Path) -> dict:
    code = ("import json, sys, torch, transformers, numpy; print(json.dumps({'prefix': sys.prefix, "
            "'torch': torch.__version__, 'transformers': transformers.__version__, 'numpy': numpy.__version__}))")
    proc = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def versions_of(parquet: Path) -> dict:
    df = pd.read_parquet(parquet)
    assert len(df) and df["versions"].notna().all(), parquet
    seen = {v for v in df["versions"]}
    assert len(seen) == 1, f"{parquet}: rows disagree on versions: {seen}"
    return json.loads(seen.pop())


@pytest.fixture(scope="module")
def venv_run(tmp_path_factory):
    stamps_before = {env: p.stat().st_mtime_ns for env, p in STAMPS.items()}
    wd = copy_workflow(tmp_path_factory.mktemp("wf"))
    venv_root = (tmp_path_factory.mktemp("venvs")).resolve()
    pythons = {env: link_env(src, venv_root / env) / "bin" / "python" for env, src in ENVS.items()}

    # a tiny Qwen2-Audio checkpoint, built by the hf env's transformers (the one that loads it)
    ckpt = tmp_path_factory.mktemp("tiny_qwen2_audio").resolve()
    proc = subprocess.run(
        [str(pythons["hf"]), "-c", f"from pathlib import Path; from tests.models.tiny import build_qwen2_audio; "
                                   f"build_qwen2_audio(Path({str(ckpt)!r}))"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]

    # Clotho evaluation captions (4 rows) with 1 s of noise for each file name
    audio_root = wd / "clotho_audio"
    audio_root.mkdir()
    names = pd.read_csv(CLOTHO_CSV)["file_name"].tolist()[:4]
    rng = np.random.default_rng(0)
    for name in names:
        sf.write(audio_root / name, (0.1 * rng.standard_normal(16000)).astype(np.float32), 16000)

    cfg = {
        "seed": 0,
        "datasets": {"synth-trivial": {"adapter": "synth_trivial"},
                     "clotho-eval": {"adapter": "clotho",
                                     "params": {"captions": str(CLOTHO_CSV), "audio_root": str(audio_root)}}},
        "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 4}},
                  CAPTION_TASK: {"dataset": "clotho-eval", "family": "import", "prompts": ["caption"],
                                 "models": ["tiny-hf"],
                                 "scoring": {"kind": "captioning", "metrics": ["bleu_1", "rouge_l", "cider_d"],
                                             # jar links to the linked env stay in tmp, not the user cache
                                             "cache_dir": str(wd / "aac-cache")}}},
        "models": {"random": {"backend": "random", "seed": 0, "env": "core", "tasks": ["pitch-order"]},
                   "tiny-hf": {"backend": "hf", "family": "qwen2_audio", "model_id": str(ckpt), "env": "hf",
                               "generation": {"max_new_tokens": 8}}},
        "conditions": ["audio"],
        "prompts": ["mcq-default"],
    }
    (wd / "venv-versions.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    proc = snakemake(wd, "--configfile=venv-versions.yaml", "--config", "software=venv", f"venv_root={venv_root}",
                     "--", "results/all.tsv")
    return {"wd": wd, "venv_root": venv_root, "pythons": pythons, "log": proc.stdout + proc.stderr,
            "stamps_before": stamps_before}


def test_linked_venv_root_entries_run_their_own_env(venv_run):
    for env, py in venv_run["pythons"].items():
        got = env_python_reports(py)
        assert Path(got["prefix"]) == venv_run["venv_root"] / env  # pyvenv.cfg found next to bin/..
        assert public(got) == pins(env), env
    # build_venv saw every stamp as up to date: nothing was (re)built into the shared envs
    assert "build_venv" not in venv_run["log"]
    assert {env: p.stat().st_mtime_ns for env, p in STAMPS.items()} == venv_run["stamps_before"]


def test_each_rule_ran_in_its_own_env(venv_run):
    res = venv_run["wd"] / "results"
    core, hf, cap = pins("core"), pins("hf"), pins("captioning")

    random_pred = res / "predictions" / "random" / "synth-trivial" / "pitch-order" / "audio" / "mcq-default.parquet"
    assert public(versions_of(random_pred)) == core
    assert not list((res / "predictions" / "random").glob(f"*/{CAPTION_TASK}/**/*.parquet"))

    for dataset, task, prompt in [("synth-trivial", "pitch-order", "mcq-default"),
                                  ("clotho-eval", CAPTION_TASK, "caption")]:
        pred = res / "predictions" / "tiny-hf" / dataset / task / "audio" / f"{prompt}.parquet"
        assert public(versions_of(pred)) == hf, pred

    run_dir = res / "scores" / "tiny-hf" / "clotho-eval" / CAPTION_TASK / "audio" / "caption"
    worker_info = json.loads((run_dir / "captioning.json").read_text())["info"]
    assert public(worker_info) == cap
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert public(metrics["captioning_info"]) == cap, metrics

    # three stacks in one DAG: the pins really differ, so the checks above tell the envs apart (captioning takes
    # core's CPU torch and differs from both in transformers and numpy)
    assert core["torch"] != hf["torch"]
    assert cap["transformers"] not in {core["transformers"], hf["transformers"]}
    assert cap["numpy"] not in {core["numpy"], hf["numpy"]}


def test_all_tsv_has_both_models(venv_run):
    df = pd.read_csv(venv_run["wd"] / "results" / "all.tsv", sep="\t")
    pairs = set(zip(df.model, df.task, df.metric))
    assert ("random", "pitch-order", "accuracy") in pairs
    assert ("tiny-hf", "pitch-order", "accuracy") in pairs
    assert ("tiny-hf", CAPTION_TASK, "cider_d") in pairs
    assert not (df.model == "random").to_numpy()[df.task.to_numpy() == CAPTION_TASK].any()

