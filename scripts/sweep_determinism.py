"""Batch-size determinism: the same model, items, condition and prompt at two batch sizes ->
rate of identical raw outputs (and identical parsed labels) with a Wilson interval."""
import argparse
import json
import logging

import _bootstrap  # noqa: F401

from lalmbench.core import io
from lalmbench.core.progress import setup_logging
from lalmbench.scoring.mcq import score_mcq
from lalmbench.checks.sweeps import determinism

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--items", required=True)
p.add_argument("--a", required=True, help="predictions at the first batch size")
p.add_argument("--b", required=True, help="predictions at the second batch size")
p.add_argument("--batch-sizes", nargs=2, type=int, required=True)
p.add_argument("--parser-json", default="{}")
p.add_argument("--config-hash", default="")
p.add_argument("--run", nargs=5, metavar=("MODEL", "DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
setup_logging()
pa, pb = io.read_parquet(a.a), io.read_parquet(a.b)
items = io.read_jsonl(a.items)
labels = {}
if items and all(it.get("options") for it in items):
    cfg = json.loads(a.parser_json)
    for name, df in (("a", pa), ("b", pb)):
        dec, _ = score_mcq(items, df, cfg)
        labels[name] = dec.set_index("id")["pred_label"]
res = determinism(pa, pb, labels_a=labels.get("a"), labels_b=labels.get("b"))
model, dataset, task, condition, prompt = a.run
from lalmbench.scoring.parse import PARSER_VERSION  # noqa: E402

metrics = {"model": model, "dataset": dataset, "task": task, "condition": condition, "prompt": prompt, **res,
           "metric": f"batch_determinism_bs{a.batch_sizes[0]}_vs_bs{a.batch_sizes[1]}",
           "batch_sizes": a.batch_sizes, "chance": None, "p_vs_chance": None, "parse_failure_rate": None,
           "parser_version": PARSER_VERSION, "config_hash": a.config_hash}
first = pa.iloc[0] if len(pa) else {}
for key in ("model_id", "model_revision", "backend"):
    v = first.get(key) if len(pa) else None
    metrics[key] = None if v is None or (isinstance(v, float) and v != v) else v
io.write_json(a.out, metrics)
logging.getLogger("lalmbench.sweep_determinism").info(
    "%s: %d/%d identical raw outputs (%.4f) between batch sizes %s", "/".join(a.run), res["n_identical"], res["n"],
    res["value"], a.batch_sizes)
