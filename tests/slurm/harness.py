"""The real single-node SLURM of tests/slurm/cluster.sh, seen from a test: start and stop it, run a
command against it, and read back what each sbatch job asked for (``scontrol show job``) and what each of
its steps was given (``scontrol show step``).

Accounting is off, so ``sacct`` knows nothing and ``scontrol`` forgets a job MinJobAge (300 s) after
it ends: a watcher thread reads every job while the command runs and keeps its last record.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_SH = ROOT / "tests" / "slurm" / "cluster.sh"
INSTALL = "apt-get install -y slurm-wlm munge"
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo", "sacct")


def missing_binaries() -> list[str]:
    """The packages' commands not found; the daemons are in /usr/sbin, off a plain user's PATH."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [b for b in BINARIES if shutil.which(b, path=path) is None]


def parse_oneliners(text: str, key: str = "JobId") -> dict[str, dict[str, str]]:
    """``scontrol show job|step --oneliner`` output -> {JobId or StepId: {field: value}} (values hold no
    spaces, except Command, which runs to the next field and is not needed here)."""
    records = {}
    for line in text.splitlines():
        rec = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
        if key in rec:
            records[rec[key]] = rec
    return records


@dataclass
class Cluster:
    state: Path
    task_plugin: str = "task/affinity"
    seen: dict[str, dict[str, str]] = field(default_factory=dict)
    steps_seen: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def up(cls, state: Path, task_plugin: str = "task/affinity") -> "Cluster":
        """Start the cluster with ``task_plugin`` as its CPU binding (tests/slurm/slurm_conf.py)."""
        proc = subprocess.run([str(CLUSTER_SH), "up", str(state)],
                              env={**os.environ, "PYTHON": sys.executable, "LALMBENCH_SLURM_TASK_PLUGIN": task_plugin},
                              capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise RuntimeError(f"cluster.sh up failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        conf = (state / "slurm.conf").read_text()
        if f"TaskPlugin={task_plugin}\n" not in conf:
            raise RuntimeError(f"{state / 'slurm.conf'} does not set TaskPlugin={task_plugin}")
        return cls(state, task_plugin)

    def down(self) -> str:
        proc = subprocess.run([str(CLUSTER_SH), "down", str(self.state)], capture_output=True, text=True, timeout=120)
        return proc.stdout + proc.stderr

    def env(self) -> dict:
        """The environment a user on the login node has: the cluster's commands and the project's
        .venv/bin first on PATH, no SLURM_* variables of an enclosing job."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
        env["PATH"] = os.pathsep.join([str(self.state / "bin"), str(Path(sys.executable).parent), env.get("PATH", "")])
        return env

    def cmd(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(list(args), env=self.env(), capture_output=True, text=True, timeout=60)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc.stdout

    def jobs(self) -> dict[str, dict[str, str]]:
        """Every job scontrol still knows, merged into those seen before (last record wins)."""
        self.seen.update(parse_oneliners(self.cmd("scontrol", "show", "job", "--oneliner", check=False)))
        return self.seen

    def steps(self) -> dict[str, dict[str, str]]:
        """Every job step scontrol lists now (a step is listed only while it runs), merged into those seen
        before: StepId (``<job>.batch``, ``<job>.0``, ...) -> its fields, CPUs among them."""
        self.steps_seen.update(parse_oneliners(self.cmd("scontrol", "show", "step", "--oneliner", check=False),
                                               key="StepId"))
        return self.steps_seen

    def run(self, command: str, wd: Path, timeout: int = 1800, while_running=None) -> dict:
        """Run ``command`` (a shell line, exactly as a user types it) in ``wd``, reading the jobs every
        2 s (and their steps); ``while_running(cluster, wd)`` is called on each read until it returns True."""
        before = set(self.jobs())
        done = threading.Event()
        hook = {"pending": while_running}

        def watch():
            while not done.wait(2):
                self.jobs()
                self.steps()
                if hook["pending"] and hook["pending"](self, wd):
                    hook["pending"] = None

        t = threading.Thread(target=watch, daemon=True)
        load_before = os.getloadavg()
        start = time.monotonic()
        t.start()
        try:
            proc = subprocess.run(command, shell=True, cwd=wd, env=self.env(), capture_output=True, text=True,
                                  timeout=timeout)
        finally:
            done.set()
            t.join()
        wall = time.monotonic() - start
        jobs = {k: v for k, v in self.jobs().items() if k not in before}
        steps = {k: v for k, v in self.steps_seen.items() if k.split(".", 1)[0] in jobs}
        return {"proc": proc, "wall_s": wall, "jobs": jobs, "steps": steps, "wd": wd,
                "load": (load_before, os.getloadavg())}


def group_of(job: dict[str, str]) -> str:
    """The Snakemake job group (or rule) an sbatch job runs: its comment is rule_<group>_<rules>."""
    comment = job.get("Comment", "")
    name = comment.removeprefix("rule_")
    for prefix in ("data-", "runs-", "generate-"):
        if name.startswith(prefix):
            return name.split("_", 1)[0]
    return name.split("_wildcards_", 1)[0]


def minutes(limit: str) -> int:
    """SLURM's TimeLimit ([D-]HH:MM:SS or MM:SS) in minutes."""
    days, _, hms = limit.rpartition("-")
    parts = [int(p) for p in hms.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    h, m, s = parts
    return int(days or 0) * 1440 + h * 60 + m + (1 if s else 0)


def mem_mb(value: str) -> int:
    """MinMemoryNode (e.g. 4000M, 32G) in MB."""
    unit = value[-1]
    return int(float(value[:-1]) * {"M": 1, "G": 1024, "T": 1024 * 1024}[unit]) if unit.isalpha() else int(value)
