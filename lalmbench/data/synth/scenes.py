"""Multi-event scenes: a few distinct sounds placed at random onsets in a silent clip.

Writes audio + ``clips``/``events`` tables in the data contract; task items for scenes are then
built by the same generic builders (``lalmbench.tasks``) that serve real strong annotations.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import soundfile as sf

from lalmbench.data.synth import sounds

SR_DEFAULT = 16000

# label -> (caption, renderer(dur, sr, rng))
SOUND_TYPES: dict[str, tuple[str, Callable[[float, int, np.random.Generator], np.ndarray]]] = {
    "high tone": ("a high-pitched tone", lambda d, sr, rng: sounds.tone(float(rng.uniform(1400, 1800)), d, sr)),
    "low tone": ("a low-pitched tone", lambda d, sr, rng: sounds.tone(float(rng.uniform(180, 260)), d, sr)),
    "noise burst": ("a burst of hissing noise", lambda d, sr, rng: sounds.noise_burst(d, sr, rng)),
    "rising chirp": ("a rising chirp", lambda d, sr, rng: sounds.chirp(300, 2000, d, sr)),
    "falling chirp": ("a falling chirp", lambda d, sr, rng: sounds.chirp(2000, 300, d, sr)),
    "click train": ("a rapid train of clicks", lambda d, sr, rng: sounds.click_train(d, sr)),
}


def generate_scenes(out_dir: str | Path, *, n_clips: int, seed: int, clip_s: float = 6.0,
                    min_events: int = 3, max_events: int = 5, min_event_s: float = 0.3,
                    max_event_s: float = 1.2, overlap_prob: float = 0.15,
                    sample_rate: int = SR_DEFAULT, source: str = "synth-scenes") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Render ``n_clips`` scenes; return (clips, events). Events never repeat a sound type within a clip,
    and overlap only with probability ``overlap_prob`` per event, so builders see both cases."""
    if not 1 <= min_events <= max_events <= len(SOUND_TYPES):
        raise ValueError(f"need 1 <= min_events <= max_events <= {len(SOUND_TYPES)}")
    rng = np.random.default_rng([seed, 7])
    out_dir = Path(out_dir)
    audio_dir = out_dir / "audio"
    audio_dir.mkdir(parents=True, exist_ok=True)
    types = sorted(SOUND_TYPES)
    clips, events = [], []
    for i in range(n_clips):
        clip_id = f"scene-{i:05d}"
        canvas = np.zeros(int(round(clip_s * sample_rate)), dtype=np.float32)
        k = int(rng.integers(min_events, max_events + 1))
        chosen = [types[j] for j in rng.choice(len(types), size=k, replace=False)]
        durs = rng.uniform(min_event_s, max_event_s, size=k)
        slack = clip_s - 0.2 - float(durs.sum())
        if slack < 0:
            durs *= (clip_s - 0.2 - 0.05 * k) / durs.sum()
            slack = 0.05 * k
        gaps = rng.dirichlet(np.ones(k + 1)) * slack
        t = 0.1 + gaps[0]
        for j, (label, dur) in enumerate(zip(chosen, durs)):
            onset = t
            if j > 0 and rng.random() < overlap_prob:
                onset = max(0.1, t - float(rng.uniform(0.1, 0.3)))  # deliberately overlap the previous one
            caption, render = SOUND_TYPES[label]
            a, b = sounds.place(canvas, render(float(dur), sample_rate, rng), onset, sample_rate)
            events.append({"clip_id": clip_id, "onset_s": round(a, 4), "offset_s": round(b, 4), "label": label,
                           "caption": caption, "source": source})
            t = b + gaps[j + 1]
        peak = float(np.max(np.abs(canvas)))
        if peak > 0.99:
            canvas *= 0.99 / peak
        path = audio_dir / f"{clip_id}.wav"
        sf.write(path, canvas, sample_rate, subtype="PCM_16")
        clips.append({"clip_id": clip_id, "audio_path": str(path), "duration_s": clip_s,
                      "sample_rate": sample_rate, "split": "test", "source": source})
    return pd.DataFrame(clips), pd.DataFrame(events)


def write_scene_dataset(cfg: dict, *, dataset: str, clips_path: str, events_path: str, audio_dir: str) -> None:
    """Rule entry: ``cfg`` = {params, seed, scale, sample_rate} from the dataset's config entry."""
    from lalmbench.core import io

    params = dict(cfg["params"])
    params["n_clips"] = max(1, round(params.get("n_clips", 40) * cfg.get("scale", 1)))
    clips, events = generate_scenes(Path(audio_dir).parent, seed=int(cfg["seed"]),
                                    sample_rate=int(cfg.get("sample_rate", SR_DEFAULT)), source=dataset, **params)
    io.write_parquet(events_path, events)
    io.write_parquet(clips_path, clips)
