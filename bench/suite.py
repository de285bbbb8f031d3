"""Every bench, in the order `make bench` runs them and docs/benchmarks-measured.md lists them.

    python -m bench.suite [NAME ...]     run all benches (or the named ones), then regenerate the table

Each bench appends its figures to bench/results/<name>.jsonl through bench.record; a bench that
fails is reported at the end (the others still run) and the exit status is 1.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Bench:
    command: str  # run from the repository root; "python" is the interpreter running the suite
    what: str


BENCHES: dict[str, Bench] = {
    "default_run": Bench("python bench/bench_default_run.py", "the default run, locally and through fake SLURM"),
    "scoring": Bench("python bench/bench_scoring.py --n 1000000", "parse + score 1M MCQ predictions"),
    "instruction": Bench("python bench/bench_instruction.py", "every instruction check on 8 MiB adversarial replies"),
    "builders": Bench("python bench/bench_builders.py", "every MCQ family on 1M events / 100k clips"),
    "tacobelal_next": Bench("python bench/bench_tacobelal_next.py",
                            "TACoBeLAL strong CSV -> next items, 1M rows (vs the original script with --baseline-script)"),
    "dryrun": Bench("python bench/bench_dryrun.py", "snakemake -n on 63 models x 45 tasks"),
    "captioning": Bench("python bench/bench_captioning.py", "7 caption metrics vs pycocoevalcap; SBERT-sim"),
    "batching": Bench("python bench/bench_batching.py", "batched vs per-item generation, hf backend, CPU"),
    "cascade": Bench("python bench/cascade_latency.py", "cascade baseline per item and per job"),
    "tracking": Bench("python bench/bench_tracking.py", "one tracked scoring job and the sync of its run"),
    "browser": Bench("python bench/bench_browser.py", "results browser, 5k items x 12 runs, headless Chromium"),
}


def argv(bench: Bench) -> list[str]:
    words = shlex.split(bench.command)
    return [sys.executable if words[0] == "python" else words[0], *words[1:]]


def main(args: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"benches to run (default: all of {', '.join(BENCHES)})")
    a = ap.parse_args(args)
    unknown = [n for n in a.names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown bench(es) {unknown}; known: {list(BENCHES)}")
    failed = []
    for name in a.names or list(BENCHES):
        cmd = argv(BENCHES[name])
        print(f"== {name}: {BENCHES[name].command}", flush=True)
        t = time.perf_counter()
        rc = subprocess.run(cmd, cwd=ROOT).returncode
        print(f"== {name}: exit {rc} after {time.perf_counter() - t:.0f} s", flush=True)
        if rc:
            failed.append(name)
    from bench import measured_table

    measured_table.main(["--write"])
    print("docs/benchmarks-measured.md: table regenerated from bench/results")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
