"""Paired model comparisons on the same items: exact McNemar per pair of models (a paired t-test on
per-item means where a model drew several samples per item), Holm-adjusted,
one table per (dataset, task, condition, prompt). Arguments: --out, then MODEL=DECISIONS pairs."""
import argparse
import logging

import _bootstrap  # noqa: F401

import pandas as pd
import pyarrow.parquet as pq

from lalmbench.core import io
from lalmbench.core.progress import setup_logging
from lalmbench.core.stats import paired_comparisons

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--out", required=True)
p.add_argument("--run", nargs=4, metavar=("DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
p.add_argument("decisions", nargs="+", help="MODEL=path/to/decisions.parquet")
a = p.parse_args()
setup_logging()
cols = {}
for spec in a.decisions:
    model, _, path = spec.partition("=")
    if not path:
        raise SystemExit(f"expected MODEL=PATH, got {spec!r}")
    have = set(pq.read_schema(path).names)
    dec = io.read_parquet(path, columns=["id", "correct"] + (["samples_mean"] if "samples_mean" in have else []))
    # a model scored over k samples per item is compared on its per-item means (lalmbench.scoring.sampled)
    cols[model] = (dec.set_index("id")["samples_mean"].astype(float) if "samples_mean" in dec.columns
                   else dec.set_index("id")["correct"].astype(bool))
frame = pd.DataFrame(cols)
if frame.isna().any().any():
    bad = frame.columns[frame.isna().any()].tolist()
    raise io.InputError(f"paired comparison {'/'.join(a.run)}: models {bad} were not scored on the same items")
table = paired_comparisons(frame)
for i, key in enumerate(("dataset", "task", "condition", "prompt")):
    table.insert(i, key, a.run[i])
io.write_tsv(a.out, table)
logging.getLogger("lalmbench.score_paired").info("%s: %d pairs, %d significant after Holm", "/".join(a.run),
                                                 len(table), int(table["significant"].sum()))
