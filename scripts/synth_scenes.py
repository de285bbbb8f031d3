"""Rule synth_scenes: render the synthetic multi-event scenes dataset."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.data.synth.scenes import write_scene_dataset

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--config-json", required=True)
p.add_argument("--dataset", required=True)
p.add_argument("--clips", required=True)
p.add_argument("--events", required=True)
p.add_argument("--audio-dir", required=True)
a = p.parse_args()
write_scene_dataset(json.loads(a.config_json), dataset=a.dataset, clips_path=a.clips, events_path=a.events,
                    audio_dir=a.audio_dir)
