"""The Snakemake that runs the workflow (the *driver*) and what a killed one leaves behind.

Snakemake locks the working directory for a run (``.snakemake/locks``) and removes the lock when it ends. A
driver killed by SIGKILL, the OOM killer or a closed login session leaves the lock, and the next run stops with
"Directory cannot be locked ... --unlock". Under SLURM it also leaves its jobs queued or running: the next run
would submit them again, and two generate jobs would append to one prediction cache file, which has one writer
by design (lalmbench.inference.cache).

Every run that executes jobs, with Snakemake's lock or with ``--nolock``, records itself (host, pid, the
process's start time, whether it took the lock) in ``.snakemake/lalmbench/drivers/`` and touches its record every
minute. A driver that runs its jobs on its own host (not under SLURM) also marks its environment (``MARK_ENV``),
which every job process it starts inherits: a killed driver's job processes can be found on its host.

A run refuses to start (DirectoryInUse) while a recorded driver that took no lock still runs (Snakemake's lock
cannot keep the two from writing the same files, nor a ``--nolock`` run from one that locked), and while job
processes of a gone driver still run on this host (they may still append to the prediction cache).

At the next SLURM run, when locks exist and every recorded driver is gone (on this host: its pid no longer runs
the recorded process; on another host: its record untouched for ``STALE_S``), the run cancels the SLURM jobs left
in this directory (their finished predictions are in the cache), waits until they have ended, and removes the
stale locks (what ``--unlock`` does), saying so on stderr. While any recorded driver may still be running, or a
gone local driver's job processes may still run on a host this run cannot see, nothing is touched and
Snakemake's own lock check decides.
"""
from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

DRIVERS = Path(".snakemake") / "lalmbench" / "drivers"
LOCKS = Path(".snakemake") / "locks"
HEARTBEAT_S = 60
#: a record on another host untouched this long belongs to a driver that is gone
STALE_S = 5 * HEARTBEAT_S
#: how long to wait for cancelled jobs to leave the queue (SLURM's KillWait is 30 s by default)
CANCEL_WAIT_S = 300
#: set by a local driver to its record's mark; inherited by every process of its jobs
MARK_ENV = "LALMBENCH_DRIVER"
#: Snakemake options that execute no job: such runs neither record nor check nor clean up
NO_EXECUTION = frozenset({
    "--lint", "--unlock", "--list", "-l", "--list-target-rules", "--lt", "--summary", "-S",
    "--detailed-summary", "-D", "--dag", "--rulegraph", "--filegraph", "--d3dag", "--report", "--containerize",
    "--cleanup-metadata", "--cm", "--print-compilation", "--list-changes", "--lc", "--list-code-changes",
    "--list-input-changes", "--li", "--list-params-changes", "--lp", "--archive", "--delete-all-output",
    "--delete-temp-output", "--generate-unit-tests", "--touch", "-t", "--version", "-v", "--help", "-h",
    "--cleanup-shadow", "--conda-create-envs-only", "--conda-cleanup-envs", "--compile-wrappers",
})


def executes(argv: list[str], dry_run: bool) -> bool:
    """Whether this command line runs jobs (``--nolock`` ones too: they write what a locked run writes)."""
    return not dry_run and not any(a.split("=", 1)[0] in NO_EXECUTION for a in argv[1:])


def takes_lock(argv: list[str]) -> bool:
    """Whether this command line's run takes Snakemake's lock of the directory."""
    return "--nolock" not in argv[1:]


class DirectoryInUse(RuntimeError):
    """What this run would write is another run's: a live driver beside one that took no lock, or the job
    processes a gone driver left running."""


def _stat_after_name(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (field 3 on: the name, in parentheses, may hold
    spaces); None when no such process runs (or there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, /proc/<pid>/stat field 22): a pid reused by
    another process has another; None when no such process runs."""
    fields = _stat_after_name(pid)
    return None if fields is None else fields[19]


def _alive(record: dict, path: Path, now: float) -> bool:
    if record.get("host") != socket.gethostname():
        return now - path.stat().st_mtime < STALE_S
    return _start_time(int(record["pid"])) == record.get("start")


def _well_formed(record) -> bool:
    """A record as register() writes it: a mapping with the host's name and a pid."""
    if not isinstance(record, dict):
        return False
    pid = record.get("pid")
    return (isinstance(record.get("host"), str) and isinstance(pid, int) and not isinstance(pid, bool) and pid > 0
            and isinstance(record.get("start"), (str, type(None))) and isinstance(record.get("lock", True), bool)
            and isinstance(record.get("mark"), (str, type(None))) and isinstance(record.get("argv", []), list))


def _name(record: dict) -> str:
    """The driver as messages name it: where to find it, and which run it was."""
    return f"pid {record['pid']} on {record['host']} (started {record.get('started', '?')})"


def _ancestry() -> set[int]:
    """This process and its parents: started from a job of another driver, they carry its mark too."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        if (fields := _stat_after_name(pid)) is None:
            break
        pid = int(fields[1])  # field 4: the parent's pid
    return pids


def _records(root: Path) -> list[tuple[Path, dict]]:
    """(path, record) of every driver record; ``{}`` for one that is unreadable or not as register() writes
    it (torn by a kill mid-write, or not written by a driver): it cannot name a live driver."""
    out = []
    for path in sorted((root / DRIVERS).glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = {}
        out.append((path, record if _well_formed(record) else {}))
    return out


def register(root: Path, lock: bool = True, slurm: bool = False) -> Path:
    """Record this process as a driver of ``root`` (``lock``: it takes Snakemake's lock; ``slurm``: its jobs run
    under SLURM, not as its own host's processes); the record is touched every HEARTBEAT_S and removed at exit."""
    pid, host = os.getpid(), socket.gethostname()
    start = _start_time(pid)
    # the mark of a driver that started this one would otherwise pass on to this one's jobs
    os.environ.pop(MARK_ENV, None)
    mark = None if slurm else f"{host}:{pid}:{start}"
    if mark:
        os.environ[MARK_ENV] = mark
    record = {"host": host, "pid": pid, "start": start, "lock": lock, "mark": mark, "argv": sys.argv,
              "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    path = root / DRIVERS / f"{host}-{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)

    def beat():
        while True:
            time.sleep(HEARTBEAT_S)
            try:
                os.utime(path)
            except OSError:
                return

    threading.Thread(target=beat, name="lalmbench-driver-heartbeat", daemon=True).start()
    atexit.register(lambda: path.unlink(missing_ok=True))
    return path


def _say(msg: str) -> None:
    print(f"lalmbench: {msg}", file=sys.stderr, flush=True)


def job_processes(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of the processes on this host that inherited a driver's ``mark`` (its jobs and what
    they started) and still run; this process and its parents excepted. Another user's processes cannot be read
    and are not this user's driver's."""
    needle, skip, found = f"{MARK_ENV}={mark}".encode(), _ancestry(), []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if int(proc.name) in skip or needle not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError):
            continue  # ended meanwhile, or not ours to read
        found.append((int(proc.name), cmd))
    return sorted(found)


def _left_processes(records: list[tuple[Path, dict]], now: float) -> list[tuple[dict, list[tuple[int, str]]]]:
    """(record, its job processes) of each gone driver of this host whose job processes still run."""
    here = socket.gethostname()
    return [(r, procs) for path, r in records
            if r and r.get("mark") and r["host"] == here and not _alive(r, path, now)
            and (procs := job_processes(r["mark"]))]


def check_alone(root: Path, lock: bool) -> None:
    """Before a run that executes jobs in ``root`` records itself (``lock``: it takes Snakemake's lock): raise
    DirectoryInUse while a recorded driver that took no lock runs (or, for a run that takes none, any recorded
    driver runs), or while job processes of a gone driver still run on this host. Two runs that both lock are
    left to Snakemake's lock."""
    records, now = _records(root), time.time()
    live = [r for path, r in records if r and _alive(r, path, now)]
    if unlocked := [r for r in live if not lock or not r.get("lock", True)]:
        running = "; ".join(f"{_name(r)}{' with --nolock' if not r.get('lock', True) else ''}: "
                            f"{' '.join(map(str, r.get('argv', [])))}" for r in unlocked)
        who = "This run takes" if not lock else "It took"
        raise DirectoryInUse(
            f"a Snakemake is running in this directory: {running}. {who} no lock (--nolock), so Snakemake's lock "
            "cannot keep the two from writing the same files; run this once it has ended, or stop it first.")
    _refuse_left_processes(records, now)


def _refuse_left_processes(records: list[tuple[Path, dict]], now: float) -> None:
    """Raise DirectoryInUse, naming them, while job processes of a gone driver still run on this host: they
    may still append to the prediction cache this run would write."""
    if not (left := _left_processes(records, now)):
        return
    pids = [pid for _, procs in left for pid, _ in procs]
    listing = "; ".join(f"pid {pid}: {cmd[:160]}" for _, procs in left for pid, cmd in procs)
    raise DirectoryInUse(
        f"the Snakemake {', '.join(_name(r) for r, _ in left)} is no longer running, but {len(pids)} process(es) "
        f"of its jobs still run on this host and may still write the prediction cache and results: {listing}. "
        f"Run this once they have ended, or stop them first (kill {' '.join(map(str, pids))}); until then the "
        "directory's lock stays.")


def _squeue(fmt: str) -> dict[str, str]:
    """{job id: the rest of the line} for ``squeue --format=%i|<fmt>``: a job id holds no ``|``, so the rest is
    the one field ``fmt`` asks for, whatever it holds."""
    out = subprocess.run(["squeue", "--me", "--noheader", f"--format=%i|{fmt}"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return dict(line.split("|", 1) for line in out.splitlines() if "|" in line)


def left_jobs(root: Path) -> list[tuple[str, str, str]]:
    """(job id, state, comment) of this user's SLURM jobs that a Snakemake submitted from ``root``
    (the executor plugin's comment ``rule_...``) and that have not ended. Each field is asked for alone: a
    directory or comment may hold any separator squeue could print between them."""
    here = root.resolve()
    workdirs = _squeue("%Z")
    states = _squeue("%T")
    comments = _squeue("%k")
    jobs = []
    for job_id, workdir in workdirs.items():
        comment = comments.get(job_id, "")
        if comment.startswith("rule_") and Path(workdir).resolve() == here:
            jobs.append((job_id, states.get(job_id, "?"), comment))
    return jobs


class JobsStillListed(RuntimeError):
    """SLURM still lists the cancelled jobs of a gone driver after the wait."""


def cancel_left_jobs(root: Path, wait_s: float | None = None) -> list[str]:
    """scancel the jobs a gone driver left in ``root`` and wait until SLURM lists none of them (at most
    ``wait_s``, default CANCEL_WAIT_S; then JobsStillListed)."""
    wait_s = CANCEL_WAIT_S if wait_s is None else wait_s
    jobs = left_jobs(root)
    if not jobs:
        return []
    ids = [j for j, _, _ in jobs]
    _say(f"cancelling {len(jobs)} SLURM job(s) the killed Snakemake left in this directory (their finished "
         "predictions are kept in the prediction cache; this run submits what is still due): "
         + ", ".join(f"{j} {s} {c.removeprefix('rule_')}" for j, s, c in jobs))
    subprocess.run(["scancel", *ids], capture_output=True, text=True, timeout=60, check=True)
    deadline = time.monotonic() + wait_s
    while set(ids) & {j for j, _, _ in left_jobs(root)}:
        if time.monotonic() > deadline:
            raise JobsStillListed(f"SLURM job(s) {' '.join(ids)} of a killed Snakemake still listed {wait_s:.0f} s "
                                  "after scancel; run again once `squeue --me` no longer shows them")
        time.sleep(2)
    return ids


def recover(root: Path) -> None:
    """Before a SLURM run locks ``root``: when locks exist and no recorded driver may still run, cancel the
    jobs the gone drivers left and remove their locks and records. While job processes of a gone local driver
    still run on this host, raise DirectoryInUse; where they ran on another host, leave the lock. Only SLURM runs
    recover: there the jobs a driver left can be listed and stopped; a local run keeps Snakemake's own advice
    (``--unlock``), and check_alone refuses it while the old run's job processes still run here."""
    locks = sorted((root / LOCKS).glob("*.lock"))
    if not locks:
        return
    records = _records(root)
    now = time.time()
    live = [r for path, r in records if r and _alive(r, path, now)]
    if live or not records:
        return  # a driver may still run, or the locks are not ours to judge: Snakemake's lock check decides
    gone = ", ".join(_name(r) if r else f"the unreadable record {path}" for path, r in records)
    _refuse_left_processes(records, now)
    if unseen := [r for _, r in records if r and r.get("mark") and r["host"] != socket.gethostname()]:
        _say(f"the directory is locked by a Snakemake that is no longer running ({gone}), but the job processes "
             f"it ran on {', '.join(sorted({r['host'] for r in unseen}))} cannot be seen from here; leaving the lock "
             "(run this command there, where they can be checked)")
        return
    try:
        cancel_left_jobs(root)
    except (OSError, subprocess.SubprocessError) as exc:
        _say(f"the directory is locked by a Snakemake that is no longer running ({gone}), but its SLURM jobs "
             f"could not be listed or cancelled ({exc}); leaving the lock")
        return
    except JobsStillListed as exc:
        _say(f"the directory is locked by a Snakemake that is no longer running ({gone}): {exc}; leaving the lock")
        return
    for lock in locks:
        lock.unlink(missing_ok=True)
    for path, _ in records:
        path.unlink(missing_ok=True)
    _say(f"removed the locks of a Snakemake that is no longer running ({gone}); going on")
