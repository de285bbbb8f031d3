"""Backend ``openai``: any OpenAI-compatible chat-completions endpoint (a vLLM server, a hosted API).

Audio travels as a base64 WAV ``input_audio`` content part before the prompt text, the format
vLLM's OpenAI server and hosted audio models accept. Requests for a batch run on a bounded
thread pool (``params.max_concurrency``); 429, 5xx, timeouts and dropped connections are retried
with exponential backoff (honouring ``Retry-After``), other 4xx fail that item at once.

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
             max_retries: 5, timeout_s: 120, backoff_s: 1.0, backoff_max_s: 60, system_prompt: null}
"""
from __future__ import annotations

import base64
import io
import logging
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend
from lalmbench.models.secrets import Redactor, config_secret_problems, read_key

log = logging.getLogger("lalmbench.models.openai")

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_ERR_BODY_CHARS = 300


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


def _message_text(choice: dict) -> str:
    content = (choice.get("message") or {}).get("content")
    if isinstance(content, list):  # some servers return content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


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
        if self.max_concurrency < 1 or self.max_retries < 0:
            raise ValueError(f"model {name!r}: params.max_concurrency must be >= 1 and max_retries >= 0")
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
        self._client = httpx.Client(headers=headers, timeout=float(p.get("timeout_s", 120.0)),
                                    limits=httpx.Limits(max_connections=self.max_concurrency))
        self._httpx = httpx
        self._rng = random.Random(self.seed)

    def __repr__(self) -> str:  # never show the client (its headers hold the key)
        return f"OpenAICompatible(name={self.name!r}, url={self.url!r}, key_env={self._key_env!r})"

    # --- one request -----------------------------------------------------------------------------
    def payload(self, x: ModelInput) -> dict:
        gen = dict(self.cfg.get("generation") or {})
        body: dict[str, Any] = {"model": self.model_id, "messages": build_messages(x, self.system_prompt),
                                "max_tokens": int(gen.pop("max_new_tokens", gen.pop("max_tokens", 64))),
                                "temperature": float(gen.pop("temperature", 0.0)), "seed": self.seed}
        gen.pop("do_sample", None)  # a transformers knob; temperature says the same here
        body.update(gen)  # anything else (top_p, stop, ...) passes through as the API names it
        return body

    def _body(self, r: Any) -> str:
        """The response body for an error message: redacted first, then cut (a key straddling the
        cut would otherwise leave its first part behind)."""
        return self._redact.excerpt(r.text, _ERR_BODY_CHARS)

    def _post(self, body: dict) -> dict:
        httpx = self._httpx
        try:
            r = self._client.post(self.url, json=body)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if r.status_code in RETRY_STATUS or r.status_code >= 500:
            ra = r.headers.get("retry-after")
            try:
                retry_after = float(ra) if ra is not None else None
            except ValueError:
                retry_after = None
            raise _Retryable(f"HTTP {r.status_code}: {self._body(r)}", retry_after)
        if r.status_code >= 400:
            hint = f" (is ${self._key_env} set to a valid key?)" if r.status_code in (401, 403) else ""
            raise RuntimeError(f"HTTP {r.status_code}{hint}: {self._body(r)}")
        try:
            return r.json()
        except ValueError:
            raise RuntimeError(f"HTTP {r.status_code}: response is not JSON: {self._body(r)}") from None

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max_s)
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
                resp = self._post(body)
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
            choices = resp.get("choices") or []
            if not choices:
                return ModelOutput(raw_output=None,
                                   error=f"response has no choices: {self._redact.excerpt(str(resp), 200)}")
            usage = resp.get("usage") or {}
            return self._scrubbed(x, ModelOutput(
                raw_output=_message_text(choices[0]), input_tokens=usage.get("prompt_tokens"),
                output_tokens=usage.get("completion_tokens"),
                extra={"attempts": attempt + 1, "finish_reason": choices[0].get("finish_reason"),
                       "served_model": resp.get("model")}))
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
