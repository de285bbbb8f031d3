"""Audio / annotation consistency: do the annotated regions sound like something, and fit the clip?

For each clip (or a seeded sample of ``sample_clips`` clips):
  * energy: frame RMS (``frame_s`` frames) in dB, mean inside the union of annotated regions vs
    outside them; a clip whose inside level is more than ``energy_tolerance_db`` *below* its
    outside level is flagged ``quiet_annotations`` (labels on silence, or shifted timestamps).
    Clips fully covered by events (or with no events) have no "outside" and are not judged.
  * duration: the decoded audio duration vs ``clips.duration_s`` (``duration_mismatch`` beyond
    ``duration_tolerance_s``) and vs the last offset (``offset_beyond_audio``).
  * unreadable audio is flagged ``unreadable_audio``.

``policy`` (default warn): ``warn`` reports only; ``drop`` removes flagged clips and their events
(counted per reason); ``fail`` raises InputError naming the first flagged clips. The report is a
per-clip table plus a summary dict for ``consistency.json``.
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import soundfile as sf

from lalmbench.core.io import InputError

log = logging.getLogger("lalmbench.data.consistency")

DEFAULTS = {"policy": "warn", "frame_s": 0.05, "energy_tolerance_db": 3.0, "duration_tolerance_s": 0.1,
            "sample_clips": None, "seed": 0}


def frame_db(x: np.ndarray, sr: int, frame_s: float) -> np.ndarray:
    """RMS level per non-overlapping frame, in dB (floor -120)."""
    n = max(1, int(round(frame_s * sr)))
    m = len(x) // n
    if m == 0:
        return np.zeros(0)
    fr = x[:m * n].reshape(m, n).astype(np.float64)
    rms = np.sqrt(np.mean(fr * fr, axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-6))


def check_clip(path: str, events: pd.DataFrame, duration_s: float, cfg: dict) -> dict:
    """Measurements and flags for one clip (events: this clip's onset_s/offset_s)."""
    row = {"audio_duration_s": np.nan, "inside_db": np.nan, "outside_db": np.nan, "inside_minus_outside_db": np.nan,
           "last_offset_s": float(events["offset_s"].max()) if len(events) else np.nan, "flags": ""}
    try:
        x, sr = sf.read(path, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, OSError) as exc:
        row["flags"] = "unreadable_audio"
        row["error"] = str(exc)
        return row
    x = x.mean(axis=1)
    dur = len(x) / sr
    row["audio_duration_s"] = round(dur, 6)
    flags = []
    tol = float(cfg["duration_tolerance_s"])
    if np.isfinite(duration_s) and abs(dur - duration_s) > tol:
        flags.append("duration_mismatch")
    if len(events) and row["last_offset_s"] > dur + tol:
        flags.append("offset_beyond_audio")
    db = frame_db(x, sr, float(cfg["frame_s"]))
    if len(db) and len(events):
        t = (np.arange(len(db)) + 0.5) * float(cfg["frame_s"])
        inside = np.zeros(len(db), bool)
        for on, off in zip(events["onset_s"].to_numpy(float), events["offset_s"].to_numpy(float)):
            inside |= (t >= on) & (t < off)
        if inside.any() and (~inside).any():
            # mean power in dB (average the power, then convert) so silence frames do not dominate
            pin = 10 * np.log10(np.mean(10 ** (db[inside] / 10)))
            pout = 10 * np.log10(np.mean(10 ** (db[~inside] / 10)))
            row.update(inside_db=round(pin, 3), outside_db=round(pout, 3), inside_minus_outside_db=round(pin - pout, 3))
            if pin - pout < -float(cfg["energy_tolerance_db"]):
                flags.append("quiet_annotations")
    row["flags"] = ",".join(flags)
    return row


def check_consistency(clips: pd.DataFrame, events: pd.DataFrame, params: dict | None = None, *,
                      source: str = "dataset") -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Returns (clips, events, per-clip report, summary) after applying the policy."""
    cfg = dict(DEFAULTS, **{k: v for k, v in (params or {}).items() if v is not None})
    policy = str(cfg["policy"])
    if policy not in ("warn", "drop", "fail"):
        raise ValueError(f"consistency policy must be warn|drop|fail, got {policy!r}")
    ids = clips["clip_id"].astype(str).to_numpy()
    idx = np.arange(len(ids))
    if cfg["sample_clips"] is not None and int(cfg["sample_clips"]) < len(ids):
        if policy != "warn":
            raise ValueError("consistency sample_clips only makes sense with policy warn (drop/fail must see all)")
        idx = np.sort(np.random.default_rng(int(cfg["seed"])).choice(len(ids), int(cfg["sample_clips"]), replace=False))
    by_clip = {c: g for c, g in events.groupby(events["clip_id"].astype(str), sort=False)}
    empty = events.iloc[0:0]
    rows = []
    durs = pd.to_numeric(clips["duration_s"], errors="coerce").to_numpy(float) if "duration_s" in clips else \
        np.full(len(ids), np.nan)
    paths = clips["audio_path"].astype(str).to_numpy()
    for i in idx:
        r = check_clip(paths[i], by_clip.get(ids[i], empty), durs[i], cfg)
        rows.append(dict(clip_id=ids[i], **r))
    report = pd.DataFrame(rows)
    if len(report) == 0:
        report = pd.DataFrame(columns=["clip_id", "flags"])
    flagged = report[report["flags"].astype(str) != ""]
    counts: dict[str, int] = {}
    for f in flagged["flags"]:
        for name in str(f).split(","):
            counts[name] = counts.get(name, 0) + 1
    diff = pd.to_numeric(report.get("inside_minus_outside_db"), errors="coerce") if len(report) else pd.Series([])
    summary = {"policy": policy, "clips_checked": int(len(report)), "clips_flagged": int(len(flagged)),
               "flags": dict(sorted(counts.items())),
               "inside_minus_outside_db_median": float(diff.median()) if diff.notna().any() else None,
               "first_flagged": flagged["clip_id"].head(10).tolist()}
    if len(flagged):
        log.warning("%s: %d of %d clips flagged by the consistency check: %s (first: %s)", source, len(flagged),
                    len(report), counts, summary["first_flagged"][:3])
    if policy == "fail" and len(flagged):
        first = flagged.iloc[0]
        raise InputError(f"{source}: clip {first['clip_id']!r} fails the audio/annotation consistency check "
                         f"({first['flags']}); {len(flagged)} clips flagged: {counts}. Fix the data or set "
                         f"consistency.policy to warn/drop")
    if policy == "drop" and len(flagged):
        gone = set(flagged["clip_id"])
        keep_e = ~events["clip_id"].astype(str).isin(gone).to_numpy()
        summary["dropped"] = {"clip:inconsistent": len(gone), "event:clip_inconsistent": int((~keep_e).sum())}
        clips = clips[~clips["clip_id"].astype(str).isin(gone).to_numpy()].reset_index(drop=True)
        events = events[keep_e].reset_index(drop=True)
    return clips, events, report, summary
