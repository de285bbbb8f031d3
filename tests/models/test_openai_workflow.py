"""The whole workflow with an ``openai`` model whose server echoes the key: nothing written holds it."""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest

pytest.importorskip("httpx", reason="the openai backend needs httpx (core env)")

from tests.fake_openai import FakeServer  # noqa: E402
from tests.leaks import scan_tree  # noqa: E402
from tests.workflow import copy_workflow, snakemake  # noqa: E402

KEY = "sk-e2e-PLANTED/9d1c+44b7e0a2f63c85_Zq"

CONFIG = """seed: 0
scale: 1
max_error_rate: 1.0
datasets:
  synth-trivial: {{adapter: synth_trivial}}
tasks:
  pitch-order: {{dataset: synth-trivial, family: pitch_order, params: {{n_items: 6}}}}
models:
  api:
    backend: openai
    model_id: fake/audio-lm
    batch_size: 3
    params: {{base_url: "{url}", api_key_env: LALM_E2E_KEY, max_concurrency: 1, max_retries: 1,
              backoff_s: 0.01, backoff_max_s: 0.02}}
conditions: [audio]
prompts: [mcq-default]
"""


def _audio_digest(body: dict) -> str:
    parts = body["messages"][-1]["content"]
    data = next(p["input_audio"]["data"] for p in parts if p["type"] == "input_audio")
    return hashlib.sha256(data.encode()).hexdigest()


@pytest.mark.slow
def test_a_run_against_a_key_echoing_server_writes_the_key_nowhere(tmp_path, monkeypatch):
    server = FakeServer()
    state = {"n": 0, "bad": None, "ok": 0}

    def fail_if(body):
        """Request 1: a 500 (retried); the item of request 2: a 401 every time it is asked."""
        state["n"] += 1
        digest = _audio_digest(body)
        if state["n"] == 1:
            return 500, {}
        if state["n"] == 2:
            state["bad"] = digest
        return (401, {}) if digest == state["bad"] else None

    def fail_body(auth):
        # every spelling a server or proxy might use, the raw key straddling the 300-character cut
        b64 = base64.b64encode(auth.encode()).decode()
        body = f"b64={b64} url={quote(auth)} " + "x" * 160 + f" auth={auth} tail"
        assert body.index(KEY) < 300 < body.index(KEY) + len(KEY)
        return body

    def respond(auth):
        """First success: the key in every text field; second: the key as token counts (an item error,
        retried alone by the runner); then plain answers."""
        state["ok"] += 1
        if state["ok"] == 1:
            return {"id": auth, "model": f"fake {auth}", "system_fingerprint": auth,
                    "usage": {"prompt_tokens": 11, "completion_tokens": 1, "detail": auth},
                    "choices": [{"finish_reason": auth, "logprobs": auth,
                                 "message": {"role": auth, "content": [{"type": "text", "text": f"A. You sent {auth}"}]}}]}
        if state["ok"] == 2:
            return {"model": "fake", "usage": {"prompt_tokens": auth, "completion_tokens": auth},
                    "choices": [{"finish_reason": "stop", "message": {"content": "A"}}]}
        return {"model": "fake", "usage": {"prompt_tokens": 11, "completion_tokens": 1},
                "choices": [{"finish_reason": "stop", "message": {"content": "A"}}]}

    server.fail_if, server.fail_body, server.respond = fail_if, fail_body, respond
    (tmp_path / "wf").mkdir()
    wd = copy_workflow(tmp_path / "wf")
    (wd / ".test" / "secrets.yaml").write_text(CONFIG.format(url=server.url))
    monkeypatch.setenv("LALM_E2E_KEY", KEY + "\r\n")
    try:
        snakemake(wd, "--configfile=.test/secrets.yaml")
        snakemake(wd, "--configfile=.test/secrets.yaml", "--report", "results/report.html")
    finally:
        server.close()

    # the run really met every echo: the server saw the stripped key, 6 items + 1 retry + 2 runner retries
    assert {h["Authorization"] for h in server.headers} == {f"Bearer {KEY}"} and len(server.requests) == 9
    pred = pd.read_parquet(wd / "results/predictions/api/synth-trivial/pitch-order/audio/mcq-default.parquet")
    errors = pred["error"].dropna().tolist()
    assert errors == ["RuntimeError: HTTP 401 (is $LALM_E2E_KEY set to a valid key?): b64=*** url=Bearer%20*** "
                      + "x" * 160 + " auth=Bearer *** tail"]
    assert pred["raw_output"].tolist().count("A. You sent Bearer ***") == 1
    written = {str(p.relative_to(wd)) for p in wd.rglob("*") if p.is_file()}
    for expected in ("results/all.tsv", "results/report.html", "results/browser/data.js",
                     "results/logs/generate/api/synth-trivial.log"):
        assert expected in written, sorted(written)
    assert any(p.startswith("results/scores/") and p.endswith(".json") for p in written)
    assert any(p.startswith(".snakemake/log/") for p in written)
    assert any(p.endswith(".jsonl") and "cache" in p for p in written), sorted(written)
    log = (wd / "results/logs/generate/api/synth-trivial.log").read_text()
    assert "HTTP 500: b64=***" in log and "the response contained the API key" in log

    assert scan_tree(wd, KEY) == {}
    # the scan would have seen it: the same needles in a planted parquet are found
    pd.DataFrame({"error": [json.dumps({"k": KEY[5:20]})]}).to_parquet(tmp_path / "planted.parquet")
    assert list(scan_tree(tmp_path, KEY)) == ["planted.parquet"]
