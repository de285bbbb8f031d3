"""Throughput of MCQ parsing + scoring (lalmbench.scoring.mcq.score_mcq) on synthetic predictions.

Target: 1,000,000 MCQ predictions in <= 30 s on 2 cores; one 1 MB degenerate output parsed in
well under 1 s (parsing is linear in the output length).
Usage: python bench/bench_scoring.py [--n 1000000] [--distinct-raw 5000] [--seed 0] [--long-only]

Items have 2-8 options from a pool of option texts; predictions are a realistic mix of bare
labels, label patterns, option texts, free text, hedges, refusals, empty outputs and errors, with
``--distinct-raw`` different free-text strings so the parse cache cannot make it trivial.
The timed part is score_mcq only (items and predictions are built beforehand, as the rule gets
them from disk); the per-stage counts printed show what was parsed.
"""
from __future__ import annotations

import argparse
import os
import string
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.record import record  # noqa: E402
from lalmbench.scoring.parse import parse_options_key  # noqa: E402
from lalmbench.scoring.mcq import score_mcq  # noqa: E402

WORDS = ("dog bark cat meow rain wind engine siren bell piano guitar voice man woman child crowd "
         "water door car train bird drum beep tone noise silence short long first second loud quiet").split()


def build(n: int, distinct_raw: int, seed: int):
    rng = np.random.default_rng(seed)
    n_opts = rng.choice([2, 3, 4, 4, 4, 5, 8], size=n)
    pool = [" ".join(rng.choice(WORDS, size=rng.integers(1, 4), replace=False)) for _ in range(400)]
    items = []
    for i in range(n):
        k = int(n_opts[i])
        texts = rng.choice(len(pool), size=k, replace=False)
        items.append({"id": f"item{i:07d}", "options": [{"label": string.ascii_uppercase[j], "text": pool[t]}
                                                         for j, t in enumerate(texts)],
                      "answer_label": string.ascii_uppercase[int(rng.integers(k))],
                      "meta": {"family": f"f{i % 7}", "gap_s": float(i % 13) / 10}})
    free = [" ".join(rng.choice(WORDS, size=rng.integers(3, 12))) for _ in range(distinct_raw)]
    kinds = rng.choice(10, size=n, p=[.45, .1, .08, .07, .08, .08, .05, .04, .03, .02])
    raw = []
    for i in range(n):
        it = items[i]
        lab = it["options"][int(rng.integers(len(it["options"])))]
        kd = kinds[i]
        raw.append([lab["label"], f"{lab['label']}.", f"({lab['label']})", f"The answer is {lab['label']}.",
                    lab["text"], lab["text"].upper() + "!", free[int(rng.integers(distinct_raw))],
                    "A or B", "I'm sorry, I cannot tell.", ""][kd])
    err = np.where(rng.random(n) < 0.002, "timeout", None)
    preds = pd.DataFrame({"id": [it["id"] for it in items], "raw_output": raw, "error": err})
    return items, preds.sample(frac=1.0, random_state=seed).reset_index(drop=True)


LONG_OPTIONS = tuple(zip("ABCD", ["A dog barking", "A cat meowing", "Rain falling", "Silence"]))


def long_outputs(size: int) -> dict[str, str]:
    """Degenerate outputs of ``size`` characters: a label loop (the shape that took 87 s per MB in
    parser 1.x), an answer-statement loop, CoT sentences repeated, and word salad with no period."""
    rng = np.random.default_rng(0)
    salad = " ".join(rng.choice("dog cat rain the a not no answer is A B C D (A) (B) so maybe".split(), size // 3))
    cot = "The first sound is a dog barking, not rain. Therefore, the answer is (B). "
    return {"label loop 'A A A ...'": ("A " * size)[:size], "'The answer is B.' loop": ("The answer is B. " * size)[:size],
            "reasoning loop": (cot * (size // len(cot) + 1))[:size], "word salad": salad[:size]}


def bench_long_outputs() -> None:
    for size in (64 * 1024, 256 * 1024, 1024 * 1024):
        for name, text in long_outputs(size).items():
            t0 = time.perf_counter()
            res = parse_options_key(text, LONG_OPTIONS)
            secs = time.perf_counter() - t0
            print(f"parse one {size // 1024:>4} KB output ({name}): {secs:.3f} s -> {res.label} ({res.reason[:60]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--distinct-raw", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="parser processes (the target is for 2 cores)")
    ap.add_argument("--long-only", action="store_true", help="only time single long degenerate outputs")
    a = ap.parse_args()
    bench_long_outputs()
    if a.long_only:
        return
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    items, preds = build(a.n, a.distinct_raw, a.seed)
    import resource

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    c1 = cpu()
    t1 = time.perf_counter()
    decisions, metrics = score_mcq(items, preds, workers=a.workers)
    t2 = time.perf_counter()
    c2 = cpu()
    secs = t2 - t1
    print(f"cpus available: {len(os.sched_getaffinity(0))}")
    print(f"built {a.n:,} items + predictions in {t1 - t0:.1f} s (not timed)")
    print(f"score_mcq: {a.n:,} predictions in {secs:.2f} s = {a.n / secs:,.0f} predictions/s")
    print(f"cpu time (this process + parser workers): {c2 - c1:.2f} s; load average before/after: "
          f"{load0:.1f}/{os.getloadavg()[0]:.1f} (other jobs on the machine slow the wall time)")
    print(f"target <= 30 s for 1,000,000: projected {secs * 1_000_000 / a.n:.1f} s "
          f"({30 / (secs * 1_000_000 / a.n):.2f}x headroom)")
    print(f"accuracy {metrics['value']:.4f} [{metrics['ci_low']:.4f}, {metrics['ci_high']:.4f}] "
          f"chance {metrics['chance']:.4f} unparseable {metrics['parse_failure_rate']:.4f}")
    print("stage counts:", metrics["parse_stage_counts"])
    assert len(decisions) == a.n
    if (a.n, a.distinct_raw, a.seed, a.workers) == (1_000_000, 5000, 0, 2):
        record("scoring", "score_mcq on 1,000,000 predictions, wall", secs, "s", "<= 30")


if __name__ == "__main__":
    main()
