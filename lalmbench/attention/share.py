"""How much of its attention a model puts on the audio while it produces its answer.

The queries are the positions that emitted the answer tokens: the last prompt token (it emits
the first answer token) through the second-to-last answer token. For each captured layer the
share is the attention mass those rows put on audio-placeholder keys over their total mass
(1 up to float16 rounding), averaged over the rows and the stored heads. Because it is a mean
of linear sums, the share of the head-averaged array equals the mean of the per-head shares, so
``heads: mean`` and ``heads: all`` give the same number.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def answer_rows(spans: dict) -> np.ndarray:
    """Query rows that emitted the answer tokens (empty when nothing was generated)."""
    ans = spans.get("answer") or []
    if not ans:
        return np.zeros(0, dtype=int)
    start, end = ans[0]
    return np.arange(start - 1, end - 1)


def key_mask(n_keys: int, spans: Sequence[Sequence[int]]) -> np.ndarray:
    mask = np.zeros(n_keys, dtype=bool)
    for s, e in spans:
        mask[s:e] = True
    return mask


def audio_share(attn: np.ndarray, audio_spans: Sequence[Sequence[int]], rows: np.ndarray) -> np.ndarray:
    """Per layer: mean over ``rows`` and heads of (attention on audio keys / all attention).

    ``attn`` is ``layers x heads x query x key`` (float16 from attn.npy, or anything numeric); it
    is read row slice by row slice, so a memory-mapped file is never loaded whole.
    Returns NaN per layer when there are no rows (nothing generated).
    """
    n_layers = attn.shape[0]
    if len(rows) == 0:
        return np.full(n_layers, np.nan)
    mask = key_mask(attn.shape[-1], audio_spans)
    out = np.empty(n_layers)
    for layer in range(n_layers):
        a = np.asarray(attn[layer][:, rows, :], dtype=np.float64)  # heads x rows x keys
        total = a.sum(-1)
        on_audio = a[..., mask].sum(-1)
        out[layer] = float(np.mean(np.divide(on_audio, total, out=np.zeros_like(total), where=total > 0)))
    return out


def uniform_share(n_keys: int, audio_spans: Sequence[Sequence[int]], rows: np.ndarray) -> float:
    """The share a row would give the audio if it attended uniformly to every key it can see
    (causal: keys 0..row): the baseline to read an audio share against."""
    if len(rows) == 0:
        return float("nan")
    seen_audio = np.cumsum(key_mask(n_keys, audio_spans))
    return float(np.mean(seen_audio[rows] / (rows + 1)))
