"""Audio loading: decode with soundfile, check the samples, mix to mono, resample with a polyphase filter.

Every file a model hears goes through :func:`load_audio` (rule cache_audio, and the generate job
when there is no cache), so the checks that make bad audio an error instead of a silent input live
here: a file cut short (header promises more frames than it holds), no samples at all, and
non-finite samples are InputErrors naming the file; a multichannel file whose channels cancel when
averaged (anti-phase stereo) is decoded but logged as a warning.
"""
from __future__ import annotations

import logging
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import soundfile as sf

from lalmbench.core.io import InputError

log = logging.getLogger("lalmbench.data.audio")

# downmix RMS below this fraction of the mean channel RMS: the channels (nearly) cancel
CANCEL_RATIO = 0.1
# channels quieter than this (about -80 dBFS) are silence, not cancellation
SILENCE_RMS = 1e-4
# WAVE format tags whose data chunk holds whole frames of block_align bytes each
# (PCM, IEEE float, A-law, mu-law, extensible); compressed tags (ADPCM...) do not
_FRAME_FORMATS = {0x0001, 0x0003, 0x0006, 0x0007, 0xFFFE}


def wav_declared_frames(path: str | Path) -> int | None:
    """Frames a RIFF/WAVE header declares (data chunk size / block align), or None if unknown.

    libsndfile shortens a truncated WAV's frame count to what the file holds (``info().frames``
    then equals what decodes), so the header's own claim has to be read here. None for a
    non-RIFF file, a compressed format, or a streaming placeholder size (0 or 0xFFFFFFFF)."""
    with open(path, "rb") as fh:
        head = fh.read(12)
        if len(head) < 12 or head[8:12] != b"WAVE" or head[:4] not in (b"RIFF", b"RIFX"):
            return None
        endian = "<" if head[:4] == b"RIFF" else ">"
        block_align = None
        while True:
            chunk = fh.read(8)
            if len(chunk) < 8:
                return None
            cid, size = chunk[:4], struct.unpack(endian + "I", chunk[4:])[0]
            if cid == b"fmt ":
                body = fh.read(size + (size & 1))
                if len(body) < 14:
                    return None
                tag, block_align = struct.unpack(endian + "H", body[:2])[0], struct.unpack(endian + "H", body[12:14])[0]
                if tag not in _FRAME_FORMATS or not block_align:
                    return None
            elif cid == b"data":
                if block_align is None or size in (0, 0xFFFFFFFF):
                    return None
                return size // block_align
            else:
                fh.seek(size + (size & 1), 1)


def declared_frames(path: Path, fmt: str, frames: int) -> int:
    """Frames the file's header promises (WAV: its data chunk; other formats: ``frames`` as libsndfile
    reports them)."""
    n = wav_declared_frames(path) if fmt in ("WAV", "WAVEX") else None
    return int(frames) if n is None else n


def check_samples(x: np.ndarray, path: Path, declared: int) -> None:
    """Raise InputError naming ``path`` for a truncated, empty or non-finite signal (frames x channels)."""
    if len(x) == 0:
        raise InputError(f"{path}: no audio samples (empty or header-only file)")
    if declared > len(x):
        raise InputError(f"{path}: truncated audio: the header declares {declared} frames but the file holds "
                         f"only {len(x)} ({len(x) / declared:.0%}); the file was cut short "
                         "(re-download or re-export it)")
    bad = ~np.isfinite(x)
    if bad.any():
        frame, ch = (int(v[0]) for v in np.nonzero(bad))
        raise InputError(f"{path}: {int(bad.sum())} non-finite samples (NaN/inf), first at frame {frame} "
                         f"(channel {ch + 1}); the file is corrupt or was written from a broken signal")


def downmix(x: np.ndarray, path: Path) -> np.ndarray:
    """Mean over channels; warn (naming the file) when the channels cancel instead of adding up."""
    mono = x.mean(axis=1)
    if x.shape[1] > 1:
        ch_rms = np.sqrt(np.mean(np.square(x, dtype=np.float64), axis=0))
        mix_rms = float(np.sqrt(np.mean(np.square(mono, dtype=np.float64))))
        mean_rms = float(ch_rms.mean())
        if mean_rms > SILENCE_RMS and mix_rms < CANCEL_RATIO * mean_rms:
            log.warning("%s: the mono downmix nearly cancels (channel RMS %s, downmix RMS %.4g): the channels are "
                        "in anti-phase, so a model hears near-silence; fix the file's polarity or pick one channel",
                        path, ", ".join(f"{v:.4g}" for v in ch_rms), mix_rms)
    return mono


def load_audio(path: str | Path, target_sr: int) -> np.ndarray:
    """Mono float32 at ``target_sr``. A missing, undecodable, truncated, empty or non-finite file raises
    InputError naming it."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not an audio file")
    if not path.is_file():
        raise InputError(f"{path}: audio file not found")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: no audio samples (empty file, 0 bytes)")
    try:
        info = sf.info(path)
        x, sr = sf.read(path, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError) as exc:
        raise InputError(f"{path}: cannot decode audio ({exc})") from None
    check_samples(x, path, declared_frames(path, info.format, info.frames))
    return resample(downmix(x, path), sr, target_sr)


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


def item_audio_paths(item: dict) -> list[str]:
    """Every clip an item plays, in order: ``audio_paths`` for a multi-clip item (MMAU-Pro's
    two-recording questions), else its one ``audio_path`` (none for a text-only item)."""
    paths = item.get("audio_paths")
    if paths:
        return [str(p) for p in paths]
    return [str(item["audio_path"])] if item.get("audio_path") else []
