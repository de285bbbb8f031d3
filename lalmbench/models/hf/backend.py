"""The ``hf`` backend: any of the families in :mod:`.families` through transformers.

Batches are sorted by length (longest first, so an out-of-memory batch shows up at once) and
left-padded; a batch that fails marks each of its items with the error so the runner can retry
them one at a time; an item that is bad on its own (empty or non-finite audio) fails alone.
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
import warnings
from typing import Any

import numpy as np

from ..base import Model, ModelInput, ModelOutput, register_backend
from ..offline_llm import resolve_model_id
from .families import Family, audio_note, family_for_model_type, get_family, probe_render
from .generation import (count_new_tokens, count_reasoning_tokens, eos_ids, resolve_generation_config,
                         think_token_ids)
from .loading import ModelLoadError, call_from_pretrained, check_loading_info
from .presets import apply_preset, audio_position_note
from .settings import HFSettings, flatten_params

DTYPES = ("auto", "bfloat16", "float16", "float32")


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:2000]


def resample(audio: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Polyphase resampling (scipy), only when the item's rate differs from the processor's."""
    if sr_in == sr_out:
        return audio
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(int(sr_in), int(sr_out))
    return resample_poly(audio, sr_out // g, sr_in // g).astype(np.float32)


def length_key(item: ModelInput) -> tuple[float, int]:
    """What drives the padded length of a batch: audio duration first, then prompt length."""
    return (item.duration_s, len(item.prompt))


@register_backend("hf")
class HFModel(Model):
    def __init__(self, name: str, cfg: dict[str, Any]):
        super().__init__(name, cfg)
        import torch

        self.torch = torch
        self.settings = s = HFSettings.from_cfg(name, cfg)
        self.batch_size = s.batch_size
        # where the weights are: model_id, or the verified local directory of a model lalmbench fetches itself
        self.source = resolve_model_id(s.model_id)
        # a GGUF holds a plain causal LM (transformers reads no processor from it): the text family
        self.family: Family = get_family(s.family or "text") if s.family or s.gguf_file else self._infer_family()
        gguf = {"gguf_file": s.gguf_file} if s.gguf_file and not s.processor_id else {}
        self.processor = self.family.load_processor(s.processor_id or self.source,
                                                    None if s.processor_id else s.revision, s.trust_remote_code,
                                                    **gguf)
        self.tokenizer = self.family.tokenizer(self.processor)
        self._apply_preset(cfg)
        self.model = self._load_model()
        self.generation_config, self.effective_generation = resolve_generation_config(
            self.model.generation_config, s.generation, self.family.stop_token_ids(self.processor))
        # generate() fills unset (None) fields from model.generation_config: make that ours too, so a
        # checkpoint's sampling defaults cannot leak back in
        self.model.generation_config = self.generation_config
        self._eos = eos_ids(self.generation_config)
        self._pad = self.generation_config.pad_token_id
        # the processor's audio placeholder, expanded to one id per audio frame: counts the audio's share of the input
        self._audio_id = getattr(self.processor, "audio_token_id", None)
        # a thinking span's markers: its tokens are counted apart from the answer's (extra.reasoning_tokens)
        self._think = think_token_ids(self.tokenizer)

    # ------------------------------------------------------------------ loading
    def _apply_preset(self, cfg: dict[str, Any]) -> None:
        """Fill the family's evaluation preset into the keys the entry leaves unset (presets.py)."""
        s = self.settings
        resolved, self.preset_info = apply_preset(self.name, self.family.name, flatten_params(self.name, cfg))
        s.system_prompt, s.audio_position = resolved.get("system_prompt"), resolved.get("audio_position")
        s.generation = dict(resolved.get("generation") or {})
        note = audio_position_note(self.family, flatten_params(self.name, cfg).get("audio_position"))
        if note:
            warnings.warn(f"model {self.name!r}: {note}", stacklevel=2)

    def _infer_family(self) -> Family:
        from transformers import AutoConfig

        s = self.settings
        conf = call_from_pretrained(f"model {self.name!r} config", AutoConfig.from_pretrained, self.source,
                                    s.revision, trust_remote_code=s.trust_remote_code)
        try:
            return family_for_model_type(conf.model_type)
        except ValueError as e:
            raise ValueError(f"model {self.name!r}: {e}") from None

    def _load_model(self):
        torch, s = self.torch, self.settings
        if s.dtype not in DTYPES:
            raise ValueError(f"model {self.name!r}: dtype must be one of {list(DTYPES)}, got {s.dtype!r}")
        kwargs: dict[str, Any] = dict(dtype="auto" if s.dtype == "auto" else getattr(torch, s.dtype),
                                      trust_remote_code=s.trust_remote_code, output_loading_info=True)
        if s.attn_implementation:
            kwargs["attn_implementation"] = s.attn_implementation
        if s.gguf_file:
            kwargs["gguf_file"] = s.gguf_file
        device_map = s.device_map if s.device_map is not None else ("auto" if torch.cuda.is_available() else None)
        if device_map:
            kwargs["device_map"] = device_map
        model, info = call_from_pretrained(f"model {self.name!r} weights", self.family.model_loader(), self.source,
                                           s.revision, **kwargs)
        check_loading_info(f"model {self.name!r}", self.source, info)
        return model.eval()

    def provenance(self) -> dict[str, Any]:
        """What a reader needs to reproduce a prediction besides model_id/revision."""
        vers = {}
        for pkg in ("transformers", "torch", "tokenizers", "accelerate") + (("gguf",) if self.settings.gguf_file else ()):
            try:
                vers[pkg] = importlib.metadata.version(pkg)
            except importlib.metadata.PackageNotFoundError:
                pass
        return {"family": self.family.name, "model_class": type(self.model).__name__,
                "dtype": str(self.model.dtype).replace("torch.", ""), "device": str(self.model.device),
                "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
                "scoring": self.settings.scoring, "generation": self.effective_generation, "versions": vers,
                **self.prompt_provenance(),
                **({"gguf_file": self.settings.gguf_file} if self.settings.gguf_file else {})}

    @property
    def multi_audio(self) -> bool:
        """Whether an item's several clips go into one turn as they are (else the runner joins them)."""
        return self.family.multi_audio

    def prompt_provenance(self) -> dict[str, Any]:
        """The preset used, the system prompt we pass, and the full rendered prompt of a probe item (with the
        template's own default system turn, if it writes one), so a reader sees what the model was told."""
        s = self.settings
        return {"preset": self.preset_info, "system_prompt": s.system_prompt, "audio_position": s.audio_position,
                "audio_limit_s": self.family.audio_limit_s(self.processor),
                "rendered_prompt": probe_render(self.family, self.processor, s.system_prompt, s.audio_position)}

    # ------------------------------------------------------------------ inference
    def prepare(self, item: ModelInput) -> ModelInput:
        """Check one item's audio and bring it to the processor's sampling rate."""
        if item.audio is None:
            return item
        if not self.family.takes_audio:
            raise ValueError(f"family {self.family.name!r} is text-only and cannot take audio: run it with the "
                             "no-audio condition")
        sr = self.family.sampling_rate(self.processor)
        clips = []
        for clip in item.clips:
            audio = np.asarray(clip, dtype=np.float32)
            if audio.ndim != 1 or audio.size == 0:
                raise ValueError(f"item {item.id!r}: audio must be a non-empty mono array, got shape {audio.shape}")
            if not np.isfinite(audio).all():
                raise ValueError(f"item {item.id!r}: audio contains NaN or infinite samples")
            clips.append(resample(audio, item.sample_rate, sr))
        return dataclasses.replace(item, audio=clips[0], audios=clips if item.audios else None, sample_rate=sr)

    def audio_note(self, item: ModelInput) -> dict[str, Any]:
        """``{"audio_truncated": ...}`` when the family's processor will cut this clip, else ``{}``."""
        return audio_note(item, self.family.clips(item), self.family.audio_limit_s(self.processor))

    def encode(self, items: list[ModelInput], padding_side: str = "left") -> dict[str, Any]:
        """Processor outputs as tensors on the model's device, float features in the model's dtype."""
        s = self.settings
        enc = self.family.encode(self.processor, items, s.system_prompt, s.audio_position, padding_side)
        out = {}
        for k, v in dict(enc).items():
            if not self.torch.is_tensor(v):
                continue
            if k == "token_type_ids" and self.family.name != "gemma3n":
                continue  # plain tokenizers emit it; the models here do not take it (Gemma 3n does)
            v = v.to(self.model.device)
            out[k] = v.to(self.model.dtype) if v.is_floating_point() else v
        return out

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        outputs: list[ModelOutput | None] = [None] * len(batch)
        ready: list[tuple[int, ModelInput]] = []
        for i, item in enumerate(batch):
            try:
                ready.append((i, self.prepare(item)))
            except Exception as e:  # noqa: BLE001 - recorded per item, the rest of the batch goes on
                outputs[i] = ModelOutput(raw_output=None, error=_error(e))
        if self.settings.scoring == "loglik":
            from .loglik import score_item

            for i, item in ready:
                try:
                    outputs[i] = score_item(self, item)
                except Exception as e:  # noqa: BLE001
                    outputs[i] = ModelOutput(raw_output=None, error=_error(e))
            return outputs  # type: ignore[return-value]
        # longest first; never mix audio and text-only items in one processor call
        ready.sort(key=lambda p: (p[1].audio is not None, length_key(p[1])), reverse=True)
        # a seeded sample is drawn alone: torch's one generator would otherwise make it depend on its batch
        step = 1 if any(it.seed is not None for _, it in ready) else self.batch_size
        for start in range(0, len(ready), step):
            chunk = ready[start:start + step]
            groups = [[p for p in chunk if p[1].audio is not None], [p for p in chunk if p[1].audio is None]]
            for group in (g for g in groups if g):
                try:
                    results = self._generate_batch([it for _, it in group])
                except Exception as e:  # noqa: BLE001 - e.g. OOM on a long clip: the runner retries singly
                    msg = _error(e)
                    results = [ModelOutput(raw_output=None, error=f"batch of {len(group)} failed: {msg}")
                               for _ in group]
                for (i, _), res in zip(group, results):
                    outputs[i] = res
        return outputs  # type: ignore[return-value]

    def _generate_batch(self, items: list[ModelInput]) -> list[ModelOutput]:
        torch = self.torch
        enc = self.encode(items)
        torch.manual_seed(items[0].seed if len(items) == 1 and items[0].seed is not None else self.seed)
        with torch.inference_mode():
            seq = self.model.generate(**enc, generation_config=self.generation_config)
        if not torch.is_tensor(seq):
            seq = seq.sequences
        n_in = enc["input_ids"].shape[1]
        new = seq[:, n_in:].tolist()
        counts = [count_new_tokens(toks, self._eos, self._pad) for toks in new]
        made = [t[:n] for t, n in zip(new, counts)]
        texts = self.tokenizer.batch_decode(made, skip_special_tokens=True)
        thinking = [count_reasoning_tokens(t, self._think) for t in made]
        in_counts = enc["attention_mask"].sum(-1).tolist()
        audio_counts = ((enc["input_ids"] == self._audio_id) & enc["attention_mask"].bool()).sum(-1).tolist() \
            if isinstance(self._audio_id, int) else [None] * len(items)
        return [ModelOutput(raw_output=text.strip(), input_tokens=int(n_i), output_tokens=int(n_o),
                            extra={"generation": self.effective_generation, **self.audio_note(it),
                                   **({} if n_a is None else {"input_audio_tokens": int(n_a)}),
                                   **({} if n_r is None else {"reasoning_tokens": n_r})})
                for text, n_i, n_o, n_a, n_r, it in zip(texts, in_counts, counts, audio_counts, thinking, items)]

    def close(self) -> None:
        self.model = None
        if self.torch.cuda.is_available():
            self.torch.cuda.empty_cache()


__all__ = ["HFModel", "ModelLoadError"]
