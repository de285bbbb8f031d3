"""A job spools its run and imports no tracking client; a job still running after live_after_s goes
live in its own worker (the run exists while the job runs), and the sync then skips it."""
import json
import os
import subprocess
import sys
import time

import pytest

from lalmbench.tracking import open_tracker
from lalmbench.tracking.spool import read_spool, spool_dir
from tests.tracking.conftest import ROOT, sync, tracking


def test_spool_folder_is_named_by_job_type_and_run_name():
    s = {"dir": "results/tracking"}
    assert str(spool_dir(s, "generate", "generate/qwen2-audio")) == "results/tracking/spool/generate/qwen2-audio"
    assert str(spool_dir(s, "score", "m/d/t/audio/mcq-default")) == "results/tracking/spool/score/m/d/t/audio/mcq-default"


def test_a_short_job_writes_its_spool_and_imports_no_client(tmp_path):
    job = f"""
import json, sys
from lalmbench.tracking import open_tracker
with open_tracker(json.loads({json.dumps(json.dumps(tracking("mlflow", tracking_uri="http://127.0.0.1:9")))}),
                  name="generate/m", job_type="generate", params={{"model": "m"}}) as t:
    t.progress(2, {{"items_done": 2}})
    t.summary({{"generated": 2}})
print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"mlflow", "wandb"}}))
"""
    out = subprocess.run([sys.executable, "-c", job], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (out.returncode, out.stdout, out.stderr) == (0, "[]\n", "")  # no client imported, nothing logged
    msgs = read_spool(tmp_path / "tracking" / "spool" / "generate" / "m")
    assert [m["op"] for m in msgs] == ["start", "progress", "summary", "finish"]
    assert msgs[0]["args"]["run"]["name"] == "generate/m" and msgs[-1]["args"] == {"status": "finished"}
    assert not (tmp_path / "tracking" / "spool" / "generate" / "m" / "sent.json").exists()


def test_a_job_killed_mid_line_is_uploaded_as_a_failed_run(tmp_path):
    (tmp_path / "messages.jsonl").write_text('{"op": "start", "args": {"run": {}}}\n{"op": "progress", "args": {"st')
    assert read_spool(tmp_path) == [{"op": "start", "args": {"run": {}}}, {"op": "finish", "args": {"status": "failed"}}]


def test_a_long_job_goes_live_and_the_sync_skips_it(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    from tests.tracking.test_tracking_wandb import inspect

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "wandb-config"))
    settings = tracking("wandb", live_after_s=0.5)
    t = open_tracker(settings, name="generate/slow", job_type="generate", params={"model": "slow"})
    t.progress(2, {"items_done": 2, "fraction": 0.5})
    deadline = time.monotonic() + 120
    while not list((tmp_path / "tracking" / "wandb").glob("offline-run-*/*.wandb")):  # live while the job runs
        assert time.monotonic() < deadline, "the long job's run never went live"
        time.sleep(0.2)
    t.progress(4, {"items_done": 4, "fraction": 1.0})
    t.close()
    sent = tmp_path / "tracking" / "spool" / "generate" / "slow" / "sent.json"
    assert json.loads(sent.read_text()) == {"backend": "wandb", "project": "lalm-bench-test", "status": "finished"}
    proc, _, log, report = sync({"dir": tmp_path}, settings)
    assert proc.returncode == 0, log
    assert (report["sent"], report["already_sent"]) == (0, 1)
    assert "tracking (wandb): nothing to upload (1 runs already sent live)" in log
    (run_dir,) = (tmp_path / "tracking" / "wandb").glob("offline-run-*")  # one run, not a second from the sync
    points = [json.loads(line)["history"]["item"] for line in inspect(run_dir).splitlines()
              if json.loads(line)["type"] == "history"]
    assert [p["items_done"] for p in points] == [2, 4]
