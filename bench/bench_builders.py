"""Bench: every MCQ family on an AudioSet-strong-sized synthetic annotation table.

1,000,000 events over 100,000 ten-second clips (Poisson ~10 events per clip), a few hundred labels
with a Zipf-like frequency, durations log-normal. Prints rows/s and items/s per family, the drop
reasons, total wall time and peak RSS. Target (issue 3): <= 30 s wall and <= 2 GB peak RSS on 2 cores.

    .venv/bin/python bench/bench_builders.py [--events 1000000] [--clips 100000] [--labels 400]
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.record import record  # noqa: E402
from lalmbench.tasks import build_items  # noqa: E402

MCQ_FAMILIES = ["order", "next", "duration", "count", "presence"]
FAMILIES = MCQ_FAMILIES + ["grounding"]           # grounding: open answer, timed for information


def synthetic_tables(n_events: int, n_clips: int, n_labels: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    per_clip = rng.poisson(n_events / n_clips, n_clips)
    diff = n_events - per_clip.sum()           # adjust to exactly n_events
    idx = rng.integers(0, n_clips, abs(diff))
    np.add.at(per_clip, idx, 1 if diff > 0 else 0)
    if diff < 0:
        for i in idx:                          # rare, small correction
            if per_clip[i] > 0:
                per_clip[i] -= 1
        per_clip[np.argmax(per_clip)] += n_events - per_clip.sum()
    clip = np.repeat(np.arange(n_clips), per_clip)
    w = 1.0 / np.arange(1, n_labels + 1) ** 0.8
    label = rng.choice(n_labels, size=n_events, p=w / w.sum())
    dur = np.clip(rng.lognormal(mean=0.0, sigma=0.9, size=n_events), 0.05, 10.0)
    onset = rng.uniform(0, 10.0 - np.minimum(dur, 9.9))
    names = np.array([f"label {i:03d}" for i in range(n_labels)], dtype=object)
    clip_ids = np.array([f"Y{i:08d}_30000" for i in range(n_clips)], dtype=object)
    events = pd.DataFrame({"clip_id": clip_ids[clip], "onset_s": np.round(onset, 3),
                           "offset_s": np.round(onset + dur, 3), "label": names[label],
                           "caption": pd.Series([None] * n_events, dtype="string"), "source": "synthetic"})
    clips = pd.DataFrame({"clip_id": clip_ids, "audio_path": [f"audio/{c}.wav" for c in clip_ids],
                          "duration_s": 10.0, "sample_rate": 16000, "split": "eval", "source": "synthetic"})
    return events, clips


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--clips", type=int, default=100_000)
    ap.add_argument("--labels", type=int, default=400)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--stats-json", default=None, help="also write per-family stats here")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    events, clips = synthetic_tables(args.events, args.clips, args.labels)
    t_gen = time.perf_counter() - t0
    import os
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
          f"(wall times inflate when other work shares the cores; CPU seconds do not)")
    print(f"table: {len(events):,} events, {len(clips):,} clips, {events['label'].nunique()} labels "
          f"(generated in {t_gen:.1f} s, not counted)")
    from lalmbench.data.annotations import validate_clips, validate_events
    t, c = time.perf_counter(), cpu_s()
    validate_clips(clips, "bench:clips")
    validate_events(events, "bench:events", clips["clip_id"])
    t_val, c_val = time.perf_counter() - t, cpu_s() - c
    print(f"{'validate':<10} wall {t_val:6.2f} s  cpu {c_val:6.2f} s  {len(events) / t_val:>12,.0f} rows/s")
    total, total_cpu = t_val, c_val
    mcq, mcq_cpu = t_val, c_val
    all_stats = {}
    for fam in args.families.split(","):
        t, c = time.perf_counter(), cpu_s()
        items, stats = build_items(fam, events, clips, {}, seed=0, dataset="bench", task=fam)
        dt, dc = time.perf_counter() - t, cpu_s() - c
        total += dt
        total_cpu += dc
        if fam in MCQ_FAMILIES:
            mcq, mcq_cpu = mcq + dt, mcq_cpu + dc
        all_stats[fam] = stats
        print(f"{fam:<10} wall {dt:6.2f} s  cpu {dc:6.2f} s  {len(events) / dt:>10,.0f} rows/s  {len(items):>8,} items  "
              f"{len(items) / dt:>8,.0f} items/s")
        print(f"{'':<10} dropped {json.dumps(stats['dropped'])}")
        del items
    print(f"validate + MCQ families: wall {mcq:.1f} s, cpu {mcq_cpu:.1f} s; with every family run: wall "
          f"{total:.1f} s, cpu {total_cpu:.1f} s; peak RSS {peak_rss_mb():,.0f} MB")
    print(f"targets (validate + MCQ families): wall <= 30 s -> {'OK' if mcq <= 30 else 'MISSED'} "
          f"(cpu {mcq_cpu:.1f} s); RSS <= 2048 MB -> {'OK' if peak_rss_mb() <= 2048 else 'MISSED'}")
    if (args.events, args.clips, args.labels, args.families) == (1_000_000, 100_000, 400, ",".join(FAMILIES)):
        record("builders", "validate + MCQ families, 1M events / 100k clips, wall", mcq, "s", "<= 30")
        record("builders", "validate + MCQ families, 1M events / 100k clips, peak RSS", peak_rss_mb(), "MB", "<= 2048")
    if args.stats_json:
        from lalmbench.core.io import write_json
        write_json(args.stats_json, all_stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
