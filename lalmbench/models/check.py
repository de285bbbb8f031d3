"""Check what a checkpoint will be fed before submitting a job: ``python -m lalmbench.models.check``.

For one item (a 5 s tone and a short multiple-choice prompt, or ``--audio``/``--prompt``) it prints the exact
rendered prompt, the first and last token ids after audio expansion, the number of audio tokens, the
processor's audio limit, the generation settings the model will run with, and the prompt and first ids the
vLLM backend would send. ``--render-only`` reads only the processor, config.json and generation_config.json
(no weights), so it runs on a login node; without it the model is loaded and generates an answer.

    python -m lalmbench.models.check qwen2-audio --config config/config.yaml --render-only
    python -m lalmbench.models.check my_entry.yaml
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .base import ModelInput
from .hf.families import Family, get_family
from .hf.presets import apply_preset
from .hf.settings import flatten_params

DEFAULT_PROMPT = "What is the sound? Answer with the letter. (A) speech (B) music (C) dog barking (D) silence"


def load_entry(target: str, config: str | None) -> tuple[str, dict[str, Any]]:
    """A model entry from a YAML file holding one entry (or a config with ``models:``), or by name from the config."""
    path = Path(target)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        data = yaml.safe_load(path.read_text()) or {}
        if "models" in data:
            models = data["models"]
            if len(models) != 1:
                raise SystemExit(f"{path}: holds {len(models)} model entries; name one with --config {path} <name>")
            return next(iter(models.items()))
        return path.stem, data
    cfg_path = Path(config or "config/config.yaml")
    if not cfg_path.is_file():
        raise SystemExit(f"{target!r} is not a YAML file, and the config {cfg_path} to look it up in does not exist")
    models = (yaml.safe_load(cfg_path.read_text()) or {}).get("models") or {}
    if target not in models:
        import difflib

        close = difflib.get_close_matches(target, list(models), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise SystemExit(f"{cfg_path}: no model entry {target!r}{hint}")
    return target, models[target]


def resolve_family(entry: dict[str, Any], source: str) -> Family:
    if entry.get("family"):
        return get_family(str(entry["family"]))
    from transformers import AutoConfig

    from .hf.families import family_for_model_type

    conf = AutoConfig.from_pretrained(source, revision=entry.get("revision") or None,
                                      trust_remote_code=bool(entry.get("trust_remote_code", False)))
    return family_for_model_type(conf.model_type)


def probe_item(audio_path: str | None, prompt: str, seconds: float) -> ModelInput:
    if audio_path:
        import soundfile as sf

        audio, sr = sf.read(audio_path, dtype="float32", always_2d=True)
        audio, sr = audio.mean(axis=1), int(sr)
    else:
        sr = 16000
        t = np.arange(int(seconds * sr)) / sr
        audio = (0.3 * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)
    return ModelInput(id="check", prompt=prompt, question=prompt, options=[], audio=audio, sample_rate=sr)


def audio_token_id(processor: Any, tok: Any, source: str, entry: dict[str, Any]) -> int | None:
    """The id the model replaces with audio embeddings: from config.json (what the model reads), else the processor's."""
    try:
        from transformers import AutoConfig

        conf = AutoConfig.from_pretrained(source, revision=entry.get("revision") or None,
                                          trust_remote_code=bool(entry.get("trust_remote_code", False)))
        for c in (conf, getattr(conf, "thinker_config", None)):
            for key in ("audio_token_id", "audio_token_index"):
                if c is not None and isinstance(getattr(c, key, None), int):
                    return int(getattr(c, key))
    except (OSError, ValueError):
        pass
    tid = getattr(processor, "audio_token_id", None)
    if tid is None and getattr(processor, "audio_token", None):
        tid = tok.convert_tokens_to_ids(processor.audio_token)
    return None if tid is None else int(tid)


def describe_ids(tok: Any, ids: list[int]) -> str:
    toks = tok.convert_ids_to_tokens(ids)
    return " ".join(f"{i}:{t!r}" for i, t in zip(ids, toks))


def report(name: str, entry: dict[str, Any], item: ModelInput, render_only: bool) -> dict[str, Any]:
    """Everything the command prints, as a dict (the tests read it)."""
    from .hf.backend import resample
    from .hf.generation import resolve_generation_config
    from .vllm_backend import build_prompt_request

    entry = flatten_params(name, entry)
    source = str(entry.get("processor_id") or entry["model_id"])
    fam = resolve_family(entry, source)
    resolved, preset = apply_preset(name, fam.name, entry)
    sp, pos = resolved.get("system_prompt"), resolved.get("audio_position")
    processor = fam.load_processor(source, entry.get("revision") or None, bool(entry.get("trust_remote_code", False)))
    tok = fam.tokenizer(processor)
    sr = fam.sampling_rate(processor)
    item = ModelInput(**{**item.__dict__, "audio": resample(item.audio, item.sample_rate, sr), "sample_rate": sr})
    text = fam.render(processor, item, sp, pos)
    ids = fam.encode(processor, [item], sp, pos)["input_ids"][0].tolist()
    aid = audio_token_id(processor, tok, str(entry["model_id"]), entry)
    out: dict[str, Any] = {
        "model": name, "family": fam.name, "preset": preset, "system_prompt": sp, "audio_position": pos,
        "rendered_prompt": text, "n_ids": len(ids), "first_ids": ids[:8], "last_ids": ids[-8:],
        "audio_tokens": None if aid is None else sum(1 for i in ids if i == aid),
        "audio_limit_s": fam.audio_limit_s(processor), "clip_s": round(item.duration_s, 3),
        "multi_audio": fam.multi_audio, "tokenizer": tok}
    if fam.name != "voxtral":  # vLLM drives Voxtral in chat mode: it renders that prompt itself
        req = build_prompt_request(item, fam.name, processor, sp, pos)
        out["vllm_prompt"] = req["prompt"]
        out["vllm_first_ids"] = tok(req["prompt"])["input_ids"][:8]  # vLLM tokenizes with special tokens on
    from transformers import GenerationConfig

    try:
        base = GenerationConfig.from_pretrained(str(entry["model_id"]), revision=entry.get("revision") or None)
    except OSError:
        base = GenerationConfig()
    _, out["generation"] = resolve_generation_config(base, resolved.get("generation") or {},
                                                     fam.stop_token_ids(processor))
    if not render_only:
        from .base import load_model

        model = load_model(name, {**entry, "backend": "hf"})
        res = model.generate([item])[0]
        out["answer"], out["error"] = res.raw_output, res.error
        out["generation"] = model.effective_generation
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lalmbench.models.check", description=__doc__.split("\n")[0])
    ap.add_argument("target", help="a model entry name in --config, or a YAML file holding one entry")
    ap.add_argument("--config", default=None, help="config file to look the entry up in (default config/config.yaml)")
    ap.add_argument("--render-only", action="store_true", help="processor files only, no weights")
    ap.add_argument("--audio", default=None, help="an audio file for the item (default: a 5 s 440 Hz tone)")
    ap.add_argument("--seconds", type=float, default=5.0, help="length of the default tone")
    ap.add_argument("--prompt", default=DEFAULT_PROMPT)
    args = ap.parse_args(argv)
    name, entry = load_entry(args.target, args.config)
    if entry.get("backend") not in ("hf", "vllm"):
        raise SystemExit(f"model {name!r}: backend {entry.get('backend')!r}; check covers hf and vllm entries")
    r = report(name, entry, probe_item(args.audio, args.prompt, args.seconds), args.render_only)
    tok = r.pop("tokenizer")
    w = sys.stdout.write
    w(f"model {r['model']}  family {r['family']}  preset {r['preset'].get('preset')}"
      f"  ({r['preset'].get('source', 'no preset')})\n")
    w(f"system_prompt: {r['system_prompt']!r}  audio_position: {r['audio_position'] or 'family default'}\n")
    w("--- rendered prompt (hf) ---\n" + r["rendered_prompt"] + "\n--- end ---\n")
    w(f"ids: {r['n_ids']} after audio expansion\n  first: {describe_ids(tok, r['first_ids'])}\n"
      f"  last:  {describe_ids(tok, r['last_ids'])}\n")
    w(f"audio tokens: {r['audio_tokens']} for a {r['clip_s']} s clip; audio limit: "
      f"{'whole clip kept' if r['audio_limit_s'] is None else str(r['audio_limit_s']) + ' s (longer clips are cut)'}"
      f"; several clips per turn: {'yes' if r['multi_audio'] else 'no (joined with a silence gap)'}\n")
    if "vllm_prompt" in r:
        w("--- prompt (vllm) ---\n" + r["vllm_prompt"] + "\n--- end ---\n")
        w(f"  vllm first ids (before audio expansion): {describe_ids(tok, r['vllm_first_ids'])}\n")
    w(f"generation: {r['generation']}\n")
    if "answer" in r:
        w(f"answer: {r['answer']!r}" + (f"  error: {r['error']}" if r["error"] else "") + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
