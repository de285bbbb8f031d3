"""profiles/slurm through the real SLURM executor plugin, with fake SLURM commands on PATH.

tests/data/slurm/bin/ holds fake sbatch/sacct/squeue/srun/sinfo/scontrol/sacctmgr: sbatch records
its argv and runs the wrapped job at once, sacct/squeue report COMPLETED/FAILED from its exit code,
srun runs the job step. So the workflow really runs (snakemake -> sbatch -> jobstep -> srun ->
the rule) and we can check what a cluster would have been asked for: GPUs, CPUs per GPU, memory
and time only on the inference jobs of a model that asks for a GPU, and none of the flags that
are known traps (--gres, --ntasks-per-gpu).
"""
from __future__ import annotations

import json
from collections import Counter
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.workflow import ROOT, copy_workflow

FAKE_BIN = ROOT / "tests" / "data" / "slurm" / "bin"

# The embedded default of the copy is replaced by this config (the command stays exactly what
# users type): a CPU baseline and the same backend posing as a GPU model, which has 3 tasks x 2
# conditions = 6 runs, all served by one GPU job with one model load.
CONFIG = {
    "seed": 0,
    "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
    "tasks": {t: {"dataset": "synth-trivial", "family": f, "params": {"n_items": 4}}
              for t, f in [("pitch-order", "pitch_order"), ("beep-count", "beep_count"), ("gap-length", "gap_length")]},
    "models": {
        "random": {"backend": "random", "seed": 0, "conditions": ["audio"]},
        "fake-gpu": {
            "backend": "random",
            "seed": 1,
            "resources": {"gpus": 1, "gpu_model": "a100", "cpus_per_gpu": 8, "mem_mb": 32000, "runtime": 120},
        },
    },
    "conditions": ["audio", "no-audio"],
    "prompts": ["mcq-default"],
    # a sweep run of the GPU model: served by the same GPU job, its per-file jobs stay local
    "sweeps": {"circular": {"k": 2, "models": ["fake-gpu"], "tasks": ["pitch-order"], "conditions": ["audio"]}},
}
COMMAND = "snakemake --profile slurm results/all.tsv"
# Only in the throwaway copy's profile: poll the fake sacct every second instead of the
# cluster-friendly defaults, fail fast on a missing output, keep SLURM logs to read the job steps.
FAST_POLLING = """
slurm-init-seconds-before-status-checks: 1
seconds-between-status-checks: 1
latency-wait: 5
slurm-keep-successful-logs: true
"""

# Flags the executor manages; GPU ones must appear only on GPU jobs.
GPU_FLAGS = ("--gpus", "--cpus-per-gpu")


def _flag(argv: list[str], name: str) -> str | None:
    """Value of `name` in an sbatch argv (`--x=v` or `--x v`); None when absent."""
    for i, a in enumerate(argv):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
    return None


def _comment(argv: list[str]) -> str:
    return _flag(argv, "--comment") or ""


def fake_slurm_env(state: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_"))}
    env.update(PATH=os.pathsep.join([str(FAKE_BIN), str(Path(sys.executable).parent), env.get("PATH", "")]),
               FAKE_SLURM_DIR=str(state))
    return env


def run_through_fake_slurm(wd: Path) -> dict:
    """Run COMMAND, exactly as typed, in `wd` with the fake SLURM on PATH; return the recorded calls."""
    state = wd / "fake-slurm"
    proc = subprocess.run(COMMAND, shell=True, cwd=wd, env=fake_slurm_env(state), capture_output=True, text=True,
                          timeout=1800)

    def calls(name):
        f = state / name
        return [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []

    sbatch = calls("sbatch.jsonl")
    if proc.returncode != 0:
        raise AssertionError(f"{COMMAND} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                             f"{proc.stderr[-8000:]}\nsbatch calls: {[shlex.join(s['argv'][:-1]) for s in sbatch]}")
    return {"wd": wd, "sbatch": sbatch, "srun": calls("srun.jsonl"), "stderr": proc.stderr}


def workflow_copy(dest: Path) -> Path:
    wd = copy_workflow(dest)
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    with open(wd / "profiles" / "slurm" / "config.yaml", "a") as fh:
        fh.write(FAST_POLLING)
    return wd


def slurm_copy_of(config: dict, dest: Path) -> Path:
    wd = workflow_copy(dest)
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return wd


@pytest.fixture(scope="module")
def slurm_run(tmp_path_factory):
    return run_through_fake_slurm(workflow_copy(tmp_path_factory.mktemp("slurm-wf")))


def _group(sbatch: list[dict], group: str) -> dict:
    """The one sbatch call of job group `group` (the comment is rule_<group>_<its rules>)."""
    [job] = [s for s in sbatch if _comment(s["argv"]).startswith(f"rule_{group}_")]
    return job


@pytest.mark.slow
def test_the_exact_command_submits_one_job_per_model_and_dataset_not_per_run(slurm_run):
    comments = sorted(_comment(s["argv"]) for s in slurm_run["sbatch"])
    # 9 runs + a CircularEval run: one group per model and dataset (its generate, infer and score
    # jobs), one for the dataset's builds, the aggregate; model_fingerprint is local
    assert comments == ["rule_aggregate",
                        "rule_data-synth-trivial_cache_audio_sweep_circular_items_synth_trivial_task",
                        "rule_runs-fake-gpu-synth-trivial_generate_core_infer_score_sweep_circular_infer_sweep_circular_score",
                        "rule_runs-random-synth-trivial_generate_core_infer_score"], comments
    assert all(s["rc"] == 0 for s in slurm_run["sbatch"])
    assert re.findall(r"^localrule (\S+):", slurm_run["stderr"], re.M) == ["model_fingerprint"] * 2
    df = pd.read_csv(slurm_run["wd"] / "results" / "all.tsv", sep="\t")
    acc = df[df.metric == "accuracy"]
    assert Counter(acc.model) == {"fake-gpu": 6, "random": 3}
    assert (acc.n == 4).all()
    # still one predictions file and one decisions/metrics pair per run
    scores = slurm_run["wd"] / "results" / "scores"
    assert len(list(scores.rglob("metrics.json"))) == len(list(scores.rglob("decisions.parquet"))) == 9


@pytest.mark.slow
def test_one_gpu_job_and_one_model_load_serve_all_six_runs_and_the_sweep(slurm_run):
    gpu_jobs = [s for s in slurm_run["sbatch"] if _flag(s["argv"], "--gpus")]
    assert gpu_jobs == [_group(slurm_run["sbatch"], "runs-fake-gpu-synth-trivial")]
    log = (slurm_run["wd"] / "results" / "logs" / "generate" / "fake-gpu" / "synth-trivial.log").read_text()
    assert log.count("loading model fake-gpu") == 1
    assert "7 slices, 32 items, 0 in the cache" in log  # 6 runs x 4 items + CircularEval (k=2) of 4 items
    summary = json.loads((slurm_run["wd"] / "results" / "predictions" / "fake-gpu" / "generate" / "synth-trivial.json").read_text())
    assert summary["model_loads"] == 1 and len(summary["slices"]) == 7
    assert sorted(p.relative_to(slurm_run["wd"]).as_posix() for p in
                  (slurm_run["wd"] / "results" / "predictions" / "fake-gpu").rglob("*.parquet")) == sorted(
        f"results/predictions/fake-gpu/synth-trivial/{t}/{c}/mcq-default.parquet"
        for t in CONFIG["tasks"] for c in CONFIG["conditions"])


@pytest.mark.slow
def test_gpu_flags_once_and_partition_only_on_the_grouped_gpu_job(slurm_run):
    sbatch = slurm_run["sbatch"]
    gpu = _group(sbatch, "runs-fake-gpu-synth-trivial")
    argv = gpu["argv"]
    assert [a for a in argv if a.startswith("--gpus")] == ["--gpus=a100:1"]  # once, for the whole group
    assert _flag(argv, "--cpus-per-gpu") == "8"  # not capped by a local `cores` setting
    assert _flag(argv, "--mem") == "32000"  # the generate job's; the files' and scores' jobs need less
    assert int(_flag(argv, "-t")) >= 120  # the generate job's time plus the group's later steps
    assert _flag(argv, "--cpus-per-task") is None  # would override --cpus-per-gpu
    assert _flag(argv, "--ntasks") is None
    assert _flag(argv, "-p") == "gpu"  # the shipped partition file routes GPU jobs
    # inside the allocation the generate step asks for the same GPU and all 8 CPUs (SLURM_GPUS set by sbatch)
    steps = [r for r in slurm_run["srun"] if r["job_id"] == str(gpu["job_id"])]
    assert any("--gpus=1" in r["argv"] and "--cpus-per-gpu=8" in r["argv"] for r in steps), steps
    # no local `cores` reaches the job: it uses what the allocation gives it
    assert re.search(r"--cores '?all'? ", _flag(argv, "--wrap"))

    for s in sbatch:
        if s is gpu:
            continue
        for flag in GPU_FLAGS:
            assert _flag(s["argv"], flag) is None, (flag, _comment(s["argv"]))
        assert int(_flag(s["argv"], "--cpus-per-task")) >= 1, _comment(s["argv"])
        assert _flag(s["argv"], "--ntasks") == "1"
        assert _flag(s["argv"], "-p") == "cpu", _comment(s["argv"])
    cpu = _group(sbatch, "runs-random-synth-trivial")
    # a CPU model's group runs its jobs one after another: the generate job's schema defaults (1 CPU,
    # 4000 MB, 60 min), plus 3 minutes for each of its 3 infer and 3 score jobs
    assert _flag(cpu["argv"], "--mem") == "4000" and _flag(cpu["argv"], "-t") == "78"
    assert _flag(cpu["argv"], "--cpus-per-task") == "1"
    # and the GPU group: the model's 120 min plus 3 for each of 7 infer and 7 score jobs
    assert _flag(argv, "-t") == "162"


def test_long_profile_path_still_works(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/slurm", "-n", "results/all.tsv"],
                          cwd=copy_workflow(tmp_path), env=fake_slurm_env(Path("/nonexistent")), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Using profiles profiles/slurm and workflow specific profile" in proc.stderr


@pytest.mark.slow
def test_no_trap_flags_and_the_account_comes_from_the_cluster(slurm_run):
    for s in slurm_run["sbatch"]:
        argv = s["argv"]
        assert not any(a.startswith(("--gres", "--ntasks-per-gpu", "--qos")) for a in argv), argv
        # no account in the profile: the plugin guessed it (sacct) and validated it (sacctmgr)
        assert _flag(argv, "-A") == "fakeacct"
        assert _flag(argv, "--wrap").count("--executor slurm-jobstep") == 1


def test_dry_run_shows_what_each_gpu_job_will_ask_for(tmp_path):
    wd = workflow_copy(tmp_path)
    proc = subprocess.run("snakemake --profile slurm -n results/all.tsv", shell=True, cwd=wd,
                          env=fake_slurm_env(tmp_path / "state"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [line] = [l for l in proc.stderr.splitlines() if l.strip().startswith("fake-gpu")]
    assert "--gpus=a100:1 --cpus-per-gpu=8 --mem=32000MB -t 120min  partition=gpu  env=core  runs=6  jobs=1" in line
    assert not (tmp_path / "state" / "sbatch.jsonl").exists()  # nothing submitted


def test_dry_run_shows_a_sharded_model_and_a_two_gpu_model(tmp_path):
    config = {**CONFIG, "sweeps": {}, "models": {
        "sharded": {"backend": "random", "shards": 2, "resources": {"gpus": 1, "gpu_model": "a100"}},
        "two-gpu": {"backend": "vllm", "env": "vllm", "model_id": "Qwen/Qwen2-Audio-7B-Instruct",
                    "params": {"family": "qwen2_audio", "tensor_parallel_size": 2},
                    "resources": {"gpu_model": "h100", "cpus_per_gpu": 8, "mem_mb": 64000, "runtime": 240}}}}
    wd = slurm_copy_of(config, tmp_path / "wf")
    proc = subprocess.run("snakemake --profile slurm -n results/all.tsv", shell=True, cwd=wd,
                          env=fake_slurm_env(tmp_path / "state"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = {l.split()[0]: l.strip() for l in proc.stderr.splitlines() if l.strip().startswith(("sharded ", "two-gpu "))}
    assert lines["sharded"].endswith("partition=gpu  env=core  runs=6  jobs=2 (2 shards per dataset)")
    assert "--gpus=h100:2 --cpus-per-gpu=8 --mem=64000MB -t 240min  partition=gpu  env=vllm  runs=6  jobs=1" in lines["two-gpu"]
    planned = re.findall(r"output: (results/predictions/\S+/generate/\S+\.json)", proc.stdout)
    assert sorted(planned) == ["results/predictions/sharded/generate/synth-trivial.s1of2.json",
                                                 "results/predictions/sharded/generate/synth-trivial.s2of2.json",
                                                 "results/predictions/two-gpu/generate/synth-trivial.json"]


@pytest.mark.slow
def test_a_task_edit_after_a_grouped_run_rescores_only_that_task(slurm_run):
    """Last in this file: it edits the shared run's config."""
    wd = slurm_run["wd"]
    metrics = {p: p.stat().st_mtime_ns for p in (wd / "results" / "scores").rglob("metrics.json")}
    n_before = len(slurm_run["sbatch"])
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    cfg["tasks"]["beep-count"]["params"]["n_items"] = 5
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    again = run_through_fake_slurm(wd)
    changed = sorted(p.relative_to(wd / "results" / "scores").parts[2] for p, t in metrics.items()
                     if p.stat().st_mtime_ns != t)
    assert changed == ["beep-count"] * 3  # fake-gpu x 2 conditions + random x 1
    new = [_comment(s["argv"]) for s in again["sbatch"][n_before:]]
    assert len(new) == 4 and all(c.startswith(("rule_data-", "rule_runs-", "rule_aggregate")) for c in new), new
    log = (wd / "results" / "logs" / "generate" / "fake-gpu" / "synth-trivial.log").read_text()
    # at most beep-count's 5 items x 2 conditions are generated; every other task's came from the cache
    items, cached, todo = map(int, re.search(r"7 slices, (\d+) items, (\d+) in the cache .*, (\d+) to generate", log).groups())
    assert items == 34 and cached >= 24 and 0 < todo <= 10 and cached + todo == items


def test_a_model_job_no_partition_allows_is_refused_at_the_dry_run(tmp_path):
    config = {**CONFIG, "sweeps": {}, "models": {
        "many-cpus": {"backend": "random", "resources": {"cpus": 80}},
        "v100": {"backend": "random", "resources": {"gpus": 1, "gpu_model": "v100", "runtime": 120}}}}
    wd = slurm_copy_of(config, tmp_path / "wf")
    proc = subprocess.run("snakemake --profile slurm -n results/all.tsv", shell=True, cwd=wd,
                          env=fake_slurm_env(tmp_path / "state"), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    err = " ".join((proc.stdout + proc.stderr).split())  # Snakemake prints a parse-time error to stdout
    assert ("models.many-cpus: its generate job (runs-many-cpus-<dataset>, 1 job(s)) asks --cpus-per-task=80 "
            "--mem=4000MB -t 60min, which no partition of profiles/slurm/partitions.yaml allows "
            "(cpu: 80 CPUs > max_threads 64; gpu: 80 CPUs > max_threads 64)") in err, err[-3000:]
    assert ("models.v100: its generate job (runs-v100-<dataset>, 1 job(s)) asks --gpus=v100:1 --cpus-per-gpu=4 "
            "--mem=4000MB -t 120min, which no partition of profiles/slurm/partitions.yaml allows "
            "(cpu: 1 GPUs > max_gpu 0; gpu: gpu_model v100 not in available_gpu_models ['a100', 'h100'])") in err
    # the same config runs locally: only a cluster's limits refuse it
    local = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "results/all.tsv"], cwd=wd,
                           capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr[-3000:]
