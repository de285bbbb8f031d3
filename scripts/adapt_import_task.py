"""Rule import_task: a dataset's ready-made items (family 'import') -> results/tasks/{dataset}/{task}.jsonl."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.tasks.run import import_task_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--config-json", required=True, help="{task, dataset, seed, ...} as for build_task")
p.add_argument("--dataset", required=True)
p.add_argument("--task", required=True)
p.add_argument("--clips", required=True)
p.add_argument("--source-items", required=True)
p.add_argument("--items", required=True)
p.add_argument("--stats", required=True)
p.add_argument("--adapt-stats", default=None, help="the dataset's adapt.stats.json (items left out at source)")
a = p.parse_args()
setup_logging()
import_task_files(json.loads(a.config_json), dataset=a.dataset, task=a.task, clips_path=a.clips,
                  source_items=a.source_items, items_path=a.items, stats_path=a.stats,
                  adapt_stats=a.adapt_stats)
