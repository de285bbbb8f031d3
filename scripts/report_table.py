"""Rule report_table: a model report's audio table beside value_official and value from all.tsv."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.report.model_report import write_report

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--table", required=True, help="results/all.tsv")
p.add_argument("--report", required=True, help="the report ledger's name (lalmbench/data/reports/<name>.yaml)")
p.add_argument("--model", required=True, help="the models entry set beside the report's numbers")
p.add_argument("--datasets-json", required=True, help="the config's datasets: {key: {adapter}}")
p.add_argument("--decisions", nargs="*", default=[], help="the model's decisions files (audio condition)")
p.add_argument("--items", nargs="*", default=[], help="those runs' task files (results/tasks/<dataset>/<task>.jsonl)")
p.add_argument("--tsv", required=True)
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
a = p.parse_args()
write_report(a.table, a.report, a.model, json.loads(a.datasets_json), tsv=a.tsv, png=a.png, svg=a.svg,
             decisions=a.decisions, items=a.items)
