"""Bench: TACoBeLAL strong-label CSV -> `next` items: ours, and the original script when you give its path.

Input: a seeded 1,000,000-row ``annotations_strong.csv`` in TACoBeLAL's format (``filename, text,
onset, offset``; free-text sentence captions, most of them distinct, some quoted because they hold
commas; full-precision float times; ~10 events over ~6 distinct sounds per clip, many first events
at 0.0 s), generated here and cached in the work folder.

Ours: the two pipeline steps a user runs, in one process: the ``tacobelal`` adapter rule entry
(read + validate + write clips/events parquet) and the task rule entry with family ``next``
(read parquet + validate + build + write the items JSONL), with the original script's default ``min_event_s``
(0.5 s).

Baseline, only with ``--baseline-script PATH``: TACoBeLAL's own ``src/utils/build_timeline_mcq_dataset.py``
(from a checkout of https://github.com/younissk/TACoBeLAL; it needs ``typer`` and ``rich``, so
``--baseline-python`` may name the interpreter of its env), run as ``PATH --input CSV --output JSONL
--min-duration 0.5``. Without it the bench reports ours alone: nothing stands in for the original.

Every side runs as a whole process (interpreter start and imports included) in a fresh child, so wall
and peak RSS (``os.wait4``) are per process; with a baseline each round alternates which goes first and
the speed figure is the median of the paired ratios, the memory figure ours' highest peak RSS over the
original's lowest. Prints the figures and the load average, and appends JSON lines to
``bench/results/tacobelal_next.jsonl`` (bench/record.py; docs/benchmarks-measured.md is generated from it).

    .venv/bin/python bench/bench_tacobelal_next.py [--rows 1000000] [--rounds 3] [--workdir DIR]
        [--baseline-script PATH/build_timeline_mcq_dataset.py [--baseline-python PYTHON]]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.record import RESULTS as RESULTS_DIR, record  # noqa: E402

BENCH = "tacobelal_next"
MIN_EVENT_S = 0.5                  # the original's default --min-duration, used by both sides
RESULTS = RESULTS_DIR / f"{BENCH}.jsonl"

SUBJECTS = ["a dog", "a man", "a woman", "a child", "a car", "a bird", "a crowd", "a train", "a baby",
            "running water", "the wind", "a wooden door", "a church bell", "an engine", "a cat", "a snare drum",
            "an acoustic guitar", "a piano", "heavy rain", "a phone", "a motorcycle", "a siren", "an old clock",
            "a group of people", "a hammer", "a vacuum cleaner", "a jet plane", "a frog", "a rooster", "a horse",
            "a trumpet", "a violin", "a kettle", "a fan", "footsteps", "a typewriter", "a helicopter", "a sheep",
            "a bus", "a whistle"]
VERBS = ["barks", "speaks", "laughs", "hums", "passes by", "chirps", "cheers", "rumbles", "cries", "splashes",
         "howls", "creaks", "rings", "idles", "meows", "rolls", "strums a chord", "plays a melody", "pours", "beeps",
         "roars", "wails", "ticks", "chatters", "knocks", "whirs", "flies over", "croaks", "crows", "neighs"]
ADJECTIVES = ["", "large ", "small ", "distant ", "muffled ", "high-pitched ", "low ", "metallic ", "noisy ",
              "quiet ", "nearby ", "echoing "]
MANNERS = ["loudly", "softly", "repeatedly", "briefly", "in short bursts", "with a sharp attack",
           "with a long echo", "steadily", "intermittently", "faintly"]
PLACES = ["", " in the distance", " nearby", " indoors", " outdoors", " in a large hall", " on a busy street",
          " in a small room", " in the background", " close to the microphone", ", while birds sing",
          ", while traffic passes"]


# ----------------------------------------------------------------------------------------- input

def make_strong_csv(path: Path, n_rows: int, seed: int = 0) -> None:
    """A TACoBeLAL-format strong-label CSV of exactly ``n_rows`` events (seeded)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_clips = max(n_rows // 10, 1)
    per = np.maximum(rng.poisson(10, n_clips), 1)
    while (d := n_rows - int(per.sum())) != 0:            # adjust to exactly n_rows
        np.add.at(per, rng.integers(0, n_clips, abs(d)), int(np.sign(d)))
        per = np.maximum(per, 1)
    clip = np.repeat(np.arange(n_clips), per)
    n_sounds = np.minimum(1 + rng.poisson(5, n_clips), per)
    sound = (rng.random(n_rows) * n_sounds[clip]).astype(np.int64)        # which sound of its clip
    slot_of_clip = np.r_[0, np.cumsum(n_sounds)[:-1]]
    slot = slot_of_clip[clip] + sound                                      # one caption per (clip, sound)
    n_slots = int(n_sounds.sum())

    def zipf_pick(n: int, size: int) -> np.ndarray:
        w = 1.0 / np.arange(1, n + 1) ** 0.7
        return rng.choice(n, size=size, p=w / w.sum())

    parts = [zipf_pick(len(v), n_slots) for v in (ADJECTIVES, SUBJECTS, VERBS, MANNERS, PLACES)]
    captions = []
    for a, s, v, m, p in zip(*(x.tolist() for x in parts)):
        art, _, noun = SUBJECTS[s].partition(" ")
        art = "an" if art in ("a", "an") and ADJECTIVES[a][:1] in tuple("aeiou") else art
        subject = f"{art} {ADJECTIVES[a]}{noun}" if art in ("a", "an", "the") else f"{ADJECTIVES[a]}{SUBJECTS[s]}"
        captions.append(f"{subject[0].upper()}{subject[1:]} {VERBS[v]} {MANNERS[m]}{PLACES[p]}.")
    ids = rng.choice(1_000_000 if n_clips < 900_000 else 10 * n_clips, size=n_clips, replace=False)
    names = np.array([f"{i:06d}.mp3" for i in ids.tolist()], dtype=object)
    clip_len = rng.uniform(10.0, 30.0, n_clips)[clip]
    dur = np.minimum(np.exp(rng.normal(0.7, 0.8, n_rows)), clip_len * rng.uniform(0.3, 0.95, n_rows))
    onset = rng.random(n_rows) * (clip_len - dur)
    onset[rng.random(n_rows) < 0.12] = 0.0                                # many sounds start with the clip
    df = pd.DataFrame({"filename": names[clip], "text": np.asarray(captions, dtype=object)[slot],
                       "onset": onset, "offset": onset + dur})
    tmp = path.with_suffix(".tmp")
    df.to_csv(tmp, index=False)
    os.replace(tmp, path)


# ------------------------------------------------------------------------------------------ ours

def run_ours(csv: Path, out: Path) -> tuple[float, int]:
    """The adapter rule entry, then the task rule entry (family next): (wall of the work, items written)."""
    from lalmbench.data.adapters.run import adapt_dataset_files
    from lalmbench.tasks.run import build_task_files

    audio = out / "audio"
    audio.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    cfg = {"adapter": "tacobelal", "params": {"annotations": str(csv), "audio_root": str(audio),
                                              "check_audio": False}}
    adapt_dataset_files(cfg, dataset="bench", clips_path=str(out / "clips.parquet"),
                        events_path=str(out / "events.parquet"), items_path=str(out / "adapter_items.jsonl"),
                        stats_path=str(out / "adapter_stats.json"))
    task = {"task": {"family": "next", "params": {"min_event_s": MIN_EVENT_S}}, "seed": 0}
    build_task_files(task, dataset="bench", task="next", clips_path=str(out / "clips.parquet"),
                     events_path=str(out / "events.parquet"), items_path=str(out / "next.jsonl"),
                     stats_path=str(out / "next.stats.json"))
    wall = time.perf_counter() - t0
    n = json.loads((out / "next.stats.json").read_text())["items_written"]
    return wall, n


# ---------------------------------------------------------------------------------------- driver

def worker(csv: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    wall, n = run_ours(csv, out)
    print(json.dumps({"wall_s": wall, "items": n}))


def child(cmd: list[str]) -> dict:
    """Run one side in a fresh interpreter: whole-process wall, CPU seconds and peak RSS (wait4's rusage)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    stdout = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit(f"{' '.join(cmd[:2])} failed with exit code {code}")
    return {"process_s": time.perf_counter() - t0, "cpu_s": ru.ru_utime + ru.ru_stime,
            "rss_mb": ru.ru_maxrss / 1024.0, "stdout": stdout}


def ours_cmd(csv: Path, out: Path) -> list[str]:
    return [sys.executable, __file__, "--worker", "--csv", str(csv), "--out", str(out)]


def baseline_cmd(python: str, script: Path, csv: Path, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    return [python, str(script), "--input", str(csv), "--output", str(out / "original.jsonl"),
            "--min-duration", str(MIN_EVENT_S)]


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None, help="keeps the generated CSV between runs (default: a temp dir)")
    ap.add_argument("--baseline-script", type=Path, default=None,
                    help="TACoBeLAL's src/utils/build_timeline_mcq_dataset.py: time it on the same CSV")
    ap.add_argument("--baseline-python", default=sys.executable,
                    help="interpreter for --baseline-script (one with typer and rich; default: this one)")
    ap.add_argument("--no-record", action="store_true", help="print only; append nothing to bench/results")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--csv", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(Path(args.csv), Path(args.out))
        return 0
    script = args.baseline_script
    if script is not None and not script.is_file():
        ap.error(f"--baseline-script {script}: no such file; expected TACoBeLAL's "
                 "src/utils/build_timeline_mcq_dataset.py")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        csv = work / f"annotations_strong_{args.rows}.csv"
        if not csv.exists():
            t = time.perf_counter()
            make_strong_csv(csv, args.rows)
            print(f"generated {csv} ({args.rows:,} rows) in {time.perf_counter() - t:.1f} s (not counted)")
        load0 = os.getloadavg()
        print(f"load average at start: {load0[0]:.2f} on {os.cpu_count()} cores")
        rounds = []
        for r in range(args.rounds):
            sides = {"ours": ours_cmd(csv, work / "out_ours")}
            if script is not None:
                sides["original"] = baseline_cmd(args.baseline_python, script, csv, work / "out_original")
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            res = {w: child(sides[w]) for w in order}
            res["ours"]["items"] = json.loads(res["ours"].pop("stdout").strip().splitlines()[-1])["items"]
            text = [f"ours {res['ours']['process_s']:6.2f} s, {res['ours']['cpu_s']:.2f} CPU s "
                    f"({res['ours']['items']:,} items, {res['ours']['rss_mb']:,.0f} MB)"]
            if script is not None:
                o = res["original"]
                o["items"] = count_lines(work / "out_original" / "original.jsonl")
                text.append(f"original {o['process_s']:6.2f} s, {o['cpu_s']:.2f} CPU s ({o['items']:,} items, "
                            f"{o['rss_mb']:,.0f} MB)  ratio {o['process_s'] / res['ours']['process_s']:.2f}x")
            rounds.append(res)
            print(f"round {r + 1}: " + "  ".join(text) + f"  load {os.getloadavg()[0]:.2f}")
        ours_s = statistics.median(x["ours"]["process_s"] for x in rounds)
        ours_cpu = statistics.median(x["ours"]["cpu_s"] for x in rounds)
        ours_rss = max(x["ours"]["rss_mb"] for x in rounds)
        load1 = os.getloadavg()
        print(f"ours, whole process, median of {args.rounds}: {ours_s:.2f} s wall, {ours_cpu:.2f} CPU s, peak RSS "
              f"{ours_rss:,.0f} MB; load average {load0[0]:.2f} -> {load1[0]:.2f}")
        n = f"{args.rows // 1000:,}k rows"
        figures = [(f"adapter + next, {n}: ours, whole process (wall, median of {args.rounds})", ours_s, "s"),
                   (f"adapter + next, {n}: ours, whole process (CPU s, median of {args.rounds})", ours_cpu, "s"),
                   (f"adapter + next, {n}: ours, peak RSS", ours_rss, "MB")]
        if script is not None:
            ratio = statistics.median(x["original"]["process_s"] / x["ours"]["process_s"] for x in rounds)
            base_s = statistics.median(x["original"]["process_s"] for x in rounds)
            base_rss = min(x["original"]["rss_mb"] for x in rounds)
            print(f"original TACoBeLAL script: {base_s:.2f} s wall, peak RSS {base_rss:,.0f} MB; original / ours wall "
                  f"{ratio:.2f}x (median of the paired rounds); ours' peak RSS {ours_rss / base_rss:.2f}x the original's")
            figures += [(f"adapter + next, {n}: original build_timeline_mcq_dataset.py, whole process (wall, median "
                         f"of {args.rounds})", base_s, "s"),
                        ("speed vs the original TACoBeLAL script (wall)", ratio, "x"),
                        ("peak RSS vs the original TACoBeLAL script", ours_rss / base_rss, "x")]
        if not args.no_record:
            for figure, value, unit in figures:
                record(BENCH, figure, value, unit)
            print(f"appended to {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
