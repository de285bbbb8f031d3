"""Run the real Snakefile in a throwaway copy of the repo (shared by the workflow tests)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPY = ["Snakefile", "rules", "scripts", "lalmbench", "config", "resources", "envs", "profiles", "slurm", "docs", ".test"]


def copy_workflow(dest: Path) -> Path:
    """Every test that runs Snakemake runs it here, never in the working tree: a finished `make run`
    (or a killed one's locks and metadata) there must not change what a test sees."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPY:
        src = ROOT / name
        if src.is_symlink():  # ./slurm -> profiles/slurm: `--profile slurm` from the repo root
            os.symlink(os.readlink(src), dest / name)
        elif src.is_dir():
            # bytecode comes along (copytree keeps mtimes, so it stays valid): each job of the copy imports
            # lalmbench without compiling it, where Python may not write __pycache__ (PYTHONDONTWRITEBYTECODE)
            shutil.copytree(src, dest / name)
        elif src.exists():
            shutil.copy2(src, dest / name)
    return dest


def link_env(src: Path, dest: Path) -> Path:
    """A venv_root entry that runs `src` without writing into it: symlinks + an own `.ready`."""
    dest.mkdir(parents=True)
    for name in ("bin", "lib", "lib64", "include", "pyvenv.cfg"):
        if (src / name).exists():
            (dest / name).symlink_to(src / name)
    (dest / ".ready").touch()
    return dest


def snakemake(wd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args]
    # --configfile takes several values: always pass it as --configfile=<path> before targets
    proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


#: a job block; jobs of a group job (data-<dataset>, runs-<model>-<dataset>) are printed indented under it
JOB = re.compile(r"^(?P<indent> *)rule (\S+):\n(?P<body>(?:(?P=indent)    .*\n)+)", re.M)


def planned_jobs(dry_run_output: str) -> list[dict]:
    """Parse `snakemake -n` output into [{rule, wildcards, reason}] (one per job, grouped or not)."""
    jobs = []
    for m in JOB.finditer(dry_run_output):
        body = m.group("body")
        wc = re.search(r"^ *wildcards: (.*)$", body, re.M)
        reason = re.search(r"^ *reason: (.*)$", body, re.M)
        jobs.append({"rule": m.group(2),
                     "wildcards": dict(kv.split("=", 1) for kv in wc.group(1).split(", ")) if wc else {},
                     "reason": reason.group(1) if reason else ""})
    return jobs
