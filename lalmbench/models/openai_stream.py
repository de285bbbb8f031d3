"""A streamed chat completion (``params.stream: true``): server-sent events back into one response.

The server sends ``data: {chunk}`` events, each a ``chat.completion.chunk`` whose
``choices[0].delta.content`` carries the next piece of text, then ``data: [DONE]``; with
``stream_options: {include_usage: true}`` a last chunk carries ``usage``. :class:`EventStream` is fed
the body as it arrives, notes when the first generated text came (time to first token), and
:meth:`EventStream.response` joins the chunks into the object a non-streamed request returns, so
the backend checks both with the same code.
"""
from __future__ import annotations

import json
import time
from typing import Any


class StreamError(ValueError):
    """The body is no event stream of chat-completion chunks (an item error)."""


def _delta_text(event: Any) -> tuple[str, bool]:
    """(the answer text a chunk adds, whether it carries any generated text: answer or reasoning)."""
    choices = event.get("choices") if isinstance(event, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
    content, reasoning = delta.get("content"), delta.get("reasoning_content")
    if content is not None and not isinstance(content, str):
        raise StreamError(f"stream chunk field choices[0].delta.content should be str, got {type(content).__name__}")
    return content or "", bool(content) or (isinstance(reasoning, str) and bool(reasoning))


class EventStream:
    """The events of one streamed response, fed as bytes; ``ttft_s``: seconds from ``t0`` (the
    request's start, time.monotonic) to the first chunk with generated text."""

    def __init__(self, t0: float):
        self.t0 = t0
        self.ttft_s: float | None = None
        self.events: list[dict] = []
        self.done = False
        self._buf = b""

    def feed(self, data: bytes, timed: bool = True) -> None:
        """Take the next bytes; every complete event (a blank line ends one) is parsed now.
        ``timed`` False: the bytes did not arrive as they were sent (a decompressed body), so no time
        to first token is read from them."""
        self._buf += data.replace(b"\r\n", b"\n")
        while b"\n\n" in self._buf:
            block, self._buf = self._buf.split(b"\n\n", 1)
            self._event(block, timed)

    def _event(self, block: bytes, timed: bool) -> None:
        data = b"\n".join(line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:"))
        if not data:  # a comment (": keep-alive") or an event with no data
            return
        if data.strip() == b"[DONE]":
            self.done = True
            return
        try:
            event = json.loads(data)
        except ValueError:
            raise StreamError(f"stream event is not JSON: {data[:80]!r}") from None
        if not isinstance(event, dict):
            raise StreamError(f"stream event is a JSON {type(event).__name__}, not an object")
        self.events.append(event)
        if timed and self.ttft_s is None and _delta_text(event)[1]:
            self.ttft_s = round(time.monotonic() - self.t0, 6)

    def response(self) -> dict:
        """The chunks joined into a chat-completions response: the text in order, the last finish
        reason, the usage and model the chunks name."""
        self.feed(b"\n\n", timed=False)  # a last event without its blank line
        if not self.events:
            raise StreamError("the stream held no chunks")
        text, finish, usage, model = [], None, None, None
        for event in self.events:
            text.append(_delta_text(event)[0])
            choices = event.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                finish = choices[0].get("finish_reason") or finish
            usage = event.get("usage") or usage
            model = model or event.get("model")
        out: dict[str, Any] = {"choices": [{"index": 0, "finish_reason": finish,
                                            "message": {"role": "assistant", "content": "".join(text)}}]}
        if usage is not None:
            out["usage"] = usage
        if model is not None:
            out["model"] = model
        return out
