"""What experiment tracking costs one scoring job: the real entry point (scripts/score.py, as rule
score runs it) untracked, with W&B offline, and with MLflow against a local server; then the
upload of its spooled run by the sync (rule tracking_sync's command) for that one run.

Usage: python bench/bench_tracking.py [--n 500] [--repeats 3]

Each setting runs ``--repeats`` times on the same ``--n`` 4-option items (random answers with
latencies). Printed per setting: median wall and CPU seconds of the job (its children included),
the same of a sync of that one run (the client's start included: a workflow's sync pays it once
for all its runs; the MLflow server's own CPU is not counted), and the bytes left under the
tracking folder (spool and W&B's run files). The MLflow setting needs ``.venvs/mlflow-server``
(``make .venvs/mlflow-server/.ready``) and is skipped without it.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.record import record  # noqa: E402
from lalmbench.core import io  # noqa: E402
from lalmbench.tracking import job_settings  # noqa: E402
from lalmbench.tracking.server import local_server  # noqa: E402

MLFLOW = ROOT / ".venvs" / "mlflow-server" / "bin" / "mlflow"


def write_run(folder: Path, n: int) -> None:
    rng = np.random.default_rng(0)
    labels = "ABCD"
    io.write_jsonl(folder / "items.jsonl", [
        {"id": f"i{i}", "question": "Which sound comes first?", "answer_label": labels[i % 4],
         "options": [{"label": lab, "text": f"sound {lab}", "type": "event", "meta": {}} for lab in labels],
         "meta": {}} for i in range(n)])
    io.write_parquet(folder / "predictions.parquet", pd.DataFrame({
        "id": [f"i{i}" for i in range(n)], "raw_output": rng.choice(list(labels), n).tolist(), "error": None,
        "latency_s": rng.uniform(0.05, 0.5, n), "model_id": "random", "backend": "random"}))


def score_cmd(settings: dict) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "score.py"), "--items", "items.jsonl", "--predictions",
            "predictions.parquet", "--config-hash", "bench", "--run", "random", "bench", "t", "audio", "mcq-default",
            "--decisions", "out/decisions.parquet", "--metrics", "out/metrics.json",
            "--tracking-json", json.dumps(settings)]


def sync_cmd(settings: dict) -> list[str]:
    return [sys.executable, "-m", "lalmbench.tracking.sync", "--tracking-json", json.dumps(settings),
            "--report", "sync.json"]


def timed(folder: Path, cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall s, CPU s of the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, cwd=folder, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=500)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    base = {"project": "lalm-bench-bench", "dir": "tracking", "log_every": 50, "timeout_s": 60, "artifacts": True}
    with tempfile.TemporaryDirectory(prefix="bench-tracking-") as tmp:
        tmp = Path(tmp)
        server = local_server(MLFLOW, tmp / "mlflow") if MLFLOW.exists() else nullcontext(None)
        with server as uri:
            settings = [("off", {}, {}),
                        ("wandb offline", job_settings({**base, "backend": "wandb"}, "bench"),
                         {"WANDB_MODE": "offline", "WANDB_CONFIG_DIR": str(tmp / "wandb-config")})]
            if uri:
                settings.append(("mlflow (local server)", job_settings({**base, "backend": "mlflow",
                                                                       "tracking_uri": uri}, "bench"), {}))
            else:
                print(f"mlflow: skipped ({MLFLOW} missing: make .venvs/mlflow-server/.ready)")
            print(f"{a.n} items per scoring job, median of {a.repeats}")
            for name, s, env in settings:
                walls, cpus, sync_walls, sync_cpus, disks = [], [], [], [], []
                for k in range(a.repeats):
                    folder = tmp / f"{name.split()[0]}-{k}"
                    folder.mkdir()
                    write_run(folder, a.n)
                    wall, cpu = timed(folder, score_cmd(s), env)
                    walls.append(wall)
                    cpus.append(cpu)
                    if s:
                        wall, cpu = timed(folder, sync_cmd(s), env)
                        sync_walls.append(wall)
                        sync_cpus.append(cpu)
                    disks.append(sum(f.stat().st_size for f in (folder / "tracking").rglob("*") if f.is_file())
                                 if (folder / "tracking").exists() else 0)
                sync = (f"   sync of its run: wall {statistics.median(sync_walls):5.2f} s, CPU "
                        f"{statistics.median(sync_cpus):5.2f} s" if sync_walls else "")
                print(f"  {name:22s} job: wall {statistics.median(walls):6.2f} s, CPU {statistics.median(cpus):5.2f} s"
                      f"{sync}   tracking folder {statistics.median(disks) / 1024:6.0f} KB")
                label = name.split(" (")[0]
                record("tracking", f"scoring job, {a.n} items, {label} (CPU s)", statistics.median(cpus), "s")
                if sync_cpus:
                    record("tracking", f"sync of that run, {label} (CPU s, client start included)",
                           statistics.median(sync_cpus), "s")


if __name__ == "__main__":
    main()
