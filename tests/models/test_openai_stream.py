"""``params.stream: true``: the openai backend reads server-sent events, records the time to the first
text chunk, and gets the same answer and token counts as without streaming."""
from __future__ import annotations

import pytest

pytest.importorskip("httpx", reason="the openai backend needs httpx (core env)")

from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from lalmbench.models.openai_stream import EventStream, StreamError  # noqa: E402
from tests.fake_openai import FakeServer  # noqa: E402


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.close()


def _cfg(server, **params):
    return {"backend": "openai", "model_id": "fake/audio-lm", "seed": 3,
            "params": {"base_url": server.url, "api_key_env": None, "max_concurrency": 1, **params},
            "generation": {"max_new_tokens": 8, "temperature": 0.0}}


def _answers(server, items, **params):
    model = load_model("m", _cfg(server, **params))
    try:
        return model.generate([ModelInput(id=i, prompt=f"question {i} here", question="q", options=[], audio=None,
                                          sample_rate=16000)
                               for i in items])
    finally:
        model.close()


def test_a_streamed_answer_is_the_plain_answer_with_its_time_to_first_token(server):
    server.first_token_s = 0.3
    plain = _answers(server, ["a", "b"])
    streamed = _answers(server, ["a", "b"], stream=True)
    assert server.requests[-1]["stream"] is True and server.requests[-1]["stream_options"] == {"include_usage": True}
    assert "stream" not in server.requests[0]
    for p, s in zip(plain, streamed):
        assert s.error is None and s.raw_output == p.raw_output and p.raw_output.startswith("B audio=0 q=question")
        assert (s.input_tokens, s.output_tokens) == (p.input_tokens, p.output_tokens) == (11, 1)
        assert 0.3 <= s.extra["ttft_s"] < 5 and s.extra["finish_reason"] == "stop"
        assert "ttft_s" not in p.extra


def test_the_servers_reasoning_tokens_are_recorded_streamed_or_not(server):
    server.usage_extra = {"completion_tokens_details": {"reasoning_tokens": 7}}
    for params in ({}, {"stream": True}):
        (out,) = _answers(server, ["a"], **params)
        assert out.error is None and out.extra["reasoning_tokens"] == 7
    server.usage_extra = {"completion_tokens_details": {"reasoning_tokens": "7"}}
    (bad,) = _answers(server, ["a"])
    assert "usage.completion_tokens_details.reasoning_tokens should be int" in bad.error


def test_an_event_stream_joins_its_chunks_and_times_the_first_text_only():
    events = EventStream(t0=0.0)
    events.feed(b'data: {"model": "m", "choices": [{"delta": {"role": "assistant", "content": ""}}]}\r\n\r\n')
    assert events.ttft_s is None  # a role chunk is no token
    events.feed(b': keep-alive\n\ndata: {"choices": [{"delta": {"content": "Hel"}}]}\n')
    assert events.ttft_s is None  # the event is not complete until its blank line
    events.feed(b'\ndata: {"choices": [{"delta": {"content": "lo"}, "finish_reason": "length"}]}\n\n'
                b'data: {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}}\n\ndata: [DONE]\n\n')
    assert events.ttft_s is not None and events.done
    assert events.response() == {"model": "m", "usage": {"prompt_tokens": 4, "completion_tokens": 2},
                                 "choices": [{"index": 0, "finish_reason": "length",
                                              "message": {"role": "assistant", "content": "Hello"}}]}
    with pytest.raises(StreamError, match="not JSON"):
        EventStream(0.0).feed(b"data: {oops\n\n")
    with pytest.raises(StreamError, match="no chunks"):
        EventStream(0.0).response()
