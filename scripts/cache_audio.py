"""Rule cache_audio: decode and resample a task's audio once for all models."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.data.audio_cache import cache_task_audio
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--items", required=True)
p.add_argument("--out-dir", required=True)
p.add_argument("--manifest", required=True)
p.add_argument("--sample-rate", type=int, required=True)
a = p.parse_args()
setup_logging()
cache_task_audio(a.items, a.out_dir, a.manifest, a.sample_rate)
