"""Rubric evaluation with a real LLM on real Clotho references: cost per call and a sanity check.

Answers are held-out human captions, so no audio is needed: clip i's references are its captions
1-4 and its answer is caption 5, of the same clip for even i (matched) or of the next clip for odd
i (mismatched). A grader worth its name scores matched answers higher. Prints the rubric, the
reply statuses, the mean score of matched and mismatched answers, and the wall/CPU seconds per
LLM call; records the figures in bench/results/rubrics.jsonl.

    .venv/bin/python bench/bench_rubrics.py --model-json '{"backend": "hf", ...}' [--n 8] [--mode deterministic]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.record import record  # noqa: E402

CLOTHO = REPO.parent / "shared" / "reference-data" / "clotho" / "clotho_captions_evaluation.csv"


def main() -> None:
    import pandas as pd

    from lalmbench.core import io
    from lalmbench.analysis.embed import load_encoder
    from lalmbench.rubrics.files import make_llm, run_rubric

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-json", required=True, help="the rubric LLM's models entry")
    p.add_argument("--csv", default=str(CLOTHO))
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--mode", default="deterministic", choices=["deterministic", "stochastic"])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--cache-dir", help="keep the LLM's replies here (a rerun continues where a killed one stopped)")
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--record", action="store_true", help="append the figures to bench/results/rubrics.jsonl")
    a = p.parse_args()
    caps = pd.read_csv(a.csv).head(a.n + 1)
    refs = caps[[f"caption_{k}" for k in range(1, 5)]].values.tolist()
    answer_of = [int(i if i % 2 == 0 else i + 1) for i in range(a.n)]
    settings = {"mode": a.mode, "repeats": a.repeats, "seed": 0, "temperature": 0.7, "top_p": 0.95,
                "max_new_tokens": a.max_new_tokens, "merge_threshold": 0.75, "max_answers": a.n, "answers_per_prompt": 4,
                "max_criteria": 8, "embedding_model": "default", "cache_dir": a.cache_dir}
    embed, emb_name = load_encoder()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        io.write_jsonl(tmp / "items.jsonl", [{"id": f"c{i}", "references": refs[i]} for i in range(a.n)])
        io.write_parquet(tmp / "p.parquet", pd.DataFrame({"id": [f"c{i}" for i in range(a.n)],
                                                          "raw_output": [caps["caption_5"][j] for j in answer_of],
                                                          "error": [None] * a.n}))
        c0, t0 = time.process_time(), time.perf_counter()
        llm = make_llm("bench-llm", json.loads(a.model_json), settings)
        llm.model  # noqa: B018 - load first, so the per-call figures are calls only (uncached ones)
        load_s, load_cpu = time.perf_counter() - t0, time.process_time() - c0
        c0, t0 = time.process_time(), time.perf_counter()
        doc = run_rubric(items=tmp / "items.jsonl", predictions=tmp / "p.parquet", out=tmp / "r.json",
                         run={"task": "bench", "model": "held-out-caption", "condition": "-", "prompt": "-",
                              "dataset": "clotho"}, llm=llm, embed=embed, embedding_model=emb_name, settings=settings)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    calls = doc["llm_calls"]
    for run in doc["runs"]:
        print(f"pass seed {run['seed']}: {run['summary']}")
        for c in run["criteria"]:
            print(f"  {c['weight']:.3f}  {c['criterion']}  <- {len(c['merged_from'])} proposed")
        by = {"matched": [], "mismatched": []}
        for i, s in enumerate(run["scores"]):
            if s["score"] is not None:
                by["matched" if i % 2 == 0 else "mismatched"].append(s["score"])
        means = {k: (sum(v) / len(v) if v else None) for k, v in by.items()}
        print(f"  mean score: {means} (scored {sum(map(len, by.values()))}/{a.n})")
    print(f"load {load_s:.1f} s wall ({load_cpu:.1f} s CPU); {calls} LLM calls in {wall:.1f} s wall, {cpu:.1f} s CPU: "
          f"{wall / max(calls, 1):.2f} s wall, {cpu / max(calls, 1):.2f} s CPU per call")
    if a.record:
        record("rubrics", "rubric LLM seconds per call (wall)", round(wall / max(calls, 1), 2), "s")
        record("rubrics", "rubric LLM CPU seconds per call", round(cpu / max(calls, 1), 2), "s")


if __name__ == "__main__":
    main()
