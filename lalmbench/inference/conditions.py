"""Audio conditions (the ``{condition}`` wildcard): what audio the model actually gets.

- ``audio``: the item's own audio.
- ``no-audio``: none at all (text-only prompt): the language-prior floor for audio LMs.
- ``silence``: zeros of the same duration (the model gets an audio input that carries nothing).
- ``noise``: Gaussian noise of the same duration and RMS as the original (seeded per item).
- ``shuffled``: another clip's audio (a seeded derangement over the task's distinct clips).
Comparing ``audio`` with the others shows how much a model actually listens.

An item with several clips gets the condition on every clip (each clip's noise has its own seed;
under ``shuffled`` each clip is replaced by another clip). A model that cannot take several audio
entries in one turn hears them joined by :func:`join_clips` (the documented fallback).
"""
from __future__ import annotations

import zlib
from typing import Sequence

import numpy as np

CONDITIONS = ("audio", "no-audio", "silence", "noise", "shuffled")


def check_condition(condition: str) -> None:
    if condition not in CONDITIONS:
        raise ValueError(f"unknown condition {condition!r} (known: {', '.join(CONDITIONS)})")


def item_rng(seed: int, item_id: str) -> np.random.Generator:
    """A generator that depends only on (seed, item id): results never depend on batching or order."""
    return np.random.default_rng([seed, zlib.crc32(item_id.encode())])


def apply_condition(condition: str, audio: np.ndarray, *, seed: int, item_id: str) -> np.ndarray | None:
    check_condition(condition)
    if condition in ("audio", "shuffled"):
        return audio
    if condition == "no-audio":
        return None
    if condition == "silence":
        return np.zeros_like(audio)
    rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64)))) if len(audio) else 0.0
    noise = item_rng(seed, item_id).standard_normal(len(audio))
    return (noise * (rms if rms > 0 else 0.01)).astype(np.float32)


def clip_derangement(clips: Sequence[str], seed: int, n_items: int | None = None) -> dict[str, str]:
    """Map each distinct clip to another one (seeded, order-independent)."""
    clips = sorted(set(clips))
    if len(clips) < 2:
        raise ValueError(f"the 'shuffled' condition needs items from at least two audio clips; all "
                         f"{n_items if n_items is not None else 'the'} items use {clips[0] if clips else 'no audio'}")
    rng = np.random.default_rng([seed, 1234])
    perm = [clips[i] for i in rng.permutation(len(clips))]
    # a cyclic shift of a random permutation is a derangement: no clip maps to itself
    return {perm[i]: perm[(i + 1) % len(perm)] for i in range(len(perm))}


def shuffled_sources(item_ids: Sequence[str], audio_paths: Sequence[str], seed: int) -> dict[str, str]:
    """Map each item to the audio of another clip (seeded, order-independent).

    The derangement is over distinct clips, not items: items that share a clip (several questions
    about one recording) must never hear their own clip back."""
    other = clip_derangement(audio_paths, seed, len(item_ids))
    return {i: other[p] for i, p in zip(item_ids, audio_paths)}


def clip_seed_id(item_id: str, k: int) -> str:
    """The id that seeds clip ``k``'s noise: the item id for the first clip (so a one-clip item's
    noise is what it always was), ``<id>#<k>`` for the others."""
    return item_id if k == 0 else f"{item_id}#{k}"


def join_clips(clips: Sequence[np.ndarray], *, gap_s: float, sample_rate: int) -> np.ndarray:
    """The fallback for a model that takes one audio per turn: the clips in order with ``gap_s``
    seconds of silence between them (length = sum of the clips + gaps)."""
    if gap_s < 0:
        raise ValueError(f"multi_audio_gap_s must be >= 0, got {gap_s}")
    gap = np.zeros(int(round(gap_s * sample_rate)), dtype=np.float32)
    parts: list[np.ndarray] = []
    for k, c in enumerate(clips):
        if k:
            parts.append(gap)
        parts.append(np.asarray(c, dtype=np.float32))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
