"""The ``openai`` backend against a fake OpenAI-compatible server on 127.0.0.1 (no network)."""
from __future__ import annotations

import base64
import dataclasses
import io
import json
import logging
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("httpx", reason="the openai backend needs httpx (core env)")

from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from tests.fake_openai import FakeServer  # noqa: E402
from tests.leaks import leaks, scan_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-test-PLANTED-7f3a9c1e5b2d4a6f8e0c"
SR = 16000


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("LALM_TEST_KEY", FAKE_KEY)
    return FAKE_KEY


def _cfg(server, **params):
    p = {"base_url": server.url, "api_key_env": "LALM_TEST_KEY", "backoff_s": 0.01, "backoff_max_s": 0.05,
         "max_concurrency": 2, **params}
    return {"backend": "openai", "model_id": "fake/audio-lm", "seed": 3, "params": p,
            "generation": {"max_new_tokens": 8, "temperature": 0.0, "top_p": 1.0}}


OPTS = [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}]


def _inp(id, audio=None, prompt="Which comes first?"):
    return ModelInput(id=id, prompt=prompt, question=prompt, options=OPTS, audio=audio, sample_rate=SR)


def test_payload_shape_audio_as_base64_wav(server, key):
    model = load_model("m", _cfg(server))
    audio = (0.5 * np.sin(2 * np.pi * 440 * np.arange(SR // 2) / SR)).astype(np.float32)
    out, out_none = model.generate([_inp("a", audio), _inp("b", None)])
    model.close()
    assert out.error is None and out.raw_output.startswith("B audio=1 q=Which comes first?")
    assert out_none.raw_output.startswith("B audio=0")
    assert (out.input_tokens, out.output_tokens) == (11, 1)
    assert out.extra == {"attempts": 1, "finish_reason": "stop", "served_model": "fake/audio-lm"}
    body = next(b for b in server.requests if len(b["messages"][-1]["content"]) == 2)
    assert body["model"] == "fake/audio-lm" and body["max_tokens"] == 8 and body["temperature"] == 0.0
    assert body["seed"] == 3 and body["top_p"] == 1.0 and "max_new_tokens" not in body
    audio_part, text_part = body["messages"][-1]["content"]
    assert body["messages"][-1]["role"] == "user"
    assert text_part == {"type": "text", "text": "Which comes first?"}
    assert audio_part["type"] == "input_audio" and audio_part["input_audio"]["format"] == "wav"
    decoded, sr = sf.read(io.BytesIO(base64.b64decode(audio_part["input_audio"]["data"])), dtype="float32")
    assert sr == SR and len(decoded) == len(audio)
    np.testing.assert_allclose(decoded, audio, atol=1e-4)  # 16-bit PCM round trip
    assert all(h.get("Authorization") == f"Bearer {key}" for h in server.headers)


def test_a_sample_is_sent_with_its_own_seed_and_samples_stays_ours(server, key):
    cfg = _cfg(server)
    cfg["generation"] = {**cfg["generation"], "temperature": 0.7, "samples": 4}
    model = load_model("m", cfg)
    (out,) = model.generate([dataclasses.replace(_inp("a"), seed=12345)])
    model.close()
    assert out.error is None
    body = server.requests[-1]
    assert body["seed"] == 12345 and body["temperature"] == 0.7 and "samples" not in body


def test_retries_after_500_and_429_with_backoff(server, key, caplog):
    server.fail_first = [(500, {}), (429, {"Retry-After": "0.02"})]
    model = load_model("m", _cfg(server, max_concurrency=1))
    with caplog.at_level(logging.WARNING, logger="lalmbench.models.openai"):
        (out,) = model.generate([_inp("a")])
    assert out.error is None and out.raw_output.startswith("B")
    assert out.extra["attempts"] == 3 and len(server.requests) == 3
    assert "HTTP 500" in caplog.text and "HTTP 429" in caplog.text and "retry 2/5" in caplog.text


def test_gives_up_after_max_retries_with_a_redacted_error(server, key):
    server.fail_first = [(503, {})] * 3
    model = load_model("m", _cfg(server, max_retries=2))
    (out,) = model.generate([_inp("a")])
    assert out.raw_output is None and len(server.requests) == 3
    assert out.error.startswith("gave up after 3 attempts: HTTP 503")
    assert key not in out.error and "***" in out.error


def test_client_error_is_not_retried_and_hints_at_the_key_variable(server, key):
    server.fail_first = [(401, {})]
    model = load_model("m", _cfg(server))
    (out,) = model.generate([_inp("a")])
    assert len(server.requests) == 1
    assert "HTTP 401 (is $LALM_TEST_KEY set to a valid key?)" in out.error
    assert key not in out.error


def test_unreachable_server_is_an_item_error_after_retries(key):
    import socket

    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = load_model("m", {"backend": "openai", "params": {"base_url": f"http://127.0.0.1:{port}/v1",
                                                              "api_key_env": "LALM_TEST_KEY", "max_retries": 1,
                                                              "backoff_s": 0.01}})
    (out,) = model.generate([_inp("a")])
    assert out.raw_output is None and out.error.startswith("gave up after 2 attempts: ConnectError")


def test_concurrency_is_bounded(server, key):
    server.delay_s = 0.15
    model = load_model("m", _cfg(server, max_concurrency=3))
    t0 = time.perf_counter()
    outs = model.generate([_inp(str(i)) for i in range(9)])
    elapsed = time.perf_counter() - t0
    assert all(o.error is None for o in outs)
    assert server.max_in_flight == 3  # used the pool, never exceeded it
    assert elapsed >= 3 * 0.15 * 0.9  # 9 requests through 3 slots need at least 3 rounds


def test_missing_base_url_and_missing_key(monkeypatch, server, caplog):
    with pytest.raises(ValueError, match="needs params.base_url"):
        load_model("m", {"backend": "openai", "params": {}})
    monkeypatch.delenv("LALM_TEST_KEY", raising=False)
    with caplog.at_level(logging.INFO, logger="lalmbench.models.openai"):
        model = load_model("m", _cfg(server))
    assert "LALM_TEST_KEY is not set" in caplog.text
    (out,) = model.generate([_inp("a")])
    assert out.error is None and "Authorization" not in server.headers[0]


def test_a_key_ending_in_crlf_is_stripped_and_used(server, monkeypatch):
    """A key saved with a Windows line ending used to leak via ``Illegal header value b'Bearer ...\\r'``."""
    monkeypatch.setenv("LALM_TEST_KEY", FAKE_KEY + "\r\n")
    model = load_model("m", _cfg(server))
    (out,) = model.generate([_inp("a")])
    assert out.error is None and out.raw_output.startswith("B")
    assert server.headers[0]["Authorization"] == f"Bearer {FAKE_KEY}"


def test_a_key_with_a_control_character_inside_fails_naming_the_variable(server, monkeypatch):
    monkeypatch.setenv("LALM_TEST_KEY", FAKE_KEY[:12] + "\r" + FAKE_KEY[12:])
    with pytest.raises(ValueError) as exc:
        load_model("m", _cfg(server))
    assert str(exc.value).startswith("models.m.params.api_key_env: environment variable LALM_TEST_KEY holds "
                                     "whitespace inside the key (U+000D control character;")
    assert leaks(str(exc.value), FAKE_KEY) == [] and server.requests == []


def test_a_key_in_the_model_entry_is_refused_without_printing_it(server, key):
    with pytest.raises(ValueError) as exc:
        load_model("m", _cfg(server, api_key=key))
    assert str(exc.value).startswith("models.m.params.api_key: secrets are read only from the environment")
    with pytest.raises(ValueError, match="models.m.params.api_key_env: must be the name of an environment variable"):
        load_model("m", _cfg(server, api_key_env=key))
    assert leaks(str(exc.value), key) == [] and server.requests == []


def test_an_exception_quoting_the_header_is_redacted(server, key):
    model = load_model("m", _cfg(server, max_retries=0))
    model._client.headers["Authorization"] = f"Bearer {key}\r"  # what h11 refuses, quoting it
    (out,) = model.generate([_inp("a")])
    assert out.error == "gave up after 1 attempts: LocalProtocolError: Illegal header value b'Bearer ***\\r'"


def test_an_echoed_key_is_redacted_before_the_body_is_cut_at_every_offset(server, key):
    """The body is cut to 300 characters: with the key at any offset (before, across, after the
    cut) the error holds no fragment of it, and exactly the redacted body's first 300 characters."""
    model = load_model("m", _cfg(server, max_retries=0, max_concurrency=1))
    for offset in range(0, 300 + 2):
        body = "e" * offset + key + "f" * 40
        server.fail_body, server.fail_first = (lambda auth, body=body: body), [(400, {})]
        (out,) = model.generate([_inp("a")])
        assert out.error == "RuntimeError: HTTP 400: " + ("e" * offset + "***" + "f" * 40)[:300], offset
    # the server's own cut left part of the key: a fragment of 8+ characters is redacted too
    server.fail_body, server.fail_first = (lambda auth: "bad key " + auth[7:7 + 20]), [(401, {})]
    (out,) = model.generate([_inp("a")])
    assert out.error == "RuntimeError: HTTP 401 (is $LALM_TEST_KEY set to a valid key?): bad key ***"


def test_a_success_that_echoes_the_key_is_redacted_and_flagged(server, key, caplog):
    server.answer = lambda auth: f"B, and your header was {auth}"
    model = load_model("m", _cfg(server))
    with caplog.at_level(logging.WARNING, logger="lalmbench.models.openai"):
        (out,) = model.generate([_inp("a")])
    assert out.raw_output == "B, and your header was Bearer ***"
    assert out.extra["key_redacted"] is True
    assert "item a: the response contained the API key; it was replaced by ***" in caplog.text


def test_secret_never_reaches_predictions_or_logs(server, monkeypatch, tmp_path, caplog):
    """Plant a key (with a CRLF), make the server echo it, run the real inference path, grep everything written."""
    from lalmbench.inference import run_inference

    monkeypatch.setenv("LALM_TEST_KEY", FAKE_KEY + "\r\n")
    clip = tmp_path / "clip.wav"
    sf.write(clip, np.zeros(SR, np.float32), SR)
    items = [{"id": f"it{i}", "task": "t", "dataset": "d", "clip_id": "c", "audio_path": str(clip),
              "question": "Which?", "options": OPTS, "answer_label": "A", "answer_text": "x", "references": [],
              "meta": {}} for i in range(4)]
    items_path = tmp_path / "items.jsonl"
    items_path.write_text("".join(json.dumps(it) + "\n" for it in items))
    # in order: it0 fails (401, not retried), it1 fails once (500) then succeeds, it2 and it3 succeed,
    # it0 retried alone by the runner fails again; every error body echoes the key across the cut
    server.fail_first = [(401, {}), (500, {}), None, None, None, (401, {})]
    server.fail_body = lambda auth: "x" * 280 + json.dumps({"key": auth})
    server.answer = lambda auth: f"A (you sent {auth})"
    out = tmp_path / "pred.parquet"
    cfg = _cfg(server, max_retries=1, max_concurrency=1)
    cfg["batch_size"] = 4
    with caplog.at_level(logging.DEBUG):
        df = run_inference(items_path=str(items_path), out_path=str(out), model_name="m", model_cfg=cfg,
                           condition="audio", prompt_name="mcq-default",
                           template_path=str(ROOT / "resources/prompts/mcq-default.txt"), max_error_rate=1.0)
    df = df.astype(object).where(df.notna(), None)
    assert df["error"].tolist() == ["RuntimeError: HTTP 401 (is $LALM_TEST_KEY set to a valid key?): "
                                    + "x" * 280 + '{"key": "Bearer ***"', None, None, None]
    assert df["raw_output"].tolist() == [None] + ["A (you sent Bearer ***)"] * 3
    assert scan_tree(tmp_path, FAKE_KEY) == {}
    assert leaks(caplog.text, FAKE_KEY) == [] and "HTTP 500" in caplog.text
    assert leaks(repr(load_model("m", cfg)), FAKE_KEY) == []


def test_a_dripping_server_is_cut_by_the_whole_request_deadline(server, key):
    server.drip_s = 0.1  # each byte well inside timeout_s; the 200-byte body would take 20 s
    model = load_model("m", _cfg(server, timeout_s=1, deadline_s=0.5, max_retries=0))
    start = time.monotonic()
    (out,) = model.generate([_inp("a")])
    assert time.monotonic() - start < 3
    assert out.raw_output is None
    assert "the response took longer than params.deadline_s (0.5 s) to arrive" in out.error


def test_a_server_dripping_its_headers_is_cut_by_the_whole_request_deadline(server, key):
    server.header_drip_s = 1.0  # one header byte a second: every read is inside timeout_s, the headers never end
    model = load_model("m", _cfg(server, timeout_s=2, deadline_s=3, max_retries=0))
    start = time.monotonic()
    (out,) = model.generate([_inp("a")])
    elapsed = time.monotonic() - start
    model.close()
    assert out.raw_output is None
    assert "the response took longer than params.deadline_s (3 s) to arrive" in out.error
    assert 3 <= elapsed < 4.5, elapsed


def test_an_endless_body_is_cut_at_the_size_cap(server, key):
    server.endless = True
    model = load_model("m", _cfg(server, max_response_bytes=1 << 20, max_retries=0))
    (out,) = model.generate([_inp("a")])
    assert out.raw_output is None
    assert "response body exceeds params.max_response_bytes (1048576 bytes); not read further" in out.error


@pytest.mark.parametrize("retry_after", ["-5", "nan", "inf", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_a_retry_after_that_is_no_wait_falls_back_to_backoff(server, key, retry_after):
    server.fail_first = [(503, {"Retry-After": retry_after}), None, None]
    model = load_model("m", _cfg(server, max_concurrency=1))
    outs = model.generate([_inp("a"), _inp("b")])
    assert [o.error for o in outs] == [None, None]
    assert [o.extra["attempts"] for o in outs] == [2, 1]


def test_a_response_field_of_the_wrong_type_is_an_item_error_without_the_key(server, key):
    server.respond = lambda auth: {"model": "m", "usage": {"prompt_tokens": auth, "completion_tokens": 1},
                                   "choices": [{"finish_reason": "stop", "message": {"content": "A"}}]}
    model = load_model("m", _cfg(server, max_retries=0))
    (out,) = model.generate([_inp("a")])
    assert out.raw_output is None and out.input_tokens is None
    assert out.error.startswith("response field usage.prompt_tokens should be int or missing, got str: ")
    assert leaks(out.error, FAKE_KEY) == [] and "Bearer ***" in out.error


def test_a_key_the_server_echoes_json_escaped_or_upper_cased_is_redacted(server, key):
    escaped = lambda auth: "".join(f"\\u{ord(c):04x}" for c in auth)  # noqa: E731
    server.fail_first = [(400, {})]
    server.fail_body = lambda auth: '{"error": {"message": "bad key ' + escaped(auth) + '"}}'
    server.respond = lambda auth: {"model": auth.upper(), "usage": {"prompt_tokens": 5, "completion_tokens": 2},
                                   "choices": [{"finish_reason": "stop", "message": {"content": "A " + auth.upper()}}]}
    model = load_model("m", _cfg(server, max_retries=0, max_concurrency=1))
    failed, answered = model.generate([_inp("a"), _inp("b")])
    model.close()
    assert failed.error == 'RuntimeError: HTTP 400: {"error": {"message": "bad key Bearer ***"}}'
    assert answered.raw_output == "A BEARER ***" and answered.extra["served_model"] == "BEARER ***"
    assert answered.extra["key_redacted"] is True


def test_every_text_field_of_a_response_is_scrubbed(server, key):
    server.respond = lambda auth: {
        "model": f"m-{auth}", "usage": {"prompt_tokens": 5, "completion_tokens": 2},
        "choices": [{"finish_reason": auth, "message": {"content": [{"type": "text", "text": f"A {auth}"}]}}]}
    model = load_model("m", _cfg(server))
    (out,) = model.generate([_inp("a")])
    assert (out.raw_output, out.input_tokens, out.output_tokens) == ("A Bearer ***", 5, 2)
    assert out.extra == {"attempts": 1, "finish_reason": "Bearer ***", "served_model": "m-Bearer ***",
                         "key_redacted": True}


@pytest.mark.parametrize("status", [302, 307, 204])
def test_a_non_2xx_answer_carrying_a_completion_body_is_an_error_not_an_answer(server, key, status):
    """A server (or proxy) answering 302 with a completion-shaped body: the body is no answer."""
    completion = {"model": "fake/audio-lm", "choices": [{"index": 0, "finish_reason": "stop",
                                                          "message": {"role": "assistant", "content": "A"}}]}
    server.fail_first = [(status, {"Location": "http://127.0.0.1:9/v1/chat/completions"})]
    server.fail_body = lambda auth: completion
    model = load_model("m", _cfg(server))
    (out,) = model.generate([_inp("a")])
    model.close()
    assert out.raw_output is None and len(server.requests) == 1
    assert out.error.startswith(f"RuntimeError: HTTP {status}")
    if status != 204:
        assert "redirect to http://127.0.0.1:9/v1/chat/completions, not followed" in out.error
