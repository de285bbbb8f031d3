"""The cluster path on a real single-node SLURM (tests/slurm/cluster.sh: munged, slurmctld and slurmd from
Debian's slurm-wlm and munge packages, accounting off, partitions `cpu` and `gpu` from
profiles/slurm/partitions.yaml, GPUs that are links to /dev/null, the node's CPUs the machine's).

The default study runs on two clusters that differ in their CPU binding only: `TaskPlugin=task/affinity` (each
job bound to its CPUs, as cgroups do) and `task/none` (Slurm's default: nothing bound, every process of a job
sees the whole node). Both must finish with a local run's all.tsv, every job step within its sbatch's CPUs.
The GPU and cancelled-job studies run on the task/affinity cluster.

Each study runs the exact command users type, `snakemake --profile slurm results/all.tsv` from the project's
.venv, on a throwaway copy with the profile as shipped; what every sbatch job asked for is read back from
`scontrol show job`. Without the binaries every test here skips with the install line. `make test-slurm`.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from lalmbench.workflow import rulegrid
from lalmbench.workflow.config import iter_runs, validate_config
from tests.slurm.harness import INSTALL, Cluster, group_of, mem_mb, minutes, missing_binaries
from tests.slurm.slurm_conf import TASK_PLUGINS
from tests.test_slurm_profile import CONFIG as FAKE_SLURM_CONFIG
from tests.workflow import ROOT, copy_workflow, snakemake

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

COMMAND = "snakemake --profile slurm results/all.tsv"
# rules/common.smk: minutes for a job that reads one run's files and writes its predictions or scores
RUN_FILE_MINUTES = 3
# the rules' own requests, above the profile's default-resources (2000 MB, 10 min)
DATA_JOB_MB = 4000
RUN_FILE_JOB_MB = 2000

# two models posing as GPU models (the random backend: no checkpoint, no GPU code) and a CPU model, on
# the fake-SLURM tests' 3 tasks x 4 items and 2 conditions; at most 2 CPUs per job: the test node has the
# machine's CPUs (tests/slurm/slurm_conf.py says why). The cancelled-job test runs it.
GPU_STUDY = {
    **FAKE_SLURM_CONFIG,
    "models": {
        "gpu-a": {"backend": "random", "seed": 1,
                  "resources": {"gpus": 1, "gpu_model": "a100", "cpus_per_gpu": 2, "mem_mb": 16000, "runtime": 30}},
        "gpu-b": {"backend": "random", "seed": 2,
                  "resources": {"gpus": 1, "cpus_per_gpu": 1, "mem_mb": 8000, "runtime": 20}},
        "random": {"backend": "random", "seed": 0},
    },
    "sweeps": {},
}


def hf_gpu_study(qwen2_audio: Path, af3: Path) -> dict:
    """GPU_STUDY with its two GPU models as real hf entries on tiny checkpoints (tests/models/tiny.py): the
    hf backend loads, batches and generates as on a GPU node, on the CPU: `device_map: cpu` (the test
    cluster's GPUs are links to /dev/null), while the entry still asks SLURM for its GPU."""
    hf = {"backend": "hf", "device_map": "cpu", "dtype": "float32", "batch_size": 4,
          "generation": {"max_new_tokens": 4}}
    gpu_a, gpu_b = (GPU_STUDY["models"][m] for m in ("gpu-a", "gpu-b"))
    return {**GPU_STUDY, "models": {
        "gpu-a": {**hf, "model_id": str(qwen2_audio), "resources": gpu_a["resources"]},
        "gpu-b": {**hf, "model_id": str(af3), "resources": gpu_b["resources"]},
        "random": GPU_STUDY["models"]["random"]}}


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    """clusters(task_plugin): the module's cluster with that CPU binding, started on first use; all stopped
    at the module's end."""
    if missing := missing_binaries():
        pytest.skip(f"no SLURM on this machine (missing {' '.join(missing)}): {INSTALL}")
    started: dict[str, Cluster] = {}

    def get(task_plugin: str) -> Cluster:
        if task_plugin not in started:
            started[task_plugin] = Cluster.up(tmp_path_factory.mktemp("slurm"), task_plugin)
        return started[task_plugin]

    try:
        yield get
    finally:
        for c in started.values():
            c.down()


@pytest.fixture(scope="module")
def cluster(clusters):
    return clusters("task/affinity")


def run_exact(cluster: Cluster, wd: Path, **kw) -> dict:
    run = cluster.run(COMMAND, wd, **kw)
    proc = run["proc"]
    if proc.returncode != 0:
        raise AssertionError(f"{COMMAND} failed ({proc.returncode}) after {run['wall_s']:.0f} s:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-8000:]}")
    return run


def study_copy(dest: Path, config: dict | None = None) -> Path:
    wd = copy_workflow(dest)
    if config is not None:
        (wd / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return wd


def resolved_models(wd: Path) -> dict:
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)  # fills the schema's resource defaults
    return cfg["models"]


# rules/runs.smk: the runtime of the one job that writes a model's batched runs of a dataset (run_jobs: per-dataset)
RUNS_JOB_MINUTES = 30


def run_files(wd: Path, model: str, dataset: str) -> tuple[int, int]:
    """(batched, own) predictions files of one model and dataset: with run_jobs: per-dataset the main runs of
    the MCQ tasks scored in the core env were written by one job of the group; every other file (sweeps,
    other tasks, or all under per-run) by one infer and one score job."""
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)
    batched_tasks = set(rulegrid.mcq_tasks_scored_in(cfg, "core")) if cfg["run_jobs"] == "per-dataset" else set()
    main = list((wd / "results" / "predictions" / model / dataset).rglob("*.parquet"))
    batched = sum(f.relative_to(wd / "results" / "predictions" / model / dataset).parts[0] in batched_tasks
                  for f in main)
    sweeps = len(list((wd / "results" / "sweeps" / "circular" / "predictions" / model / dataset).rglob("*.parquet")))
    return batched, len(main) - batched + sweeps


def job_table(run: dict) -> list[dict]:
    """One row per sbatch job of a run: its group and the scontrol fields of its request."""
    return [{"group": group_of(j), "JobId": j["JobId"], "JobState": j["JobState"], "Partition": j["Partition"],
             "NumCPUs": int(j["NumCPUs"]), "MinMemoryNode": mem_mb(j["MinMemoryNode"]),
             "TimeLimit": minutes(j["TimeLimit"]), "TresPerJob": j.get("TresPerJob", "N/A"),
             "CpusPerTres": j.get("CpusPerTres", "N/A")}
            for j in sorted(run["jobs"].values(), key=lambda j: int(j["JobId"]))]


def assert_requests_follow_the_model_entries(wd: Path, rows: list[dict]) -> None:
    """Every job on the partition its kind belongs to, asking for no more than its heaviest job: a model's
    group its entry's CPUs (and GPUs), its memory or the run-file jobs' 2000 MB, and its runtime plus
    RUNS_JOB_MINUTES for its batched runs' job and RUN_FILE_MINUTES per infer and score job; other jobs 1 CPU
    and at most the data jobs' 4000 MB."""
    models = resolved_models(wd)
    for r in rows:
        name = r["group"]
        assert r["JobState"] == "COMPLETED", r
        if name.startswith("runs-"):
            model, dataset = next((m, name[len(f"runs-{m}-"):]) for m in models if name.startswith(f"runs-{m}-"))
            res = models[model]["resources"]
            if res["gpus"]:
                assert r["Partition"] == "gpu", r
                gpus = f"{res['gpu_model']}:{res['gpus']}" if res.get("gpu_model") else str(res["gpus"])
                assert r["TresPerJob"] == f"gres:gpu:{gpus}", r
                assert r["CpusPerTres"] == f"gres:gpu:{res['cpus_per_gpu']}", r
                assert r["NumCPUs"] == res["gpus"] * res["cpus_per_gpu"], r
            else:
                assert (r["Partition"], r["TresPerJob"], r["NumCPUs"]) == ("cpu", "N/A", res["cpus"]), r
            assert r["MinMemoryNode"] == max(res["mem_mb"], RUN_FILE_JOB_MB), r
            batched, own = run_files(wd, model, dataset)
            expected = res["runtime"] + (RUNS_JOB_MINUTES if batched else 0) + RUN_FILE_MINUTES * 2 * own
            assert batched + own > 0 and r["TimeLimit"] == expected, (r, batched, own)
        else:
            assert (r["Partition"], r["TresPerJob"], r["NumCPUs"]) == ("cpu", "N/A", 1), r
            assert r["MinMemoryNode"] <= DATA_JOB_MB, r


@pytest.fixture(scope="module")
def local_default_study(tmp_path_factory):
    """The default study run locally (--cores 2): the all.tsv every cluster's run must reproduce."""
    wd = study_copy(tmp_path_factory.mktemp("default-study-local"))
    snakemake(wd, "results/all.tsv")
    return wd


@pytest.fixture(scope="module", params=TASK_PLUGINS, ids=lambda plugin: plugin.replace("/", "-"))
def default_study(request, clusters, tmp_path_factory):
    wd = study_copy(tmp_path_factory.mktemp("default-study"))
    return run_exact(clusters(request.param), wd)


def test_the_default_study_finishes_on_slurm_without_accounting(default_study, local_default_study,
                                                                record_property):
    wd = default_study["wd"]
    rows = job_table(default_study)
    record_property("wall_s", round(default_study["wall_s"]))
    record_property("load_avg", default_study["load"])
    record_property("jobs", rows)
    # one job per dataset's builds, per model and dataset, plus the listening checks and the aggregate
    groups = sorted(r["group"] for r in rows)
    assert [g for g in groups if g.startswith("data-")] == ["data-synth-scenes", "data-synth-trivial"]
    assert len([g for g in groups if g.startswith("runs-")]) == 8, groups
    # sacct answers "accounting storage is disabled": the profile's squeue status saw every job end
    assert all(r["JobState"] == "COMPLETED" for r in rows), rows
    # every run of the config in all.tsv (that a SLURM run's all.tsv equals a local run's, byte for byte,
    # is checked below on the GPU study)
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)
    df = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    acc = df[df.metric == "accuracy"]
    assert sorted(zip(acc.model, acc.dataset, acc.task, acc.condition, acc.prompt)) == sorted(
        (r.model, r.dataset, r.task, r.condition, r.prompt) for r in iter_runs(cfg))
    assert (wd / "results" / "all.tsv").read_bytes() == (local_default_study / "results" / "all.tsv").read_bytes()


def test_each_default_study_step_fits_in_its_sbatch_request(default_study):
    """The job step each sbatch job starts (`srun` of the executor plugin's job step) asks for no more CPUs
    than the job was given, whether or not the cluster binds jobs to their CPUs: on an unbound node
    Snakemake's `--cores all` inside the job sees every CPU of the node."""
    jobs, steps = default_study["jobs"], default_study["steps"]
    for job_id, job in jobs.items():
        own = {k: v for k, v in steps.items() if k.split(".", 1)[0] == job_id and not k.endswith(".batch")}
        assert own, f"job {job_id} ({group_of(job)}): no job step seen running"
        for step_id, step in own.items():
            assert 1 <= int(step["CPUs"]) <= int(job["NumCPUs"]), (step_id, step["CPUs"], job["NumCPUs"])


def test_each_default_study_job_asks_for_its_heaviest_job_not_the_sum(default_study):
    rows = job_table(default_study)
    assert_requests_follow_the_model_entries(default_study["wd"], rows)
    # 1 CPU per sbatch job: the run asked for 102 CPUs and 222 GB over 13 jobs
    assert sum(r["NumCPUs"] for r in rows) == len(rows)
    assert sum(r["MinMemoryNode"] for r in rows) <= 4000 * len(rows)


@pytest.fixture(scope="module")
def gpu_study(cluster, tmp_path_factory):
    pytest.importorskip("transformers", reason="the hf backend needs transformers (the core .venv has it)")
    from tests.models.tiny import build_audioflamingo3, build_qwen2_audio

    ckpt = tmp_path_factory.mktemp("tiny-checkpoints")
    config = hf_gpu_study(build_qwen2_audio(ckpt / "qwen2-audio"), build_audioflamingo3(ckpt / "af3"))
    wd = study_copy(tmp_path_factory.mktemp("gpu-study"), config)
    return run_exact(cluster, wd)


def test_gpu_models_go_to_the_gpu_partition_with_their_own_request(gpu_study, record_property):
    rows = job_table(gpu_study)
    record_property("wall_s", round(gpu_study["wall_s"]))
    record_property("jobs", rows)
    # the hf models read audio: each gets its listening check (a CPU job; 12 items, so inconclusive)
    assert sorted(r["group"] for r in rows) == ["aggregate", "data-synth-trivial", "listening_check",
                                               "listening_check", "runs-gpu-a-synth-trivial",
                                               "runs-gpu-b-synth-trivial", "runs-random-synth-trivial"]
    assert_requests_follow_the_model_entries(gpu_study["wd"], rows)
    gpu_a = next(r for r in rows if r["group"] == "runs-gpu-a-synth-trivial")
    assert (gpu_a["TresPerJob"], gpu_a["NumCPUs"], gpu_a["MinMemoryNode"]) == ("gres:gpu:a100:1", 2, 16000)
    df = pd.read_csv(gpu_study["wd"] / "results" / "all.tsv", sep="\t")
    acc = df[df.metric == "accuracy"]
    assert set(acc.model) == {"gpu-a", "gpu-b", "random"}
    # both hf models answered every item of their 6 runs on the CPU, inside the job that asked for a GPU
    for model, family in (("gpu-a", "qwen2_audio"), ("gpu-b", "audioflamingo3")):
        files = (gpu_study["wd"] / "results" / "predictions" / model).rglob("*.parquet")
        preds = pd.concat(pd.read_parquet(f) for f in files)
        assert len(preds) == 24 and (preds["backend"] == "hf").all() and preds["error"].isna().all(), model
        assert len(acc[acc.model == model]) == 6, model
        info = {(i["family"], i["device"]) for i in map(json.loads, preds["backend_info"])}
        assert info == {(family, "cpu")}, (model, info)


def _cancel_once_a_prediction_is_written(group: str, model: str):
    """A while_running hook: scancel the running sbatch job of `group` once its model's first predictions
    file is on disk (its generate job is done, its infer and score jobs under way)."""
    def hook(cluster: Cluster, wd: Path) -> bool:
        running = [j for j in cluster.seen.values() if group_of(j) == group and j["JobState"] == "RUNNING"]
        if running and any((wd / "results" / "predictions" / model).rglob("*.parquet")):
            cluster.cmd("scancel", running[0]["JobId"])
            hook.cancelled = running[0]["JobId"]
            return True
        return False
    hook.cancelled = None
    return hook


def test_a_cancelled_group_job_is_resubmitted_and_generates_nothing_again(cluster, tmp_path):
    """scancel a model's sbatch job while its infer and score jobs run: Snakemake removes the group's
    outputs and submits the group again (inference_retries: 1 by default), whose generate job finds every
    item in the prediction cache; the command finishes with the all.tsv of a local run, byte for byte."""
    wd = study_copy(tmp_path / "slurm", GPU_STUDY)
    hook = _cancel_once_a_prediction_is_written("runs-gpu-a-synth-trivial", "gpu-a")
    run = run_exact(cluster, wd, while_running=hook)
    assert hook.cancelled, "the group's job was never seen running with a predictions file written"
    assert run["proc"].returncode == 0, run["proc"].stderr[-6000:]
    attempts = [j for j in run["jobs"].values() if group_of(j) == "runs-gpu-a-synth-trivial"]
    assert [j["JobState"] for j in sorted(attempts, key=lambda j: int(j["JobId"]))] == ["CANCELLED", "COMPLETED"]
    log = (wd / "results" / "logs" / "generate" / "gpu-a" / "synth-trivial.log").read_text()
    assert re.search(r"gpu-a: 6 slices, 24 items, 24 in the cache \(.*\), 0 to generate", log), log
    assert "loading model" not in log  # the second attempt never loaded the model

    local = study_copy(tmp_path / "local", GPU_STUDY)
    snakemake(local, "results/all.tsv")
    assert (wd / "results" / "all.tsv").read_bytes() == (local / "results" / "all.tsv").read_bytes()
