"""W&B in offline mode (no network, no login): a real scoring job's spooled run, uploaded by the
sync (rule tracking_sync's command), read back with wandb's own reader of the run log
(`wandb leet inspect`)."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.tracking.conftest import SECRET, make_mini_run, score, sync, tracking

pytest.importorskip("wandb")


def inspect(run_dir: Path, *args: str) -> str:
    """wandb's own reader of an offline run's .wandb log."""
    (log,) = run_dir.glob("*.wandb")
    return subprocess.run([sys.executable, "-m", "wandb", "leet", "inspect", "--json", *args, str(log)],
                          capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory):
    """One tracked scoring job, then the sync, for the whole module: (its paths, run dir, records,
    summary, sync log)."""
    tmp = tmp_path_factory.mktemp("wandb")
    run = make_mini_run(tmp)
    env = {"WANDB_MODE": "offline", "WANDB_API_KEY": SECRET, "WANDB_CONFIG_DIR": str(tmp / "wandb-config")}
    proc, _, log = score(run, tracking("wandb"), env)
    assert proc.returncode == 0, log
    assert "tracking" not in log and not (tmp / "tracking" / "wandb").exists()  # a short job only spools
    proc, _, log, report = sync(run, tracking("wandb"), env)
    assert proc.returncode == 0, log
    assert (report["sent"], report["left"], report["already_sent"]) == (1, 0, 0)
    (run_dir,) = (tmp / "tracking" / "wandb").glob("offline-run-*")
    recs = [json.loads(line) for line in inspect(run_dir).splitlines()]
    return run, run_dir, recs, json.loads(inspect(run_dir, "--summary"))["summary"], log


def of(recs, kind):
    return [r[kind] for r in recs if r["type"] == kind]


def test_offline_run_is_named_grouped_and_carries_the_runs_params(offline_run):
    _, _, recs, _, log = offline_run
    (run,) = of(recs, "run")
    assert (run["display_name"], run["job_type"], run["run_group"], run["project"]) == (
        "random/synth/mini/audio/mcq-default", "score", "config-0123456789abcdef", "lalm-bench-test")
    cfg = run["config"]["update"]
    assert (cfg["model"], cfg["task"], cfg["config_hash"], cfg["backend"]) == ("random", "mini", "0123456789abcdef",
                                                                              "random")
    # a clean exit; proto3 leaves out zero fields, so a run shorter than a second has no runtime
    assert [{k: v for k, v in e.items() if k != "runtime"} for e in of(recs, "exit")] in ([{"exit_code": 0}], [{}])
    assert "INFO lalmbench.tracking: tracking (wandb): 1 runs uploaded in" in log


def test_offline_run_history_has_progress_every_log_every_items(offline_run):
    _, _, recs, _, _ = offline_run
    points = [h["item"] for h in of(recs, "history") if "items_done" in h["item"]]
    assert [p["items_done"] for p in points] == [2, 4, 6]
    assert [p["accuracy_so_far"] for p in points] == [1.0, 0.5, 0.5]
    assert [round(p["latency_per_item_s"], 6) for p in points] == [0.15, 0.25, 0.35]


def test_offline_run_summary_equals_metrics_json(offline_run):
    run, _, _, summary, _ = offline_run
    metrics = json.loads(Path(run["metrics"]).read_text())
    assert summary["accuracy"] == summary["value"] == metrics["value"] == 0.5
    assert (summary["n"], summary["n_unparseable"], summary["ci_low"]) == (6, 1, metrics["ci_low"])


def test_offline_run_logs_the_analysis_views_as_tables(offline_run):
    _, run_dir, _, summary, _ = offline_run
    views = ["label_distribution", "accuracy_by_gold_label", "accuracy_by_n_options", "accuracy_by_answer_type",
             "confusion_matrix"]
    assert all(summary[v]["_type"] == "table-file" for v in views)
    cm = json.loads((run_dir / "files" / summary["confusion_matrix"]["path"]).read_text())
    assert cm["columns"] == ["gold_label", "pred_label", "n"]
    assert ["A", "(unparseable)", 1] in cm["data"] and len(cm["data"]) == 12
    assert summary["confusion_matrix_chart_table"]["_type"] == "table-file"  # W&B's confusion-matrix chart
    by_type = json.loads((run_dir / "files" / summary["accuracy_by_answer_type"]["path"]).read_text())
    assert by_type["data"] == [["event", 5, 3, 0.6], ["none", 1, 0, 0.0]]


def test_offline_run_artifact_holds_the_runs_files(offline_run):
    run, _, recs, _, _ = offline_run
    (art,) = [a for a in of(recs, "artifact") if a["type"] == "lalmbench-results"]
    files = {c["path"]: c["local_path"] for c in art["manifest"]["contents"]}
    assert sorted(files) == ["all.tsv", "decisions.parquet", "metrics.json", "predictions.parquet"]
    row = pd.read_csv(files["all.tsv"], sep="\t")  # the run's rows of results/all.tsv, as aggregate writes them
    assert row[["model", "task", "metric", "value", "n", "config_hash"]].values.tolist() == [
        ["random", "mini", "accuracy", 0.5, 6, "0123456789abcdef"]]
    assert pd.read_parquet(files["decisions.parquet"]).equals(pd.read_parquet(run["decisions"]))


def test_api_key_never_reaches_a_written_file(offline_run):
    run, _, _, _, _ = offline_run
    leaks = [p for p in Path(run["dir"]).rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == []
