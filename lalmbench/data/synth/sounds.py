"""Primitive test sounds. Each returns float32 mono samples with short raised-cosine fades,
so annotated onsets/offsets coincide with where the energy actually is (tests check this)."""
from __future__ import annotations

import numpy as np

FADE_S = 0.01


def _fade(x: np.ndarray, sr: int) -> np.ndarray:
    n = min(int(FADE_S * sr), len(x) // 2)
    if n > 0:
        ramp = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, n, dtype=np.float64))
        x[:n] *= ramp
        x[-n:] *= ramp[::-1]
    return x.astype(np.float32)


def db_to_amp(db: float) -> float:
    """dBFS of a full-scale sine's peak -> linear peak amplitude."""
    return float(10.0 ** (db / 20.0))


def tone(freq_hz: float, dur_s: float, sr: int, level_db: float = -12.0) -> np.ndarray:
    t = np.arange(int(round(dur_s * sr))) / sr
    return _fade(db_to_amp(level_db) * np.sin(2 * np.pi * freq_hz * t), sr)


def chirp(f0_hz: float, f1_hz: float, dur_s: float, sr: int, level_db: float = -12.0) -> np.ndarray:
    t = np.arange(int(round(dur_s * sr))) / sr
    k = (f1_hz - f0_hz) / max(dur_s, 1e-9)
    phase = 2 * np.pi * (f0_hz * t + 0.5 * k * t * t)
    return _fade(db_to_amp(level_db) * np.sin(phase), sr)


def noise_burst(dur_s: float, sr: int, rng: np.random.Generator, level_db: float = -15.0) -> np.ndarray:
    x = rng.standard_normal(int(round(dur_s * sr)))
    x = x / max(np.max(np.abs(x)), 1e-9)
    return _fade(db_to_amp(level_db) * x, sr)


def click_train(dur_s: float, sr: int, rate_hz: float = 12.0, level_db: float = -10.0) -> np.ndarray:
    n = int(round(dur_s * sr))
    x = np.zeros(n)
    click = np.hanning(max(int(0.004 * sr), 3))
    for start in (np.arange(0, dur_s, 1.0 / rate_hz) * sr).astype(int):
        seg = x[start:start + len(click)]
        seg += click[: len(seg)]
    return _fade(db_to_amp(level_db) * x, sr)


def place(canvas: np.ndarray, sound: np.ndarray, onset_s: float, sr: int) -> tuple[float, float]:
    """Add ``sound`` into ``canvas`` at ``onset_s``; return the (onset_s, offset_s) actually used."""
    start = int(round(onset_s * sr))
    end = min(start + len(sound), len(canvas))
    canvas[start:end] += sound[: end - start]
    return start / sr, end / sr
