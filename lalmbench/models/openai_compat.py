"""Backend ``openai``: any OpenAI-compatible chat-completions endpoint (a vLLM server, a hosted API).

Audio travels as a base64 WAV ``input_audio`` content part before the prompt text, the format
vLLM's OpenAI server and hosted audio models accept. Requests for a batch run on a bounded
thread pool (``params.max_concurrency``); 429, 5xx, timeouts and dropped connections are retried
with exponential backoff (honouring ``Retry-After``, clamped to ``[0, backoff_max_s]``), other 4xx
fail that item at once. Every request is bounded as a whole: ``timeout_s`` bounds each read and
``deadline_s`` the whole exchange, connect, headers and body (every socket wait is clamped to it
by :mod:`lalmbench.models.deadline`: a server dripping a header byte at a time cannot hold a job), and the
body is read at most ``max_response_bytes`` far (an endless body cannot fill memory); both are
item errors. Every field taken from a response is type-checked (token counts are integers or
missing; anything else is an item error) and scrubbed of the key.

The API key comes only from the environment variable named by ``params.api_key_env`` (default
``OPENAI_API_KEY``; ``null`` for a server without auth), stripped of surrounding whitespace and
checked (see :mod:`lalmbench.models.secrets`). It is never logged or written: every error message
and every response field is passed through a :class:`~lalmbench.models.secrets.Redactor` before
it leaves this module (before any cut), because servers do echo keys back ("Incorrect API key
provided: sk-...") and HTTP libraries quote the header in their exceptions.

Model entry::

    backend: openai
    model_id: Qwen/Qwen2-Audio-7B-Instruct    # the "model" field sent to the server
    batch_size: 16                            # items handed over per call (the pool works through them)
    generation: {max_new_tokens: 64, temperature: 0.0}
    params: {base_url: "http://127.0.0.1:8000/v1", api_key_env: OPENAI_API_KEY, max_concurrency: 4,
             max_retries: 5, timeout_s: 120, deadline_s: 600, max_response_bytes: 8388608,
             backoff_s: 1.0, backoff_max_s: 60, system_prompt: null, stream: false}

``stream: true`` reads each answer as server-sent events (:mod:`lalmbench.models.openai_stream`) and
records the seconds to its first generated text as ``extra.ttft_s``; the text is the same either way.
"""
from __future__ import annotations

import base64
import io
import json
import logging
import math
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from lalmbench.inference.sampling import without_samples
from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend
from lalmbench.models.openai_stream import EventStream
from lalmbench.models.secrets import Redactor, config_secret_problems, read_key

log = logging.getLogger("lalmbench.models.openai")

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_ERR_BODY_CHARS = 300
DEFAULT_DEADLINE_S = 600.0
DEFAULT_MAX_RESPONSE_BYTES = 8 << 20  # a chat answer is kilobytes; this leaves room for long reasoning traces


def wav_base64(audio: np.ndarray, sample_rate: int) -> str:
    """16-bit PCM WAV of a mono float32 clip, base64-encoded (what ``input_audio.data`` carries)."""
    import soundfile as sf

    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim != 1:
        raise ValueError(f"openai backend expects mono audio (1-D array), got shape {audio.shape}")
    buf = io.BytesIO()
    sf.write(buf, np.clip(audio, -1.0, 1.0), int(sample_rate), format="WAV", subtype="PCM_16")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def build_messages(x: ModelInput, system_prompt: str | None = None) -> list[dict]:
    """Chat messages for one item: optional system prompt, then [audio part, text part] from the user."""
    content: list[dict] = []
    if x.audio is not None:
        content.append({"type": "input_audio",
                        "input_audio": {"data": wav_base64(x.audio, x.sample_rate), "format": "wav"}})
    content.append({"type": "text", "text": x.prompt})
    msgs = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return msgs + [{"role": "user", "content": content}]


class _BadResponse(ValueError):
    """A response field of the wrong type: an item error naming the field, never quoting its value."""


def _field(obj: Any, key: str, where: str, types: tuple[type, ...], required: bool = False) -> Any:
    value = obj.get(key) if isinstance(obj, dict) else None
    if value is None:
        if required:
            raise _BadResponse(f"response field {where} is missing")
        return None
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        names = " or ".join(t.__name__ for t in types)
        raise _BadResponse(f"response field {where} should be {names} or missing, got {type(value).__name__}")
    return value


def _token_count(usage: dict, key: str, where: str = "usage") -> int | None:
    n = _field(usage, key, f"{where}.{key}", (int,))
    if n is not None and n < 0:
        raise _BadResponse(f"response field {where}.{key} should be a count >= 0, got {n}")
    return n


def reasoning_tokens(usage: dict) -> int | None:
    """The thinking tokens among the completion's, where the server counts them apart
    (``usage.completion_tokens_details.reasoning_tokens``); None where it does not."""
    details = _field(usage, "completion_tokens_details", "usage.completion_tokens_details", (dict,)) or {}
    return _token_count(details, "reasoning_tokens", "usage.completion_tokens_details")


def _message_text(choice: dict) -> str:
    message = _field(choice, "message", "choices[0].message", (dict,)) or {}
    content = _field(message, "content", "choices[0].message.content", (str, list))
    if isinstance(content, list):  # some servers return content parts
        return "".join(_field(part, "text", f"choices[0].message.content[{i}].text", (str,)) or ""
                       for i, part in enumerate(content) if isinstance(part, dict))
    return "" if content is None else content


def parse_response(resp: Any) -> tuple[str, int | None, int | None, str | None, str | None, int | None]:
    """``(text, prompt_tokens, completion_tokens, finish_reason, served_model, reasoning_tokens)`` of a
    chat-completions response; :class:`_BadResponse` when a field has the wrong type (a count that is a string, a
    message that is a number), so nothing untyped reaches the cache or the predictions file."""
    if not isinstance(resp, dict):
        raise _BadResponse(f"response is a JSON {type(resp).__name__}, not an object")
    choices = _field(resp, "choices", "choices", (list,)) or []
    if not choices:
        raise _BadResponse("response has no choices")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise _BadResponse(f"response field choices[0] should be an object, got {type(choice).__name__}")
    usage = _field(resp, "usage", "usage", (dict,)) or {}
    return (_message_text(choice), _token_count(usage, "prompt_tokens"), _token_count(usage, "completion_tokens"),
            _field(choice, "finish_reason", "choices[0].finish_reason", (str,)),
            _field(resp, "model", "model", (str,)), reasoning_tokens(usage))


def retry_after_s(header: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for, or None (then our own backoff applies): a date, a
    negative, NaN or infinite value is not a wait ``time.sleep`` can take."""
    try:
        value = float(header) if header is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


class _Retryable(Exception):
    def __init__(self, msg: str, retry_after: float | None = None):
        super().__init__(msg)
        self.retry_after = retry_after


@register_backend("openai")
class OpenAICompatible(Model):
    """Chat completions over HTTP with bounded concurrency, retries and a key that never leaves memory."""

    def __init__(self, name: str, cfg: dict[str, Any]):
        super().__init__(name, cfg)
        try:
            import httpx

            from lalmbench.models.deadline import deadline_transport
        except ImportError as exc:
            raise ImportError("openai backend needs the Python package 'httpx' "
                              "(pip install -r envs/core/requirements.txt, or pip install httpx)") from exc
        p = dict(cfg.get("params") or {})
        base_url = p.get("base_url")
        if not base_url:
            raise ValueError(f"model {name!r}: backend 'openai' needs params.base_url "
                             "(e.g. http://127.0.0.1:8000/v1 for a local vLLM server)")
        self.url = str(base_url).rstrip("/") + "/chat/completions"
        self.max_concurrency = int(p.get("max_concurrency", 4))
        self.max_retries = int(p.get("max_retries", 5))
        self.backoff_s = float(p.get("backoff_s", 1.0))
        self.backoff_max_s = float(p.get("backoff_max_s", 60.0))
        self.system_prompt = p.get("system_prompt")
        self.stream = bool(p.get("stream", False))
        self.timeout_s = float(p.get("timeout_s", 120.0))
        self.deadline_s = float(p.get("deadline_s", DEFAULT_DEADLINE_S))
        self.max_response_bytes = int(p.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES))
        if self.max_concurrency < 1 or self.max_retries < 0:
            raise ValueError(f"model {name!r}: params.max_concurrency must be >= 1 and max_retries >= 0")
        if not (self.timeout_s > 0 and self.deadline_s > 0 and self.max_response_bytes > 0):
            raise ValueError(f"model {name!r}: params.timeout_s, deadline_s and max_response_bytes must be > 0")
        leaks = config_secret_problems({name: cfg})  # also when an entry did not come through the config check
        if leaks:
            raise ValueError("; ".join(leaks))
        key_env = p.get("api_key_env", "OPENAI_API_KEY")
        self._key_env = key_env
        key = read_key(key_env, f"models.{name}.params.api_key_env") if key_env else None
        if key_env and not key:
            log.info("%s: environment variable %s is not set; sending requests without an API key", name, key_env)
        # what the environment held, verbatim too: an exception quoting it must not slip past
        self._redact = Redactor([key, os.environ.get(key_env) if key_env else None])
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        transport, self._sockets = deadline_transport(self.max_concurrency)
        self._client = httpx.Client(headers=headers, timeout=self.timeout_s, transport=transport)
        self._httpx = httpx
        self._rng = random.Random(self.seed)

    def __repr__(self) -> str:  # never show the client (its headers hold the key)
        return f"OpenAICompatible(name={self.name!r}, url={self.url!r}, key_env={self._key_env!r})"

    # --- one request -----------------------------------------------------------------------------
    def payload(self, x: ModelInput) -> dict:
        gen = without_samples(self.cfg.get("generation") or {})  # draws per item: the pipeline's
        body: dict[str, Any] = {"model": self.model_id, "messages": build_messages(x, self.system_prompt),
                                "max_tokens": int(gen.pop("max_new_tokens", gen.pop("max_tokens", 64))),
                                "temperature": float(gen.pop("temperature", 0.0)),
                                "seed": self.seed if x.seed is None else x.seed}
        gen.pop("do_sample", None)  # a transformers knob; temperature says the same here
        if self.stream:  # the usage comes in a last chunk only when asked for
            body.update(stream=True, stream_options={"include_usage": True})
        body.update(gen)  # anything else (top_p, stop, ...) passes through as the API names it
        return body

    def _body(self, data: bytes) -> str:
        """The response body for an error message: redacted first, then cut (a key straddling the
        cut would otherwise leave its first part behind)."""
        return self._redact.excerpt(data.decode("utf-8", errors="replace"), _ERR_BODY_CHARS)

    def _late(self, detail: str) -> _Retryable:
        return _Retryable(f"deadline: the response took longer than params.deadline_s ({self.deadline_s:g} s) "
                          f"to arrive ({detail})")

    def _read(self, r: Any, deadline: float, on_chunk: Any = None) -> bytes:
        """The body, read chunk by chunk against the request's deadline and the size cap; ``on_chunk``
        sees each chunk as it arrives (a streamed answer's events)."""
        chunks, size = [], 0
        for chunk in r.iter_raw():
            size += len(chunk)
            if size > self.max_response_bytes:
                raise RuntimeError(f"HTTP {r.status_code}: response body exceeds params.max_response_bytes "
                                   f"({self.max_response_bytes} bytes); not read further")
            chunks.append(chunk)
            if on_chunk is not None:
                on_chunk(chunk)
            if time.monotonic() > deadline:
                raise self._late(f"{size} body bytes so far")
        return b"".join(chunks)

    def _post(self, body: dict) -> tuple[dict, float | None]:
        """The response object and, for a streamed one, the seconds to its first generated text."""
        httpx = self._httpx
        start = time.monotonic()
        deadline = start + self.deadline_s
        events = EventStream(start) if body.get("stream") else None
        # a streamed body is read as it is sent: compressed, its events could not be timed
        headers = {"Accept-Encoding": "identity"} if events else None
        # each socket wait (connect, every header and body read, every write, the wait for a pooled
        # connection) ends by the deadline: the transport clamps it, whatever timeout_s allows per read
        timeout = httpx.Timeout(min(self.timeout_s, self.deadline_s), pool=self.deadline_s)
        try:
            with self._sockets.until(deadline), self._client.stream("POST", self.url, json=body, headers=headers,
                                                                     timeout=timeout) as r:
                # the body arrives decompressed only via iter_bytes; iter_raw bounds what crosses the wire
                encoding = r.headers.get("content-encoding", "identity").lower()
                live = events is not None and 200 <= r.status_code < 300 and encoding in ("", "identity")
                data = self._read(r, deadline, events.feed if live else None)
                if encoding not in ("", "identity"):
                    data = self._decoded(data, encoding)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            if time.monotonic() >= deadline:
                raise self._late(f"{type(exc).__name__} while connecting or reading") from None
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if r.status_code in RETRY_STATUS or r.status_code >= 500:
            raise _Retryable(f"HTTP {r.status_code}: {self._body(data)}", retry_after_s(r.headers.get("retry-after")))
        if r.status_code >= 400:
            hint = f" (is ${self._key_env} set to a valid key?)" if r.status_code in (401, 403) else ""
            raise RuntimeError(f"HTTP {r.status_code}{hint}: {self._body(data)}")
        if not 200 <= r.status_code < 300:  # a redirect's body is no completion, whatever it holds
            where = r.headers.get("location")
            hint = (f" (redirect to {self._redact.excerpt(where, _ERR_BODY_CHARS)}, not followed: set params.base_url "
                    f"to the server's own address)" if 300 <= r.status_code < 400 and where else "")
            raise RuntimeError(f"HTTP {r.status_code}{hint}: not a completion: {self._body(data)}")
        if events is not None and not live:
            events.feed(data, timed=False)
        if events is not None and (events.events or events.done):
            return events.response(), events.ttft_s
        try:  # a server that ignored ``stream`` answers with one JSON object
            return json.loads(data), None
        except ValueError:
            raise RuntimeError(f"HTTP {r.status_code}: response is not JSON: {self._body(data)}") from None

    def _decoded(self, data: bytes, encoding: str) -> bytes:
        """A compressed body, inflated no further than the size cap (a small gzip can expand a thousandfold)."""
        import zlib

        if encoding not in ("gzip", "deflate"):
            raise RuntimeError(f"response uses content-encoding {encoding!r}; the openai backend reads gzip, "
                               "deflate or none")
        inflater = zlib.decompressobj(47 if encoding == "gzip" else 15)
        out = inflater.decompress(data, self.max_response_bytes + 1)
        if len(out) > self.max_response_bytes:
            raise RuntimeError(f"response body exceeds params.max_response_bytes ({self.max_response_bytes} bytes) "
                               "once decompressed")
        return out

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.backoff_max_s))
        return min(self.backoff_s * (2 ** attempt), self.backoff_max_s) * (0.5 + 0.5 * self._rng.random())

    def _failed(self, exc: BaseException) -> ModelOutput:
        return ModelOutput(raw_output=None, error=self._redact(f"{type(exc).__name__}: {exc}"))

    def _one(self, x: ModelInput) -> ModelOutput:
        try:
            body = self.payload(x)
        except Exception as exc:
            return self._failed(exc)
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                resp, ttft = self._post(body)
            except _Retryable as exc:
                last = self._redact(str(exc))
                if attempt < self.max_retries:
                    wait = self._wait(attempt, exc.retry_after)
                    log.warning("%s item %s: %s; retry %d/%d in %.2f s", self.name, x.id, last, attempt + 1,
                                self.max_retries, wait)
                    time.sleep(wait)
                continue
            except Exception as exc:
                return self._failed(exc)
            try:
                text, n_in, n_out, finish, served, n_think = parse_response(resp)
            except _BadResponse as exc:
                return ModelOutput(raw_output=None, error=f"{exc}: {self._redact.excerpt(json.dumps(resp), 200)}")
            return self._scrubbed(x, ModelOutput(
                raw_output=text, input_tokens=n_in, output_tokens=n_out,
                extra={"attempts": attempt + 1, "finish_reason": finish, "served_model": served,
                       **({} if n_think is None else {"reasoning_tokens": n_think}),
                       **({} if ttft is None else {"ttft_s": ttft})}))
        return ModelOutput(raw_output=None, error=f"gave up after {self.max_retries + 1} attempts: {last}")

    def _scrubbed(self, x: ModelInput, out: ModelOutput) -> ModelOutput:
        """A successful answer with the key removed: a server (or a model told to) can echo it."""
        raw, extra = self._redact(out.raw_output), self._redact.scrub(out.extra)
        if raw != out.raw_output or extra != out.extra:
            log.warning("%s item %s: the response contained the API key; it was replaced by ***", self.name, x.id)
            out.raw_output, out.extra = raw, {**extra, "key_redacted": True}
        return out

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        try:
            if len(batch) <= 1 or self.max_concurrency == 1:
                return [self._one(x) for x in batch]
            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(batch))) as pool:
                return list(pool.map(self._one, batch))
        except Exception as exc:  # noqa: BLE001 - the caller would print this message unredacted
            return [self._failed(exc) for _ in batch]

    def close(self) -> None:
        self._client.close()
