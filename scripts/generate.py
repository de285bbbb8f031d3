"""Rule generate: every missing prediction of one model, one model load (fills the prediction cache)."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench import io
from lalmbench.inference import generate
from lalmbench.inference.cache import cache_file
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.plan import slice_from_spec
from lalmbench.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--model-json", required=True)
p.add_argument("--specs-json", required=True, help="the model's slices, as lalmbench.inference.plan specs")
p.add_argument("--cache-root", required=True)
p.add_argument("--summary", required=True, help="JSON written on success: items generated / from the cache per slice")
p.add_argument("--sample-rate", type=int, default=16000)
p.add_argument("--max-error-rate", type=float, default=0.0)
a = p.parse_args()
setup_logging()
cfg = json.loads(a.model_json)
slices = [slice_from_spec(a.model, s) for s in json.loads(a.specs_json)]
summary = generate(model_name=a.model, model_cfg=cfg, slices=slices,
                   cache_path=cache_file(a.cache_root, a.model, model_fingerprint(cfg)),
                   sample_rate=a.sample_rate, max_error_rate=a.max_error_rate)
io.write_json(a.summary, summary)
