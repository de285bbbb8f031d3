"""Generation settings: greedy unless the config asks otherwise, whatever the checkpoint's defaults say.

Qwen2.5-Omni's generation_config.json samples (do_sample=True, temperature, top_p, top_k); a
benchmark that silently inherits that is not reproducible. We start from the checkpoint's config
(for eos/pad ids), force the benchmark's decoding settings on top, and record the result.
"""
from __future__ import annotations

import copy
from typing import Any

from lalmbench.inference.sampling import without_samples

from .settings import GENERATION_DEFAULTS

SAMPLING_KEYS = ("temperature", "top_p", "top_k", "min_p", "typical_p")
RECORDED_KEYS = ("max_new_tokens", "do_sample", "num_beams", "temperature", "top_p", "top_k",
                 "repetition_penalty", "length_penalty", "eos_token_id", "pad_token_id")


def resolve_generation_config(base: Any, requested: dict[str, Any],
                              stop_ids: list[int] | None = None) -> tuple[Any, dict[str, Any]]:
    """Return (GenerationConfig, the effective settings as a small JSON-able dict).

    ``stop_ids`` (the family's end-of-turn tokens, e.g. ``<|im_end|>``) are added to the checkpoint's
    eos ids, so generation stops at the end of the turn whatever its generation_config.json lists."""
    req = without_samples(requested)  # how many draws per item is the pipeline's (inference.sampling)
    if "thinker_max_new_tokens" in req:  # the Omni wrappers' name for the thinker's budget
        req["max_new_tokens"] = req.pop("thinker_max_new_tokens")
    settings = {**GENERATION_DEFAULTS, **req}
    gc = copy.deepcopy(base)
    if not settings.get("do_sample"):
        for key in SAMPLING_KEYS:  # irrelevant when greedy; clear them so nothing is half-applied
            if hasattr(gc, key):
                setattr(gc, key, None)
    gc.update(**settings)
    gc.validate()
    if stop_ids and "eos_token_id" not in req:
        have = gc.eos_token_id if isinstance(gc.eos_token_id, list) else (
            [] if gc.eos_token_id is None else [gc.eos_token_id])
        merged = list(dict.fromkeys([*have, *stop_ids]))
        gc.eos_token_id = merged[0] if len(merged) == 1 else merged
    if gc.pad_token_id is None and gc.eos_token_id is not None:
        eos = gc.eos_token_id
        gc.pad_token_id = eos[0] if isinstance(eos, list) else eos
    effective = {k: getattr(gc, k, None) for k in RECORDED_KEYS}
    effective = {k: v for k, v in effective.items() if v is not None}
    overridden = {k: getattr(base, k) for k in ("do_sample", "temperature", "top_p", "top_k")
                  if getattr(base, k, None) is not None and getattr(base, k) != getattr(gc, k, None)}
    if overridden:
        effective["overrode_checkpoint_defaults"] = overridden
    return gc, effective


def eos_ids(gc: Any) -> set[int]:
    eos = gc.eos_token_id
    if eos is None:
        return set()
    return set(eos) if isinstance(eos, (list, tuple)) else {int(eos)}


def count_new_tokens(tokens: list[int], eos: set[int], pad: int | None) -> int:
    """Tokens the model actually produced: up to and including the first EOS, no trailing padding."""
    for i, t in enumerate(tokens):
        if t in eos:
            return i + 1
    n = len(tokens)
    while n and pad is not None and tokens[n - 1] == pad:
        n -= 1
    return n


#: the markers of a thinking span as Qwen3's thinking templates write it (the template may open it in the prompt)
THINK_START, THINK_END = "<think>", "</think>"


def think_token_ids(tokenizer: Any) -> tuple[int | None, int | None]:
    """The ids of ``<think>`` and ``</think>`` where the tokenizer holds each as one token, else None."""
    try:
        vocab = tokenizer.get_vocab()
    except Exception:  # noqa: BLE001 - a tokenizer without a vocabulary (mistral-common): no markers
        return None, None
    start, end = vocab.get(THINK_START), vocab.get(THINK_END)
    return (start if isinstance(start, int) else None), (end if isinstance(end, int) else None)


def count_reasoning_tokens(tokens: list[int], think: tuple[int | None, int | None]) -> int | None:
    """How many of the generated ``tokens`` belong to the thinking span: up to and including the first
    ``</think>`` (the span may open in the prompt); from ``<think>`` to the end when the span never
    closes (cut by max_new_tokens); 0 without one. None when the tokenizer has no ``</think>`` token."""
    start, end = think
    if end is None:
        return None
    if end in tokens:
        return tokens.index(end) + 1
    if start is not None and start in tokens:
        return len(tokens) - tokens.index(start)
    return 0
