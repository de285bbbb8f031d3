"""CircularEval sweep: `items` writes k cyclic option shifts of a task; `score` scores predictions on
them and writes circular accuracy, per-shift accuracy and position-bias tables."""
import argparse
import json
import logging

import _bootstrap  # noqa: F401

from lalmbench.core import io
from lalmbench.core.progress import setup_logging

log = logging.getLogger("lalmbench.sweep_circular")


def cmd_items(a):
    from lalmbench.checks.sweeps import circular_shifts

    items = io.read_jsonl(a.items)
    mcq = [it for it in items if it.get("options")]
    if not mcq:
        raise io.InputError(f"{a.items}: no multiple-choice items (items with options) to shift")
    shifted = circular_shifts(mcq, k=a.k)
    io.write_jsonl(a.out, shifted)
    log.info("%s: %d items -> %d shifted items (k=%d)", a.items, len(mcq), len(shifted), a.k)


def cmd_score(a):
    import pandas as pd

    from lalmbench.scoring.parse import PARSER_VERSION
    from lalmbench.scoring.mcq import score_mcq
    from lalmbench.core.stats import p_vs_chance, wilson_interval
    from lalmbench.checks.sweeps import circular_metrics

    items = io.read_jsonl(a.items)
    preds = io.read_parquet(a.predictions)
    decisions, _ = score_mcq(items, preds, json.loads(a.parser_json))
    res = circular_metrics(decisions)
    s = res["summary"]
    model, dataset, task, condition, prompt = a.run
    n_pred = s["n_predictions"]
    k_plain = int(round(s["plain_accuracy"] * n_pred))
    k_cons = int(round(s["consistency_rate"] * s["n"]))
    chance_plain = float(decisions["chance"].mean())
    extra = [
        {"metric": "circular_plain_accuracy", "value": s["plain_accuracy"], "n": n_pred, "chance": chance_plain,
         **dict(zip(("ci_low", "ci_high"), wilson_interval(k_plain, n_pred))),
         "p_vs_chance": p_vs_chance(k_plain, n_pred, chance_plain), "parse_failure_rate": s["parse_failure_rate"]},
        {"metric": "circular_consistency", "value": s["consistency_rate"], "n": s["n"],
         **dict(zip(("ci_low", "ci_high"), wilson_interval(k_cons, s["n"]))), "chance": None, "p_vs_chance": None,
         "parse_failure_rate": s["parse_failure_rate"]},
    ]
    metrics = {"model": model, "dataset": dataset, "task": task, "condition": condition, "prompt": prompt,
               **s, "k": a.k, "parser_version": PARSER_VERSION, "config_hash": a.config_hash,
               "extra_metrics": extra, "by_shift": res["by_shift"].to_dict("records"),
               "by_gold_position": res["by_gold_position"].to_dict("records"),
               "pred_position_hist": res["pred_position_hist"].to_dict("records")}
    first = preds.iloc[0] if len(preds) else {}
    for key in ("model_id", "model_revision", "backend"):
        v = first.get(key) if len(preds) else None
        metrics[key] = None if v is None or (isinstance(v, float) and v != v) else v
    io.write_parquet(a.decisions, decisions)
    io.write_json(a.metrics, metrics)
    tables = []
    for name in ("by_shift", "by_gold_position"):
        t = res[name].copy()
        t.insert(0, "table", name)
        tables.append(t)
    io.write_tsv(a.tables, pd.concat(tables, ignore_index=True))
    log.info("%s: circular accuracy %.4f [%.4f, %.4f] over %d items; plain %.4f; position chi2 p=%.3g",
             "/".join(a.run), s["value"], s["ci_low"], s["ci_high"], s["n"], s["plain_accuracy"], s["position_p"])


p = argparse.ArgumentParser(description=__doc__)
sub = p.add_subparsers(dest="cmd", required=True)
pi = sub.add_parser("items", help="write k cyclic shifts of every MCQ item")
pi.add_argument("--items", required=True)
pi.add_argument("--k", type=int, required=True)
pi.add_argument("--out", required=True)
ps = sub.add_parser("score", help="score predictions on shifted items")
ps.add_argument("--items", required=True)
ps.add_argument("--predictions", required=True)
ps.add_argument("--k", type=int, required=True)
ps.add_argument("--parser-json", default="{}")
ps.add_argument("--config-hash", default="")
ps.add_argument("--run", nargs=5, metavar=("MODEL", "DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
ps.add_argument("--decisions", required=True)
ps.add_argument("--metrics", required=True)
ps.add_argument("--tables", required=True)
args = p.parse_args()
setup_logging()
{"items": cmd_items, "score": cmd_score}[args.cmd](args)
