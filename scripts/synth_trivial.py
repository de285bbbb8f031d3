"""Rule synth_trivial_task: render one of TACoBeLAL's trivial temporal families (audio + items)."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.data.synth.trivial import write_trivial_task

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--config-json", required=True)
p.add_argument("--dataset", required=True)
p.add_argument("--task", required=True)
p.add_argument("--items", required=True)
p.add_argument("--stats", required=True)
p.add_argument("--audio-dir", required=True)
a = p.parse_args()
write_trivial_task(json.loads(a.config_json), dataset=a.dataset, task=a.task, items_path=a.items,
                   stats_path=a.stats, audio_dir=a.audio_dir)
