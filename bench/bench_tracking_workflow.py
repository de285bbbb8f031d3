"""What experiment tracking costs the default run (rule all, embedded config): the workflow copied
to a fresh folder and run untracked, with W&B offline, and with MLflow against a local server.

Usage: python bench/bench_tracking_workflow.py [--repeats 1] [--cores 2] [--settings off,wandb,mlflow] [--out DIR]

Per run: wall seconds, CPU seconds of Snakemake and every job (user + system, children included;
the MLflow server's own CPU is not), the load average at the start, the tracking log lines of
each job, the sync's report and the bytes under results/tracking. Settings interleave (off,
wandb, mlflow, off, ...) so that a change in the machine's load hits them alike.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from lalmbench.tracking.server import local_server  # noqa: E402
from tests.workflow import copy_workflow  # noqa: E402

MLFLOW = ROOT / ".venvs" / "mlflow-server" / "bin" / "mlflow"


def run_once(wd: Path, config: list[str], env: dict, cores: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), *config], cwd=wd,
                          env={**os.environ, "PYTHONPATH": str(wd), **env}, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"snakemake failed in {wd}:\n{proc.stderr[-3000:]}")
    track = wd / "results" / "tracking"
    return {"wall_s": round(wall, 1), "cpu_s": round((after.ru_utime - before.ru_utime)
                                                      + (after.ru_stime - before.ru_stime), 1),
            "load_start": round(load, 2), "load_end": round(os.getloadavg()[0], 2),
            "jobs": proc.stderr.count("\nrule ") + proc.stderr.count("\nlocalrule "),
            "tracking_bytes": sum(f.stat().st_size for f in track.rglob("*") if f.is_file()) if track.exists() else 0,
            "spool_bytes": sum(f.stat().st_size for f in (track / "spool").rglob("*") if f.is_file())
            if (track / "spool").exists() else 0,
            "sync": json.loads((track / "sync.json").read_text()) if (track / "sync.json").exists() else None}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--out", type=Path, help="where the workflow copies go (default: a new temporary folder)")
    p.add_argument("--settings", default="off,wandb,mlflow")
    a = p.parse_args()
    a.out = a.out or Path(tempfile.mkdtemp(prefix="lalmbench-bench-tracking-"))
    a.out.mkdir(parents=True, exist_ok=True)
    server = local_server(MLFLOW, a.out / "mlflow-server") if "mlflow" in a.settings else nullcontext(None)
    with server as uri:
        settings = {"off": ([], {}),
                    "wandb": (["--config", "tracking={backend: wandb}"],
                              {"WANDB_MODE": "offline", "WANDB_CONFIG_DIR": str(a.out / "wandb-config")}),
                    "mlflow": (["--config", f"tracking={{backend: mlflow, tracking_uri: '{uri}'}}"], {})}
        for k in range(a.repeats):
            for name in a.settings.split(","):
                wd = copy_workflow(a.out / f"{name}-{k}")
                res = {"setting": name, "repeat": k, **run_once(wd, *settings[name], a.cores)}
                print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
