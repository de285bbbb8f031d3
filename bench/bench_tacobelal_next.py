"""Bench: TACoBeLAL strong-label CSV -> `next` items, ours vs the predecessor's builder logic.

Input: a seeded 1,000,000-row ``annotations_strong.csv`` in TACoBeLAL's format (``filename, text,
onset, offset``; free-text sentence captions, most of them distinct, some quoted because they hold
commas; full-precision float times; ~10 events over ~6 distinct sounds per clip, many first events
at 0.0 s), generated here and cached in the work folder.

Ours: the two pipeline steps a user runs, in one process: the ``tacobelal`` adapter rule entry
(read + validate + write clips/events parquet) and the task rule entry with family ``next``
(read parquet + validate + build + write the items JSONL).

Baseline: the predecessor's builder (TACoBeLAL's ``build_timeline_mcq_dataset``: one "what happens
immediately after this event first appears" item per distinct caption of every clip, every other
caption of the clip plus a "none" option as choices, shuffled with ``random.Random(7)``) as a plain
pandas reimplementation written for this bench -- pandas for reading and grouping, per-item Python
for the items, as the original builds them -- not the original code. Same input, same
``min_event_s`` (0.5 s, the predecessor's default), both write their JSONL.

Each of 3 rounds runs baseline and ours in separate child processes (so peak RSS is per process,
read with ``os.wait4``), alternating which goes first; the figure is the median of the 3 paired
speed ratios (baseline wall / ours wall, wall of the work after imports; each process's CPU seconds
are printed and recorded too). The memory figure compares ours' highest peak RSS with the baseline's
lowest. Prints the ratios and the load average, and appends JSON lines to
``bench/results/tacobelal_next.jsonl`` (bench/record.py; the README table is generated from it).
Target: ratio >= 10 at ours' peak RSS <= 1.0x the baseline's.

    .venv/bin/python bench/bench_tacobelal_next.py [--rows 1000000] [--rounds 3] [--workdir DIR]
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
TARGET_RATIO = 10.0
MIN_EVENT_S = 0.5                  # the predecessor's default --min-duration, used by both sides
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

def run_ours(csv: Path, out: Path) -> int:
    """The adapter rule entry, then the task rule entry (family next); returns items written."""
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


# -------------------------------------------------------------------------------------- baseline

def run_baseline(csv: Path, out: Path, *, seed: int = 7) -> tuple[float, int]:
    """The predecessor's timeline builder, reimplemented with pandas (see the module docstring).

    Its output is byte-identical to the original's on the bench input (checked when this bench was
    written); the per-item part stays Python, as in the original, because each item is a dict of
    every other event of its clip.
    """
    import random

    import pandas as pd

    no_event = "This is the last event, no immediate event after."
    t0 = time.perf_counter()
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    df["row"] = range(len(df))
    df["filename"] = df["filename"].str.strip()
    df["text"] = df["text"].str.strip()
    df["onset"] = pd.to_numeric(df["onset"], errors="coerce")
    df["offset"] = pd.to_numeric(df["offset"], errors="coerce")
    dur = df["offset"] - df["onset"]
    df = df[(df["filename"] != "") & (df["text"] != "") & dur.notna() & (dur > 0) & (dur >= MIN_EVENT_S)]
    df["norm"] = (df["text"].str.lower().str.replace(r"\s+", " ", regex=True).str.rstrip(" .,!?:;"))
    # one event per (audio, normalised caption): its first occurrence (earliest onset, then row), its
    # caption variants in row order, its number of distinct intervals and its last offset
    keys = ["filename", "norm"]
    variants: dict[tuple[str, str], list[str]] = {}
    for k1, k2, text in zip(*(df.drop_duplicates(keys + ["text"])[c].tolist() for c in keys + ["text"])):
        variants.setdefault((k1, k2), []).append(text)
    g = df.groupby(keys, sort=False)
    events = df.sort_values(keys + ["onset", "row"]).drop_duplicates(keys).set_index(keys)
    events = events.join(g["offset"].max().rename("last_offset"))
    events = events.join(df.drop_duplicates(keys + ["onset", "offset"]).groupby(keys).size().rename("n_occ"))
    events = events.reset_index().sort_values(["filename", "onset", "offset", "row"])
    events = events[events.groupby("filename")["filename"].transform("size") >= 2]

    def items_of(filename: str, evs: list[dict]):
        for b, base in enumerate(evs):
            options = [dict(e, type="event") for e in evs if e["event_index"] != b]
            options.append({"type": "none", "text": no_event})
            rng.shuffle(options)
            for i, o in enumerate(options):
                o["label"] = chr(ord("A") + i) if i < 26 else f"A{chr(ord('A') + i - 26)}"
            nxt = b + 1 if b + 1 < len(evs) else None
            ans = next(o for o in options if (o["type"] == "none" if nxt is None else o.get("event_index") == nxt))
            yield {"id": f"{filename}__{b}", "task": "event_timeline_next", "audio_filename": filename,
                   "question": f'What happens immediately after this event first appears: "{base["text"]}"?',
                   "base_event": base, "options": options, "answer_label": ans["label"],
                   "answer_type": ans["type"], "answer_text": ans["text"], "answer_event_index": nxt}

    rng = random.Random(seed)
    n = 0
    cols = [events[c].tolist() for c in ("filename", "norm", "onset", "offset", "last_offset", "n_occ")]
    with open(out / "baseline.jsonl", "w", encoding="utf-8") as fh:
        clip: list[dict] = []
        for i, (fn, norm, on, off, last, n_occ) in enumerate(zip(*cols)):
            caps = variants[(fn, norm)]
            clip.append({"event_index": len(clip), "text": caps[0], "captions": caps, "onset": on, "offset": off,
                         "duration": off - on, "occurrence_count": n_occ, "last_offset": last})
            if i + 1 == len(cols[0]) or cols[0][i + 1] != fn:
                for item in items_of(fn, clip):
                    fh.write(json.dumps(item, ensure_ascii=False) + "\n")
                    n += 1
                clip = []
    return time.perf_counter() - t0, n


# ---------------------------------------------------------------------------------------- driver

def worker(which: str, csv: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    wall, n = (run_ours if which == "ours" else run_baseline)(csv, out)
    print(json.dumps({"wall_s": wall, "items": n}))


def child(which: str, csv: Path, out: Path) -> dict:
    """Run one side in a fresh interpreter; its own peak RSS comes from wait4's rusage."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, __file__, "--worker", which, "--csv", str(csv), "--out", str(out)],
                         stdout=subprocess.PIPE, text=True)
    stdout = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"{which} worker failed with exit code {p.returncode}")
    res = json.loads(stdout.strip().splitlines()[-1])
    res.update(process_s=time.perf_counter() - t0, cpu_s=ru.ru_utime + ru.ru_stime, rss_mb=ru.ru_maxrss / 1024.0)
    return res



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None, help="keeps the generated CSV between runs (default: a temp dir)")
    ap.add_argument("--no-record", action="store_true", help="print only; append nothing to bench/results")
    ap.add_argument("--worker", choices=["ours", "baseline"], help=argparse.SUPPRESS)
    ap.add_argument("--csv", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, Path(args.csv), Path(args.out))
        return 0

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
            order = ["baseline", "ours"] if r % 2 == 0 else ["ours", "baseline"]
            res = {w: child(w, csv, work / f"out_{w}") for w in order}
            rounds.append(res)
            b, o = res["baseline"], res["ours"]
            print(f"round {r + 1}: baseline {b['wall_s']:6.2f} s, {b['cpu_s']:.2f} CPU s ({b['items']:,} items, "
                  f"{b['rss_mb']:,.0f} MB)  ours {o['wall_s']:6.2f} s, {o['cpu_s']:.2f} CPU s ({o['items']:,} items, "
                  f"{o['rss_mb']:,.0f} MB)  ratio {b['wall_s'] / o['wall_s']:.2f}x  load {os.getloadavg()[0]:.2f}")
        ratio = statistics.median(x["baseline"]["wall_s"] / x["ours"]["wall_s"] for x in rounds)
        ours_s = statistics.median(x["ours"]["wall_s"] for x in rounds)
        base_s = statistics.median(x["baseline"]["wall_s"] for x in rounds)
        cpu = {w: statistics.median(x[w]["cpu_s"] for x in rounds) for w in ("ours", "baseline")}
        ours_rss = max(x["ours"]["rss_mb"] for x in rounds)
        base_rss = min(x["baseline"]["rss_mb"] for x in rounds)
        load1 = os.getloadavg()
        print(f"median of {args.rounds} paired runs: ours {ours_s:.2f} s vs baseline {base_s:.2f} s = {ratio:.2f}x "
              f"faster (target >= {TARGET_RATIO:g}x: {'OK' if ratio >= TARGET_RATIO else 'MISSED'}); peak RSS ours "
              f"{ours_rss:,.0f} MB vs baseline {base_rss:,.0f} MB = {ours_rss / base_rss:.2f}x (target <= 1.0x: "
              f"{'OK' if ours_rss <= base_rss else 'MISSED'}); load average {load0[0]:.2f} -> {load1[0]:.2f}")
        print(f"CPU seconds (user+sys, whole process; less sensitive to load than wall): ours {cpu['ours']:.2f} s vs "
              f"baseline {cpu['baseline']:.2f} s = {cpu['baseline'] / cpu['ours']:.2f}x")
        if not args.no_record:
            n = f"{args.rows // 1000:,}k rows"
            record(BENCH, f"adapter + next, {n}: ours (wall, median of {args.rounds})", ours_s, "s")
            record(BENCH, f"adapter + next, {n}: predecessor's builder, pandas reimplementation (wall)", base_s, "s")
            record(BENCH, "speed vs the predecessor's builder (wall)", ratio, "x", f">= {TARGET_RATIO:g}")
            record(BENCH, "speed vs the predecessor's builder (CPU s)", cpu["baseline"] / cpu["ours"], "x")
            record(BENCH, "peak RSS vs the predecessor's builder", ours_rss / base_rss, "x", "<= 1")
            print(f"appended to {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
