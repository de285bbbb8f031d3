"""Weights & Biases, inside the tracking worker process (never imported by a job itself).

One W&B run per job: ``group`` = the workflow's config hash, ``job_type`` = generate | score.
Progress points are history rows (step = items done); the summary holds the final numbers; each
analysis view is a W&B Table (accuracy views also as bar charts, the confusion matrix as W&B's
confusion-matrix chart); files go into one artifact per run. The key is read by wandb itself from
WANDB_API_KEY (or its netrc); ``WANDB_MODE=offline`` writes the run under ``<dir>/wandb`` only.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

BAR_VIEWS = {"accuracy_by_gold_label": "gold_label", "accuracy_by_n_options": "n_options",
             "accuracy_by_answer_type": "answer_type"}


class WandbBackend:
    def __init__(self, settings: dict):
        self.settings = settings
        self.dir = Path(settings["dir"]).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        # staged artifact copies (kept until `wandb sync` for offline runs) and wandb's cache stay with the
        # run files instead of the user's home, unless the user chose otherwise
        os.environ.setdefault("WANDB_DATA_DIR", str(self.dir / "staging"))
        os.environ.setdefault("WANDB_CACHE_DIR", str(self.dir / "cache"))
        import wandb

        self.wandb = wandb
        self.run = None
        self.last_step = 0
        self.artifact_files: list[tuple[str, str]] = []

    def start(self, run: dict) -> None:
        s = self.settings
        settings = self.wandb.Settings(console="off", silent=True, disable_git=True, save_code=False,
                                       init_timeout=float(s["timeout_s"]), x_stats_pid=int(run.get("pid") or os.getpid()))
        self.run = self.wandb.init(project=s["project"], entity=s.get("entity"), group=run["group"],
                                   job_type=run["job_type"], name=run["name"], tags=run.get("tags") or None,
                                   config=run["params"], dir=str(self.dir), settings=settings)

    def progress(self, step: int, metrics: dict[str, float]) -> None:
        self.last_step = step
        self.run.log(metrics, step=step)

    def summary(self, metrics: dict[str, Any]) -> None:
        self.run.summary.update(metrics)

    def table(self, name: str, columns: list[str], rows: list[list]) -> None:
        wandb = self.wandb
        table = wandb.Table(columns=columns, data=rows)
        charts: dict[str, Any] = {name: table}
        if name in BAR_VIEWS:
            charts[f"{name}_chart"] = wandb.plot.bar(table, BAR_VIEWS[name], "accuracy", title=name.replace("_", " "))
        elif name == "confusion_matrix":
            cm = wandb.Table(columns=["Actual", "Predicted", "nPredictions"], data=rows)
            charts[f"{name}_chart"] = wandb.plot_table("wandb/confusion_matrix/v1", cm,
                                                       {"Actual": "Actual", "Predicted": "Predicted",
                                                        "nPredictions": "nPredictions"},
                                                       {"title": "confusion matrix (gold x predicted)"})
        self.run.log(charts, step=self.last_step)  # with the last progress point: one history row, not one per view

    def artifact(self, path: str, name: str) -> None:
        self.artifact_files.append((path, name))

    def finish(self, status: str) -> None:
        if self.artifact_files:
            art = self.wandb.Artifact(f"{self.run.job_type}-{self.run.id}", type="lalmbench-results",
                                      metadata={"run": self.run.name})
            for path, name in self.artifact_files:
                art.add_file(path, name=name)
            self.run.log_artifact(art)
        self.run.finish(exit_code=0 if status == "finished" else 1)
