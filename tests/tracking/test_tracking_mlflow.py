"""MLflow for real: a local `mlflow server` (SQLite backend, artifact root in the test's folder), the
tiny workflow run with tracking on (its jobs spool, rule tracking_sync uploads), then the server
queried with MlflowClient."""
import json
import os
import shutil
import time

import pandas as pd
import pytest
import yaml

from lalmbench.tracking.server import local_server
from tests.tracking.conftest import ROOT, SECRET
from tests.workflow import copy_workflow, snakemake

MLFLOW = ROOT / ".venvs" / "mlflow-server" / "bin" / "mlflow"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(URI, folder) of a tracking server on 127.0.0.1 that lives for this module."""
    pytest.importorskip("mlflow")
    if not MLFLOW.exists():
        pytest.skip("needs the mlflow-server env: make .venvs/mlflow-server/.ready")
    folder = tmp_path_factory.mktemp("mlflow-server")
    with local_server(MLFLOW, folder) as uri:
        yield uri, folder


@pytest.fixture(scope="module")
def tracked(server, tmp_path_factory):
    """The tiny workflow run with tracking on: (workflow dir, all.tsv, MlflowClient, experiment runs)."""
    from mlflow.tracking import MlflowClient

    uri, _ = server
    wd = copy_workflow(tmp_path_factory.mktemp("wf"))
    (wd / "track.yaml").write_text(yaml.safe_dump({"tracking": {
        "backend": "mlflow", "tracking_uri": uri, "project": "lalm-bench-tiny", "log_every": 40, "timeout_s": 60,
        "live_after_s": 600}}))  # every tiny job spools, however loaded the machine (tests/tracking/test_tracking_spool.py: live)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_TOKEN", SECRET)  # sent to the server; must never be written down
        snakemake(wd, "results/all.tsv", "results/tracking/sync.json", "--configfile", ".test/config.yaml", "track.yaml")
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("lalm-bench-tiny")
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    return wd, pd.read_csv(wd / "results" / "all.tsv", sep="\t"), client, runs


def test_the_tiny_jobs_only_spool_and_the_sync_uploads_them_all(tracked):
    wd, table, _, _ = tracked
    report = json.loads((wd / "results" / "tracking" / "sync.json").read_text())
    assert (report["sent"], report["left"], report["already_sent"]) == (len(table) + 4, 0, 0)
    assert "tracking" not in (wd / "results" / "logs" / "generate" / "random" / "synth-trivial.log").read_text()


def test_one_finished_run_per_generate_and_score_job_in_one_group(tracked):
    _, table, _, runs = tracked
    kinds = pd.Series([r.data.tags["lalmbench.job_type"] for r in runs]).value_counts().to_dict()
    assert kinds == {"score": len(table), "generate": 4}  # 15 scored runs; random and text-prior x 2 datasets
    assert {r.info.status for r in runs} == {"FINISHED"}
    groups = {r.data.tags["lalmbench.group"] for r in runs}
    assert len(groups) == 1 and groups.pop().startswith("config-")


def test_score_runs_carry_the_all_tsv_values_and_params(tracked):
    _, table, _, runs = tracked
    by_name = {r.info.run_name: r for r in runs}
    for row in table.itertuples():
        r = by_name[f"{row.model}/{row.dataset}/{row.task}/{row.condition}/{row.prompt}"]
        assert r.data.metrics["accuracy"] == pytest.approx(row.value, abs=1e-6)
        assert r.data.metrics["n"] == row.n
        assert (r.data.params["model"], r.data.params["task"], r.data.params["config_hash"]) == (
            row.model, row.task, row.config_hash)


def test_score_run_artifacts_are_the_runs_files_and_views(tracked, tmp_path):
    wd, _, client, runs = tracked
    r = next(r for r in runs if r.info.run_name == "random/synth-trivial/pitch-order/audio/mcq-default")
    files = sorted(a.path for a in client.list_artifacts(r.info.run_id, "files"))
    assert files == ["files/all.tsv", "files/decisions.parquet", "files/metrics.json", "files/predictions.parquet"]
    tables = sorted(a.path for a in client.list_artifacts(r.info.run_id, "tables"))
    assert tables == ["tables/accuracy_by_answer_type.json", "tables/accuracy_by_gold_label.json",
                      "tables/accuracy_by_n_options.json", "tables/confusion_matrix.json",
                      "tables/confusion_matrix.png", "tables/label_distribution.json"]
    got = client.download_artifacts(r.info.run_id, "files/metrics.json", str(tmp_path))
    on_disk = wd / "results/scores/random/synth-trivial/pitch-order/audio/mcq-default/metrics.json"
    assert json.loads(open(got).read()) == json.loads(on_disk.read_text())


def test_generate_run_has_live_progress_up_to_every_item(tracked):
    _, _, client, runs = tracked
    r = next(r for r in runs if r.info.run_name == "generate/random/synth-scenes")
    history = client.get_metric_history(r.info.run_id, "items_done")
    steps = [m.step for m in sorted(history, key=lambda m: m.step)]
    assert len(steps) >= 3 and steps == sorted(set(steps)) and steps[-1] == 96  # scene-order x 2 conditions x 2 prompts: 4 slices, 96 items
    assert all(b - a < 40 + 16 for a, b in zip(steps, steps[1:]))  # every log_every items (a batch of <= 16 may end past it)
    assert r.data.metrics["fraction"] == 1.0 and 0 <= r.data.metrics["accuracy_so_far"] <= 1
    assert r.data.metrics["generated"] == 96 and r.data.params["backend"] == "random"


def test_tracking_token_never_reaches_a_written_file(tracked, server):
    wd, _, _, _ = tracked
    _, server_dir = server
    leaks = [p for d in (wd / "results", server_dir) for p in d.rglob("*")
             if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == []


def test_readme_screenshots_of_the_mlflow_ui(tracked, server, tmp_path):
    """LALM_SCREENSHOTS=1: docs/img/mlflow.png (a generate run's live progress) and mlflow-runs.png
    (the tiny workflow's runs), taken in headless Chromium once the UI has drawn its charts."""
    if not os.environ.get("LALM_SCREENSHOTS"):
        pytest.skip("set LALM_SCREENSHOTS=1 to write the README's MLflow screenshots")
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.skip("needs Debian's chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    uri, _ = server
    _, _, _, runs = tracked
    gen = next(r for r in runs if r.info.run_name == "generate/random")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}",
                 "--window-size=1400,900", "--hide-scrollbars"):
        opts.add_argument(flag)
    drv = webdriver.Chrome(service=Service(chromedriver), options=opts)
    try:
        for page, name in ((f"runs/{gen.info.run_id}/model-metrics", "mlflow.png"), ("runs", "mlflow-runs.png")):
            drv.get(f"{uri}/#/experiments/{gen.info.experiment_id}/{page}")
            time.sleep(15)  # the UI fetches metric histories and draws charts after load
            for close in drv.find_elements("css selector", "button[aria-label*='lose']"):  # the assistant panel
                close.click()
                break
            time.sleep(2)
            drv.save_screenshot(str(ROOT / "docs" / "img" / name))
    finally:
        drv.quit()
