"""The ``signal`` baseline: answers multiple-choice items from measured signal features, with no learning.

It is the default run's proof that the synthetic items are answerable from the audio alone. The
item's ``meta.family`` says what is asked (the generators' structured field; the question text is
never parsed), and the option texts say what each option claims:

* separated sounds (``pitch_order``, ``loudness_order``, ``duration_order``, ``gap_length``,
  ``beep_count``, ``pitch_pattern``): the energy envelope gives onsets, offsets, durations, gaps
  and the count; pYIN gives each sound's pitch; BS.1770 loudness (or RMS for sounds shorter than
  400 ms) its level. Options name a sound by ordinal ("the first tone"), a number, "short"/"long"
  or a contour ("rising then falling").
* scenes (``order``, ``next``, ``presence``, ``duration``, ``count``): tonal tracks and broadband
  bursts (:mod:`lalmbench.models.signal_features`), each tagged by YAMNet (AudioSet classes, on
  the event's own span). A sound's text is matched to events through acoustic descriptor words
  (``high``/``low``, ``rising``/``falling``, ``tone``/``chirp``, ``noise``/``hiss``,
  ``click``...) checked against the measured pitch, pitch change and impulsiveness, and through
  word overlap with the event's YAMNet tags.

``extra`` of every answer holds the measured values it was decided from (segments, events, option
scores) and ``method``. An item it cannot measure (no sound found, an unknown family, options it
cannot read) gets ``method: "fallback"`` with the reason, and an answer chosen by a hash of the
option texts: never by position, so the fallback adds no position bias.

Settings (model entry ``params``, all optional): ``gap_threshold_s`` (0.4: a pause shorter than
this is "short"), ``match_threshold`` (0.5: an event matches a sound's text at this score),
``yamnet`` (true; false skips the tagger), ``yamnet_dir`` (default: see
:mod:`lalmbench.models.yamnet`), ``cpu_threads`` (1).
"""
from __future__ import annotations

import hashlib
import re
import threading
import zlib
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from lalmbench.data.audio import mono_at
from lalmbench.models import signal_features as sf
from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend

SR = sf.SR
ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4}
TRIVIAL = ("pitch_order", "loudness_order", "duration_order", "gap_length", "beep_count", "pitch_pattern")
SCENE = ("order", "next", "presence", "duration", "count")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the of and or is are in on at to with by from for while as it its this that sound sounds "
                  "some".split())


class Unanswerable(Exception):
    """What was measured does not decide the item; the message says why (goes to ``extra.reason``)."""


# --- descriptor words -> predicates over a measured event (scores in [0, 1]) ----------------------
def _ramp(v: float, lo: float, hi: float) -> float:
    return float(np.clip((v - lo) / (hi - lo), 0.0, 1.0))


def _tonal(e: sf.Event) -> float:
    return 1.0 if e.kind == "tonal" else 0.0


def _log2(e: sf.Event, ref: float) -> float:
    return float(np.log2(e.f_median_hz / ref)) if e.f_median_hz else 0.0


DESCRIPTORS: dict[str, Callable[[sf.Event], float]] = {
    "steady": lambda e: _tonal(e) * (1.0 - _ramp(abs(e.pitch_change_st), 2.0, 6.0)),
    "sweep": lambda e: _tonal(e) * _ramp(abs(e.pitch_change_st), 2.0, 6.0),
    "rising": lambda e: _tonal(e) * _ramp(e.pitch_change_st, 1.0, 4.0),
    "falling": lambda e: _tonal(e) * _ramp(-e.pitch_change_st, 1.0, 4.0),
    "high": lambda e: _tonal(e) * _ramp(_log2(e, 500.0), 0.0, 1.0),
    "low": lambda e: _tonal(e) * _ramp(-_log2(e, 600.0), 0.0, 1.0),
    "noise": lambda e: (1.0 - _tonal(e)) * (1.0 - _ramp(e.impulsiveness_db or 0.0, 6.0, 12.0)),
    "click": lambda e: (1.0 - _tonal(e)) * _ramp(e.impulsiveness_db or 0.0, 8.0, 16.0),
}
LEXICON: dict[str, str] = {
    **dict.fromkeys("tone tones beep beeps bleep note notes sine whistle whistling pure".split(), "steady"),
    **dict.fromkeys("chirp chirps sweep sweeps glide gliding siren".split(), "sweep"),
    **dict.fromkeys("rising rises ascending upward upwards".split(), "rising"),
    **dict.fromkeys("falling falls descending downward downwards".split(), "falling"),
    **dict.fromkeys("high shrill treble".split(), "high"),
    **dict.fromkeys("low deep bass".split(), "low"),
    **dict.fromkeys("noise noisy hiss hissing static".split(), "noise"),
    **dict.fromkeys("click clicks clicking tick ticks ticking tap taps tapping knock knocks knocking".split(),
                    "click"),
}


def words(text: str) -> list[str]:
    return _WORD.findall(str(text).lower())


def stems(text: str) -> frozenset[str]:
    """Content words cut to 4 letters (hiss/hissing, click/clicks match), stop words dropped."""
    return frozenset(w[:4] for w in words(text) if w not in _STOP)


def match(text: str, e: sf.Event) -> dict[str, Any]:
    """How well an event fits a sound's description: the weakest of its descriptor predicates (the text claims
    all of them: "a high-pitched tone" is high *and* steady), or, where the text has no descriptor word, the
    probability of the event's best YAMNet class sharing a content word with it."""
    desc = sorted({LEXICON[w] for w in words(text) if w in LEXICON})
    parts = {d: round(DESCRIPTORS[d](e), 3) for d in desc}
    tag = max(((p, name) for name, p in e.tags.items() if stems(name) & stems(text)), default=(0.0, None))
    score = min(parts.values()) if parts else float(tag[0])
    return {"score": round(score, 3), "descriptors": parts, "yamnet_match": tag[1]}


# --- per-clip analysis (cached: the scene tasks ask several questions about the same clip) ---------
class _Analysis:
    def __init__(self, audio: np.ndarray):
        self.audio = audio
        self._segs: list[sf.Segment] | None = None
        self._pitched = False
        self._events: list[sf.Event] | None = None

    def segments(self, pitch: bool = False) -> list[sf.Segment]:
        if self._segs is None:
            self._segs = sf.segments(self.audio, SR)
        if pitch and not self._pitched:
            sf.add_pitch(self.audio, self._segs, SR)
            self._pitched = True
        return self._segs

    def events(self, tagger) -> list[sf.Event]:
        if self._events is None:
            self._events = sf.events(self.audio, SR)
            if tagger is not None:
                for e in self._events:
                    span = self.audio[int(e.onset_s * SR):int(e.offset_s * SR)]
                    e.tags = tagger.top_tags(span)
        return self._events


class _Tagger:
    """YAMNet top classes of a sound's own span (max over its 0.96 s patches)."""

    def __init__(self, model_dir: str | None, threads: int, k: int = 5, min_prob: float = 0.1):
        from lalmbench.models.yamnet import YamNet

        self.net = YamNet(model_dir, threads=threads)
        self.k, self.min_prob = k, min_prob

    def top_tags(self, span: np.ndarray) -> dict[str, float]:
        p = self.net.tag(span, SR).probs.max(axis=0)
        idx = [int(i) for i in np.argsort(-p)[:self.k] if p[i] >= self.min_prob]
        return {self.net.names[i]: round(float(p[i]), 3) for i in idx}


# --- option readers ---------------------------------------------------------------------------------
def option_ordinals(options: list[dict]) -> list[int]:
    out = []
    for o in options:
        hits = [ORDINALS[w] for w in words(o["text"]) if w in ORDINALS]
        if len(hits) != 1:
            raise Unanswerable(f"option {o['label']} ({o['text']!r}) names no single sound by position")
        out.append(hits[0])
    return out


def option_numbers(options: list[dict]) -> list[int]:
    out = []
    for o in options:
        nums = re.findall(r"\d+", str(o["text"]))
        if len(nums) != 1:
            raise Unanswerable(f"option {o['label']} ({o['text']!r}) is not a single number")
        out.append(int(nums[0]))
    return out


def contour(text: str) -> tuple[int, ...]:
    """"rising then falling" -> (1, -1); words other than rising/falling/steady are ignored."""
    steps = []
    for part in re.split(r"\bthen\b|,", str(text).lower()):
        w = set(words(part))
        d = [v for k, v in (("rising", 1), ("falling", -1), ("steady", 0), ("flat", 0)) if k in w]
        if len(d) == 1:
            steps.append(d[0])
    return tuple(steps)


def measured_contour(f0: list[float], min_st: float = 0.5) -> tuple[int, ...]:
    """Directions between consecutive pitches (semitone steps under ``min_st`` are steady), runs merged."""
    steps = []
    for a, b in zip(f0, f0[1:]):
        st = 12 * np.log2(b / a)
        d = 1 if st >= min_st else -1 if st <= -min_st else 0
        if not steps or steps[-1] != d:
            steps.append(d)
    return tuple(steps)


def pick(options: list[dict], values: list[float], best: str) -> tuple[str, dict]:
    v = np.asarray(values, float)
    k = int(np.argmax(v) if best == "max" else np.argmin(v))
    if np.sum(v == v[k]) > 1:
        raise Unanswerable(f"options tie on the measured value {v[k]}")
    return options[k]["label"], {o["label"]: round(float(x), 3) for o, x in zip(options, values)}


# --- the backend --------------------------------------------------------------------------------
@register_backend("signal")
class SignalBaseline(Model):
    """Signal-processing answers for the synthetic families; see the module docstring."""

    compute_version = "yamnet-uint8-weights+float64-features"  # lalmbench.models.yamnet

    CACHE_SIZE = 256

    def __init__(self, name: str, cfg: dict[str, Any]):
        super().__init__(name, cfg)
        p = dict(cfg.get("params") or {})
        self.gap_threshold_s = float(p.get("gap_threshold_s", 0.4))
        self.match_threshold = float(p.get("match_threshold", 0.5))
        threads = int(p.get("cpu_threads") or 1)
        self.tagger = _Tagger(p.get("yamnet_dir"), threads) if p.get("yamnet", True) else None
        self._cache: OrderedDict[str, _Analysis] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return str(self.cfg.get("model_id") or "signal:librosa+yamnet-w8a8")

    def provenance(self) -> dict[str, Any]:
        from importlib import metadata

        out = {"gap_threshold_s": self.gap_threshold_s, "match_threshold": self.match_threshold,
               "yamnet": self.tagger is not None}
        for pkg in ("librosa", "pyloudnorm", "onnxruntime"):
            try:
                out[pkg] = metadata.version(pkg)
            except metadata.PackageNotFoundError:
                pass
        return out

    def analysis(self, audio: np.ndarray, sample_rate: int) -> _Analysis:
        x = mono_at(audio, sample_rate, SR, "signal baseline")
        key = hashlib.sha1(x.tobytes()).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            a = self._cache[key] = _Analysis(x)
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
            return a

    def fallback(self, x: ModelInput, reason: str, extra: dict | None = None) -> ModelOutput:
        best = max(x.options, key=lambda o: zlib.crc32(f"{self.seed}:{o['text']}".encode()))
        return ModelOutput(raw_output=str(best["label"]), input_tokens=0, output_tokens=1,
                           extra={"method": "fallback", "reason": reason, **(extra or {})})

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        return [self.answer(x) for x in batch]

    def answer(self, x: ModelInput) -> ModelOutput:
        if not x.options:
            return ModelOutput(raw_output=None, error="signal baseline answers multiple-choice items only")
        family = str((x.meta or {}).get("family", ""))
        if x.audio is None:
            return self.fallback(x, "no audio")
        if family not in TRIVIAL and family not in SCENE:
            return self.fallback(x, f"family {family!r} is not one the signal baseline measures")
        a = self.analysis(x.audio, x.sample_rate)
        measured: dict[str, Any] = {}
        try:
            solve = getattr(self, f"_{family}")
            label, extra = solve(x, a, measured)
        except Unanswerable as exc:
            return self.fallback(x, str(exc), measured)
        return ModelOutput(raw_output=label, input_tokens=0, output_tokens=1,
                           extra={"method": family, **measured, **extra})

    # --- separated sounds ---------------------------------------------------------------------------
    def _sounds(self, a: _Analysis, measured: dict, n: int | None, pitch: bool = False) -> list[sf.Segment]:
        segs = a.segments(pitch)
        measured["segments"] = [s.as_dict() for s in segs]
        if not segs:
            raise Unanswerable("no sound found")
        if n is not None:
            if len(segs) < n:
                raise Unanswerable(f"found {len(segs)} sound(s), the options refer to {n}")
            if len(segs) > n:  # keep the n most energetic, in time order
                keep = sorted(sorted(range(len(segs)), key=lambda i: -segs[i].rms_db)[:n])
                segs = [segs[i] for i in keep]
        return segs

    def _compare(self, x: ModelInput, a: _Analysis, measured: dict, value: Callable[[sf.Segment], float | None],
                 pitch: bool = False) -> tuple[str, dict]:
        idx = option_ordinals(x.options)
        segs = self._sounds(a, measured, max(idx) + 1, pitch)
        vals = [value(segs[i]) for i in idx]
        if any(v is None for v in vals):
            raise Unanswerable("a sound has no measurable value (unvoiced?)")
        label, per_option = pick(x.options, vals, "max")
        return label, {"option_values": per_option}

    def _pitch_order(self, x, a, measured):
        return self._compare(x, a, measured, lambda s: s.f0_hz, pitch=True)

    def _loudness_order(self, x, a, measured):
        idx = option_ordinals(x.options)
        segs = self._sounds(a, measured, max(idx) + 1)
        use_lufs = all(segs[i].lufs is not None for i in idx)
        measured["loudness_measure"] = "lufs" if use_lufs else "rms_db"
        return self._compare(x, a, measured, (lambda s: s.lufs) if use_lufs else (lambda s: s.rms_db))

    def _duration_order(self, x, a, measured):
        return self._compare(x, a, measured, lambda s: s.duration_s)

    def _gap_length(self, x, a, measured):
        segs = self._sounds(a, measured, 2)
        gap = segs[1].onset_s - segs[0].offset_s
        measured["gap_s"] = round(gap, 3)
        want = "short" if gap < self.gap_threshold_s else "long"
        hits = [o for o in x.options if want in words(o["text"])]
        if len(hits) != 1:
            raise Unanswerable(f"no single option says {want!r}")
        return hits[0]["label"], {"gap_threshold_s": self.gap_threshold_s, "judged": want}

    def _beep_count(self, x, a, measured):
        n = len(self._sounds(a, measured, None))
        measured["count"] = n
        nums = option_numbers(x.options)
        label, dist = pick(x.options, [abs(v - n) for v in nums], "min")
        return label, {"option_distance": dist}

    def _pitch_pattern(self, x, a, measured):
        segs = self._sounds(a, measured, None, pitch=True)
        f0 = [s.f0_hz for s in segs if s.f0_hz]
        if len(f0) < 2:
            raise Unanswerable("fewer than two pitched sounds")
        got = measured_contour(f0)
        measured["contour"] = list(got)
        wanted = [contour(o["text"]) for o in x.options]
        hits = [o for o, c in zip(x.options, wanted) if c == got]
        if len(hits) != 1:
            raise Unanswerable(f"measured contour {got} matches {len(hits)} options")
        return hits[0]["label"], {"option_contours": {o["label"]: list(c) for o, c in zip(x.options, wanted)}}

    # --- scenes ---------------------------------------------------------------------------------------
    def _events(self, a: _Analysis, measured: dict) -> list[sf.Event]:
        evs = a.events(self.tagger)
        measured["events"] = [e.as_dict() for e in evs]
        if not evs:
            raise Unanswerable("no sound event found")
        return evs

    def _find(self, text: str, evs: list[sf.Event]) -> tuple[list[int], list[float]]:
        """Indices (onset order) of the events that match ``text`` at the threshold, and every event's score."""
        scores = [match(text, e)["score"] for e in evs]
        return [i for i, s in enumerate(scores) if s >= self.match_threshold], scores

    def _locate(self, x: ModelInput, evs: list[sf.Event]) -> dict[str, dict]:
        """Per option, its first matching event (or its best one when none reaches the threshold)."""
        out = {}
        for o in x.options:
            hits, scores = self._find(o["text"], evs)
            i = hits[0] if hits else int(np.argmax(scores))
            out[o["label"]] = {"event": i, "score": scores[i], "onset_s": round(evs[i].onset_s, 3),
                               "offset_s": round(evs[i].offset_s, 3), "matched": bool(hits),
                               "occurrences": len(hits)}
        return out

    def _order(self, x, a, measured):
        evs = self._events(a, measured)
        loc = self._locate(x, evs)
        ask = str(x.meta.get("ask", "first"))
        label, _ = pick(x.options, [loc[o["label"]]["onset_s"] for o in x.options], "max" if ask == "last" else "min")
        return label, {"ask": ask, "options": loc}

    def _duration(self, x, a, measured):
        evs = self._events(a, measured)
        loc = self._locate(x, evs)
        ask = str(x.meta.get("ask", "longest"))
        dur = [loc[o["label"]]["offset_s"] - loc[o["label"]]["onset_s"] for o in x.options]
        label, _ = pick(x.options, dur, "min" if ask == "shortest" else "max")
        return label, {"ask": ask, "options": loc}

    def _next(self, x, a, measured):
        evs = self._events(a, measured)
        base_text = str(x.meta.get("base_text") or "")
        hits, scores = self._find(base_text, evs)
        b = hits[0] if hits else int(np.argmax(scores))
        after = [i for i, e in enumerate(evs) if e.onset_s > evs[b].onset_s + 0.05]
        info = {"base_event": b, "base_score": scores[b]}
        none = [o for o in x.options if o.get("type") == "none"]
        if not after:
            if len(none) != 1:
                raise Unanswerable("nothing follows the base sound and there is no single 'none' option")
            return none[0]["label"], {**info, "next_event": None}
        n = after[0]
        cands = [o for o in x.options if o.get("type") != "none"]
        sc = {o["label"]: match(o["text"], evs[n])["score"] for o in cands}
        label, _ = pick(cands, [sc[o["label"]] for o in cands], "max")
        return label, {**info, "next_event": n, "option_scores": sc}

    def _presence(self, x, a, measured):
        evs = self._events(a, measured)
        text = str(x.meta.get("text") or "")
        hits, scores = self._find(text, evs)
        want = "yes" if hits else "no"
        opts = [o for o in x.options if words(o["text"])[:1] == [want]]
        if len(opts) != 1:
            raise Unanswerable(f"no single option says {want!r}")
        return opts[0]["label"], {"event_scores": scores, "best_score": max(scores)}

    def _count(self, x, a, measured):
        evs = self._events(a, measured)
        hits, scores = self._find(str(x.meta.get("text") or ""), evs)
        nums = option_numbers(x.options)
        label, _ = pick(x.options, [abs(v - len(hits)) for v in nums], "min")
        return label, {"count": len(hits), "event_scores": scores}
