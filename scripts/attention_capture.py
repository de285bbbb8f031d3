"""Rule attention_capture: attention of one hf model on a few items per run (one model load)."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.core import io
from lalmbench.attention.capture import capture_model
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--model-json", required=True)
p.add_argument("--specs-json", required=True, help="[[dataset, task, condition, prompt], ...] to capture")
p.add_argument("--root", default="results/attention")
p.add_argument("--manifest", required=True, help="capture.json written on success: every item directory")
p.add_argument("--sample-rate", type=int, default=16000)
a = p.parse_args()
setup_logging()
manifest = capture_model(model_name=a.model, model_cfg=json.loads(a.model_json), specs=json.loads(a.specs_json),
                         root=a.root, sample_rate=a.sample_rate)
io.write_json(a.manifest, manifest)
