"""TACoBeLAL's trivial temporal families, generated answer-first.

For each item we draw the gold option position first (balanced over positions), then synthesise
audio that makes that option true, so answer positions are balanced by construction and the
strong annotations (one row per sound) describe exactly what was rendered.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import soundfile as sf

from lalmbench.data.synth import sounds
from lalmbench.core.items import balanced_positions, chi_square_balance, make_item, option_labels, position_histogram

FIRST_SECOND = ["the first tone", "the second tone"]


@dataclass
class Rendered:
    audio: np.ndarray
    events: list[tuple[float, float, str, str]]  # onset, offset, label, caption
    meta: dict


def _pair(first: np.ndarray, second: np.ndarray, sr: int, gap_s: float, lead_s: float = 0.3,
          tail_s: float = 0.3) -> tuple[np.ndarray, list[tuple[float, float]]]:
    total = lead_s + len(first) / sr + gap_s + len(second) / sr + tail_s
    canvas = np.zeros(int(round(total * sr)), dtype=np.float32)
    a = sounds.place(canvas, first, lead_s, sr)
    b = sounds.place(canvas, second, a[1] + gap_s, sr)
    return canvas, [a, b]


def _pitch_order(gold: int, rng: np.random.Generator, sr: int) -> Rendered:
    low = float(rng.uniform(250, 450))
    high = low * float(rng.uniform(1.8, 2.5))
    freqs = [high, low] if gold == 0 else [low, high]
    dur = float(rng.uniform(0.4, 0.7))
    audio, spans = _pair(sounds.tone(freqs[0], dur, sr), sounds.tone(freqs[1], dur, sr), sr,
                         gap_s=float(rng.uniform(0.3, 0.6)))
    ev = [(a, b, "tone", f"a {f:.0f} Hz tone") for (a, b), f in zip(spans, freqs)]
    return Rendered(audio, ev, {"freq_ratio": round(high / low, 3)})


def _loudness_order(gold: int, rng: np.random.Generator, sr: int) -> Rendered:
    diff = float(rng.uniform(10, 16))
    loud, soft = -8.0, -8.0 - diff
    levels = [loud, soft] if gold == 0 else [soft, loud]
    f = float(rng.uniform(400, 800))
    dur = float(rng.uniform(0.4, 0.7))
    audio, spans = _pair(sounds.tone(f, dur, sr, levels[0]), sounds.tone(f, dur, sr, levels[1]), sr,
                         gap_s=float(rng.uniform(0.3, 0.6)))
    ev = [(a, b, "tone", f"a {f:.0f} Hz tone at {lv:.0f} dBFS") for (a, b), lv in zip(spans, levels)]
    return Rendered(audio, ev, {"level_diff_db": round(diff, 2)})


def _duration_order(gold: int, rng: np.random.Generator, sr: int) -> Rendered:
    short = float(rng.uniform(0.2, 0.35))
    long = short * float(rng.uniform(2.5, 3.5))
    durs = [long, short] if gold == 0 else [short, long]
    f = float(rng.uniform(400, 800))
    audio, spans = _pair(sounds.tone(f, durs[0], sr), sounds.tone(f, durs[1], sr), sr,
                         gap_s=float(rng.uniform(0.3, 0.6)))
    ev = [(a, b, "tone", f"a {d:.2f} s tone") for (a, b), d in zip(spans, durs)]
    return Rendered(audio, ev, {"duration_ratio": round(long / short, 3)})


def _gap_length(gold: int, rng: np.random.Generator, sr: int) -> Rendered:
    gap = float(rng.uniform(0.08, 0.15)) if gold == 0 else float(rng.uniform(0.9, 1.3))
    f = float(rng.uniform(600, 1200))
    beep = sounds.tone(f, 0.15, sr)
    audio, spans = _pair(beep, beep, sr, gap_s=gap)
    ev = [(a, b, "beep", f"a {f:.0f} Hz beep") for a, b in spans]
    return Rendered(audio, ev, {"gap_s": round(gap, 3)})


# beep count: options are consecutive counts in numeric order; the window is slid so that the
# true count lands on the drawn gold position (numeric order and balance at once).
COUNT_OPTIONS = 4
MAX_START = 3


def _beep_count(gold: int, rng: np.random.Generator, sr: int) -> Rendered:
    start = int(rng.integers(1, MAX_START + 1))
    count = start + gold
    f = float(rng.uniform(600, 1200))
    dur, gap, lead = 0.12, float(rng.uniform(0.18, 0.3)), 0.3
    total = lead + count * (dur + gap) + 0.3
    canvas = np.zeros(int(round(total * sr)), dtype=np.float32)
    ev = []
    t = lead
    for _ in range(count):
        a, b = sounds.place(canvas, sounds.tone(f, dur, sr), t, sr)
        ev.append((a, b, "beep", f"a {f:.0f} Hz beep"))
        t = b + gap
    return Rendered(canvas, ev, {"count": count, "options_start": start})


PATTERNS = ["rising", "falling", "rising then falling", "falling then rising"]


def _pitch_pattern(gold: int, rng: np.random.Generator, sr: int) -> Rendered:
    base = float(rng.uniform(250, 400))
    step = float(rng.uniform(1.4, 1.7))
    lo, mid, hi = base, base * step, base * step * step
    seq = {0: [lo, mid, hi], 1: [hi, mid, lo], 2: [lo, hi, lo * 1.05], 3: [hi, lo, hi * 0.95]}[gold]
    dur, gap, lead = 0.3, 0.2, 0.3
    canvas = np.zeros(int(round((lead + 3 * (dur + gap) + 0.3) * sr)), dtype=np.float32)
    ev, t = [], lead
    for f in seq:
        a, b = sounds.place(canvas, sounds.tone(f, dur, sr), t, sr)
        ev.append((a, b, "tone", f"a {f:.0f} Hz tone"))
        t = b + gap
    return Rendered(canvas, ev, {"pattern": PATTERNS[gold]})


@dataclass(frozen=True)
class Family:
    question: str
    option_texts: Callable[[Rendered], list[str]]
    n_options: int
    render: Callable[[int, np.random.Generator, int], Rendered]


# the params every synthetic family accepts (config validation checks tasks against it)
PARAMS = frozenset({"n_items"})

FAMILIES: dict[str, Family] = {
    "pitch_order": Family("Which tone is higher in pitch?", lambda r: FIRST_SECOND, 2, _pitch_order),
    "loudness_order": Family("Which tone is louder?", lambda r: FIRST_SECOND, 2, _loudness_order),
    "duration_order": Family("Which tone lasts longer?", lambda r: FIRST_SECOND, 2, _duration_order),
    "gap_length": Family("Was the pause between the two beeps short or long?",
                         lambda r: ["a short pause", "a long pause"], 2, _gap_length),
    "beep_count": Family("How many beeps do you hear?",
                         lambda r: [str(r.meta["options_start"] + i) for i in range(COUNT_OPTIONS)],
                         COUNT_OPTIONS, _beep_count),
    "pitch_pattern": Family("Which best describes the pitch pattern of the three tones?",
                            lambda r: list(PATTERNS), len(PATTERNS), _pitch_pattern),
}


def generate_family(family: str, n_items: int, out_dir: str | Path, *, seed: int, dataset: str,
                    task: str, sample_rate: int = 16000) -> tuple[list[dict], pd.DataFrame, pd.DataFrame, dict]:
    """Write ``n_items`` WAVs of one family under ``out_dir``; return items, clips, events, stats."""
    if family not in FAMILIES:
        raise ValueError(f"unknown synthetic family {family!r} (known: {', '.join(sorted(FAMILIES))})")
    fam = FAMILIES[family]
    rng = np.random.default_rng([seed, _stable_int(family)])
    golds = balanced_positions(n_items, fam.n_options, rng)
    out_dir = Path(out_dir)
    (out_dir / "audio").mkdir(parents=True, exist_ok=True)
    labels = option_labels(fam.n_options)
    items, clips, events = [], [], []
    for i, gold in enumerate(golds):
        r = fam.render(int(gold), rng, sample_rate)
        clip_id = f"{task}-{i:05d}"
        path = out_dir / "audio" / f"{clip_id}.wav"
        sf.write(path, r.audio, sample_rate, subtype="PCM_16")
        texts = fam.option_texts(r)
        options = [{"label": lab, "text": t, "type": family, "meta": {}} for lab, t in zip(labels, texts)]
        items.append(make_item(id=clip_id, task=task, dataset=dataset, clip_id=clip_id, audio_path=str(path),
                               question=fam.question, options=options, answer_label=labels[int(gold)],
                               meta={"family": family, **r.meta}))
        clips.append({"clip_id": clip_id, "audio_path": str(path), "duration_s": len(r.audio) / sample_rate,
                      "sample_rate": sample_rate, "split": "test", "source": "synth"})
        events += [{"clip_id": clip_id, "onset_s": a, "offset_s": b, "label": lab, "caption": cap, "source": "synth"}
                   for a, b, lab, cap in r.events]
    stats = {"family": family, "rows_read": 0, "dropped": {}, "items_written": len(items),
             "answer_position_histogram": position_histogram(items), "chi_square": chi_square_balance(items)}
    return items, pd.DataFrame(clips), pd.DataFrame(events), stats


def _stable_int(text: str) -> int:
    import zlib

    return zlib.crc32(text.encode())


def write_trivial_task(cfg: dict, *, dataset: str, task: str, items_path: str, stats_path: str,
                       audio_dir: str) -> None:
    """Rule entry: ``cfg`` = {task, dataset, seed, scale, sample_rate}; audio + tables go to ``audio_dir``."""
    from lalmbench.core import io

    tcfg = cfg["task"]
    n_items = max(1, round(int(tcfg["params"].get("n_items", 24)) * cfg.get("scale", 1)))
    unknown = set(tcfg["params"]) - PARAMS
    if unknown:
        raise ValueError(f"tasks.{task}.params: unknown key(s) {sorted(unknown)} for family {tcfg['family']!r} "
                         f"(allowed: {', '.join(sorted(PARAMS))})")
    items, clips, events, stats = generate_family(tcfg["family"], n_items, audio_dir, seed=int(cfg["seed"]),
                                                  dataset=dataset, task=task,
                                                  sample_rate=int(cfg.get("sample_rate", 16000)))
    io.write_parquet(Path(audio_dir) / "clips.parquet", clips)
    io.write_parquet(Path(audio_dir) / "events.parquet", events)
    io.write_json(stats_path, stats)
    io.write_jsonl(items_path, items)
