"""Rule score: parse raw outputs into decisions and compute metrics.json for one run."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.core.progress import setup_logging
from lalmbench.scoring.run import score_run_files
from lalmbench.tracking.jobs import track_score

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--items", required=True)
p.add_argument("--predictions", required=True)
p.add_argument("--parser-json", default="{}")
p.add_argument("--judge-json", default="{}", help="the top-level judge: block for this task ({} = off)")
p.add_argument("--official-json", default="{}", help="the dataset's official rule for this task ({} = none)")
p.add_argument("--missing", default="", help="an imported model's params.missing (leave-out | wrong); empty: not imported")
p.add_argument("--config-hash", required=True)
p.add_argument("--run", nargs=5, metavar=("MODEL", "DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
p.add_argument("--decisions", required=True)
p.add_argument("--metrics", required=True)
p.add_argument("--tracking-json", default="", help="tracking settings (config tracking: + group); empty: off")
a = p.parse_args()
setup_logging()
score_run_files(items_path=a.items, predictions_path=a.predictions, parser_cfg=json.loads(a.parser_json),
                config_hash=a.config_hash, run=a.run, decisions_path=a.decisions, metrics_path=a.metrics,
                judge_cfg=json.loads(a.judge_json) or None, official_cfg=json.loads(a.official_json) or None,
                missing=a.missing or None)
track_score(a.tracking_json, items_path=a.items, predictions_path=a.predictions, decisions_path=a.decisions,
            metrics_path=a.metrics)
