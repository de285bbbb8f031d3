"""The ``vllm`` backend: offline ``LLM.generate`` / ``LLM.chat`` with audio inputs.

vLLM pins its own torch and transformers, so it lives in its own env (envs/vllm) and is imported
only when a model entry with ``backend: vllm`` runs. Request building is plain Python and is tested
without vLLM installed:

* ``prompt`` mode (default): the prompt text comes from the checkpoint's own HF processor chat
  template, rendered exactly as the ``hf`` backend renders it (same family adapters), so a parity
  check between the two backends compares models, not prompts; the audio goes in
  ``multi_modal_data={"audio": [(array, sample_rate), ...]}`` (every clip of a multi-clip item, in
  order, for the families that take several) and vLLM's processor expands the placeholders.
* ``chat`` mode (default for Voxtral, whose Tekken tokenizer vLLM drives in ``mistral`` mode):
  OpenAI-style messages with the audio as a base64 WAV data URL, rendered by vLLM itself.
"""
from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np

from lalmbench.inference.sampling import without_samples

from .base import PIPELINE_KEYS, Model, ModelInput, ModelOutput, register_backend
from .hf.families import audio_note, get_family, probe_render, wav_base64
from .hf.generation import count_reasoning_tokens, think_token_ids
from .hf.presets import apply_preset, audio_position_note
from .hf.settings import flatten_params

VLLM_FAMILIES = ("qwen2_audio", "qwen2_5_omni", "qwen3_omni", "gemma3n", "voxtral", "audioflamingo3", "text")
ENGINE_KEYS = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "max_num_seqs", "dtype",
               "enforce_eager", "limit_mm_per_prompt", "engine_args")
# clips per prompt vLLM 0.32's model for the family accepts (its get_supported_mm_limits; the others: no limit)
VLLM_MAX_CLIPS = {"audioflamingo3": 1, "voxtral": 5}
# limit_mm_per_prompt's default for a family that takes several clips: Voxtral's own maximum
DEFAULT_CLIPS = 5
# attention capture is hf-only (lalmbench.attention.plan refuses it elsewhere with its reason)
KNOWN_KEYS = (PIPELINE_KEYS - {"attention"}) | {"model_id", "revision", "family", "batch_size", "generation",
                                                "trust_remote_code", "system_prompt", "audio_position", "mode",
                                                "preset", *ENGINE_KEYS}


def _require_vllm():
    try:
        return importlib.import_module("vllm")
    except ImportError as e:
        raise ImportError(
            "backend 'vllm' needs the vllm package, which this environment lacks "
            f"({e}). Run the model in the 'vllm' env (env: vllm in its model entry; pins in "
            "envs/vllm/requirements.txt), or use backend 'hf' for the same checkpoint.") from e


def check_config(name: str, cfg: dict[str, Any]) -> None:
    unknown = sorted(set(cfg) - KNOWN_KEYS)
    if unknown:
        raise ValueError(f"model {name!r} (backend vllm): unknown key(s) {unknown}; known: {sorted(KNOWN_KEYS)}")
    if not cfg.get("model_id"):
        raise ValueError(f"model {name!r} (backend vllm): 'model_id' is required")
    fam = cfg.get("family")
    if not fam:
        raise ValueError(f"model {name!r} (backend vllm): 'family' is required, one of {list(VLLM_FAMILIES)}")
    if get_family(fam).name not in VLLM_FAMILIES:
        raise ValueError(f"model {name!r}: family {fam!r} is not wired for vllm; use one of {list(VLLM_FAMILIES)}")
    limit = (cfg.get("limit_mm_per_prompt") or {}).get("audio")
    most = VLLM_MAX_CLIPS.get(get_family(fam).name)
    if limit is not None and most is not None and int(limit) > most:
        raise ValueError(f"model {name!r}: limit_mm_per_prompt audio {limit} exceeds what vLLM's model for family "
                         f"{get_family(fam).name!r} takes ({most} per prompt)")
    if cfg.get("mode", None) not in (None, "prompt", "chat"):
        raise ValueError(f"model {name!r}: mode must be 'prompt' or 'chat', got {cfg.get('mode')!r}")


def default_mode(family: str) -> str:
    return "chat" if get_family(family).name == "voxtral" else "prompt"


def default_clips(family: str) -> int:
    """Clips per prompt the engine accepts unless the entry says: all a multi-clip family's model takes
    (at most DEFAULT_CLIPS), one for a family that hears multi-clip items joined, none for text."""
    fam = get_family(family)
    if not fam.takes_audio:
        return 0
    if not fam.multi_audio:
        return 1
    return min(DEFAULT_CLIPS, VLLM_MAX_CLIPS.get(fam.name, DEFAULT_CLIPS))


def engine_kwargs(cfg: dict[str, Any]) -> dict[str, Any]:
    """Arguments for ``vllm.LLM(...)`` from a model entry."""
    fam = get_family(cfg["family"]).name
    kw: dict[str, Any] = {
        "model": str(cfg["model_id"]),
        "tensor_parallel_size": int(cfg.get("tensor_parallel_size", 1)),
        "trust_remote_code": bool(cfg.get("trust_remote_code", False)),
        "seed": int(cfg.get("seed", 0)),
        "limit_mm_per_prompt": cfg.get("limit_mm_per_prompt", {"audio": default_clips(fam)}),
    }
    if cfg.get("revision"):
        kw["revision"] = str(cfg["revision"])
        kw["tokenizer_revision"] = str(cfg["revision"])
    for key in ("max_model_len", "gpu_memory_utilization", "max_num_seqs", "dtype", "enforce_eager"):
        if cfg.get(key) is not None:
            kw[key] = cfg[key]
    if fam == "voxtral":
        kw.update(tokenizer_mode="mistral", config_format="mistral", load_format="mistral")
    # the engine's per-request stats: RequestOutput.metrics, whose first-token latency is extra.ttft_s
    kw["disable_log_stats"] = False
    kw.update(cfg.get("engine_args") or {})
    return kw


def sampling_kwargs(cfg: dict[str, Any], stop_token_ids: list[int] | None = None) -> dict[str, Any]:
    """``SamplingParams`` arguments: greedy (temperature 0) unless the config asks for sampling.

    ``stop_token_ids`` (the family's end-of-turn tokens) make the stop explicit rather than trusting the
    checkpoint's generation_config.json to list them."""
    gen = without_samples(cfg.get("generation") or {})  # draws per item: the pipeline's (inference.sampling)
    if "thinker_max_new_tokens" in gen:
        gen["max_new_tokens"] = gen.pop("thinker_max_new_tokens")
    out: dict[str, Any] = {"max_tokens": int(gen.pop("max_new_tokens", 128)), "seed": int(cfg.get("seed", 0))}
    do_sample = bool(gen.pop("do_sample", False))
    if gen.pop("num_beams", 1) not in (1, None):
        raise ValueError("backend vllm: beam search is not supported through LLM.generate; set num_beams: 1")
    if "repetition_penalty" in gen:
        out["repetition_penalty"] = gen.pop("repetition_penalty")
    sampling = {k: gen.pop(k) for k in ("temperature", "top_p", "top_k") if k in gen}
    if do_sample:
        out.update(sampling)
        out.setdefault("temperature", 1.0)
    else:  # greedy: vLLM's temperature 0; sampling knobs are ignored, as the hf backend does
        out["temperature"] = 0.0
    if gen:
        raise ValueError(f"backend vllm: generation key(s) {sorted(gen)} have no SamplingParams equivalent")
    if stop_token_ids:
        out["stop_token_ids"] = list(stop_token_ids)
    return out


def build_prompt_request(item: ModelInput, family: str, processor: Any, system_prompt: str | None = None,
                         audio_position: str | None = None) -> dict[str, Any]:
    """A ``prompt`` mode request: HF chat-template text + the raw audio (every clip, in order) for vLLM's
    processor. vLLM tokenizes the text with special tokens on, so a template's leading BOS is dropped when
    the tokenizer adds one itself (Gemma 3n): the ids start with one BOS, as with the hf backend."""
    fam = get_family(family)
    req: dict[str, Any] = {"prompt": fam.prompt_text(processor, item, system_prompt, audio_position)}
    clips = fam.clips(item)
    if clips:
        req["multi_modal_data"] = {"audio": [(np.asarray(c, dtype=np.float32), int(item.sample_rate)) for c in clips]}
    return req


def build_chat_messages(item: ModelInput, system_prompt: str | None = None,
                        audio_position: str = "before", multi_audio: bool = False) -> list[dict]:
    """A ``chat`` mode conversation: OpenAI content parts, audio as base64 WAV data URLs."""
    clips = item.clips if multi_audio else ([] if item.audio is None else [item.audio])
    text: list[dict] = [{"type": "text", "text": item.prompt}]
    parts = [{"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64," + wav_base64(
        np.asarray(c, dtype=np.float32), int(item.sample_rate))}} for c in clips]
    content = parts + text if audio_position == "before" else text + parts
    msgs: list[dict] = [{"role": "user", "content": content}]
    if system_prompt:
        msgs.insert(0, {"role": "system", "content": system_prompt})
    return msgs


def first_token_s(req_out: Any) -> float | None:
    """Seconds from the request's arrival to its first token: ``RequestOutput.metrics`` (vLLM's
    RequestStateStats, present when the engine logs stats: ``disable_log_stats: False``); None without."""
    latency = getattr(getattr(req_out, "metrics", None), "first_token_latency", None)
    return round(float(latency), 6) if isinstance(latency, (int, float)) and latency > 0 else None


def to_output(req_out: Any, note: dict | None = None, audio_id: int | None = None,
              think: tuple[int | None, int | None] = (None, None)) -> ModelOutput:
    """One request's output: text, the engine's token counts, and where known the audio placeholders'
    share of the prompt (``audio_id``), the thinking span's tokens (``think``) and the first token's time."""
    comp = req_out.outputs[0]
    prompt_ids, ids = list(req_out.prompt_token_ids or []), list(comp.token_ids or [])
    counts = {"input_audio_tokens": prompt_ids.count(audio_id) if isinstance(audio_id, int) else None,
              "reasoning_tokens": count_reasoning_tokens(ids, think), "ttft_s": first_token_s(req_out)}
    return ModelOutput(raw_output=comp.text.strip(), input_tokens=len(prompt_ids), output_tokens=len(ids),
                       extra={"finish_reason": getattr(comp, "finish_reason", None), **(note or {}),
                              **{k: v for k, v in counts.items() if v is not None}})


@register_backend("vllm")
class VLLMModel(Model):
    def __init__(self, name: str, cfg: dict[str, Any]):
        cfg = flatten_params(name, cfg)
        super().__init__(name, cfg)
        check_config(name, cfg)
        self.family = get_family(cfg["family"]).name
        fam = get_family(self.family)
        note = audio_position_note(fam, cfg.get("audio_position"))
        if note:
            warnings.warn(f"model {name!r}: {note}", stacklevel=2)
        self.cfg, self.preset_info = apply_preset(name, self.family, cfg)
        self.mode = cfg.get("mode") or default_mode(self.family)
        self.batch_size = int(cfg.get("batch_size", 32))
        sampling_kwargs(self.cfg)  # validate before paying for engine start-up
        vllm = _require_vllm()
        self.processor = None
        if self.mode == "prompt":
            self.processor = fam.load_processor(
                str(cfg["model_id"]), cfg.get("revision") or None, bool(cfg.get("trust_remote_code", False)))
        self.limit_s = fam.audio_limit_s(self.processor) if self.processor is not None else None
        self.sampling = sampling_kwargs(self.cfg, fam.stop_token_ids(self.processor) if self.processor else None)
        self.llm = vllm.LLM(**engine_kwargs(self.cfg))
        self.params = vllm.SamplingParams(**self.sampling)
        # what the cost columns count: the audio placeholders of a prompt, the thinking span of an output
        self.audio_id = getattr(self.processor, "audio_token_id", None)
        self.think = think_token_ids(self.llm.get_tokenizer())

    @property
    def multi_audio(self) -> bool:
        """Whether an item's several clips go into one prompt as they are (else the runner joins them)."""
        return get_family(self.family).multi_audio

    def provenance(self) -> dict[str, Any]:
        sp, pos = self.cfg.get("system_prompt"), self.cfg.get("audio_position")
        out = {"family": self.family, "mode": self.mode, "sampling": self.sampling, "preset": self.preset_info,
               "system_prompt": sp, "audio_position": pos, "audio_limit_s": self.limit_s}
        if self.processor is not None:
            out["rendered_prompt"] = probe_render(get_family(self.family), self.processor, sp, pos)
        return out

    def requests(self, batch: list[ModelInput]) -> list[Any]:
        sp, pos = self.cfg.get("system_prompt"), self.cfg.get("audio_position")
        fam = get_family(self.family)
        if not fam.multi_audio:
            several = [it.id for it in batch if len(it.clips) > 1]
            if several:  # its clips would be dropped after the first: the runner joins them for such a family
                raise ValueError(f"family {self.family!r} takes one clip per prompt, item(s) {several[:3]} carry "
                                 f"several: run them through the pipeline, which joins them (multi_audio_gap_s)")
        limit = int((self.cfg.get("limit_mm_per_prompt") or {}).get("audio", default_clips(self.family)))
        over = [it.id for it in batch if len(fam.clips(it)) > limit]
        if over:  # vLLM would refuse the prompt with a less telling message
            most = VLLM_MAX_CLIPS.get(self.family)
            raise ValueError(f"family {self.family!r}: item(s) {over[:3]} carry more clips than "
                             f"limit_mm_per_prompt allows ({limit}): set limit_mm_per_prompt: {{audio: N}} in the "
                             f"model entry" + (f" (vLLM takes at most {most} for this family)" if most else ""))
        if self.mode == "prompt":
            return [build_prompt_request(it, self.family, self.processor, sp, pos) for it in batch]
        return [build_chat_messages(it, sp, pos or fam.audio_position, fam.multi_audio) for it in batch]

    def request_params(self, batch: list[ModelInput]) -> Any:
        """The entry's SamplingParams, or one per request when items carry their own sample seed."""
        if all(it.seed is None for it in batch):
            return self.params
        vllm = _require_vllm()
        return [vllm.SamplingParams(**{**self.sampling, **({} if it.seed is None else {"seed": it.seed})})
                for it in batch]

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        try:
            reqs = self.requests(batch)
            params = self.request_params(batch)
            if self.mode == "prompt":
                outs = self.llm.generate(reqs, sampling_params=params, use_tqdm=False)
            else:
                outs = self.llm.chat(reqs, sampling_params=params, use_tqdm=False)
        except Exception as e:  # noqa: BLE001 - the runner retries each item alone
            msg = f"batch of {len(batch)} failed: {type(e).__name__}: {e}"[:2000]
            return [ModelOutput(raw_output=None, error=msg) for _ in batch]
        fam = get_family(self.family)
        return [to_output(o, audio_note(it, fam.clips(it), self.limit_s), self.audio_id, self.think)
                for o, it in zip(outs, batch)]

    def close(self) -> None:
        self.llm = None
