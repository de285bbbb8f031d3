"""Rule runs (run_jobs: per-dataset): every MCQ run of one model and dataset, predictions file,
decisions and metrics, in one process."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.core.progress import setup_logging
from lalmbench.scoring.run import score_runs
from lalmbench.tracking.jobs import track_score

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--model-json", required=True)
p.add_argument("--batch-json", required=True, help="the runs and their settings (lalmbench.scoring.run.score_runs)")
p.add_argument("--cache-root", required=True)
p.add_argument("--sample-rate", type=int, default=16000)
p.add_argument("--tracking-json", default="", help="tracking settings (config tracking: + group); empty: off")
a = p.parse_args()
setup_logging()
score_runs(json.loads(a.batch_json), model=a.model, model_cfg=json.loads(a.model_json), cache_root=a.cache_root,
           sample_rate=a.sample_rate, after_run=lambda paths: track_score(a.tracking_json, **paths))
