"""What a second run does in a directory where a real Snakemake runs, or ran and was killed with its job processes
left running (lalmbench.workflow.driver): it refuses, names what is still running, and cancels or unlocks
nothing. The second run is the cluster command, `--profile slurm`, against fake squeue/scancel/sbatch: it must
stop before it lists or submits anything. The kill and cancel on the real SLURM are in tests/test_slurm_faults.py.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lalmbench.workflow import driver
from tests.test_slurm_cluster import study_copy
from tests.test_slurm_faults import TINY, cache_keys
from tests.test_workflow_driver import fake_slurm_bin

pytestmark = pytest.mark.slow

SLURM_RUN = [sys.executable, "-m", "snakemake", "--profile", "slurm", "results/all.tsv"]


def _start(wd: Path, *args: str) -> subprocess.Popen:
    """A real local Snakemake of the slow one-model study, until its generate job has cached 2 items; in a
    session of its own, whose process group its jobs share."""
    with open(wd / "first-run.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "2", *args, "results/all.tsv"],
                                cwd=wd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while len(cache_keys(wd)) < 2:
        assert proc.poll() is None, (wd / "first-run.log").read_text()[-4000:]
        assert time.monotonic() < deadline, "the generate job cached no 2 items"
        time.sleep(0.5)
    return proc


def _group(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes still running in process group ``pgid``."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append((int(proc.name), (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except (OSError, ValueError):
            continue
    return sorted(found)


def _second(wd: Path, cmd: list[str], jobs: list[dict]) -> subprocess.CompletedProcess:
    env = {**os.environ, **fake_slurm_bin(wd, jobs)}
    return subprocess.run(cmd, cwd=wd, env=env, capture_output=True, text=True, timeout=120)


def _locks(wd: Path) -> list[Path]:
    return sorted((wd / driver.LOCKS).glob("*.lock"))


def test_a_live_nolock_run_is_neither_cancelled_nor_run_beside(tmp_path):
    """A killed run left its lock and record; the user started the same study with --nolock. The cluster command
    now finds the killed run gone but the --nolock one running: it stops naming it, cancels none of the jobs of
    the directory (they are the live run's) and leaves the lock. A local run there is refused as well."""
    wd = study_copy(tmp_path / "study", TINY)
    (wd / driver.LOCKS).mkdir(parents=True)
    (wd / driver.LOCKS / "0.output.lock").write_text(f"{wd}/results/all.tsv\n")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (wd / driver.DRIVERS).mkdir(parents=True)
    (wd / driver.DRIVERS / f"{socket.gethostname()}-{dead.pid}.json").write_text(
        json.dumps({"host": socket.gethostname(), "pid": dead.pid, "start": "1"}))
    live = _start(wd, "--nolock")
    try:
        run = _second(wd, SLURM_RUN, [{"id": "41", "state": "RUNNING", "workdir": str(wd),
                                       "comment": "rule_runs-slow-synth-trivial_generate"}])
        assert run.returncode != 0
        assert f"pid {live.pid} on {socket.gethostname()}" in run.stderr and "--nolock" in run.stderr, run.stderr
        assert not (wd / "scancel.log").exists(), "the live run's job was cancelled"
        assert _locks(wd)

        (wd / driver.LOCKS / "0.output.lock").unlink()
        local = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "results/all.tsv"], cwd=wd,
                               capture_output=True, text=True, timeout=120)
        assert local.returncode != 0 and f"pid {live.pid} on" in local.stderr, local.stderr[-3000:]
        assert live.poll() is None
    finally:
        os.killpg(live.pid, signal.SIGKILL)  # the run and its job: a stopped Snakemake waits for the job to end
        live.wait()


def test_the_job_processes_of_a_killed_local_run_keep_its_lock(tmp_path, monkeypatch):
    """kill -9 of a local run's Snakemake: its generate job goes on appending to the prediction cache. The cluster
    command there stops naming that job's processes and leaves the lock; once they have ended it goes on."""
    wd = study_copy(tmp_path / "study", TINY)
    first = _start(wd)
    first.kill()
    first.wait()
    left = _group(first.pid)
    try:
        assert any("scripts/generate.py" in cmd for _, cmd in left), left
        cached = len(cache_keys(wd))
        deadline = time.monotonic() + 60
        while len(cache_keys(wd)) == cached:
            assert time.monotonic() < deadline, "the killed run's job wrote nothing more"
            time.sleep(0.5)
        run = _second(wd, SLURM_RUN, [])
        assert run.returncode != 0
        assert f"the Snakemake pid {first.pid} on {socket.gethostname()}" in run.stderr, run.stderr[-3000:]
        assert all(f"pid {pid}:" in run.stderr for pid, _ in left), run.stderr[-3000:]
        assert _locks(wd), "the lock was removed while the killed run's job still runs"
    finally:
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 30
    while _group(first.pid):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    monkeypatch.setattr(driver, "left_jobs", lambda root: [])
    driver.check_alone(wd, lock=True)
    driver.recover(wd)
    assert not _locks(wd)
