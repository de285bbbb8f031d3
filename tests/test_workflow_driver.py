"""A killed Snakemake's lock (lalmbench.workflow.driver): removed by the next run only when every Snakemake that
recorded itself in the directory is gone; the SLURM side is in tests/test_slurm_faults.py."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lalmbench.workflow import driver

LEFT_JOBS = driver.left_jobs
# squeue --me --noheader --format=<%i, %T, %Z, %k joined by |>, answering from the job list in $FAKE_SLURM_JOBS
FAKE_SQUEUE = """#!{python}
import json, os, sys
fmt = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--format="))
fields = [{{"%i": "id", "%T": "state", "%Z": "workdir", "%k": "comment"}}[f] for f in fmt.split("|")]
for job in json.load(open(os.environ["FAKE_SLURM_JOBS"])):
    print("|".join(job[f] for f in fields))
"""


@pytest.fixture(autouse=True)
def no_slurm_jobs(monkeypatch):
    """No jobs left in the directory: what squeue says is checked on the real SLURM (test_slurm_faults)."""
    monkeypatch.setattr(driver, "left_jobs", lambda root: [])


def _lock(root):
    d = root / driver.LOCKS
    d.mkdir(parents=True, exist_ok=True)
    (d / "0.output.lock").write_text("results/all.tsv\n")


def _record(root, **rec):
    d = root / driver.DRIVERS
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{rec['host']}-{rec['pid']}.json"
    path.write_text(json.dumps(rec))
    return path


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_lock_of_a_killed_snakemake_is_removed_and_said(tmp_path, capsys):
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=_dead_pid(), start="1", started="2026-01-01 00:00:00")
    driver.recover(tmp_path)
    assert not list((tmp_path / driver.LOCKS).glob("*.lock"))
    assert not list((tmp_path / driver.DRIVERS).glob("*.json"))
    assert "removed the locks of a Snakemake that is no longer running" in capsys.readouterr().err


def test_a_pid_reused_by_another_process_is_not_the_driver(tmp_path):
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=os.getpid(), start="not-its-start-time")
    driver.recover(tmp_path)
    assert not list((tmp_path / driver.LOCKS).glob("*.lock"))


@pytest.mark.parametrize("case", ["running here", "fresh on another host", "no record"])
def test_a_lock_that_may_belong_to_a_running_snakemake_stays(tmp_path, case):
    _lock(tmp_path)
    if case == "running here":
        _record(tmp_path, host=socket.gethostname(), pid=os.getpid(), start=driver._start_time(os.getpid()))
    elif case == "fresh on another host":
        _record(tmp_path, host="login-2", pid=1234, start="1")
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))


def test_a_record_on_another_host_goes_stale_without_heartbeats(tmp_path):
    _lock(tmp_path)
    path = _record(tmp_path, host="login-2", pid=1234, start="1")
    old = time.time() - driver.STALE_S - 1
    os.utime(path, (old, old))
    driver.recover(tmp_path)
    assert not list((tmp_path / driver.LOCKS).glob("*.lock"))


def test_a_lock_stays_when_the_left_jobs_cannot_be_listed(tmp_path, monkeypatch, capsys):
    def no_squeue(root):
        raise FileNotFoundError("squeue")
    monkeypatch.setattr(driver, "left_jobs", no_squeue)
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=_dead_pid(), start="1")
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))
    assert "could not be listed or cancelled" in capsys.readouterr().err


def test_register_records_this_process_as_alive(tmp_path, monkeypatch):
    monkeypatch.setenv(driver.MARK_ENV, "restored-at-teardown")
    path = driver.register(tmp_path)
    rec = json.loads(path.read_text())
    assert driver._alive(rec, path, time.time())
    _lock(tmp_path)
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))


@pytest.mark.parametrize("argv, expected", [
    (["snakemake", "--profile", "slurm", "results/all.tsv"], True),
    (["snakemake", "--cores", "2", "results/all.tsv"], True),
    (["snakemake", "--cores", "2", "--nolock", "results/all.tsv"], True),
    (["snakemake", "--unlock"], False),
    (["snakemake", "--lint"], False),
    (["snakemake", "--profile=slurm", "--summary"], False),
])
def test_only_runs_that_execute_jobs_take_part(argv, expected):
    assert driver.executes(argv, dry_run=False) is expected
    assert driver.executes(argv, dry_run=True) is False


def fake_slurm_bin(where, jobs: list[dict]) -> dict:
    """squeue, scancel and sbatch in ``where``/fake-bin: squeue lists ``jobs`` (id, state, workdir, comment)
    whatever is cancelled, scancel appends its arguments to ``where``/scancel.log, sbatch submits nothing.
    Returns the environment variables that put them first on PATH."""
    bin_dir = where / "fake-bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(FAKE_SQUEUE.format(python=sys.executable))
    (bin_dir / "scancel").write_text(f'#!/bin/sh\necho "$@" >> "{where / "scancel.log"}"\n')
    (bin_dir / "sbatch").write_text("#!/bin/sh\necho 'sbatch: error: no cluster here' >&2\nexit 1\n")
    for name in ("squeue", "scancel", "sbatch"):
        (bin_dir / name).chmod(0o755)
    (where / "jobs.json").write_text(json.dumps(jobs))
    return {"FAKE_SLURM_JOBS": str(where / "jobs.json"), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _fake_slurm(tmp_path, monkeypatch, jobs: list[dict]) -> None:
    for name, value in fake_slurm_bin(tmp_path, jobs).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(driver, "left_jobs", LEFT_JOBS)


@pytest.mark.parametrize("record", ["[1]", '{"pid": "abc", "host": "%(host)s"}', '{"host": "%(host)s"}',
                                    '{"host": "%(host)s", "pid": true}', "null", '"text"',
                                    '{"host": "%(host)s", "pid": 1, "lock": "no"}',
                                    '{"host": "%(host)s", "pid": 1, "mark": 5}',
                                    '{"host": "%(host)s", "pid": 1, "argv": 5}'])
def test_a_malformed_record_names_no_live_driver(tmp_path, capsys, record):
    _lock(tmp_path)
    path = tmp_path / driver.DRIVERS / "forged.json"
    path.parent.mkdir(parents=True)
    path.write_text(record % {"host": socket.gethostname()})
    driver.recover(tmp_path)
    assert not list((tmp_path / driver.LOCKS).glob("*.lock"))
    assert f"the unreadable record {path}" in capsys.readouterr().err


def test_a_malformed_record_beside_a_live_driver_touches_nothing(tmp_path):
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=os.getpid(), start=driver._start_time(os.getpid()))
    (tmp_path / driver.DRIVERS / "forged.json").write_text("[1]")
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))


def test_only_jobs_of_this_very_directory_are_left_jobs(tmp_path, monkeypatch):
    """A sibling directory named `<root>|rule_other` is another directory, whatever squeue prints."""
    root = tmp_path / "study"
    sibling = tmp_path / "study|rule_other"
    root.mkdir()
    sibling.mkdir()
    _fake_slurm(tmp_path, monkeypatch, [
        {"id": "11", "state": "RUNNING", "workdir": str(root), "comment": "rule_runs-m-d_generate"},
        {"id": "12", "state": "PENDING", "workdir": str(sibling), "comment": "rule_runs-m-d_generate"},
        {"id": "13", "state": "RUNNING", "workdir": str(root), "comment": "not snakemake's"},
    ])
    assert driver.left_jobs(root) == [("11", "RUNNING", "rule_runs-m-d_generate")]
    assert driver.left_jobs(sibling) == [("12", "PENDING", "rule_runs-m-d_generate")]


def test_jobs_still_listed_after_scancel_leave_the_lock_and_say_why(tmp_path, monkeypatch, capsys):
    _fake_slurm(tmp_path, monkeypatch, [
        {"id": "21", "state": "COMPLETING", "workdir": str(tmp_path), "comment": "rule_runs-m-d_generate"}])
    monkeypatch.setattr(driver, "CANCEL_WAIT_S", 0.1)
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=_dead_pid(), start="1")
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))
    err = capsys.readouterr().err
    assert "SLURM job(s) 21 of a killed Snakemake still listed" in err and "leaving the lock" in err


def _wait_exec(pid: int) -> None:
    """Until the forked child runs its own program (and so has the environment it was given)."""
    deadline = time.monotonic() + 30
    while b"sleep(600)" not in Path(f"/proc/{pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture
def child():
    """A real process that runs until the test ends: ``child(env)`` starts one with ``env`` added."""
    procs = []

    def start(env: dict | None = None) -> subprocess.Popen:
        procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                      env={**os.environ, **(env or {})}))
        _wait_exec(procs[-1].pid)
        return procs[-1]
    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def _driver_record(root, proc, **rec):
    """The record a driver running as ``proc`` on this host wrote."""
    return _record(root, host=socket.gethostname(), pid=proc.pid, start=driver._start_time(proc.pid),
                   started="2026-01-01 00:00:00", argv=["snakemake", "--nolock"], **rec)


@pytest.mark.parametrize("lock, theirs", [(True, False), (False, True), (False, False)])
def test_a_run_refuses_beside_a_live_driver_that_took_no_lock(tmp_path, child, lock, theirs):
    proc = child()
    _driver_record(tmp_path, proc, lock=theirs)
    with pytest.raises(driver.DirectoryInUse, match=rf"pid {proc.pid} on {socket.gethostname()} .* no lock"):
        driver.check_alone(tmp_path, lock=lock)


def test_two_runs_that_lock_are_left_to_snakemakes_lock(tmp_path, child):
    _driver_record(tmp_path, child(), lock=True)
    driver.check_alone(tmp_path, lock=True)


def test_a_live_nolock_driver_keeps_the_lock_and_its_jobs(tmp_path, monkeypatch, child):
    """A killed run's lock and record beside a live --nolock run: the jobs in the directory are the live run's."""
    _fake_slurm(tmp_path, monkeypatch, [
        {"id": "31", "state": "RUNNING", "workdir": str(tmp_path), "comment": "rule_runs-m-d_generate"}])
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=_dead_pid(), start="1")
    _driver_record(tmp_path, child(), lock=False)
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))
    assert not (tmp_path / "scancel.log").exists()


def test_the_left_job_processes_of_a_killed_local_driver_keep_the_lock(tmp_path, child):
    """Until they end the lock stays and every run is refused, naming them; then the lock goes."""
    mark = f"{socket.gethostname()}:{_dead_pid()}:1"
    _lock(tmp_path)
    _record(tmp_path, host=socket.gethostname(), pid=int(mark.split(":")[1]), start="1", mark=mark)
    job = child({driver.MARK_ENV: mark})
    unrelated = child({driver.MARK_ENV: "another-host:1:1"})
    for check in (lambda: driver.check_alone(tmp_path, lock=True), lambda: driver.recover(tmp_path)):
        with pytest.raises(driver.DirectoryInUse, match=rf"1 process\(es\) .*: pid {job.pid}: .*sleep\(600\)") as err:
            check()
        assert str(unrelated.pid) not in str(err.value)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))
    job.kill()
    job.wait()
    driver.check_alone(tmp_path, lock=True)
    driver.recover(tmp_path)
    assert not list((tmp_path / driver.LOCKS).glob("*.lock"))


def test_a_killed_local_driver_on_another_host_keeps_the_lock(tmp_path, capsys):
    """Its job processes may still run there, and cannot be seen from here."""
    _lock(tmp_path)
    path = _record(tmp_path, host="login-2", pid=1234, start="1", mark="login-2:1234:1")
    old = time.time() - driver.STALE_S - 1
    os.utime(path, (old, old))
    driver.recover(tmp_path)
    assert list((tmp_path / driver.LOCKS).glob("*.lock"))
    assert "the job processes it ran on login-2 cannot be seen from here; leaving the lock" in capsys.readouterr().err


def test_a_local_driver_marks_the_processes_of_its_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv(driver.MARK_ENV, "a driver that started this one")
    record = json.loads(driver.register(tmp_path, lock=False).read_text())
    assert record["lock"] is False and os.environ[driver.MARK_ENV] == record["mark"]
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        _wait_exec(proc.pid)
        assert [pid for pid, _ in driver.job_processes(record["mark"])] == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert driver.register(tmp_path, slurm=True) and driver.MARK_ENV not in os.environ
