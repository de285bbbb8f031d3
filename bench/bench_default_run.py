"""The README's first command, timed: the embedded default run from scratch on 2 cores, and the
same config through the SLURM profile with the fake SLURM commands of the tests on PATH.

Both run in a throwaway copy of the workflow (your results/ is not touched):
- default: ``snakemake --cores 2`` (results/all.tsv, figures, browser);
- slurm:   ``snakemake --profile slurm results/all.tsv`` with tests/data/slurm/bin first on PATH
  (serial fake sbatch, the profile's own polling), counting the sbatch calls it made.

    python bench/bench_default_run.py [--only default|slurm]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from bench.record import record  # noqa: E402
from workflow import copy_workflow  # noqa: E402

FAKE_BIN = ROOT / "tests" / "data" / "slurm" / "bin"


def timed_run(cmd: list[str], wd: Path, env: dict) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=wd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}) in {wd}:\n{proc.stderr[-4000:]}")
    if not (wd / "results" / "all.tsv").exists():
        sys.exit(f"{' '.join(cmd)}: no results/all.tsv in {wd}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["default", "slurm"])
    a = ap.parse_args()
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    if a.only in (None, "default"):
        load0 = os.getloadavg()[0]
        wd = copy_workflow(Path(tempfile.mkdtemp(prefix="bench-default-")))
        wall = timed_run([snakemake, "--cores", "2"], wd, dict(os.environ))
        print(f"default run from scratch: {wall:.0f} s wall (load average {load0:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after)")
        record("default_run", "default run from scratch, snakemake --cores 2, wall", wall, "s")
    if a.only in (None, "slurm"):
        wd = copy_workflow(Path(tempfile.mkdtemp(prefix="bench-slurm-")))
        state = wd / "fake-slurm"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
        env.update(PATH=os.pathsep.join([str(FAKE_BIN), str(Path(sys.executable).parent), env.get("PATH", "")]),
                   FAKE_SLURM_DIR=str(state))
        wall = timed_run([snakemake, "--profile", "slurm", "results/all.tsv"], wd, env)
        sbatch = [json.loads(x) for x in (state / "sbatch.jsonl").read_text().splitlines()]
        print(f"default config through profiles/slurm with fake SLURM: {len(sbatch)} sbatch jobs, {wall:.0f} s wall")
        record("default_run", "default config via --profile slurm (fake sbatch, serial), wall", wall, "s")
        record("default_run", "default config via --profile slurm, sbatch jobs", len(sbatch), "jobs")


if __name__ == "__main__":
    main()
