"""What a cluster run will ask for on GPUs, printed before anything is submitted (`snakemake -n`),
and how many GPUs a model entry needs (tensor parallelism, a multi-GPU device map).

One generate job per GPU model, dataset and shard; the partition is chosen the way the SLURM executor plugin chooses
it (its own scorer over the profile's partition file), so the dry run shows what sbatch will get.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Iterable

import yaml


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
    counts: dict[str, int] = {}
    runs_of: dict[str, list] = {}
    for r in runs:
        counts[r.model] = counts.get(r.model, 0) + 1
        runs_of.setdefault(r.model, []).append(r)
    rows = []
    for name in sorted(counts):
        res = models[name].get("resources", {})
        if res.get("gpus", 0):
            datasets = len({r.dataset for r in runs_of[name]})
            rows.append({"model": name, "env": models[name].get("env", "core"), "runs": counts[name],
                         "shards": models[name].get("shards", 1), "jobs": datasets * models[name].get("shards", 1),
                         "gpus": res["gpus"], "gpu_model": res.get("gpu_model", ""),
                         "cpus_per_gpu": res.get("cpus_per_gpu", 4), "mem_mb": res.get("mem_mb", 4000),
                         "runtime": res.get("runtime", 60)})
    return rows


def partition_file(profile_dir: str | Path) -> Path | None:
    cfg = Path(profile_dir) / "config.yaml"
    if not cfg.is_file():
        return None
    path = (yaml.safe_load(cfg.read_text()) or {}).get("slurm-partition-config")
    return Path(path) if path and Path(path).is_file() else None


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
    job = SimpleNamespace(name=f"generate ({row['model']})", resources=resources,
                          threads=row["gpus"] * row["cpus_per_gpu"], is_group=lambda: False)
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
