"""Rule caption_request: one run's candidates + references -> the captioning worker's input JSON."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.core import io
from lalmbench.scoring.metrics.open import caption_request

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--items", required=True)
p.add_argument("--predictions", required=True)
p.add_argument("--scoring-json", required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
io.write_json(a.out, caption_request(io.read_jsonl(a.items), io.read_parquet(a.predictions), json.loads(a.scoring_json)))
