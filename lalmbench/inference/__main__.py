"""One predictions file from the command line (no workflow): ``python -m lalmbench.inference ...``.

Resumable like the workflow: finished rows live in ``<out>.partial.jsonl`` until the parquet is
written, so a killed call picks up where it stopped."""
import argparse
import json

from lalmbench.inference import run_inference
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--items", required=True)
p.add_argument("--out", required=True)
p.add_argument("--model", required=True)
p.add_argument("--model-json", required=True, help="the model's config entry as JSON")
p.add_argument("--condition", required=True)
p.add_argument("--prompt", required=True, help="prompt name recorded in the rows")
p.add_argument("--template", required=True, help="prompt template file")
p.add_argument("--sample-rate", type=int, default=16000)
p.add_argument("--max-error-rate", type=float, default=0.0)
p.add_argument("--audio-manifest", default=None, help="decoded/resampled audio cache (rule cache_audio)")
a = p.parse_args()
setup_logging()
run_inference(items_path=a.items, out_path=a.out, model_name=a.model, model_cfg=json.loads(a.model_json),
              condition=a.condition, prompt_name=a.prompt, template_path=a.template, sample_rate=a.sample_rate,
              max_error_rate=a.max_error_rate, audio_manifest=a.audio_manifest)
