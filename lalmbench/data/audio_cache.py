"""Decode + resample each task's audio once, before any model runs.

Every model and condition then reads float32 mono WAVs at the pipeline's sample rate instead of
decoding (MP3/FLAC/44.1 kHz…) and resampling the same files again per model. The manifest maps
each original ``audio_path`` (and every clip of an item's ``audio_paths``) to its cached file, so
items keep pointing at the real data.
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import soundfile as sf

from lalmbench.core import io
from lalmbench.data.audio import item_audio_paths, load_audio
from lalmbench.core.progress import ProgressLog

log = logging.getLogger("lalmbench.data.audio_cache")


def cached_name(audio_path: str) -> str:
    """Stable, collision-free file name for an original path (clip ids may repeat across folders)."""
    stem = Path(audio_path).stem[:60]
    return f"{stem}-{hashlib.sha1(audio_path.encode()).hexdigest()[:10]}.wav"


def cache_task_audio(items_path: str, out_dir: str, manifest_path: str, sample_rate: int) -> dict[str, str]:
    items = io.read_jsonl(items_path)
    paths = sorted({p for it in items for p in item_audio_paths(it)})  # every clip of a multi-clip item
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest, digests, missing = {}, {}, []
    progress = ProgressLog(len(paths), "decode+resample", log)
    for p in paths:
        try:
            x = load_audio(p, sample_rate)
        except io.InputError as exc:
            log.error("%s", exc)  # every unusable file in the rule log, not only the first
            missing.append(str(exc))
            progress.update(1)
            continue
        dest = out / cached_name(p)
        with io.atomic_path(dest, suffix=".wav") as tmp:
            sf.write(tmp, x, sample_rate, subtype="FLOAT", format="WAV")
        manifest[p] = str(dest)
        digests[p] = hashlib.sha1(x.astype("float32").tobytes()).hexdigest()  # keys predictions by audio content
        progress.update(1)
    if missing:
        raise io.InputError(f"{items_path}: {len(missing)} of {len(paths)} audio files unusable; first: {missing[0]}"
                            + (" (each is listed above in this log)" if len(missing) > 1 else ""))
    io.write_json(manifest_path, {"sample_rate": sample_rate, "files": manifest, "sha1": digests})
    return manifest
