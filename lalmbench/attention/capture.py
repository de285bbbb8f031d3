"""Run an ``hf`` model on a few items and keep its attention: one item at a time, one layer at a time.

The model is loaded with ``attn_implementation="eager"``: in transformers 5.23 every audio family
here (Qwen2-Audio, Qwen2.5-Omni and Qwen3-Omni thinkers, Gemma 3n, Voxtral, Audio Flamingo 3)
loads with ``sdpa`` by default, and sdpa (like flash attention) never forms the attention
matrix: ``output_attentions=True`` then returns an empty tuple with only a warning. Eager
attention modules return their weights on every call, so forward hooks on the chosen decoder
layers' ``self_attn`` take exactly what ``output_attentions=True`` would return for those layers
(checked in the tests), reduce it (head mean) and move it to the CPU as float16 before the next
layer runs: device memory holds one layer's weights, never all layers', and the job holds one
item's array, never all items'.

Per item: generate the answer as the benchmark does (greedy by default, the entry's generation
settings), then one forward pass over prompt + answer with the hooks on. Before any forward pass
every item's size is checked against ``attention.max_bytes`` (prompt tokens + max_new_tokens).
"""
from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from lalmbench.core import io

from lalmbench.inference import prompts
from lalmbench.attention.plan import AttentionSettings, item_dir, megabytes
from lalmbench.attention.spans import mark_spans, token_pieces
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.model_job import build_input
from lalmbench.inference.slices import Slice, prepare
from lalmbench.core.provenance import package_versions

log = logging.getLogger("lalmbench.attention")

BYTES_PER_VALUE = 2  # float16


class AttentionTooLarge(ValueError):
    """An item's attention array would exceed ``attention.max_bytes``: refused before any forward pass."""


def eager_entry(cfg: dict) -> dict:
    """The model entry with eager attention (where the entry keeps its backend keys: top or params)."""
    cfg = {k: v for k, v in cfg.items() if k != "attention"}
    params = cfg.get("params")
    if isinstance(params, dict) and "attn_implementation" in params:
        return {**cfg, "params": {**params, "attn_implementation": "eager"}}
    return {**cfg, "attn_implementation": "eager"}


def decoder_layers(model: Any) -> Any:
    """The text decoder's layers (the language model inside the audio-LM wrapper)."""
    dec = model.get_decoder()
    layers = getattr(dec, "layers", None)
    if layers is None:
        raise ValueError(f"{type(model).__name__}: cannot find its decoder layers (get_decoder().layers)")
    return layers


def resolve_layers(requested: Sequence[int] | None, n_layers: int, key: str) -> list[int]:
    """Layer indices in 0..n-1 (negative ones count from the end), in the order asked."""
    if requested is None:
        return list(range(n_layers))
    out = []
    for x in requested:
        if not -n_layers <= x < n_layers:
            raise ValueError(f"{key}.layers: layer {x} does not exist (the model has {n_layers} decoder layers: "
                             f"0..{n_layers - 1} or -{n_layers}..-1)")
        idx = x % n_layers
        if idx in out:
            raise ValueError(f"{key}.layers: layer {x} is listed twice (as {idx})")
        out.append(idx)
    return out


def audio_token_id(model: Any) -> int | None:
    """The placeholder id the model replaces with audio embeddings (the model's config, which is what
    its forward uses; a processor's attribute can name another token, as tiny Voxtral's does)."""
    conf = model.config
    for name in ("audio_token_id", "audio_token_index"):
        value = getattr(conf, name, None)
        if value is not None:
            return int(value)
    return None


def n_heads(model: Any) -> int:
    conf = model.config
    text = conf.get_text_config() if hasattr(conf, "get_text_config") else conf
    return int(text.num_attention_heads)


def needed_bytes(n_layers: int, n_heads_out: int, seq_len: int) -> int:
    return n_layers * n_heads_out * seq_len * seq_len * BYTES_PER_VALUE


def _decoder(tokenizer: Any):
    def decode(ids: list[int]) -> str:
        try:
            return tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        except TypeError:  # tokenizers without the cleanup switch
            return tokenizer.decode(ids, skip_special_tokens=False)
    return decode


def _no_placeholder(generation_config: Any, placeholder: int | None) -> Any:
    """``generation_config`` with the audio placeholder suppressed: the second forward pass reads every placeholder
    in its input as a slot for audio features, so an answer that generated one could not be passed through again."""
    if placeholder is None:
        return generation_config
    out = copy.deepcopy(generation_config)
    out.suppress_tokens = sorted({*(out.suppress_tokens or ()), placeholder})
    return out


def capture_item(hf: Any, inp: Any, layers: list[int], heads: str) -> tuple[np.ndarray, dict, dict]:
    """(attn float16 layers x heads|1 x seq x seq, tokens.json content, per-item meta) for one item."""
    import torch

    from lalmbench.models.hf.generation import count_new_tokens
    from lalmbench.models.hf.loglik import build_option_rows

    model = hf.model
    enc = hf.encode([inp])
    n_prompt = int(enc["input_ids"].shape[1])
    torch.manual_seed(hf.seed)
    with torch.inference_mode():
        seq = model.generate(**enc, generation_config=_no_placeholder(hf.generation_config, audio_token_id(model)))
    if not torch.is_tensor(seq):
        seq = seq.sequences
    new = seq[0, n_prompt:].tolist()
    answer = new[:count_new_tokens(new, hf._eos, hf._pad)]
    pad = hf._pad if hf._pad is not None else 0
    rows = build_option_rows(enc, [answer], pad) if answer else enc
    captured: dict[int, np.ndarray] = {}

    def hook(index: int):
        def keep(_module, _args, output):
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None:
                return
            w = weights[0].float()  # heads x query x key (batch of one)
            if heads == "mean":
                w = w.mean(0, keepdim=True)
            captured[index] = w.to(torch.float16).cpu().numpy()
        return keep

    all_layers = decoder_layers(model)
    handles = [all_layers[i].self_attn.register_forward_hook(hook(i)) for i in layers]
    try:
        with torch.inference_mode():
            model(**rows)
    finally:
        for h in handles:
            h.remove()
    missing = [i for i in layers if i not in captured]
    if missing:
        impl = getattr(model.config, "_attn_implementation", None)
        raise RuntimeError(f"layers {missing}: the attention modules returned no weights (attn_implementation "
                           f"{impl!r}); attention capture needs eager attention")
    attn = np.stack([captured.pop(i) for i in layers])
    ids = rows["input_ids"][0].tolist()
    a_id = audio_token_id(model)
    pieces = token_pieces(_decoder(hf.tokenizer), ids, a_id)
    tpl_parts = {"question": inp.question, "options": prompts.render_options(inp.options)}
    marked = mark_spans(pieces, ids, audio_id=a_id, n_prompt=n_prompt, prompt=inp.prompt, **tpl_parts)
    answer_text = hf.tokenizer.decode(answer, skip_special_tokens=True).strip() if answer else ""
    tokens = {"tokens": pieces, "ids": ids, "spans": marked["spans"], "notes": marked["notes"],
              "n_prompt_tokens": n_prompt, "answer_text": answer_text, "audio_token_id": a_id}
    meta = {"seq_len": len(ids), "n_prompt_tokens": n_prompt, "n_answer_tokens": len(answer),
            "n_audio_tokens": sum(e - s for s, e in marked["spans"]["audio"]), "answer_text": answer_text}
    return attn, tokens, meta


def write_item(dest: str | Path, attn: np.ndarray, tokens: dict, meta: dict) -> None:
    """attn.npy + tokens.json + meta.json, written into a temp directory then renamed into place."""
    with io.atomic_dir(dest) as tmp:
        np.save(tmp / "attn.npy", attn.astype(np.float16, copy=False))
        (tmp / "tokens.json").write_text(json.dumps(tokens, ensure_ascii=False) + "\n", encoding="utf-8")
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                       encoding="utf-8")


def _capture_key(item_key: str, settings: AttentionSettings) -> str:
    """Identity of one item's capture: the prediction key (model, condition, prompt, item, audio) plus
    what is kept; an item directory with the same key is complete and current (a resumed job skips it)."""
    what = json.dumps({"item": item_key, "layers": settings.layers, "heads": settings.heads}, sort_keys=True)
    return hashlib.sha1(what.encode()).hexdigest()


def _current(dest: str, key: str) -> bool:
    try:
        return io.read_json(Path(dest) / "meta.json").get("capture_key") == key and (Path(dest) / "attn.npy").is_file()
    except (OSError, ValueError):
        return False


def plan_items(model: str, cfg: dict, specs: Sequence[Sequence[str]], root: str, sample_rate: int,
               settings: AttentionSettings) -> list[dict]:
    """The items to capture: the first ``max_items`` of each (dataset, task, condition, prompt)."""
    from lalmbench.inference.plan import items_path, manifest_path, template_path

    fp = model_fingerprint(cfg)
    seed = int(cfg.get("seed", 0))
    out = []
    for dataset, task, condition, prompt in specs:
        sl = Slice(items=items_path(dataset, task), condition=condition, prompt=prompt,
                   template=template_path(prompt), out="", manifest=manifest_path(dataset, task))
        p = prepare(sl, model_fp=fp, seed=seed, sample_rate=sample_rate)
        for it, k in list(zip(p.items, p.keys))[:settings.max_items]:
            out.append({"dataset": dataset, "task": task, "condition": condition, "prompt": prompt, "item": it,
                        "template": p.template, "audio_source": p.audio_source, "seed": seed,
                        "dir": item_dir(root, model, dataset, task, condition, it["id"]),
                        "capture_key": _capture_key(k, settings)})
    return out


def capture_model(*, model_name: str, model_cfg: dict, specs: Sequence[Sequence[str]], root: str = "results/attention",
                  sample_rate: int = 16000, hf: Any = None) -> dict:
    """Capture every planned item of one model (one model load); return the manifest (capture.json)."""
    from lalmbench.models.base import load_model

    key = f"models.{model_name}.attention"
    settings = AttentionSettings.from_cfg(model_name, model_cfg)
    if settings is None:
        raise ValueError(f"{key}: not set, nothing to capture")
    todo = plan_items(model_name, model_cfg, specs, root, sample_rate, settings)
    fresh = [t for t in todo if not _current(t["dir"], t["capture_key"])]
    log.info("%s: %d items planned, %d already captured, %d to capture", model_name, len(todo),
             len(todo) - len(fresh), len(fresh))
    if hf is None and fresh:
        t0 = time.perf_counter()
        hf = load_model(model_name, eager_entry(model_cfg))
        log.info("model %s loaded (eager attention) in %.1f s", model_name, time.perf_counter() - t0)
    if hf is not None:
        layers = resolve_layers(settings.layers, len(decoder_layers(hf.model)), key)
        heads_out = 1 if settings.heads == "mean" else n_heads(hf.model)
        max_new = int(hf.generation_config.max_new_tokens or 0)
        for t in fresh:  # every size checked before the first forward pass
            inp = hf.prepare(build_input(t["item"], condition=t["condition"], template=t["template"],
                                         sample_rate=sample_rate, seed=t["seed"], audio_source=t["audio_source"]))
            n_prompt = int(hf.encode([inp])["input_ids"].shape[1])
            need = needed_bytes(len(layers), heads_out, n_prompt + max_new)
            if need > settings.max_bytes:
                raise AttentionTooLarge(
                    f"{key}.max_bytes: {megabytes(settings.max_bytes)} would need {megabytes(need)} for item "
                    f"{t['item']['id']!r} ({t['dataset']}/{t['task']}, {t['condition']}): {len(layers)} layers x "
                    f"{heads_out} heads x {n_prompt + max_new} query x {n_prompt + max_new} key x 2 bytes "
                    f"({n_prompt} prompt + up to {max_new} answer tokens); lower max_items/layers or set heads: mean")
        common = {"model": model_name, "model_id": hf.model_id, "model_revision": hf.model_revision,
                  "family": hf.family.name, "layers": layers, "n_decoder_layers": len(decoder_layers(hf.model)),
                  "heads": settings.heads, "n_heads": n_heads(hf.model), "dtype": "float16",
                  "attn_implementation": getattr(hf.model.config, "_attn_implementation", None),
                  "generation": hf.effective_generation, "versions": package_versions()}
        for n, t in enumerate(fresh, 1):  # inputs rebuilt per item: never every item's audio at once
            t0 = time.perf_counter()
            inp = hf.prepare(build_input(t["item"], condition=t["condition"], template=t["template"],
                                         sample_rate=sample_rate, seed=t["seed"], audio_source=t["audio_source"]))
            attn, tokens, meta = capture_item(hf, inp, layers, settings.heads)
            meta = {**common, **meta, "item_id": t["item"]["id"], "dataset": t["dataset"], "task": t["task"],
                    "condition": t["condition"], "prompt": t["prompt"], "shape": list(attn.shape),
                    "axes": ["layer", "head" if settings.heads == "all" else "head_mean", "query", "key"],
                    "capture_key": t["capture_key"]}
            write_item(t["dir"], attn, tokens, meta)
            log.info("[%d/%d] %s: %s, %s in %.1f s", n, len(fresh), t["dir"], "x".join(map(str, attn.shape)),
                     megabytes(attn.nbytes), time.perf_counter() - t0)
            del attn
    items = [{k: t[k] for k in ("dataset", "task", "condition", "prompt", "dir")} | {"item": t["item"]["id"]}
             for t in todo]
    return {"model": model_name, "settings": settings.to_dict(), "items": items,
            "captured": len(fresh), "reused": len(todo) - len(fresh)}
