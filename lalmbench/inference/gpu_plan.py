"""What a cluster run will ask for on GPUs, printed before anything is submitted (`snakemake -n`),
how many GPUs a model entry needs (tensor parallelism, a multi-GPU device map), and which model jobs
no partition of a SLURM profile could ever run (refused before anything is submitted).

One generate job per GPU model, dataset and shard; the partition is chosen the way the SLURM executor plugin chooses
it (its own scorer over the profile's partition file), so the dry run shows what sbatch will get.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Iterable

import yaml

SLURM_EXECUTOR = "slurm"


def is_dry_run(argv: list[str]) -> bool:
    """Snakemake decides the executor (dry-run or not) after it has read the Snakefile, so rules
    cannot ask it; the command line is the only source at parse time."""
    return any(a in ("-n", "--dry-run", "--dryrun") or (a.startswith("-") and not a.startswith("--") and "n" in a[1:]
               and a[1:].isalpha()) for a in argv[1:])


def _device_map_gpus(device_map) -> int | None:
    """GPUs a transformers ``device_map`` mapping places modules on (0 when all on CPU/disk); None
    for a strategy string ("auto", "balanced"...), which spreads over whatever GPUs the job has."""
    if not isinstance(device_map, dict):
        return None
    devices = set()
    for d in device_map.values():
        d = str(d)
        if d.isdigit():
            devices.add(int(d))
        elif d.startswith("cuda"):
            devices.add(int(d.partition(":")[2] or 0))
    return len(devices)


def needed_gpus(entry: dict) -> tuple[int | None, str]:
    """(GPUs the entry's own settings need, which setting says so), or (None, "") when none does."""
    params = entry.get("params") or {}
    if entry.get("backend") == "vllm" and params.get("tensor_parallel_size"):
        return int(params["tensor_parallel_size"]), f"params.tensor_parallel_size: {params['tensor_parallel_size']}"
    if entry.get("backend") == "hf" and (n := _device_map_gpus(params.get("device_map"))):
        return n, f"params.device_map places modules on {n} GPUs"
    return None, ""


def resolve_gpus(models: dict) -> list[str]:
    """Fill each entry's ``resources.gpus`` (default 0, or what tensor_parallel_size / device_map
    need); return the problems where a given ``gpus`` contradicts them."""
    problems = []
    for name, entry in models.items():
        res = entry.setdefault("resources", {})
        need, why = needed_gpus(entry)
        if "gpus" in res and need is not None and res["gpus"] != need:
            problems.append(f"models.{name}.resources.gpus: {res['gpus']}, but {why} "
                            f"(each generate job needs {need}; set gpus: {need} or leave it out)")
        res.setdefault("gpus", need or 0)
    return problems


def gpu_jobs(models: dict, runs: Iterable) -> list[dict]:
    """One row per model that asks for GPUs and has runs: its generate job's request."""
    return [r for r in model_jobs(models, runs) if r["gpus"]]


def model_jobs(models: dict, runs: Iterable) -> list[dict]:
    """One row per model with runs: its generate job's request (CPU models included)."""
    counts: dict[str, int] = {}
    runs_of: dict[str, list] = {}
    for r in runs:
        counts[r.model] = counts.get(r.model, 0) + 1
        runs_of.setdefault(r.model, []).append(r)
    rows = []
    for name in sorted(counts):
        res = models[name].get("resources", {})
        datasets = sorted({r.dataset for r in runs_of[name]})
        rows.append({"model": name, "env": models[name].get("env", "core"), "runs": counts[name],
                     "shards": models[name].get("shards", 1), "jobs": len(datasets) * models[name].get("shards", 1),
                     "datasets": datasets, "gpus": res.get("gpus", 0), "gpu_model": res.get("gpu_model", ""),
                     "cpus_per_gpu": res.get("cpus_per_gpu", 4), "cpus": res.get("cpus", 1),
                     "mem_mb": res.get("mem_mb", 4000), "runtime": res.get("runtime", 60)})
    return rows


def partition_file(profile_dir: str | Path) -> Path | None:
    cfg = Path(profile_dir) / "config.yaml"
    if not cfg.is_file():
        return None
    path = (yaml.safe_load(cfg.read_text()) or {}).get("slurm-partition-config")
    return Path(path) if path and Path(path).is_file() else None


def slurm_profile(argv: list[str], environ: dict, cwd: Path) -> Path | None:
    """The directory of the profile this run uses (``--profile X`` or SNAKEMAKE_PROFILE) when that profile runs
    the SLURM executor; None otherwise. Snakemake reads profiles before the Snakefile and tells it nothing
    about them, so the command line is the only source here, as for ``is_dry_run``."""
    name = environ.get("SNAKEMAKE_PROFILE")
    for i, a in enumerate(argv[1:], 1):
        if a == "--profile" and i + 1 < len(argv):
            name = argv[i + 1]
        elif a.startswith("--profile="):
            name = a.split("=", 1)[1]
    if not name:
        return None
    for d in (cwd / name, Path.home() / ".config" / "snakemake" / name, Path("/etc/xdg/snakemake") / name):
        cfg = d / "config.yaml"
        if cfg.is_file():
            settings = yaml.safe_load(cfg.read_text()) or {}
            return d if settings.get("executor") == SLURM_EXECUTOR else None
    return None


def _cpus(row: dict) -> int:
    return row["gpus"] * row["cpus_per_gpu"] if row["gpus"] else row["cpus"]


def _request(row: dict) -> str:
    if row["gpus"]:
        gpus = f"{row['gpu_model']}:{row['gpus']}" if row["gpu_model"] else str(row["gpus"])
        cpus = f"--gpus={gpus} --cpus-per-gpu={row['cpus_per_gpu']}"
    else:
        cpus = f"--cpus-per-task={row['cpus']}"
    return f"{cpus} --mem={row['mem_mb']}MB -t {row['runtime']}min"


def why_not(row: dict, limits) -> list[str]:
    """The limits of one partition (the plugin's PartitionLimits) that a model job's request exceeds."""
    cpus, gpus = _cpus(row), row["gpus"]
    checks = [
        (gpus > limits.max_gpu, f"{gpus} GPUs > max_gpu {limits.max_gpu}"),
        (bool(gpus and row["gpu_model"] and limits.available_gpu_models
              and row["gpu_model"] not in limits.available_gpu_models),
         f"gpu_model {row['gpu_model']} not in available_gpu_models {limits.available_gpu_models}"),
        (cpus > limits.max_threads, f"{cpus} CPUs > max_threads {limits.max_threads:g}"),
        (not gpus and cpus > limits.max_cpus_per_task, f"{cpus} CPUs > max_cpus_per_task {limits.max_cpus_per_task:g}"),
        (bool(gpus) and row["cpus_per_gpu"] > limits.max_cpus_per_gpu,
         f"{row['cpus_per_gpu']} CPUs per GPU > max_cpus_per_gpu {limits.max_cpus_per_gpu:g}"),
        (row["mem_mb"] > limits.max_mem_mb, f"{row['mem_mb']} MB > max_mem_mb {limits.max_mem_mb:g}"),
        (row["runtime"] > limits.max_runtime, f"{row['runtime']} min > max_runtime {limits.max_runtime:g}"),
    ]
    return [why for bad, why in checks if bad]


def unfit_jobs(rows: list[dict], partitions_yaml: Path) -> list[str]:
    """One line per model job that no partition of the file could run: the job, its request and, per
    partition, the limits it exceeds. Such a job would pend forever (Reason=PartitionConfig)."""
    try:
        from snakemake_executor_plugin_slurm.partitions import read_partition_file
    except ImportError:
        return []
    partitions = read_partition_file(partitions_yaml)
    problems = []
    for row in rows:
        if choose_partition(row, partitions_yaml) not in {p.name for p in partitions}:
            limits = "; ".join(f"{p.name}: {', '.join(why_not(row, p.limits)) or 'does not fit'}" for p in partitions)
            problems.append(f"models.{row['model']}: its generate job (runs-{row['model']}-<dataset>, "
                            f"{row['jobs']} job(s)) asks {_request(row)}, which no partition of {partitions_yaml} "
                            f"allows ({limits})")
    return problems


def choose_partition(row: dict, partitions_yaml: Path | None) -> str:
    """The partition the SLURM plugin would pick for this job, or why none is known."""
    if partitions_yaml is None:
        return "cluster default (no partition file)"
    try:
        from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file
    except ImportError:
        return "? (snakemake-executor-plugin-slurm not installed)"
    resources = {"gpu": row["gpus"], "gpu_model": row["gpu_model"] or None, "mem_mb": row["mem_mb"],
                 "runtime": row["runtime"], "cpus_per_gpu": row["cpus_per_gpu"]}
    if not row["gpus"]:
        resources = {"mem_mb": row["mem_mb"], "runtime": row["runtime"]}
    job = SimpleNamespace(name=f"generate ({row['model']})", resources=resources, threads=_cpus(row),
                          is_group=lambda: False)
    quiet = SimpleNamespace(info=lambda *a, **k: None, debug=lambda *a, **k: None, warning=lambda *a, **k: None)
    return get_best_partition(read_partition_file(partitions_yaml), job, quiet) or "NONE FITS (check the file)"


def format_gpu_plan(rows: list[dict], partitions_yaml: Path | None) -> str:
    if not rows:
        return "GPU jobs: none (no model asks for gpus)"
    lines = [f"GPU jobs (one per model, dataset and shard, submitted only when it has predictions due; "
             f"partitions from {partitions_yaml or 'the cluster default'}):"]
    for r in rows:
        gpus = f"{r['gpu_model']}:{r['gpus']}" if r["gpu_model"] else str(r["gpus"])
        lines.append(f"  {r['model']:<28} --gpus={gpus} --cpus-per-gpu={r['cpus_per_gpu']} --mem={r['mem_mb']}MB "
                     f"-t {r['runtime']}min  partition={choose_partition(r, partitions_yaml)}  "
                     f"env={r['env']}  runs={r['runs']}  jobs={r['jobs']}"
                     + (f" ({r['shards']} shards per dataset)" if r["shards"] > 1 else ""))
    return "\n".join(lines)
