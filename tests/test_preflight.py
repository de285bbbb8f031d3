"""Before anything is submitted: the GPU summary a dry run prints, and config checks that keep doomed jobs off the queue."""
from pathlib import Path

import pytest
import yaml

from lalmbench.workflow.config import ConfigError, Run, validate_config
from lalmbench.inference.gpu_plan import format_gpu_plan, gpu_jobs, is_dry_run, partition_file
from tests.workflow import copy_workflow

ROOT = Path(__file__).resolve().parents[1]
PARTITIONS = ROOT / "tests" / "data" / "slurm" / "partitions.yaml"
MODELS = {"cpu": {"backend": "random"},
          "big": {"backend": "hf", "env": "hf", "resources": {"gpus": 2, "gpu_model": "h100", "cpus_per_gpu": 8,
                                                              "mem_mb": 200000, "runtime": 1440}},
          "huge": {"backend": "hf", "env": "hf", "resources": {"gpus": 1, "mem_mb": 900000, "runtime": 60}}}
RUNS = [Run(m, "d", t, "audio", "p") for m in MODELS for t in ("t1", "t2", "t3")]


@pytest.mark.parametrize("argv, dry", [(["snakemake", "-n"], True), (["snakemake", "--dry-run", "x"], True),
                                       (["snakemake", "-pn"], True), (["snakemake", "--profile", "slurm"], False),
                                       (["snakemake", "-p", "--config", "n=1"], False)])
def test_is_dry_run(argv, dry):
    assert is_dry_run(argv) is dry


def test_one_line_per_gpu_model_with_the_partition_the_plugin_picks():
    rows = gpu_jobs(MODELS, RUNS)
    assert [r["model"] for r in rows] == ["big", "huge"] and rows[0]["runs"] == 3
    text = format_gpu_plan(rows, PARTITIONS)
    big = next(line for line in text.splitlines() if "big" in line)
    assert "--gpus=h100:2 --cpus-per-gpu=8 --mem=200000MB -t 1440min  partition=gpu  env=hf  runs=3" in big
    assert "partition=NONE FITS" in next(line for line in text.splitlines() if "huge" in line)


def test_the_shipped_profile_names_its_partition_file(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert partition_file(ROOT / "profiles" / "slurm") == Path("profiles/slurm/partitions.yaml")
    assert "gpu" in yaml.safe_load((ROOT / "profiles" / "slurm" / "partitions.yaml").read_text())["partitions"]


def _cfg(**model):
    return {"datasets": {"d": {"adapter": "synth_trivial"}},
            "tasks": {"t": {"dataset": "d", "family": "pitch_order"}}, "models": {"m": model}}


def test_missing_local_checkpoint_fails_before_submission(tmp_path):
    with pytest.raises(ConfigError, match=r"models.m.model_id: local checkpoint directory '/nope/qwen' does not exist "
                                          r"\(download it with `hf download <hub id> --local-dir /nope/qwen`"):
        validate_config(_cfg(backend="hf", model_id="/nope/qwen"), ROOT / "config" / "schema.yaml", ROOT)
    ok = _cfg(backend="hf", model_id=str(tmp_path))
    assert validate_config(ok, ROOT / "config" / "schema.yaml", ROOT)["models"]["m"]["env"] == "core"


def test_unknown_backend_is_a_config_error():
    with pytest.raises(ConfigError, match=r"models.m.backend: unknown backend 'hff'"):
        validate_config(_cfg(backend="hff"), ROOT / "config" / "schema.yaml", ROOT)


@pytest.mark.parametrize("kind", ["datasets", "tasks", "models"])
@pytest.mark.parametrize("bad", ["..", ".", "a b", "x;rm", "-lead"])
def test_names_that_would_escape_or_break_paths_are_rejected(kind, bad):
    cfg = _cfg(backend="random")
    cfg[kind] = {bad: cfg[kind].pop(next(iter(cfg[kind])))}
    with pytest.raises(ConfigError, match=rf"{kind}: '{__import__('re').escape(bad)}' does not match"):
        validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)


def test_config_errors_name_the_files_actually_used(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "mine.yaml"
    bad.write_text(yaml.safe_dump(_cfg(backend="randm")))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", f"--configfile={bad}"],
                          cwd=copy_workflow(tmp_path / "wf"), capture_output=True, text=True)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert f"invalid config ({bad} + --config overrides):" in out
    assert "models.m.backend: unknown backend 'randm'" in out


def test_the_slurm_profile_is_found_from_the_command_line_or_the_environment(tmp_path):
    from lalmbench.inference.gpu_plan import slurm_profile

    for name, executor in (("cluster", "slurm"), ("local", "local")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(f"executor: {executor}\n")
    assert slurm_profile(["snakemake", "--profile", "cluster", "-n"], {}, tmp_path) == tmp_path / "cluster"
    assert slurm_profile(["snakemake", "--profile=cluster"], {}, tmp_path) == tmp_path / "cluster"
    assert slurm_profile(["snakemake"], {"SNAKEMAKE_PROFILE": "cluster"}, tmp_path) == tmp_path / "cluster"
    # a profile that runs jobs locally, no profile, or one that is not there: no cluster limits apply
    assert slurm_profile(["snakemake", "--profile", "local"], {}, tmp_path) is None
    assert slurm_profile(["snakemake", "--cores", "2"], {}, tmp_path) is None
    assert slurm_profile(["snakemake", "--profile", "nowhere"], {}, tmp_path) is None


def test_the_test_clusters_partitions_carry_the_profiles_limits(tmp_path):
    from tests.slurm.slurm_conf import render

    partitions = yaml.safe_load((ROOT / "profiles" / "slurm" / "partitions.yaml").read_text())["partitions"]
    conf, gres = render(partitions, tmp_path, "host", "me", (6817, 6818), cpus=2)
    lines = {line.split()[0]: line for line in conf.splitlines() if line.startswith(("PartitionName=", "NodeName="))}
    assert lines["PartitionName=cpu"].split()[2:5] == ["MaxTime=1440", "MaxMemPerNode=256000", "MaxCPUsPerNode=64"]
    assert lines["PartitionName=gpu"].split()[2:5] == ["MaxTime=2880", "MaxMemPerNode=512000", "MaxCPUsPerNode=64"]
    assert "CPUs=2 RealMemory=512000 Gres=gpu:a100:4" in lines["NodeName=lalm-node"]
    assert gres == f"NodeName=lalm-node Name=gpu Type=a100 File={tmp_path}/dev/gpu[0-3]\n"


@pytest.mark.parametrize("task_plugin", ["task/affinity", "task/none"])
def test_the_test_clusters_cpu_binding_is_a_parameter(tmp_path, task_plugin):
    from tests.slurm.slurm_conf import render

    partitions = yaml.safe_load((ROOT / "profiles" / "slurm" / "partitions.yaml").read_text())["partitions"]
    conf, _ = render(partitions, tmp_path, "host", "me", (6817, 6818), cpus=2, task_plugin=task_plugin)
    assert [line for line in conf.splitlines() if line.startswith("TaskPlugin=")] == [f"TaskPlugin={task_plugin}"]
    with pytest.raises(ValueError, match="task/cgroup"):
        render(partitions, tmp_path, "host", "me", (6817, 6818), cpus=2, task_plugin="task/cgroup")
