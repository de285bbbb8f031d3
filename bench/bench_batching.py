"""Batched generation (length-sorted, left-padded) vs a per-item loop, through the real hf backend.

The model: a random Qwen2-Audio built from the real config classes (tests/models/tiny.py) but
sized so that the model's own work, not Python per-call overhead, is what is timed:
text decoder hidden 1024, 8 layers, MLP 2816, 16 query / 4 KV heads (~95M parameters, ~380 MB
in float32: ten times the 32 MB L3 cache, so every decoding step streams the weights from memory,
as a 7B model does on a GPU); audio encoder d_model 256, 2 layers (Whisper's front end on 30-s
padded features, 1,500 positions per clip). The old 64-wide model spent its time in Python
and per-call overhead, which batching cannot remove on CPU, so its ratio did not reproduce.

What batching can and cannot save, and where:
- decoding: one step reads all weights once for the whole batch; per item it reads them once per
  item. This is the part batching speeds up, on CPU as on GPU.
- audio encoder and prefill: compute-bound on CPU (two cores are already busy with one item's
  matrices), so a batch costs about the sum of its items, plus its padding. On a GPU one item
  leaves most of the device idle, so there these phases gain too (run a real checkpoint there:
  ``python bench/bench_batching.py --model-id Qwen/Qwen2-Audio-7B-Instruct --dtype bfloat16``).
The bench therefore times both paths twice: with --max-new-tokens (full generation) and with 1
new token (encoder + prefill only); the difference is decoding. It reports items/s, generated
tokens/s, the padding share of the batched inputs, and fails unless both paths answer identically.

    python bench/bench_batching.py [--items 32] [--batch-size 8] [--max-new-tokens 32] [--threads N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "models"))

TEXT = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
            num_key_value_heads=4)
AUDIO = dict(d_model=256, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=1024)


def make_items(n: int, seed: int = 0):
    from lalmbench.models.base import ModelInput

    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        dur = float(rng.uniform(1.0, 8.0))
        t = np.arange(int(dur * 16000)) / 16000
        audio = (0.3 * np.sin(2 * np.pi * rng.uniform(100, 3000) * t)
                 + 0.05 * rng.standard_normal(t.shape)).astype(np.float32)
        q = "What is the sound? (A) speech (B) music (C) dog barking (D) silence" + " Answer briefly." * (i % 3)
        items.append(ModelInput(id=f"b{i}", prompt=q, question=q, options=[], audio=audio, sample_rate=16000))
    return items


def padding_share(model, items, batch_size: int) -> float:
    """Share of the batched input positions that are padding, for the batches the backend forms
    (its own length order, cut every batch_size)."""
    from lalmbench.models.hf.backend import length_key

    order = sorted(items, key=length_key, reverse=True)
    pad = total = 0
    for start in range(0, len(order), batch_size):
        mask = model.encode([model.prepare(it) for it in order[start:start + batch_size]])["attention_mask"]
        pad += int((mask == 0).sum())
        total += mask.numel()
    return pad / total


def run(batched, single, items, batch_size: int):
    """(per-item outputs, per-item seconds, batched outputs, batched seconds), in the input order.

    The items are cut into the batches the backend itself forms (its length order, batch_size
    each) and the two paths alternate batch by batch, so load from other jobs that comes and goes
    during the run falls on both alike."""
    from lalmbench.models.hf.backend import length_key

    order = sorted(range(len(items)), key=lambda i: length_key(items[i]), reverse=True)
    out_s, out_b = [None] * len(items), [None] * len(items)
    t_s = t_b = 0.0
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        t0 = time.perf_counter()
        for i in idx:
            out_s[i] = single.generate([items[i]])[0]
        t1 = time.perf_counter()
        for i, o in zip(idx, batched.generate([items[i] for i in idx])):  # exactly one batch
            out_b[i] = o
        t_b += time.perf_counter() - t1
        t_s += t1 - t0
    return out_s, t_s, out_b, t_b


def check_same(out_s, out_b, items, what: str) -> None:
    errors = [o.error for o in out_s + out_b if o.error]
    if errors:
        sys.exit(f"{what}: {len(errors)} item(s) failed, first: {errors[0]}")
    diff = [it.id for it, a, b in zip(items, out_s, out_b) if (a.raw_output, a.output_tokens) != (b.raw_output, b.output_tokens)]
    if diff:
        sys.exit(f"{what}: batched and per-item answers differ for {len(diff)}/{len(items)} items: {diff[:5]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--model-id", default=None, help="a real checkpoint (hub id or directory) instead of the bench one")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = ap.parse_args()

    import torch

    from lalmbench.models.base import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    model_id = args.model_id
    if model_id is None:
        import tiny

        model_id = str(tiny.build_qwen2_audio(Path(tempfile.mkdtemp(prefix="bench_qwen2_audio_")), text=TEXT,
                                              audio=AUDIO))
    load0 = os.getloadavg()[0]

    def models(max_new: int):
        cfg = {"backend": "hf", "model_id": model_id, "dtype": args.dtype, "generation": {"max_new_tokens": max_new}}
        b = load_model("bench", {**cfg, "batch_size": args.batch_size})
        s = load_model("bench", {**cfg, "batch_size": 1})
        s.model, s.processor, s.tokenizer = b.model, b.processor, b.tokenizer  # one set of weights
        return b, s

    batched, single = models(args.max_new_tokens)
    n_params = sum(p.numel() for p in batched.model.parameters())
    items = make_items(args.items)
    batched.generate(items[:2]), single.generate(items[:1])  # warm-up (allocator, kernels)
    out_s, t_s, out_b, t_b = run(batched, single, items, args.batch_size)
    check_same(out_s, out_b, items, f"max_new_tokens {args.max_new_tokens}")
    toks = sum(o.output_tokens for o in out_b)
    pre_b, pre_s = models(1)
    pout_s, p_s, pout_b, p_b = run(pre_b, pre_s, items, args.batch_size)
    check_same(pout_s, pout_b, items, "max_new_tokens 1")
    pad = padding_share(batched, items, args.batch_size)
    prov = batched.provenance()
    n = len(items)
    print(f"model: {model_id} ({prov['model_class']}, {n_params / 1e6:.0f}M parameters, {prov['dtype']}, "
          f"{prov['device']}, torch threads {torch.get_num_threads()}); load average {load0:.1f} before")
    print(f"items: {n}, clips 1-8 s, batch size {args.batch_size}, max_new_tokens {args.max_new_tokens}: "
          f"{toks} tokens generated; padding share of the batched inputs {pad:.1%}")
    print(f"{'':34s} {'per-item':>10s} {'batched':>10s} {'ratio':>7s}")
    print(f"{'full generation, items/s':34s} {n / t_s:10.2f} {n / t_b:10.2f} {t_s / t_b:6.2f}x")
    print(f"{'full generation, tokens/s':34s} {toks / t_s:10.1f} {toks / t_b:10.1f}")
    print(f"{'encoder + prefill only, items/s':34s} {n / p_s:10.2f} {n / p_b:10.2f} {p_s / p_b:6.2f}x")
    dec_s, dec_b = t_s - p_s, t_b - p_b
    decoding = dec_s > 0 and dec_b > 0  # under heavy outside load the difference can drown in noise
    if decoding:
        print(f"{'decoding only (difference), tok/s':34s} {toks / dec_s:10.1f} {toks / dec_b:10.1f} {dec_s / dec_b:6.2f}x")
    else:
        print("decoding only: not measurable, prefill-only runs took as long as full generation (outside load?)")
    print(f"identical answers batched vs per-item: {n}/{n} (both runs); load average {os.getloadavg()[0]:.1f} after")
    if args.model_id is None and (args.items, args.batch_size, args.max_new_tokens) == (32, 8, 32):
        from bench.record import record

        record("batching", "per-item loop, items/s", n / t_s, "items/s")
        record("batching", "batched (bs 8), items/s", n / t_b, "items/s")
        record("batching", "batched (bs 8), generated tokens/s", toks / t_b, "tokens/s")
        # the target is a GPU user's; on CPU prefill is compute-bound (docs/models.md, "Batching benchmark")
        record("batching", f"speed-up batched / per-item, full generation ({prov['device']})", t_s / t_b, "x", ">= 3")
        record("batching", "speed-up batched / per-item, encoder + prefill only", p_s / p_b, "x")
        if decoding:
            record("batching", "speed-up batched / per-item, decoding", dec_s / dec_b, "x")
        record("batching", "padding share of batched inputs", 100 * pad, "%")
    else:
        print("(not the default bench model and sizes: figures not recorded)")


if __name__ == "__main__":
    main()
