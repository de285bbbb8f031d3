"""Faults on the real single-node SLURM (tests/slurm/cluster.sh), each on the smallest study that shows it: one
model (the random backend, slowed to 4 s per item) on one task of 24 items, one condition. Each time the exact
command finishes, no finished prediction is generated again (the model's prediction cache file holds each of the
24 items once: it is append-only, so a regenerated item would add a line), and all.tsv is byte-identical to a
local run of the same config. The cancelled group job is in tests/test_slurm_cluster.py. `make test-slurm`.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.slurm.harness import Cluster, group_of, minutes
from tests.test_slurm_cluster import COMMAND, RUN_FILE_MINUTES, cluster, clusters, run_exact, study_copy  # noqa: F401
from tests.workflow import snakemake

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

N_ITEMS = 24
RUNTIME = 10  # the model entry's minutes: its sbatch job's limit is this + 3 per infer and per score job
TINY = {
    "seed": 0,
    "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
    "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": N_ITEMS}}},
    # 4 s per item: generation takes ~100 s, long enough for a fault to land while it runs
    "models": {"slow": {"backend": "random", "seed": 0, "batch_size": 1, "delay_s": 4, "conditions": ["audio"],
                        "resources": {"runtime": RUNTIME}}},
    "conditions": ["audio"],
    "prompts": ["mcq-default"],
    "sweeps": {},
}
GROUP = "runs-slow-synth-trivial"
NODE = "lalm-node"
CACHED = re.compile(r"slow: 1 slices, 24 items, (\d+) in the cache \(.*\), (\d+) to generate")


@pytest.fixture(scope="module")
def local_all_tsv(tmp_path_factory) -> bytes:
    wd = study_copy(tmp_path_factory.mktemp("local"), TINY)
    snakemake(wd, "results/all.tsv")
    return (wd / "results" / "all.tsv").read_bytes()


def cache_keys(wd: Path) -> list[str]:
    """The item keys of the model's prediction cache file(s), one per line written."""
    return [json.loads(line)["key"] for f in sorted((wd / "results" / "cache").rglob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]


def node_states(cluster: Cluster) -> set[str]:
    """The node's state as sinfo says it (one line per partition it is in)."""
    return set(cluster.cmd("sinfo", "-h", "-N", "-o", "%T").split())


def attempts(cluster: Cluster, wd: Path, group: str = GROUP) -> list[dict]:
    """The sbatch jobs of ``group`` submitted from ``wd`` (the module's tests share one cluster), oldest first."""
    return sorted((j for j in cluster.seen.values() if group_of(j) == group and Path(j["WorkDir"]) == wd),
                  key=lambda j: int(j["JobId"]))


def running(cluster: Cluster, wd: Path, group: str = GROUP) -> list[dict]:
    return [j for j in attempts(cluster, wd, group) if j["JobState"] == "RUNNING"]


def assert_resumed_and_identical(wd: Path, local_all_tsv: bytes) -> int:
    """The last generate job took every item done before the fault from the cache, generated only the rest,
    and all.tsv is the local run's; returns the number taken from the cache."""
    log = (wd / "results" / "logs" / "generate" / "slow" / "synth-trivial.log").read_text()
    m = CACHED.search(log)
    assert m, log
    cached, todo = int(m[1]), int(m[2])
    assert 0 < cached < N_ITEMS and cached + todo == N_ITEMS, log
    keys = cache_keys(wd)
    assert len(keys) == len(set(keys)) == N_ITEMS, f"{len(keys)} lines for {len(set(keys))} items"
    assert (wd / "results" / "all.tsv").read_bytes() == local_all_tsv
    return cached


def test_a_job_killed_at_its_time_limit_is_resubmitted_and_resumes(cluster, tmp_path, local_all_tsv, record_property):
    """The model's sbatch job hits its time limit mid-generation (state TIMEOUT): Snakemake submits it once more
    (inference_retries, 1 by default) under the limit the config asks for, whose generate job takes the items
    done before the kill from the cache. A group's limit is at least its runtime + 6 minutes per predictions
    file (rules/common.smk), so the test lowers the running job's limit to 1 minute with `scontrol update`
    instead of waiting 7 minutes for a too-short entry: SLURM kills it as it kills any job at its limit."""
    wd = study_copy(tmp_path / "slurm", TINY)

    def shorten(c: Cluster, wd: Path) -> bool:
        if (job := running(c, wd)) and cache_keys(wd):
            c.cmd("scontrol", "update", f"JobId={job[0]['JobId']}", "TimeLimit=1")
            return True
        return False

    run = run_exact(cluster, wd, while_running=shorten)
    record_property("wall_s", round(run["wall_s"]))
    first, second = attempts(cluster, wd)
    assert (first["JobState"], first["Reason"], minutes(first["TimeLimit"])) == ("TIMEOUT", "TimeLimit", 1), first
    assert second["JobState"] == "COMPLETED", second
    assert minutes(second["TimeLimit"]) == RUNTIME + 2 * RUN_FILE_MINUTES, second
    assert_resumed_and_identical(wd, local_all_tsv)


def test_a_drained_node_holds_the_jobs_until_it_is_resumed(cluster, tmp_path, local_all_tsv, record_property):
    """`scontrol update nodename=... state=drain` while the dataset's job runs: that job finishes (a drain
    lets running jobs end), the model's job is submitted and pends while the node is drained; after
    `state=resume` it runs and the command finishes with the local run's all.tsv."""
    wd = study_copy(tmp_path / "slurm", TINY)
    hold_s = 40  # more than the executor's checks of a pending job need to see it wait
    seen = {"drained": None, "pending": None, "while_drained": [], "node": set()}

    def drain_then_resume(c: Cluster, wd: Path) -> bool:
        now = time.monotonic()
        if seen["drained"] is None:
            if running(c, wd, "data-synth-trivial"):
                c.cmd("scontrol", "update", f"nodename={NODE}", "state=drain", "reason=lalmbench-test")
                seen["drained"] = now
            return False
        seen["node"] |= node_states(c)
        mine = [j for j in c.seen.values() if Path(j["WorkDir"]) == wd]
        seen["while_drained"] += [(group_of(j), j["JobState"], j.get("Reason", "")) for j in mine]
        if seen["pending"] is None and any(j["JobState"] == "PENDING" for j in mine):
            seen["pending"] = now
        if seen["pending"] is not None and now - seen["pending"] > hold_s:
            c.cmd("scontrol", "update", f"nodename={NODE}", "state=resume")
            return True
        return False

    run = run_exact(cluster, wd, while_running=drain_then_resume)
    record_property("wall_s", round(run["wall_s"]))
    assert seen["pending"] is not None, seen
    assert "drained" in seen["node"], seen["node"]
    # the model's job waited for the node, not for anything of its own
    assert any(g == GROUP and s == "PENDING" and "DRAINED" in r for g, s, r in seen["while_drained"]), seen
    assert not any(g == GROUP and s == "RUNNING" for g, s, r in seen["while_drained"]), seen
    assert [j["JobState"] for j in sorted(run["jobs"].values(), key=lambda j: int(j["JobId"]))] == ["COMPLETED"] * 3, \
        run["jobs"]
    assert node_states(cluster) <= {"idle", "mixed", "allocated"}
    assert (wd / "results" / "all.tsv").read_bytes() == local_all_tsv
    keys = cache_keys(wd)
    assert len(keys) == len(set(keys)) == N_ITEMS


def test_a_killed_snakemake_restarted_with_the_same_command_finishes(cluster, tmp_path, local_all_tsv,
                                                                     record_property):
    """SIGKILL to the submitting Snakemake while the model's job generates: the job keeps running and the
    directory stays locked. The same command again (no --unlock) finds the Snakemake that held the lock gone
    (lalmbench.workflow.driver), cancels the job it left (two generate jobs would write one cache file),
    removes the lock and submits the job again, which takes the items done so far from the cache."""
    wd = study_copy(tmp_path / "slurm", TINY)
    start = time.monotonic()
    with open(tmp_path / "killed.log", "wb") as out:
        proc = subprocess.Popen(shlex.split(COMMAND), cwd=wd, env=cluster.env(), stdout=out, stderr=out)
        try:
            deadline = time.monotonic() + 900
            while not (running(cluster, wd) and len(cache_keys(wd)) >= 3):
                assert proc.poll() is None, (tmp_path / "killed.log").read_text()[-4000:]
                assert time.monotonic() < deadline, "the model's job never generated 3 items"
                time.sleep(2)
                cluster.jobs()
        finally:
            proc.kill()
            proc.wait()
    [orphan] = running(cluster, wd)
    done_when_killed = len(cache_keys(wd))
    assert list((wd / ".snakemake" / "locks").glob("*.lock")), "a SIGKILLed Snakemake leaves its lock"

    run = run_exact(cluster, wd)
    record_property("wall_s", round(time.monotonic() - start))
    err = run["proc"].stderr
    assert re.search(rf"cancelling 1 SLURM job\(s\) the killed Snakemake left .*: {orphan['JobId']} RUNNING "
                     rf"{GROUP}_", err), err[-4000:]
    assert "removed the locks of a Snakemake that is no longer running" in err, err[-4000:]
    states = {j["JobId"]: j["JobState"] for j in attempts(cluster, wd)}
    assert states.pop(orphan["JobId"]) == "CANCELLED"
    assert list(states.values()) == ["COMPLETED"], states
    # the left job generated on until it was cancelled: the new one took at least what was done at the kill
    assert assert_resumed_and_identical(wd, local_all_tsv) >= done_when_killed
    assert not list((wd / ".snakemake" / "locks").glob("*.lock"))
