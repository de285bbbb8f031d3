"""Audio conditions (the ``{condition}`` wildcard): what audio the model actually gets.

- ``audio``: the item's own audio.
- ``no-audio``: none at all (text-only prompt): the language-prior floor for audio LMs.
- ``silence``: zeros of the same duration (the model gets an audio input that carries nothing).
- ``noise``: Gaussian noise of the same duration and RMS as the original (seeded per item).
- ``shuffled``: another clip's audio (a seeded derangement over the task's distinct clips).
Comparing ``audio`` with the others shows how much a model actually listens.
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


def shuffled_sources(item_ids: Sequence[str], audio_paths: Sequence[str], seed: int) -> dict[str, str]:
    """Map each item to the audio of another clip (seeded, order-independent).

    The derangement is over distinct clips, not items: items that share a clip (several questions
    about one recording) must never hear their own clip back."""
    clips = sorted(set(audio_paths))
    if len(clips) < 2:
        raise ValueError(f"the 'shuffled' condition needs items from at least two audio clips; all "
                         f"{len(item_ids)} items use {clips[0] if clips else 'no audio'}")
    rng = np.random.default_rng([seed, 1234])
    perm = [clips[i] for i in rng.permutation(len(clips))]
    # a cyclic shift of a random permutation is a derangement: no clip maps to itself
    other = {perm[i]: perm[(i + 1) % len(perm)] for i in range(len(perm))}
    return {i: other[p] for i, p in zip(item_ids, audio_paths)}
