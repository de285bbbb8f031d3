"""A study at cluster scale: 10 `random` models x 18 tasks (the default config's tasks twice) x 3
conditions x 1 prompt = 540 runs, today's job layout (a baseline revision) against this tree's, in
the same bench run:

- planned jobs and the `snakemake -n` wall (the whole study);
- local: `snakemake --cores 2 results/all.tsv` wall and jobs run;
- slurm: `snakemake --profile slurm results/all.tsv` with the tests' fake SLURM commands on PATH
  (tests/data/slurm/bin): sbatch jobs and the jobs run on the submitting node (local rules).

Model time is ~0 (`random` backend): what is measured is the pipeline's own overhead. Each layout
runs in its own throwaway copy (the baseline is `git archive <rev>` of the repository).

    python bench/bench_study.py [--models 10] [--copies 2] [--only dry|local|slurm] [--baseline-rev main]
                                [--layout before|after] [--run-jobs per-dataset|per-run]

The new layout runs with `run_jobs: --run-jobs` (default per-dataset: one job per model and dataset
writes all of its runs' files); the baseline with its own defaults.

`--models`/`--copies` scale the study down on a busy machine (the figures say which scale ran).
"""
from __future__ import annotations

import argparse
import io as _io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from bench.record import record  # noqa: E402
from workflow import copy_workflow  # noqa: E402

FAKE_BIN = ROOT / "tests" / "data" / "slurm" / "bin"
FAST_POLLING = "\nslurm-init-seconds-before-status-checks: 1\nseconds-between-status-checks: 1\nlatency-wait: 5\n"
CONDITIONS = ["audio", "no-audio", "silence"]


def study_config(base: dict, n_models: int, copies: int) -> dict:
    """The default config's datasets, its tasks `copies` times, `n_models` instant models, no sweeps."""
    cfg = dict(base)
    cfg["tasks"] = {(t if c == 0 else f"{t}-{c + 1}"): spec for c in range(copies) for t, spec in base["tasks"].items()}
    cfg["models"] = {f"random-{i}": {"backend": "random", "seed": i, "batch_size": 64} for i in range(n_models)}
    cfg["conditions"] = CONDITIONS
    cfg["prompts"] = ["mcq-default"]
    cfg["sweeps"] = {}
    cfg["checks"] = {**base.get("checks", {}), "agreement": []}
    return cfg


def baseline_tree(rev: str, dest: Path) -> Path:
    """The workflow files of `rev`, as a directory (what today's layout runs from)."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=_io.BytesIO(blob)) as tar:
        tar.extractall(dest, filter="tar")
    return dest


def prepare(layout: str, rev: str, cfg: dict, run_jobs: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"bench-study-{layout}-"))
    wd = baseline_tree(rev, root / "wf") if layout == "before" else copy_workflow(root / "wf")
    if layout == "after":
        cfg = {**cfg, "run_jobs": run_jobs}
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    with open(wd / "profiles" / "slurm" / "config.yaml", "a") as fh:
        fh.write(FAST_POLLING)
    return wd


def run(cmd: list[str], wd: Path, env: dict | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=wd, env=env or dict(os.environ), capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}) in {wd}:\n{proc.stderr[-4000:]}")
    return wall, proc.stdout + proc.stderr


def jobs_total(output: str) -> int:
    return int(re.search(r"^total\s+(\d+)", output, re.M).group(1))


def slurm_env(state: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
    env.update(PATH=os.pathsep.join([str(FAKE_BIN), str(Path(sys.executable).parent), env.get("PATH", "")]),
               FAKE_SLURM_DIR=str(state))
    return env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--copies", type=int, default=2, help="how many times the default config's tasks are taken")
    ap.add_argument("--only", choices=["dry", "local", "slurm"], action="append")
    ap.add_argument("--baseline-rev", default="main", help="today's layout (default: main)")
    ap.add_argument("--layout", choices=["before", "after"], action="append", help="default: both")
    ap.add_argument("--run-jobs", choices=["per-dataset", "per-run"], default="per-dataset",
                    help="run_jobs of the new layout")
    a = ap.parse_args()
    only = set(a.only or ["dry", "local", "slurm"])
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg = study_config(base, a.models, a.copies)
    n_runs = a.models * len(cfg["tasks"]) * len(CONDITIONS)
    scale = f"{a.models} models x {len(cfg['tasks'])} tasks x {len(CONDITIONS)} conditions = {n_runs} runs"
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    print(f"study: {scale}; baseline {a.baseline_rev} ({subprocess.getoutput(f'git -C {ROOT} rev-parse --short {a.baseline_rev}')})")
    rows = []
    for layout in a.layout or ("before", "after"):
        row = {"layout": layout, "load_before": os.getloadavg()[0]}
        if "dry" in only:
            wd = prepare(layout, a.baseline_rev, cfg, a.run_jobs)
            row["dry_wall_s"], out = run([snakemake, "-n", "--cores", "2", "results/all.tsv"], wd)
            row["jobs_planned"] = jobs_total(out)
        if "local" in only:
            wd = prepare(layout, a.baseline_rev, cfg, a.run_jobs)
            row["local_wall_s"], out = run([snakemake, "--cores", "2", "results/all.tsv"], wd)
        if "slurm" in only:
            wd = prepare(layout, a.baseline_rev, cfg, a.run_jobs)
            state = wd / "fake-slurm"
            row["slurm_wall_s"], out = run([snakemake, "--profile", "slurm", "results/all.tsv"], wd, slurm_env(state))
            row["sbatch_jobs"] = len((state / "sbatch.jsonl").read_text().splitlines())
            row["submit_node_jobs"] = len(re.findall(r"^localrule \S+:", out, re.M))
        row["load_after"] = os.getloadavg()[0]
        rows.append(row)
        print(json.dumps(row))
        for k, v in row.items():
            if k.startswith(("dry_wall", "local_wall", "slurm_wall", "jobs_planned", "sbatch_jobs", "submit_node")):
                unit = "s" if k.endswith("_s") else "jobs"
                name = layout if layout == "before" else f"{layout} ({a.run_jobs})"
                record("study", f"{scale}, {name}: {k}", v, unit)
    keys = [k for k in rows[0] if k != "layout"]
    print("| figure | " + " | ".join(r["layout"] for r in rows) + " |")
    print("|---" * (len(rows) + 1) + "|")
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{r.get(k, '')!s:.6}" for r in rows) + " |")


if __name__ == "__main__":
    main()
