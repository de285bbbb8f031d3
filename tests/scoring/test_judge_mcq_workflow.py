"""The MCQ LLM-judge fallback end to end: the real Snakefile, a model and a judge that are both
``openai`` entries served by a scripted fake server (no network), results/all.tsv at the end."""
from __future__ import annotations

import hashlib

import pandas as pd
import pytest

pytest.importorskip("httpx", reason="the openai backend needs httpx (core env)")

from tests.fake_openai import FakeServer  # noqa: E402
from tests.workflow import copy_workflow, snakemake  # noqa: E402

CONFIG = """seed: 0
scale: 1
datasets:
  synth-trivial: {{adapter: synth_trivial}}
tasks:
  pitch-order: {{dataset: synth-trivial, family: pitch_order, params: {{n_items: 8}}}}
models:
  api:
    backend: openai
    model_id: fake/audio-lm
    params: {{base_url: "{url}", api_key_env: LALM_JUDGE_KEY, max_concurrency: 1}}
  judge:
    backend: openai
    model_id: fake/judge
    conditions: [no-audio]
    params: {{base_url: "{url}", api_key_env: LALM_JUDGE_KEY, max_concurrency: 1}}
conditions: [audio]
prompts: [mcq-default]
judge: {{judge_model: judge, audit_n: 50}}
"""
HEDGE = "Hmm, tough one; my gut goes with the later of them."  # unreadable by the rules, yet an answer (not a non-answer)


def _reply(body: dict) -> str:
    """The audio LM answers "A" or a hedge (by the audio's hash); the judge reads "A" as A and the
    hedge as B, so it agrees with every rule read and credits exactly the hedged items."""
    parts = body["messages"][-1]["content"]
    text = next(p["text"] for p in parts if p["type"] == "text")
    if "Model's reply: " in text:
        return "A" if f"Model's reply: \n```\n{HEDGE}\n```" not in text else "B"  # the reply is fenced
    audio = [p["input_audio"]["data"] for p in parts if p["type"] == "input_audio"]
    digest = hashlib.sha256((audio[0] if audio else text).encode()).digest()
    return "A" if digest[0] % 2 else HEDGE


@pytest.mark.slow
def test_a_judged_run_writes_judge_decisions_and_both_accuracies(tmp_path, monkeypatch):
    server = FakeServer()
    server.answer_body = _reply
    wd = copy_workflow(tmp_path / "wf")
    (wd / ".test" / "judge.yaml").write_text(CONFIG.format(url=server.url))
    monkeypatch.setenv("LALM_JUDGE_KEY", "sk-test")
    try:
        snakemake(wd, "--configfile=.test/judge.yaml", "results/all.tsv")
    finally:
        server.close()
    dec = pd.read_parquet(wd / "results/scores/api/synth-trivial/pitch-order/audio/mcq-default/decisions.parquet")
    hedged = dec["raw_output"] == HEDGE
    assert 0 < hedged.sum() < len(dec)
    assert (dec.loc[hedged, "outcome"] == "unparseable").all()  # the rule columns stay rule-only
    assert (dec.loc[hedged, "parse_status_with_judge"] == "judge").all()
    assert (dec.loc[hedged, "pred_label_with_judge"] == "B").all()
    assert set(dec.loc[~hedged, "judge_role"]) == {"audit"} and set(dec["judge_model"]) == {"judge"}
    table = pd.read_csv(wd / "results/all.tsv", sep="\t", keep_default_na=False)
    row = table[(table["model"] == "api")].iloc[0]
    assert float(row["value"]) == pytest.approx(dec["correct"].mean())
    assert float(row["value_with_judge"]) == pytest.approx(dec["correct_with_judge"].mean())
    assert float(row["judge_agreement"]) == 1.0 and row["flags"] == ""
    assert any((wd / "results/cache/judge").rglob("*.json"))
