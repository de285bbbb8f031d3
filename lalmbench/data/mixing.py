"""AIR-Bench-style audio mixing: sources combined with loudness control and temporal dislocation.

AIR-Bench (Yang et al., ACL 2024) mixes two clips at a relative loudness and with an offset and
keeps "which source, when, how loud" as meta-information. Here that meta-information is written
as strong annotations (``events.parquet``) so the ordinary builders make items from mixtures:
ORDER on source events asks which sound starts first, the LOUDER family which is louder.

Steps (deterministic given ``seed``):
  1. :func:`plan_mixtures` draws, for each mixture, ``n_sources`` distinct source clips, an onset
     offset per source (the first starts at 0) and a gain in dB relative to the first source.
  2. :func:`render_mixture` loads each source (mono, ``sample_rate``), scales it to the same RMS
     level (``ref_dbfs``) and then by its relative gain, adds it at its offset, and scales the
     whole mixture down only if its peak would clip (relative levels are kept exactly).
  3. :func:`mixture_events` writes one event per source ([offset, offset + source duration],
     label/caption = the source's dominant annotated sound, ``level_db`` = its relative gain) and,
     with ``inner_events``, the source's own annotated events shifted by its offset.

Params (defaults): n_mixtures 100, n_sources 2, max_offset_s 3.0, min_offset_s 0.5 (later sources
start at least this much after the first), gain_db [-10, 10], min_level_diff_db 3.0 (sources of
one mixture differ by at least this much, so "which is louder" has an answer), ref_dbfs -25,
sample_rate 16000, inner_events false.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import soundfile as sf

from lalmbench.data.audio import load_audio
from lalmbench.core.io import InputError, atomic_path


def _p(params: dict, key: str, default):
    v = (params or {}).get(key)
    return default if v is None else v


def plan_mixtures(clips: pd.DataFrame, params: dict, *, seed: int) -> pd.DataFrame:
    """One row per (mixture, source): mix_id, source_index, source_clip_id, source_path, offset_s, gain_db."""
    n_mix = int(_p(params, "n_mixtures", 100))
    k = int(_p(params, "n_sources", 2))
    lo_off, hi_off = float(_p(params, "min_offset_s", 0.5)), float(_p(params, "max_offset_s", 3.0))
    g_lo, g_hi = map(float, _p(params, "gain_db", [-10.0, 10.0]))
    min_diff = float(_p(params, "min_level_diff_db", 3.0))
    if k < 2:
        raise ValueError(f"n_sources must be >= 2, got {k}")
    if len(clips) < k:
        raise InputError(f"mixing needs at least {k} source clips, the source dataset has {len(clips)}")
    if hi_off < lo_off or g_hi < g_lo:
        raise ValueError("max_offset_s must be >= min_offset_s and gain_db must be [low, high]")
    rng = np.random.default_rng(seed)
    order = np.argsort(clips["clip_id"].astype(str).to_numpy(), kind="stable")  # input-order independent
    ids = clips["clip_id"].astype(str).to_numpy()[order]
    paths = clips["audio_path"].astype(str).to_numpy()[order]
    # k distinct sources per mixture: argsort of random keys, first k columns (vectorised)
    pick = np.argsort(rng.random((n_mix, len(ids))), axis=1)[:, :k] if len(ids) <= 4096 else \
        np.stack([rng.choice(len(ids), k, replace=False) for _ in range(n_mix)])
    offsets = np.zeros((n_mix, k))
    offsets[:, 1:] = rng.uniform(lo_off, hi_off, (n_mix, k - 1))
    gains = np.zeros((n_mix, k))
    for m in range(n_mix):                       # redraw (rarely) until levels are separated
        for _ in range(1000):
            g = np.r_[0.0, rng.uniform(g_lo, g_hi, k - 1)]
            if k == 1 or np.min(np.diff(np.sort(g))) >= min_diff:
                break
        else:
            raise ValueError(f"could not draw gains {min_diff} dB apart in [{g_lo}, {g_hi}]")
        gains[m] = g
    mix_ids = [f"mix{m:05d}" for m in range(n_mix)]
    return pd.DataFrame({
        "mix_id": np.repeat(mix_ids, k), "source_index": np.tile(np.arange(k), n_mix),
        "source_clip_id": ids[pick].reshape(-1), "source_path": paths[pick].reshape(-1),
        "offset_s": np.round(offsets.reshape(-1), 3), "gain_db": np.round(gains.reshape(-1), 2),
    })


def rms_dbfs(x: np.ndarray) -> float:
    r = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0
    return 20 * np.log10(r) if r > 0 else -np.inf


def render_mixture(sources: list[np.ndarray], offsets_s: list[float], gains_db: list[float], *, sample_rate: int,
                   ref_dbfs: float = -25.0) -> tuple[np.ndarray, float]:
    """Sum sources at RMS ``ref_dbfs + gain_db`` each, shifted by their offsets. Returns (mixture, applied
    global scale); a silent source is an error (its loudness cannot be controlled)."""
    starts = [int(round(o * sample_rate)) for o in offsets_s]
    n = max(s + len(x) for s, x in zip(starts, sources))
    mix = np.zeros(n, np.float64)
    for x, s, g in zip(sources, starts, gains_db):
        level = rms_dbfs(x)
        if not np.isfinite(level):
            raise InputError("a mixing source is silent; its loudness cannot be set")
        mix[s:s + len(x)] += x.astype(np.float64) * 10 ** ((ref_dbfs + g - level) / 20)
    peak = float(np.max(np.abs(mix))) if n else 0.0
    scale = 0.99 / peak if peak > 0.99 else 1.0
    return (mix * scale).astype(np.float32), scale


def dominant_sound(events: pd.DataFrame) -> pd.DataFrame:
    """Per clip, the label/caption with the longest total annotated duration (ties: first in order)."""
    if events is None or len(events) == 0:
        return pd.DataFrame(columns=["clip_id", "label", "caption"])
    e = events.assign(dur=events["offset_s"] - events["onset_s"], key=events["label"].astype(str))
    tot = e.groupby(["clip_id", "key"], sort=True)["dur"].sum().reset_index()
    tot = tot.sort_values(["clip_id", "dur", "key"], ascending=[True, False, True], kind="stable")
    best = tot.drop_duplicates("clip_id")
    cap = e.drop_duplicates(["clip_id", "key"])[["clip_id", "key", "caption"]]
    return best.merge(cap, on=["clip_id", "key"], how="left").rename(columns={"key": "label"})[
        ["clip_id", "label", "caption"]]


def mix_dataset(clips: pd.DataFrame, events: pd.DataFrame | None, params: dict, *, seed: int, audio_dir: str,
                dataset: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Render every planned mixture into ``audio_dir``; return (clips, events, plan) tables."""
    sr = int(_p(params, "sample_rate", 16000))
    ref = float(_p(params, "ref_dbfs", -25.0))
    inner = bool(_p(params, "inner_events", False))
    plan = plan_mixtures(clips, params, seed=seed)
    dom = dominant_sound(events).set_index("clip_id") if events is not None else pd.DataFrame()
    Path(audio_dir).mkdir(parents=True, exist_ok=True)
    clip_rows, ev_rows, scales, durs = [], [], [], []
    for mix_id, grp in plan.groupby("mix_id", sort=True):
        srcs = [load_audio(p, sr) for p in grp["source_path"]]   # no cross-mixture cache: bounded memory
        mix, scale = render_mixture(srcs, grp["offset_s"].tolist(), grp["gain_db"].tolist(), sample_rate=sr,
                                    ref_dbfs=ref)
        out = os.path.join(audio_dir, f"{mix_id}.wav")
        with atomic_path(out, suffix=".wav") as tmp:
            sf.write(tmp, mix, sr, subtype="PCM_16", format="WAV")
        clip_rows.append({"clip_id": mix_id, "audio_path": out, "duration_s": round(len(mix) / sr, 6),
                          "sample_rate": sr, "split": "mix", "source": f"mix:{dataset}"})
        for (_, r), x in zip(grp.iterrows(), srcs):
            src = r["source_clip_id"]
            lab = dom.loc[src, "label"] if src in dom.index else src
            cap = dom.loc[src, "caption"] if src in dom.index else None
            ev_rows.append({"clip_id": mix_id, "onset_s": r["offset_s"],
                            "offset_s": round(r["offset_s"] + len(x) / sr, 6), "label": lab,
                            "caption": cap if isinstance(cap, str) else None, "source": f"mix:{src}",
                            "level_db": r["gain_db"], "kind": "source"})
            if inner and events is not None:
                sub = events[events["clip_id"].astype(str) == src]
                for e in sub.itertuples(index=False):
                    ev_rows.append({"clip_id": mix_id, "onset_s": round(e.onset_s + r["offset_s"], 6),
                                    "offset_s": round(e.offset_s + r["offset_s"], 6), "label": e.label,
                                    "caption": e.caption if isinstance(e.caption, str) else None,
                                    "source": f"mix:{src}", "level_db": r["gain_db"], "kind": "inner"})
        scales.append(scale)
        durs.append(len(mix) / sr)
    plan = plan.merge(pd.DataFrame({"mix_id": sorted(plan["mix_id"].unique()), "global_scale": scales}), on="mix_id")
    ev = pd.DataFrame(ev_rows).astype({"clip_id": "string", "label": "string", "caption": "string", "source": "string",
                                       "kind": "string"})
    return pd.DataFrame(clip_rows), ev, plan
