"""A tracking failure never fails a job nor the sync, nor holds either past tracking.timeout_s: it
leaves a warning in the log, the job's files are the same as without tracking, and the runs not
uploaded stay in the spool for the next sync."""
import json

import pandas as pd
import pytest

from lalmbench.tracking.server import free_port as closed_port  # free: nothing listens there
from tests.tracking.conftest import ROOT, score, sync, tracking


def test_off_by_default_runs_no_tracking(mini_run):
    proc, _, log = score(mini_run, {})
    assert proc.returncode == 0, log
    assert "tracking" not in log and not (mini_run["dir"] / "tracking").exists()


def test_server_down_costs_at_most_the_timeout_and_leaves_complete_results(mini_run):
    pytest.importorskip("mlflow")
    base, base_s, _ = score(mini_run, {})
    assert base.returncode == 0
    plain = (pd.read_parquet(mini_run["decisions"]), json.loads(mini_run["metrics"].read_text()))
    timeout_s = 4
    down = tracking("mlflow", tracking_uri=f"http://127.0.0.1:{closed_port()}", timeout_s=timeout_s)
    proc, wall_s, log = score(mini_run, down)
    assert proc.returncode == 0, log
    assert wall_s < base_s + 2, (wall_s, base_s, log)  # the job itself only spools
    assert pd.read_parquet(mini_run["decisions"]).equals(plain[0])
    assert json.loads(mini_run["metrics"].read_text()) == plain[1]
    proc, wall_s, log, report = sync(mini_run, down)
    assert proc.returncode == 0, log
    assert wall_s < timeout_s + 15, (wall_s, log)  # the client's start, then at most the timeout
    # either the client gave up first (connection refused, logged by the worker) or the sync stopped it
    assert ("tracking (mlflow) failed, nothing more is tracked for this job" in log
            or f"tracking (mlflow): still busy after {timeout_s} s (tracking.timeout_s), stopped" in log), log
    assert "WARNING lalmbench.tracking: tracking (mlflow): 1 of 1 spooled runs are not uploaded (reason above)" in log
    assert (report["sent"], report["left"]) == (0, 1)
    assert list((mini_run["dir"] / "tracking" / "spool").rglob("sent.json")) == []


def test_missing_client_package_is_a_warning_naming_what_to_install(mini_run, tmp_path):
    # a `wandb` that cannot be imported, first on the path (as in an env built without it)
    (tmp_path / "shadow" / "wandb").mkdir(parents=True)
    (tmp_path / "shadow" / "wandb" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'wandb'\")\n")
    proc, _, log = score(mini_run, tracking("wandb"), {"PYTHONPATH": str(tmp_path / "shadow")})
    assert proc.returncode == 0, log
    proc, _, log, _ = sync(mini_run, tracking("wandb"), {"PYTHONPATH": f"{tmp_path / 'shadow'}:{ROOT}"})
    assert proc.returncode == 0, log
    assert ("WARNING lalmbench.tracking: tracking (wandb) failed, nothing more is tracked for this job: "
            "ModuleNotFoundError: No module named 'wandb' (install wandb in this job's env") in log
    assert "tracking (wandb): the tracking process failed (exit 1" in log
    assert json.loads(mini_run["metrics"].read_text())["value"] == 0.5


def test_config_without_tracking_is_off_and_mlflow_needs_a_uri(tmp_path):
    from lalmbench.workflow.config import ConfigError, validate_config

    def cfg(**tracking):
        c = {"datasets": {"d": {"adapter": "synth_trivial"}},
             "tasks": {"t": {"dataset": "d", "family": "pitch_order"}}, "models": {"m": {"backend": "random"}}}
        return {**c, "tracking": tracking} if tracking else c

    assert validate_config(cfg(), ROOT / "config" / "schema.yaml", ROOT)["tracking"]["backend"] == "none"
    with pytest.raises(ConfigError, match=r"tracking: 'tracking_uri' is a required property"):
        validate_config(cfg(backend="mlflow"), ROOT / "config" / "schema.yaml", ROOT)
    with pytest.raises(ConfigError, match=r"tracking: Additional properties are not allowed \('api_key' was unexpected\)"):
        validate_config(cfg(backend="wandb", api_key="x"), ROOT / "config" / "schema.yaml", ROOT)
