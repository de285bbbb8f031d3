"""Rule adapt_dataset: run a real-dataset adapter -> clips.parquet, events.parquet, items.jsonl, stats."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.data.adapters.run import adapt_dataset_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--config-json", required=True, help="the dataset's config: {adapter, params}")
p.add_argument("--dataset", required=True)
p.add_argument("--clips", required=True)
p.add_argument("--events", required=True)
p.add_argument("--items", required=True)
p.add_argument("--stats", required=True)
a = p.parse_args()
setup_logging()
adapt_dataset_files(json.loads(a.config_json), dataset=a.dataset, clips_path=a.clips, events_path=a.events,
                    items_path=a.items, stats_path=a.stats)
