"""Accuracy broken down by every item meta field (categories as they are, numeric fields in
quantile bins) with Wilson intervals and p-values against chance, for one scored run."""
import argparse
import logging

import _bootstrap  # noqa: F401

from lalmbench.core import io
from lalmbench.core.progress import setup_logging
from lalmbench.core.stats import meta_breakdowns

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--decisions", required=True)
p.add_argument("--run", nargs=5, metavar=("MODEL", "DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
p.add_argument("--out", required=True)
p.add_argument("--bins", type=int, default=4)
a = p.parse_args()
setup_logging()
dec = io.read_parquet(a.decisions)
if "correct" not in dec.columns:
    raise io.InputError(f"{a.decisions}: no 'correct' column (breakdowns are for MCQ decisions)")
table = meta_breakdowns(dec, n_bins=a.bins)
for i, key in enumerate(("model", "dataset", "task", "condition", "prompt")):
    table.insert(i, key, a.run[i])
io.write_tsv(a.out, table)
logging.getLogger("lalmbench.score_breakdown").info("%s: %d groups over %d meta fields", "/".join(a.run), len(table),
                                                    table["field"].nunique() if len(table) else 0)
