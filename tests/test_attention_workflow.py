"""`snakemake attention` end to end: a tiny Qwen2-Audio captured in the hf env (software: venv), figures in core."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from lalmbench.attention.share import answer_rows, audio_share
from tests.test_env_versions import ENVS, STAMPS, link_env, pins
from tests.workflow import ROOT, copy_workflow, snakemake

CONFIG = {
    "seed": 0,
    "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
    "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 4}}},
    "conditions": ["audio"],
    "prompts": ["mcq-default"],
}


def write_config(wd: Path, models: dict) -> str:
    (wd / "attention.yaml").write_text(yaml.safe_dump({**CONFIG, "models": models}, sort_keys=False))
    return "--configfile=attention.yaml"


def test_attention_on_a_backend_without_it_fails_before_any_job(tmp_path):
    wd = copy_workflow(tmp_path)
    arg = write_config(wd, {"random": {"backend": "random", "attention": {"layers": [0]}}})
    proc = snakemake(wd, arg, "-n", "attention", check=False)
    assert proc.returncode != 0
    assert "models.random.attention: attention capture needs backend hf (this model's backend is 'random')" in (
        proc.stdout + proc.stderr)


@pytest.mark.slow
@pytest.mark.skipif(not all((ENVS[e] / "bin" / "python").exists() and STAMPS[e].exists() for e in ("core", "hf")),
                    reason="needs the core and hf envs `make test` builds (.venv, .venvs/hf)")
def test_attention_target_writes_item_files_heatmaps_and_the_share_figure(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("wf"))
    venv_root = tmp_path_factory.mktemp("venvs").resolve()
    for env in ("core", "hf"):
        link_env(ENVS[env], venv_root / env)
    ckpt = tmp_path_factory.mktemp("tiny_qwen2_audio").resolve()
    proc = subprocess.run(
        [str(venv_root / "hf" / "bin" / "python"), "-c",
         f"from pathlib import Path; from tests.models.tiny import build_qwen2_audio; build_qwen2_audio(Path({str(ckpt)!r}))"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    arg = write_config(wd, {"tiny-hf": {
        "backend": "hf", "family": "qwen2_audio", "model_id": str(ckpt), "env": "hf",
        "generation": {"max_new_tokens": 4}, "conditions": ["audio", "silence"],
        "attention": {"layers": [0, -1], "max_items": 2}}})
    snakemake(wd, arg, "--config", "software=venv", f"venv_root={venv_root}", "--", "attention")

    man = json.loads((wd / "results/attention/tiny-hf/capture.json").read_text())
    dirs = [wd / i["dir"] for i in man["items"]]
    assert [i["dir"] for i in man["items"]] == [f"results/attention/tiny-hf/synth-trivial/pitch-order/{c}/pitch-order-0000{k}"
                                                for c in ("audio", "silence") for k in (0, 1)]
    recomputed = {}
    for d in dirs:
        assert sorted(p.name for p in d.iterdir()) == ["attn.npy", "meta.json", "tokens.json"]
        meta = json.loads((d / "meta.json").read_text())
        tokens = json.loads((d / "tokens.json").read_text())
        attn = np.load(d / "attn.npy")
        assert meta["layers"] == [0, 1] and attn.shape == (2, 1, meta["seq_len"], meta["seq_len"])
        assert meta["versions"]["torch"].split("+")[0] == pins("hf")["torch"]  # captured in the hf env
        assert meta["n_audio_tokens"] > 0 and len(tokens["tokens"]) == meta["seq_len"]
        share = audio_share(attn, tokens["spans"]["audio"], answer_rows(tokens["spans"]))
        for layer, v in zip(meta["layers"], share):
            recomputed.setdefault((meta["condition"], layer), []).append(v)
        png = wd / "results/figures/attention/tiny-hf/synth-trivial/pitch-order" / meta["condition"] / f"{d.name}.png"
        assert png.stat().st_size > 0
    summary = pd.read_csv(wd / "results/tables/attention_audio_share.tsv", sep="\t")
    got = {(r.condition, r.layer): r.audio_share for r in summary.itertuples()}
    assert got == pytest.approx({k: float(np.mean(v)) for k, v in recomputed.items()}, abs=1e-5)
    assert (summary["n_items"] == 2).all()
    for ext in ("png", "svg"):
        assert (wd / f"results/figures/attention_audio_share.{ext}").stat().st_size > 0
