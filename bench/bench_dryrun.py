"""Planning cost of a large study: `snakemake -n` on the default config grown to 63 models x 45 tasks.

The 45 tasks are the default config's 9 tasks repeated 5 times under new names (same datasets and
families); the 63 models are `random` backends with distinct seeds (planning does not load models,
so the backend does not change the DAG's size); conditions audio + no-audio, the default sweeps.
Runs in a throwaway copy of the workflow; times the whole `snakemake -n` process and reads its peak
RSS. Target: <= 30 s wall.

    python bench/bench_dryrun.py [--models 63] [--task-copies 5]
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from bench.record import record  # noqa: E402
from workflow import copy_workflow  # noqa: E402


def big_config(n_models: int, task_copies: int) -> dict:
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg["tasks"] = {f"{name}-{i}": spec for i in range(task_copies) for name, spec in cfg["tasks"].items()}
    cfg["models"] = {f"m{i:02d}": {"backend": "random", "seed": i, "batch_size": 64} for i in range(n_models)}
    for sweep in cfg.get("sweeps", {}).values():
        if isinstance(sweep, dict) and "models" in sweep:
            sweep["models"] = ["m00", "m01"]
    return cfg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=63)
    ap.add_argument("--task-copies", type=int, default=5, help="copies of the default config's 9 tasks")
    a = ap.parse_args()
    wd = copy_workflow(Path(tempfile.mkdtemp(prefix="bench-dryrun-")))
    cfg = big_config(a.models, a.task_copies)
    (wd / "bench.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--configfile=bench.yaml"],
                          cwd=wd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode:
        sys.exit(f"snakemake -n failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    total = re.search(r"^total\s+(\d+)", proc.stdout + proc.stderr, re.M)
    jobs = int(total.group(1)) if total else -1
    print(f"{len(cfg['models'])} models x {len(cfg['tasks'])} tasks, conditions {cfg['conditions']}: {jobs:,} jobs "
          f"planned in {wall:.1f} s wall, peak RSS {rss_mb:,.0f} MB (target <= 30 s); load average "
          f"{load0:.1f} before, {os.getloadavg()[0]:.1f} after")
    if (a.models, a.task_copies) == (63, 5):
        record("dryrun", "snakemake -n, 63 models x 45 tasks, wall", wall, "s", "<= 30")
        record("dryrun", "snakemake -n, 63 models x 45 tasks, jobs planned", jobs, "jobs")
        record("dryrun", "snakemake -n, 63 models x 45 tasks, peak RSS", rss_mb, "MB")
    else:
        print("(not the default size: figures not recorded)")


if __name__ == "__main__":
    main()
