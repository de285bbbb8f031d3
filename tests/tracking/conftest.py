"""A six-item MCQ run (items + predictions) and the real scoring entry point, tracked or not."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from lalmbench.core import io
from lalmbench.tracking import job_settings

ROOT = Path(__file__).resolve().parents[2]
RUN = ["random", "synth", "mini", "audio", "mcq-default"]
SECRET = "wb-secret-4f1d2c3b5a6e7f8091a2b3c4d5e6f708192a3b4c"  # 40+ chars, like a real key

# id, labels, gold, output; item 6's gold option has type "none" (every other gold is an "event")
ITEMS = [("i1", "AB", "A", "A"), ("i2", "AB", "B", "B"), ("i3", "AB", "B", "A"), ("i4", "AB", "A", "no idea"),
         ("i5", "ABC", "C", "(C)"), ("i6", "ABC", "A", "B")]


def make_mini_run(tmp_path: Path) -> dict:
    """Write the run's items and predictions under tmp_path; the paths a scoring job uses."""
    items = [{"id": i, "task": "mini", "question": "Which?", "answer_label": gold,
              "options": [{"label": lab, "text": f"sound {lab.lower()}", "meta": {},
                           "type": "none" if i == "i6" and lab == gold else "event"} for lab in labels],
              "meta": {}} for i, labels, gold, _ in ITEMS]
    io.write_jsonl(tmp_path / "items.jsonl", items)
    preds = pd.DataFrame({"id": [x[0] for x in ITEMS], "raw_output": [x[3] for x in ITEMS], "error": [None] * 6,
                          "latency_s": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "model_id": "random", "model_revision": "",
                          "backend": "random", "seed": 0, "batch_size": 6})
    io.write_parquet(tmp_path / "predictions.parquet", preds)
    return {"dir": tmp_path, "items": tmp_path / "items.jsonl", "predictions": tmp_path / "predictions.parquet",
            "decisions": tmp_path / "out" / "decisions.parquet", "metrics": tmp_path / "out" / "metrics.json",
            "log": tmp_path / "score.log"}


@pytest.fixture
def mini_run(tmp_path) -> dict:
    return make_mini_run(tmp_path)


def score(run: dict, tracking: dict | None, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float, str]:
    """scripts/score.py as rule score calls it (output to the job log); (process, wall seconds, log text)."""
    cmd = [sys.executable, str(ROOT / "scripts" / "score.py"), "--items", str(run["items"]),
           "--predictions", str(run["predictions"]), "--config-hash", "0123456789abcdef", "--run", *RUN,
           "--decisions", str(run["decisions"]), "--metrics", str(run["metrics"]),
           "--tracking-json", json.dumps(tracking or {})]
    t0 = time.monotonic()
    with open(run["log"], "w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=run["dir"], timeout=300,
                              env={**os.environ, **(env or {})})
    return proc, time.monotonic() - t0, Path(run["log"]).read_text()


def sync(run: dict, tracking: dict, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float, str, dict]:
    """Rule tracking_sync's command in the run's folder: (process, wall seconds, log text, report)."""
    report, log = run["dir"] / "sync.json", run["dir"] / "sync.log"
    cmd = [sys.executable, "-m", "lalmbench.tracking.sync", "--tracking-json", json.dumps(tracking),
           "--report", str(report)]
    t0 = time.monotonic()
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=run["dir"], timeout=300,
                              env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    wall = time.monotonic() - t0
    return proc, wall, log.read_text(), json.loads(report.read_text()) if report.exists() else {}


def tracking(backend: str, **kw) -> dict:
    """Job settings as rules/common.smk passes them: the schema's defaults with these overrides, and a group."""
    props = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())["properties"]["tracking"]["properties"]
    defaults = {k: v["default"] for k, v in props.items() if "default" in v}
    return job_settings({**defaults, "backend": backend, "project": "lalm-bench-test", "dir": "tracking",
                         "log_every": 2, **kw}, "config-0123456789abcdef")
