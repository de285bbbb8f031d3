"""Rule infer: one predictions file, read from the prediction cache that rule generate filled."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.inference import materialize
from lalmbench.inference.cache import cache_files
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.plan import slice_from_spec
from lalmbench.models.imported import needs_audio
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--model-json", required=True)
p.add_argument("--spec-json", required=True, help="this file's slice, as a lalmbench.inference.plan spec")
p.add_argument("--cache-root", required=True)
p.add_argument("--out", required=True)
p.add_argument("--sample-rate", type=int, default=16000)
a = p.parse_args()
setup_logging()
cfg = json.loads(a.model_json)
sl = slice_from_spec(a.model, json.loads(a.spec_json), audio=needs_audio(cfg))
if sl.out != a.out:
    raise SystemExit(f"slice {sl.out} does not match --out {a.out}")
df = materialize(sl, model_cfg=cfg, cache_path=cache_files(a.cache_root, a.model, model_fingerprint(cfg)),
                 sample_rate=a.sample_rate)
print(f"{a.out}: {len(df)} rows, {int(df.error.notna().sum())} errors")
