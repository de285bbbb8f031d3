"""MLflow, inside the tracking worker process (never imported by a job itself).

One MLflow run per job in the experiment ``tracking.project``, tagged ``lalmbench.group`` (the
workflow's config hash: group the runs table by it) and ``lalmbench.job_type``. Progress points
are metric steps (step = items done); summary numbers are metrics at the final step; each
analysis view is a table artifact under ``tables/`` (the confusion matrix also as a PNG); files go
under ``files/``. Credentials come from MLflow's own environment variables (MLFLOW_TRACKING_TOKEN,
MLFLOW_TRACKING_USERNAME/PASSWORD). HTTP retries are capped so that a dead server is reported
within about ``timeout_s`` rather than after MLflow's default retry schedule of minutes.
"""
from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

PARAMS_PER_BATCH = 100  # MLflow's log_batch limits
METRICS_PER_BATCH = 1000
PARAM_CHARS = 6000


class MlflowBackend:
    def __init__(self, settings: dict):
        self.settings = settings
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(max(1, math.ceil(float(settings["timeout_s"])))))
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
        from mlflow.entities import Metric, Param, RunStatus
        from mlflow.tracking import MlflowClient

        self.Metric, self.Param, self.RunStatus = Metric, Param, RunStatus
        self.client = MlflowClient(tracking_uri=settings["tracking_uri"])
        self.run_id: str | None = None
        self.last_step = 0

    def _experiment_id(self, name: str) -> str:
        from mlflow.exceptions import MlflowException

        exp = self.client.get_experiment_by_name(name)
        if exp is not None:
            return exp.experiment_id
        try:
            return self.client.create_experiment(name)
        except MlflowException:  # another job created it a moment ago
            exp = self.client.get_experiment_by_name(name)
            if exp is None:
                raise
            return exp.experiment_id

    def start(self, run: dict) -> None:
        tags = {"lalmbench.group": run["group"], "lalmbench.job_type": run["job_type"],
                **{f"lalmbench.tag.{t}": "1" for t in run.get("tags") or []}}
        info = self.client.create_run(self._experiment_id(self.settings["project"]), run_name=run["name"],
                                      tags=tags).info
        self.run_id = info.run_id
        params = [self.Param(k, str(v)[:PARAM_CHARS]) for k, v in sorted(run["params"].items())]
        for i in range(0, len(params), PARAMS_PER_BATCH):
            self.client.log_batch(self.run_id, params=params[i:i + PARAMS_PER_BATCH])

    def _metrics(self, metrics: dict[str, Any], step: int) -> None:
        now = int(time.time() * 1000)
        ms = [self.Metric(k, float(v), now, step) for k, v in metrics.items() if isinstance(v, (int, float))]
        for i in range(0, len(ms), METRICS_PER_BATCH):
            self.client.log_batch(self.run_id, metrics=ms[i:i + METRICS_PER_BATCH])

    def progress(self, step: int, metrics: dict[str, float]) -> None:
        self.last_step = step
        self._metrics(metrics, step)

    def summary(self, metrics: dict[str, Any]) -> None:
        self._metrics(metrics, self.last_step)

    def table(self, name: str, columns: list[str], rows: list[list]) -> None:
        import pandas as pd

        df = pd.DataFrame(rows, columns=columns)
        self.client.log_table(self.run_id, df, f"tables/{name}.json")
        if name == "confusion_matrix":
            self.client.log_figure(self.run_id, _confusion_figure(df), "tables/confusion_matrix.png")

    def artifact(self, path: str, name: str) -> None:
        if Path(path).name == name:
            self.client.log_artifact(self.run_id, path, "files")
            return
        with tempfile.TemporaryDirectory() as tmp:  # the artifact's name differs from the file's
            dest = Path(tmp) / name
            shutil.copyfile(path, dest)
            self.client.log_artifact(self.run_id, str(dest), "files")

    def finish(self, status: str) -> None:
        self.client.set_terminated(self.run_id, "FINISHED" if status == "finished" else "FAILED")


def _confusion_figure(df):
    """Heatmap of the long-form confusion table (gold rows x predicted columns, counts written in)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    m = df.pivot(index="gold_label", columns="pred_label", values="n").fillna(0)
    fig, ax = plt.subplots(figsize=(1.2 + 0.6 * m.shape[1], 1.0 + 0.5 * m.shape[0]))
    ax.imshow(m.to_numpy(), cmap="Blues")
    ax.set_xticks(range(m.shape[1]), m.columns, rotation=45, ha="right")
    ax.set_yticks(range(m.shape[0]), m.index)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    for (i, j), v in np.ndenumerate(m.to_numpy()):
        ax.text(j, i, int(v), ha="center", va="center", fontsize=8)
    fig.tight_layout()
    return fig
