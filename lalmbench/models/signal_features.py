"""Measured signal features for the ``signal`` baseline: where sounds are, how long, how loud, what pitch.

Nothing here is learned. Two views of a clip:

* :func:`segments`: the energy envelope (RMS in 10 ms frames, threshold relative to the clip's peak)
  cut into sounds separated by silence: onsets, offsets, durations, gaps, RMS level and ITU-R
  BS.1770 loudness (pyloudnorm, where a sound is long enough for its 400 ms gating blocks), and
  pYIN pitch (librosa) on demand. Enough for sequences of separated tones and beeps.
* :func:`events`: overlapping sounds of different kinds, for scenes. Tonal components are spectral
  peaks that stand ``peak_db`` above the local spectral floor, linked frame to frame into tracks
  (a tone or a chirp: start/end/median frequency, pitch change in semitones); what is left after
  removing those peaks is broadband energy (noise, clicks), cut into bursts and measured for
  impulsiveness (how far the 4 ms envelope swings between its loud and quiet moments).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SR = 16000
HOP_S = 0.01


def _db(x: np.ndarray | float) -> np.ndarray:
    return 20.0 * np.log10(np.maximum(x, 1e-10))


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) index pairs of the True runs of a boolean array."""
    m = np.r_[False, np.asarray(mask, bool), False]
    d = np.flatnonzero(np.diff(m.astype(np.int8)))
    return list(zip(d[::2].tolist(), d[1::2].tolist()))


def merge_runs(spans: list[tuple[int, int]], max_gap: int, min_len: int) -> list[tuple[int, int]]:
    """Join runs separated by at most ``max_gap`` frames, then drop runs shorter than ``min_len`` frames."""
    out: list[list[int]] = []
    for a, b in spans:
        if out and a - out[-1][1] <= max_gap:
            out[-1][1] = b
        else:
            out.append([a, b])
    return [(a, b) for a, b in out if b - a >= min_len]


# --- separated sounds (energy envelope) ----------------------------------------------------------
@dataclass
class Segment:
    onset_s: float
    offset_s: float
    rms_db: float
    lufs: float | None = None
    f0_hz: float | None = None
    f0_start_hz: float | None = None
    f0_end_hz: float | None = None

    @property
    def duration_s(self) -> float:
        return self.offset_s - self.onset_s

    def as_dict(self) -> dict:
        d = {"onset_s": round(self.onset_s, 3), "offset_s": round(self.offset_s, 3),
             "duration_s": round(self.duration_s, 3), "rms_db": round(self.rms_db, 2)}
        for k in ("lufs", "f0_hz", "f0_start_hz", "f0_end_hz"):
            v = getattr(self, k)
            if v is not None:
                d[k] = round(float(v), 2)
        return d


def frame_rms_db(x: np.ndarray, sr: int = SR, hop_s: float = HOP_S, win_s: float = 0.02) -> np.ndarray:
    """RMS level (dBFS) of ``win_s`` windows every ``hop_s``; frame i is centred at i * hop_s."""
    import librosa

    hop, win = int(round(hop_s * sr)), int(round(win_s * sr))
    return _db(librosa.feature.rms(y=x, frame_length=win, hop_length=hop, center=True)[0])


def segments(x: np.ndarray, sr: int = SR, *, rel_db: float = 30.0, floor_db: float = -70.0,
             merge_gap_s: float = 0.03, min_len_s: float = 0.03) -> list[Segment]:
    """Sounds separated by silence: frames within ``rel_db`` of the clip's loudest frame (and above
    ``floor_db``), runs closer than ``merge_gap_s`` joined, runs shorter than ``min_len_s`` dropped."""
    if x.size == 0:
        return []
    env = frame_rms_db(x, sr)
    thr = max(float(env.max()) - rel_db, floor_db)
    spans = merge_runs(runs(env > thr), int(round(merge_gap_s / HOP_S)), max(1, int(round(min_len_s / HOP_S))))
    out = []
    for a, b in spans:
        on, off = a * HOP_S, min(b * HOP_S, len(x) / sr)
        seg = x[int(on * sr):int(off * sr)]
        out.append(Segment(on, off, float(_db(np.sqrt(np.mean(seg.astype(np.float64) ** 2)))) if seg.size else -200.0,
                           lufs=loudness_lufs(seg, sr)))
    return out


def loudness_lufs(seg: np.ndarray, sr: int = SR) -> float | None:
    """BS.1770 integrated loudness (pyloudnorm), or None for a sound shorter than one 400 ms block."""
    import pyloudnorm

    if len(seg) < int(0.4 * sr) + 1:
        return None
    value = float(pyloudnorm.Meter(sr).integrated_loudness(seg.astype(np.float64)))
    return value if np.isfinite(value) else None


def add_pitch(x: np.ndarray, segs: list[Segment], sr: int = SR, *, fmin: float = 65.0, fmax: float = 2100.0) -> None:
    """pYIN f0 per segment (median of voiced frames, and of the first/last third of them); unvoiced -> None."""
    import librosa

    for s in segs:
        seg = x[int(s.onset_s * sr):int(s.offset_s * sr)]
        if len(seg) < 1024:
            seg = np.pad(seg, (0, 1024 - len(seg)))
        f0, voiced, _ = librosa.pyin(seg.astype(np.float64), fmin=fmin, fmax=fmax, sr=sr, frame_length=1024,
                                     hop_length=256, resolution=0.25, center=True)
        f = f0[voiced & np.isfinite(f0)]
        if f.size:
            third = max(1, f.size // 3)
            s.f0_hz = float(np.median(f))
            s.f0_start_hz, s.f0_end_hz = float(np.median(f[:third])), float(np.median(f[-third:]))


# --- overlapping sounds (spectral tracks + broadband bursts) -------------------------------------
N_FFT = 512


@dataclass
class Event:
    kind: str                 # "tonal" | "broadband"
    onset_s: float
    offset_s: float
    level_db: float
    f_start_hz: float | None = None
    f_end_hz: float | None = None
    f_median_hz: float | None = None
    impulsiveness_db: float | None = None
    tags: dict[str, float] = field(default_factory=dict)

    @property
    def duration_s(self) -> float:
        return self.offset_s - self.onset_s

    @property
    def pitch_change_st(self) -> float:
        if self.f_start_hz is None or self.f_end_hz is None:
            return 0.0
        return float(12.0 * np.log2(self.f_end_hz / self.f_start_hz))

    def as_dict(self) -> dict:
        d = {"kind": self.kind, "onset_s": round(self.onset_s, 3), "offset_s": round(self.offset_s, 3),
             "level_db": round(self.level_db, 1)}
        if self.kind == "tonal":
            d.update(f_start_hz=round(self.f_start_hz, 1), f_end_hz=round(self.f_end_hz, 1),
                     f_median_hz=round(self.f_median_hz, 1), pitch_change_st=round(self.pitch_change_st, 1))
        else:
            d["impulsiveness_db"] = round(float(self.impulsiveness_db or 0.0), 1)
        if self.tags:
            d["yamnet"] = self.tags
        return d


def spectral_peaks(mag_db: np.ndarray, *, peak_db: float, abs_db: float, max_peaks: int = 4,
                   floor_bins: int = 31, guard: int = 3) -> list[list[tuple[float, float]]]:
    """Per frame, up to ``max_peaks`` (frequency bin with parabolic refinement, level dB) local maxima that stand
    ``peak_db`` above the median of their ``floor_bins`` neighbours and above ``abs_db``."""
    from scipy.ndimage import maximum_filter1d, median_filter

    floor = median_filter(mag_db, size=(floor_bins, 1), mode="nearest")
    local_max = mag_db >= maximum_filter1d(mag_db, size=2 * guard + 1, axis=0, mode="nearest")
    cand = local_max & (mag_db - floor > peak_db) & (mag_db > abs_db)
    cand[0] = cand[-1] = False
    out = []
    for t in range(mag_db.shape[1]):
        bins = np.flatnonzero(cand[:, t])
        bins = bins[np.argsort(-mag_db[bins, t])][:max_peaks]
        peaks = []
        for k in bins:
            a, b, c = mag_db[k - 1, t], mag_db[k, t], mag_db[k + 1, t]
            den = a - 2 * b + c
            delta = 0.5 * (a - c) / den if den != 0 else 0.0
            peaks.append((float(k + np.clip(delta, -0.5, 0.5)), float(b)))
        out.append(peaks)
    return out


def link_tracks(peaks: list[list[tuple[float, float]]], bin_hz: float, *, rel_tol: float = 0.15,
                abs_tol_hz: float = 100.0, max_skip: int = 2) -> list[dict]:
    """Greedy frame-to-frame linking of peaks into tracks {frames, freqs, levels} (nearest frequency first)."""
    done, active = [], []
    for t, frame in enumerate(peaks):
        free = list(range(len(frame)))
        for tr in sorted(active, key=lambda tr: -tr["levels"][-1]):
            f_last = tr["freqs"][-1]
            tol = max(abs_tol_hz, rel_tol * f_last)
            best = min(free, key=lambda i: abs(frame[i][0] * bin_hz - f_last), default=None)
            if best is not None and abs(frame[best][0] * bin_hz - f_last) <= tol:
                free.remove(best)
                tr["frames"].append(t)
                tr["freqs"].append(frame[best][0] * bin_hz)
                tr["levels"].append(frame[best][1])
        for tr in [tr for tr in active if t - tr["frames"][-1] > max_skip]:
            active.remove(tr)
            done.append(tr)
        for i in free:
            active.append({"frames": [t], "freqs": [frame[i][0] * bin_hz], "levels": [frame[i][1]]})
    return done + active


def events(x: np.ndarray, sr: int = SR, *, peak_db: float = 20.0, rel_db: float = 40.0, min_event_s: float = 0.08,
           merge_gap_s: float = 0.1, leak_db: float = 15.0, click_db: float = 12.0) -> list[Event]:
    """Tonal tracks and broadband bursts of a clip, in onset order. Thresholds are relative to the clip's loudest
    spectral bin (``rel_db`` below it is ignored), so levels need no calibration. A broadband burst mostly inside
    tonal events and ``leak_db`` below them is their spectral leakage (chirps, fade transients) and is dropped;
    a broadband run is split where its impulsiveness crosses ``click_db``."""
    import librosa

    if x.size < N_FFT:
        x = np.pad(x, (0, N_FFT - x.size))
    x = x.astype(np.float32)
    hop = int(round(HOP_S * sr))
    spec = np.abs(librosa.stft(x, n_fft=N_FFT, hop_length=hop, window="hann", center=True))
    mag_db = _db(spec / (N_FFT / 4))  # a full-scale sine peaks near 0 dB
    top = float(mag_db.max())
    bin_hz = sr / N_FFT
    tonal: list[Event] = []
    n_frames = mag_db.shape[1]
    track_hz = np.full((8, n_frames), np.nan)   # up to 8 simultaneous tracks, for masking the short STFT
    tonal_mask = np.zeros_like(mag_db, bool)
    min_frames = max(1, int(round(min_event_s / HOP_S)))
    slot = 0
    for tr in link_tracks(spectral_peaks(mag_db, peak_db=peak_db, abs_db=top - rel_db), bin_hz):
        fr = np.asarray(tr["frames"])
        if fr[-1] - fr[0] + 1 < min_frames:
            continue
        f = np.asarray(tr["freqs"])
        q = max(1, len(f) // 4)
        tonal.append(Event("tonal", fr[0] * HOP_S, (fr[-1] + 1) * HOP_S, float(np.max(tr["levels"])),
                           f_start_hz=float(np.median(f[:q])), f_end_hz=float(np.median(f[-q:])),
                           f_median_hz=float(np.median(f))))
        # mask the peak's main lobe plus how far a sweep moves within one window (chirps smear)
        sweep = np.abs(np.gradient(f)) * (N_FFT / hop) if len(f) > 1 else np.zeros(1)
        for t, fq, sw in zip(fr, f, sweep):
            k, w = int(round(fq / bin_hz)), 4 + int(np.ceil(0.5 * sw / bin_hz))
            tonal_mask[max(0, k - w):k + w + 1, t] = True
        track_hz[slot % 8, fr] = f
        slot += 1
    power = np.where(tonal_mask, 0.0, spec ** 2)
    bb_db = 10 * np.log10(np.maximum(power.sum(axis=0) / (N_FFT / 4) ** 2, 1e-20))
    click = click_profile(x, sr, track_hz, n_frames)
    active = bb_db > top - rel_db
    out = list(tonal)
    for a, b in merge_runs(runs(active), int(round(merge_gap_s / HOP_S)), min_frames):
        level = float(np.max(bb_db[a:b]))
        inside = np.zeros(b - a, bool)
        for e in tonal:
            if e.level_db - level >= leak_db:
                lo, hi = int(round(e.onset_s / HOP_S)) - a, int(round(e.offset_s / HOP_S)) - a
                inside[max(lo, 0):max(hi, 0)] = True
        if inside.mean() >= 0.6:
            continue
        # split where the kind changes (clicks next to noise), smoothing over ~90 ms
        from scipy.ndimage import median_filter

        kind = median_filter((click[a:b] > click_db).astype(np.int8), size=9, mode="nearest")
        for c in (0, 1):
            for u, v in merge_runs(runs(kind == c), 0, min_frames):
                out.append(Event("broadband", (a + u) * HOP_S, (a + v) * HOP_S, float(np.max(bb_db[a + u:a + v])),
                                 impulsiveness_db=float(np.median(click[a + u:a + v]))))
    return drop_transients(sorted(out, key=lambda e: (e.onset_s, e.offset_s)))


def drop_transients(evs: list[Event], *, max_s: float = 0.12, near_s: float = 0.05, quieter_db: float = 10.0
                    ) -> list[Event]:
    """Drop short broadband blips next to a louder event's start or end: the splatter of its fade in/out."""
    def blip(e: Event) -> bool:
        if e.kind != "broadband" or e.duration_s >= max_s:
            return False
        return any(o is not e and o.level_db - e.level_db >= quieter_db
                   and min(abs(o.onset_s - e.offset_s), abs(o.offset_s - e.onset_s),
                           abs(o.onset_s - e.onset_s), abs(o.offset_s - e.offset_s)) <= near_s
                   for o in evs)

    return [e for e in evs if not blip(e)]


def click_profile(x: np.ndarray, sr: int, track_hz: np.ndarray, n_frames: int, *, window_s: float = 0.1) -> np.ndarray:
    """Per 10 ms frame, how impulsive the broadband part is: max - median (dB) of an 8 ms / 2 ms-hop envelope over
    ``window_s``, with bins near tonal tracks removed. Steady noise: a few dB; a click train: 15 dB or more."""
    import librosa

    n_fft, hop = 128, 32
    s = np.abs(librosa.stft(x, n_fft=n_fft, hop_length=hop, window="hann", center=True)) ** 2
    freqs = np.arange(s.shape[0]) * sr / n_fft
    # tonal frequencies of the long frames, mapped onto the short frames
    long_idx = np.minimum((np.arange(s.shape[1]) * hop / (HOP_S * sr)).round().astype(int), n_frames - 1)
    hz = track_hz[:, long_idx]
    near = np.zeros(s.shape, bool)
    for row in hz:
        ok = np.isfinite(row)
        near[:, ok] |= np.abs(freqs[:, None] - row[None, ok]) <= 2.5 * sr / n_fft
    e = 10 * np.log10(np.maximum(np.where(near, 0.0, s).sum(axis=0), 1e-20))
    e = np.maximum(e, e.max() - 60.0)
    half = int(round(window_s / 2 * sr / hop))
    from numpy.lib.stride_tricks import sliding_window_view

    padded = np.pad(e, half, mode="edge")
    win = sliding_window_view(padded, 2 * half + 1)
    prof = win.max(axis=1) - np.median(win, axis=1)
    centres = (np.arange(n_frames) * HOP_S * sr / hop).round().astype(int)
    return prof[np.minimum(centres, len(prof) - 1)]
