"""Captioning metrics: the project's path (lalmbench.scoring.metrics.captioning: a subprocess into the
captioning env running aac-metrics) vs pycocoevalcap run directly, plus SBERT-sim on its own.

Input: the Clotho development subset in ../shared/reference-data/clotho (2,893 clips x 5 captions;
or --csv), caption_1 as the candidate, captions 2-5 as the references.
1. BLEU-1..4, METEOR, ROUGE-L, CIDEr-D: both sides timed as whole fresh processes (interpreter,
   imports, JVMs), the way a pipeline job pays for them, alternating --repeats times to even out
   other load; best of each. The values must be identical (|diff| <= 1e-9, what
   tests/metrics/test_captioning.py pins), or the bench fails. Target: ours <= 1.0x pycocoevalcap.
2. SBERT-sim (all-MiniLM-L6-v2, 2,893 candidates + 11,572 references = 14,465 sentences) as a
   whole worker call, twice on one cache directory: the first job of a task encodes the references
   and caches them, every later job (other models, conditions) reads them back and encodes only the
   candidates. The two values must agree (|diff| <= 1e-6) and the second call must encode no
   reference, or the bench fails. Target for the second (what most jobs pay): <= 30 s on 2 cores.
pycocoevalcap is a pinned dependency of the captioning env (it ships the jars aac-metrics runs).
Prints wall and CPU seconds (this process's children: the worker and its JVMs), the wall and CPU
ratios, the load average and the worker's stage timings; appends the figures to
bench/results/captioning.jsonl through bench/record.py. On a shared machine trust the paired ratios
and CPU seconds more than the wall times.

    python bench/bench_captioning.py [--csv PATH] [--repeats 3] [--n N]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.record import record  # noqa: E402
from lalmbench.scoring.metrics.captioning import captioning_python, score_captions  # noqa: E402

SEVEN = ["bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider_d"]
REFERENCE = ROOT / "tests" / "metrics" / "pycoco_reference.py"


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(fn):
    """(result, wall s, CPU s of the child processes fn waited for)."""
    t, c = time.perf_counter(), children_cpu()
    out = fn()
    return out, time.perf_counter() - t, children_cpu() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=str(ROOT.parent / "shared" / "reference-data" / "clotho" /
                                         "clotho_captions_development_subset.csv"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=0, help="first N clips only (0: all); figures are recorded only for all")
    a = ap.parse_args()
    if not Path(a.csv).exists():
        sys.exit(f"{a.csv}: Clotho captions not found (pass --csv)")
    rows = list(csv.DictReader(open(a.csv, encoding="utf-8")))
    if a.n:
        rows = rows[:a.n]
    cands = [r["caption_1"] for r in rows]
    refs = [[r[f"caption_{i}"] for i in range(2, 6)] for r in rows]
    py = captioning_python()
    tmp = Path(tempfile.mkdtemp(prefix="bench-captioning-"))
    cache = tmp / "cache"
    (tmp / "in.json").write_text(json.dumps({"candidates": cands, "mult_references": refs}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    score_captions(cands[:2], refs[:2], metrics=["bleu_1"], cache_dir=cache)  # links the jars (not timed)
    load0 = os.getloadavg()[0]

    def pycoco():
        subprocess.run([py, str(REFERENCE), str(tmp / "in.json"), str(tmp / "ref.json")], check=True, env=env,
                       capture_output=True, cwd=tmp)
        return json.loads((tmp / "ref.json").read_text())

    ours_t, ref_t = [], []
    for _ in range(a.repeats):
        ours, wall, cpu = timed(lambda: score_captions(cands, refs, metrics=SEVEN, cache_dir=cache))
        ours_t.append((wall, cpu))
        ref, wall, cpu = timed(pycoco)
        ref_t.append((wall, cpu))
    diffs = {m: abs(ours["corpus"][m] - ref[m]) for m in SEVEN}
    print(f"Clotho ({Path(a.csv).name}): {len(cands):,} candidates (caption_1) x 4 references (captions 2-5); "
          f"load average {load0:.1f} at start on {len(os.sched_getaffinity(0))} CPUs")
    print(f"{'metric':8s} {'ours':>20s} {'pycocoevalcap':>20s}  |diff|")
    for m in SEVEN:
        print(f"{m:8s} {ours['corpus'][m]:20.17f} {ref[m]:20.17f}  {diffs[m]:.1e}")
    bad = {m: d for m, d in diffs.items() if d > 1e-9}
    if bad:
        sys.exit(f"values differ from pycocoevalcap by more than 1e-9: {bad}")
    best_ours, best_ref = min(ours_t), min(ref_t)
    fmt = ", ".join
    print(f"ours (score_captions -> captioning env worker): wall {fmt(f'{w:.1f}' for w, _ in ours_t)} s, "
          f"CPU {fmt(f'{c:.1f}' for _, c in ours_t)} s")
    print(f"pycocoevalcap directly (tests/metrics/pycoco_reference.py): wall {fmt(f'{w:.1f}' for w, _ in ref_t)} s, "
          f"CPU {fmt(f'{c:.1f}' for _, c in ref_t)} s")
    ratio = best_ours[0] / best_ref[0]
    cpu_ratio = best_ours[1] / best_ref[1]
    print(f"ratio ours / pycocoevalcap (best wall of {a.repeats}): {ratio:.2f}x (target <= 1.0x); "
          f"CPU ratio {cpu_ratio:.2f}x; load average now {os.getloadavg()[0]:.1f}")
    print("worker stages, last run (s; METEOR overlaps BLEU, ROUGE-L and CIDEr-D):",
          {k: round(v, 2) for k, v in ours["info"]["timings_s"].items()})

    n_sent = len(cands) + sum(map(len, refs))
    sbert = {}
    for run in ("first job (references encoded)", "later job (references from the cache)"):
        sb, wall, cpu = timed(lambda: score_captions(cands, refs, metrics=["sbert_sim"], cache_dir=cache))
        sbert[run] = sb, wall, cpu
        counts = sb["info"]["sbert_cache"]
        print(f"SBERT-sim, {run}: worker call wall {wall:.1f} s, CPU {cpu:.1f} s; encoding + similarity stage "
              f"{sb['info']['timings_s']['sbert_sim']:.1f} s for {n_sent:,} sentences; references "
              f"{counts['references']}, candidates {counts['candidates']}; value {sb['corpus']['sbert_sim']:.9f}")
    (cold, cold_wall, _), (warm, warm_wall, _) = sbert.values()
    if warm["info"]["sbert_cache"]["references"]["computed"]:
        sys.exit(f"the second SBERT-sim call encoded references again: {warm['info']['sbert_cache']}")
    if abs(cold["corpus"]["sbert_sim"] - warm["corpus"]["sbert_sim"]) > 1e-6:
        sys.exit(f"SBERT-sim with cached references differs: {warm['corpus']['sbert_sim']} vs "
                 f"{cold['corpus']['sbert_sim']}")
    print(f"SBERT-sim target <= 30 s for a later job: {warm_wall:.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if a.n:
        print("(--n given: figures not recorded)")
        return
    record("captioning", "7 metrics, ours (wall, best)", best_ours[0], "s")
    record("captioning", "7 metrics, pycocoevalcap directly (wall, best)", best_ref[0], "s")
    record("captioning", "7 metrics, ours / pycocoevalcap", ratio, "x", "<= 1")
    record("captioning", "7 metrics, ours / pycocoevalcap (CPU s of the best-wall runs)", cpu_ratio, "x")
    record("captioning", "SBERT-sim on 2,893 candidates + 11,572 references (worker call)", cold_wall, "s")
    record("captioning", "SBERT-sim, later job: 2,893 candidates encoded, 11,572 references from the cache "
                         "(worker call)", warm_wall, "s", "<= 30")


if __name__ == "__main__":
    main()
