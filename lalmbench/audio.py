"""Audio loading: decode with soundfile, mix to mono, resample with a polyphase filter."""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import soundfile as sf

from lalmbench.io import InputError


def load_audio(path: str | Path, target_sr: int) -> np.ndarray:
    """Mono float32 at ``target_sr``. A missing or undecodable file raises InputError naming it."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: audio file not found")
    try:
        x, sr = sf.read(path, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise InputError(f"{path}: cannot decode audio ({exc})") from None
    return resample(x.mean(axis=1), sr, target_sr)


def resample(x: np.ndarray, sr: int, target_sr: int) -> np.ndarray:
    """Float32 at ``target_sr`` (polyphase filter; unchanged when the rates agree)."""
    x = np.asarray(x, dtype=np.float32)
    if int(sr) != int(target_sr):
        from scipy.signal import resample_poly

        ratio = Fraction(int(target_sr), int(sr))
        x = resample_poly(x, ratio.numerator, ratio.denominator).astype(np.float32)
    return x


def mono_at(audio: np.ndarray, sample_rate: int, target_sr: int, who: str) -> np.ndarray:
    """A model's input: 1-D float32 at ``target_sr``; ``who`` names the model in the error for other shapes."""
    x = np.asarray(audio, dtype=np.float32)
    if x.ndim != 1:
        raise ValueError(f"{who} expects mono audio (1-D array), got shape {x.shape}")
    return np.ascontiguousarray(resample(x, sample_rate, target_sr))
