"""Rule mix_dataset: AIR-Bench-style mixtures (relative dB, offsets) of another dataset's clips."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.data.adapters.run import mix_dataset_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--config-json", required=True, help="{dataset: {adapter: mix, params}, seed}")
p.add_argument("--dataset", required=True)
p.add_argument("--source-clips", required=True)
p.add_argument("--source-events", required=True)
p.add_argument("--clips", required=True)
p.add_argument("--events", required=True)
p.add_argument("--plan", required=True)
p.add_argument("--audio-dir", required=True)
a = p.parse_args()
setup_logging()
cfg = json.loads(a.config_json)
mix_dataset_files(cfg["dataset"], dataset=a.dataset, source_clips=a.source_clips, source_events=a.source_events,
                  clips_path=a.clips, events_path=a.events, plan_path=a.plan, audio_dir=a.audio_dir,
                  seed=int(cfg["seed"]))
