"""GPU smoke run: every family's tiny checkpoint through the hf and the vLLM backend on a GPU, with parity.

Run it whenever a GPU machine is at hand (it refuses to run without CUDA); it needs the hf env for the hf
side and, for the vLLM side, the vllm env (envs/vllm); a family vLLM cannot load is reported, not fatal.

For each family (tests/models/tiny.py builds the checkpoints, configured like the real ones: Gemma 3n's
BOS-adding tokenizer, AF3's <sound> hoisting, Qwen2.5-Omni's 300 s extractor) it generates answers to the
same items with both backends in float32 and greedy decoding, and records in bench/results/gpu_smoke.jsonl:
items/s per backend and the hf-vs-vLLM agreement of the answers (lalmbench.checks.parity, Wilson interval)
together with each backend's first prompt ids. Then it runs bench/bench_batching.py at a realistic size.

    python bench/gpu_smoke.py [--items 64] [--families gemma3n,qwen2_audio] [--no-vllm] [--no-batching]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "models"))

BUILDERS = {"qwen2_audio": "build_qwen2_audio", "qwen2_5_omni": "build_qwen2_5_omni",
            "qwen3_omni": "build_qwen3_omni", "gemma3n": "build_gemma3n", "voxtral": "build_voxtral_with_processor",
            "audioflamingo3": "build_audioflamingo3"}
PROMPT = "What is the sound? Answer with the letter. (A) speech (B) music (C) dog barking (D) silence"


def make_items(n: int):
    import tiny

    from lalmbench.models.base import ModelInput

    rng = np.random.default_rng(0)
    return [ModelInput(id=f"s{i}", prompt=PROMPT, question=PROMPT, options=[], sample_rate=16000,
                       audio=tiny.tone(float(rng.uniform(1, 10)), float(rng.uniform(200, 2000)), seed=i))
            for i in range(n)]


def timed(model, items, batch_size: int):
    t = time.perf_counter()
    outs = []
    for s in range(0, len(items), batch_size):
        outs += model.generate(items[s:s + batch_size])
    return outs, time.perf_counter() - t


def smoke_family(family: str, ckpt: str, items, batch_size: int, use_vllm: bool) -> dict:
    import pandas as pd

    from lalmbench.checks.parity import answer_agreement
    from lalmbench.models.base import load_model
    from lalmbench.models.vllm_backend import build_prompt_request

    res: dict = {"family": family}
    entry = {"model_id": ckpt, "family": family, "generation": {"max_new_tokens": 16}, "batch_size": batch_size}
    hf = load_model(family, {**entry, "backend": "hf", "dtype": "float32"})
    hf.generate(items[:1])  # warm-up
    hf_out, t = timed(hf, items, batch_size)
    res["hf_items_per_s"] = len(items) / t
    res["hf_first_ids"] = hf.encode([hf.prepare(items[0])])["input_ids"][0].tolist()[:8]
    res["hf_errors"] = sum(o.error is not None for o in hf_out)
    hf.close()
    if not use_vllm:
        return res
    try:
        vl = load_model(family, {**entry, "backend": "vllm", "dtype": "float32", "enforce_eager": True,
                                 "gpu_memory_utilization": 0.3, "max_model_len": 4096})
        if vl.processor is not None:
            req = build_prompt_request(items[0], family, vl.processor)
            res["vllm_first_ids"] = vl.processor.tokenizer(req["prompt"])["input_ids"][:8]
        vl_out, t = timed(vl, items, batch_size)
    except Exception as e:  # noqa: BLE001 - a family vLLM cannot run is a finding, not a crash
        res["vllm_error"] = f"{type(e).__name__}: {e}"[:500]
        return res
    res["vllm_items_per_s"] = len(items) / t

    def frame(outs):
        return pd.DataFrame({"id": [it.id for it in items], "pred_label": [o.raw_output or "" for o in outs],
                             "error": [o.error for o in outs]})

    agree = answer_agreement(frame(hf_out), frame(vl_out))
    res["parity"] = {k: agree[k] for k in ("n_compared", "n_agree", "agreement", "ci_low", "ci_high", "n_errors")}
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--families", default=",".join(BUILDERS))
    ap.add_argument("--no-vllm", action="store_true")
    ap.add_argument("--no-batching", action="store_true")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("gpu_smoke: no CUDA device visible; run it on a GPU node (nothing recorded)", file=sys.stderr)
        return 2
    import tiny

    from bench.record import record

    use_vllm = not args.no_vllm and importlib.util.find_spec("vllm") is not None
    if not args.no_vllm and not use_vllm:
        print("gpu_smoke: vllm is not installed in this env: hf side only (use the vllm env for parity)",
              file=sys.stderr)
    items = make_items(args.items)
    device = torch.cuda.get_device_name(0)
    results = []
    for family in args.families.split(","):
        ckpt = getattr(tiny, BUILDERS[family])(Path(tempfile.mkdtemp(prefix=f"smoke_{family}_")))
        try:
            r = smoke_family(family, str(ckpt), items, args.batch_size, use_vllm)
        except Exception as e:  # noqa: BLE001
            r = {"family": family, "hf_error": f"{type(e).__name__}: {e}"[:500]}
        results.append(r)
        print(json.dumps(r), flush=True)
        for key, fig in (("hf_items_per_s", "hf"), ("vllm_items_per_s", "vllm")):
            if key in r:
                record("gpu_smoke", f"{family} {fig} items/s ({device})", r[key], "items/s")
        if r.get("parity", {}).get("agreement") is not None:
            record("gpu_smoke", f"{family} hf-vs-vllm answer agreement ({device})", 100 * r["parity"]["agreement"], "%")
    if not args.no_batching:
        subprocess.run([sys.executable, str(ROOT / "bench" / "bench_batching.py"), "--items", "256",
                        "--batch-size", "32", "--max-new-tokens", "32"], check=False)
    failed = [r["family"] for r in results if "hf_error" in r or r.get("hf_errors")]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
