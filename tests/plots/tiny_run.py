"""One tiny workflow run (figures, report, browser, analyses) shared by the slow tests of
tests/plots, tests/browser and tests/analysis within a pytest process."""
from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

from tests.workflow import copy_workflow, snakemake

HERE = Path(__file__).resolve().parent
TARGETS = ["figures", "results/figures/accuracy.png", "results/browser/index.html", "analyses"]


@functools.lru_cache(maxsize=1)
def tiny_results() -> Path:
    reuse = os.environ.get("LALM_TINY_RESULTS")  # a finished run's directory, to iterate on the tests quickly
    if reuse and (Path(reuse) / "results" / "report.html").exists():
        return Path(reuse)
    wd = Path(tempfile.mkdtemp(prefix="lalm-figures-"))
    if not os.environ.get("LALM_KEEP_TINY"):  # keep it (and reuse via LALM_TINY_RESULTS) when set
        atexit.register(shutil.rmtree, wd, ignore_errors=True)
    copy_workflow(wd)
    shutil.copy(HERE / "tiny.yaml", wd / ".test" / "figures.yaml")
    snakemake(wd, *TARGETS, "--configfile", ".test/figures.yaml")
    snakemake(wd, *TARGETS, "--report", "results/report.html", "--configfile", ".test/figures.yaml")
    return wd
