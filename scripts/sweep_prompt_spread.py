"""Prompt-variant spread: metrics.json of every (model, task, condition) under several prompt
templates -> one row per group with min/max (and which prompt), range, mean and std."""
import argparse
import logging

import _bootstrap  # noqa: F401

import pandas as pd

from lalmbench.core import io
from lalmbench.report.aggregate import build_table
from lalmbench.core.progress import setup_logging
from lalmbench.checks.sweeps import prompt_spread

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--out", required=True)
p.add_argument("metrics", nargs="+")
a = p.parse_args()
setup_logging()
table = build_table(a.metrics)
spread = prompt_spread(table)
if spread.empty:
    spread = pd.DataFrame(columns=["model", "dataset", "task", "condition", "metric", "n_prompts", "min", "min_prompt",
                                   "max", "max_prompt", "range", "mean", "std"])
io.write_tsv(a.out, spread)
logging.getLogger("lalmbench.sweep_prompt_spread").info("%d groups, widest range %.4f", len(spread),
                                                        spread["range"].max() if len(spread) else float("nan"))
