"""Rule aggregate: collect every metrics.json into results/all.tsv (+ the flagged runs, for the report, and
tokens and latency per run in their own table)."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.report.aggregate import write_all_tsv

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--out", required=True)
p.add_argument("--checks", nargs="*", default=[], help="listening-check results (flags column)")
p.add_argument("--task-stats", nargs="*", default=[], help="task stats (items left out at source -> flags)")
p.add_argument("--item-versions", nargs="*", default=[], help="imported outputs' item-version checks (flags)")
p.add_argument("--model-notes-json", default="{}", help="{model: note}: what was not run for a model (flags)")
p.add_argument("--flags", default=None, help="also write the runs with flags here (results/tables/flags.tsv)")
p.add_argument("--cost", default=None, help="also write tokens and latency per run here (results/tables/cost.tsv)")
p.add_argument("--jobs", nargs="*", default=None,
               help="generate job summaries: items/s and GPU-seconds per 1,000 items in the cost table")
p.add_argument("metrics", nargs="+")
a = p.parse_args()
write_all_tsv(a.metrics, a.out, checks=a.checks, flags_out=a.flags, task_stats=a.task_stats,
              item_versions=a.item_versions, model_notes=json.loads(a.model_notes_json), cost_out=a.cost, jobs=a.jobs)
