"""Rule generate: the missing predictions of one model on one dataset (one shard of it), one model
load; fills this job's own file of the prediction cache."""
import argparse
import json
import time

import _bootstrap  # noqa: F401

from lalmbench.core import io
from lalmbench.inference import generate
from lalmbench.inference.cache import cache_file, cache_files
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.plan import slice_from_spec
from lalmbench.models.imported import needs_audio
from lalmbench.core.progress import setup_logging
from lalmbench.tracking import open_tracker
from lalmbench.tracking.jobs import generate_params, generate_summary


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", required=True)
    p.add_argument("--model-json", required=True)
    p.add_argument("--specs-json", required=True, help="the unit's slices, as lalmbench.inference.plan specs")
    p.add_argument("--unit", required=True, help="the job's dataset (and shard): names its own cache file")
    p.add_argument("--shard", default="1/1", help="i/n: serve shard i of n of every slice's items")
    p.add_argument("--cache-root", required=True)
    p.add_argument("--summary", required=True, help="JSON written on success: items generated / from the cache per slice")
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--max-error-rate", type=float, default=0.0)
    p.add_argument("--tracking-json", default="", help="tracking settings (config tracking: + group); empty: off")
    a = p.parse_args()
    setup_logging()
    cfg = json.loads(a.model_json)
    slices = [slice_from_spec(a.model, s, audio=needs_audio(cfg)) for s in json.loads(a.specs_json)]
    fp = model_fingerprint(cfg)
    shard = tuple(int(x) for x in a.shard.split("/"))
    t0 = time.perf_counter()
    with open_tracker(a.tracking_json, name=f"generate/{a.model}/{a.unit}", job_type="generate",
                      params=generate_params(a.model, cfg, len(slices), fp)) as tracker:
        summary = generate(model_name=a.model, model_cfg=cfg, slices=slices,
                           cache_path=cache_file(a.cache_root, a.model, fp, a.unit), shard=shard,
                           other_cache_files=cache_files(a.cache_root, a.model, fp),
                           sample_rate=a.sample_rate, max_error_rate=a.max_error_rate, tracker=tracker)
        io.write_json(a.summary, summary)
        tracker.summary(generate_summary(summary, time.perf_counter() - t0))
        tracker.artifact(a.summary, "generate.json")


# vLLM starts its engine in a spawned process, which imports this file again: only the real run may run the job
if __name__ == "__main__":
    main()
