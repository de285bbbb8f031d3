"""One adapter per model family: which class to load, how to render the chat prompt, how to encode.

The families differ in a few places only: the transformers class that holds the weights, where the
audio goes in the conversation (and whether the processor takes arrays, or base64 WAV for Voxtral),
feature-extractor padding (Gemma 3n), and what extra packages their processor or model needs.
Everything else (batching, decoding, token counts, generation settings) lives in
:mod:`lalmbench.models.hf.backend` and is shared.
"""
from __future__ import annotations

import base64
import importlib.util
import io
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..base import ModelInput


@dataclass(frozen=True)
class Family:
    name: str
    model_class: str  # attribute of the transformers package
    model_types: tuple[str, ...]  # config.model_type values that select this family
    audio_position: str = "before"  # where the audio goes relative to the prompt text
    takes_audio: bool = True
    needs: tuple[str, ...] = ()  # import names its processor or model needs beyond transformers
    note: str = ""
    # extra feature-extractor arguments for every call (see the gemma3n entry below)
    audio_kwargs: dict = field(default_factory=dict, hash=False)
    # longest audio the processor passes on (seconds); it silently cuts the rest, so outputs say so
    max_audio_s: float | None = None

    # ---------------------------------------------------------------- loading
    def load_processor(self, source: str, revision: str | None, trust_remote_code: bool, **kwargs: Any) -> Any:
        from transformers import AutoProcessor

        from .loading import ModelLoadError, call_from_pretrained

        missing = [m for m in self.needs if importlib.util.find_spec(m) is None]
        if missing:
            raise ModelLoadError(
                f"family {self.name!r}: its processor/model needs {', '.join(missing)}, which this environment "
                f"lacks (even for audio-only prompts). Run this model in the 'hf' env (envs/hf/requirements.txt).")
        return call_from_pretrained(f"{self.name} processor", AutoProcessor.from_pretrained, source, revision,
                                    trust_remote_code=trust_remote_code, **kwargs)

    def model_loader(self):
        import transformers

        return getattr(transformers, self.model_class).from_pretrained

    # ---------------------------------------------------------------- prompts
    def messages(self, item: ModelInput, system_prompt: str | None, audio_position: str | None) -> list[dict]:
        """The chat for one item; no audio entry at all when the item has no audio (no-audio condition)."""
        content: list[dict] = [{"type": "text", "text": item.prompt}]
        if item.audio is not None:
            audio = self.audio_content(item)
            if (audio_position or self.audio_position) == "before":
                content.insert(0, audio)
            else:
                content.append(audio)
        msgs = [{"role": "user", "content": content}]
        if system_prompt:
            msgs.insert(0, {"role": "system", "content": [{"type": "text", "text": system_prompt}]})
        return msgs

    def audio_content(self, item: ModelInput) -> dict:
        # the templates only look at the type; the array goes to the processor call separately
        return {"type": "audio"}

    def render(self, processor: Any, item: ModelInput, system_prompt: str | None,
               audio_position: str | None) -> str:
        return processor.apply_chat_template(self.messages(item, system_prompt, audio_position),
                                             add_generation_prompt=True, tokenize=False)

    def encode(self, processor: Any, items: list[ModelInput], system_prompt: str | None = None,
               audio_position: str | None = None, padding_side: str = "left") -> Any:
        """Processor outputs for a batch: token ids with audio placeholders expanded, audio features."""
        texts = [self.render(processor, it, system_prompt, audio_position) for it in items]
        audios = [it.audio for it in items if it.audio is not None]
        if audios and len(audios) != len(items):
            raise ValueError("a batch mixes items with and without audio; encode them separately")
        # padding goes to the tokenizer only: a top-level padding=True would also pad the audio features to
        # the longest clip, while the Whisper-style encoders expect their fixed 30 s window
        kwargs: dict[str, Any] = dict(text=texts, return_tensors="pt",
                                      text_kwargs={"padding": True, "padding_side": padding_side})
        if audios:
            kwargs.update(audio=audios, sampling_rate=self.sampling_rate(processor))
            if self.audio_kwargs:
                kwargs["audio_kwargs"] = dict(self.audio_kwargs)
        return processor(**kwargs)

    def sampling_rate(self, processor: Any) -> int:
        fe = getattr(processor, "feature_extractor", None)
        return int(getattr(fe, "sampling_rate", 16000) or 16000)

    def tokenizer(self, processor: Any) -> Any:
        return getattr(processor, "tokenizer", processor)


class TextFamily(Family):
    """Any causal LM through its tokenizer: the text-only baseline (no-audio condition only)."""

    def load_processor(self, source: str, revision: str | None, trust_remote_code: bool, **kwargs: Any) -> Any:
        from transformers import AutoTokenizer

        from .loading import call_from_pretrained

        # kwargs: gguf_file, for a tokenizer (and its chat template) read from a GGUF's metadata
        tok = call_from_pretrained("text tokenizer", AutoTokenizer.from_pretrained, source, revision,
                                   trust_remote_code=trust_remote_code, **kwargs)
        if tok.pad_token is None:  # many causal LMs ship none; batching needs one
            tok.pad_token = tok.eos_token
        return tok

    def render(self, processor: Any, item: ModelInput, system_prompt: str | None,
               audio_position: str | None) -> str:
        if item.audio is not None:
            raise ValueError("family 'text' is a text-only model and cannot take audio: run it with the "
                             "no-audio condition")
        if not getattr(processor, "chat_template", None):
            return (system_prompt + "\n\n" if system_prompt else "") + item.prompt
        msgs = [{"role": "user", "content": item.prompt}]
        if system_prompt:
            msgs.insert(0, {"role": "system", "content": system_prompt})
        return processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)

    def encode(self, processor: Any, items: list[ModelInput], system_prompt: str | None = None,
               audio_position: str | None = None, padding_side: str = "left") -> Any:
        texts = [self.render(processor, it, system_prompt, audio_position) for it in items]
        # a chat template already writes the special tokens (BOS...) the model expects
        special = not getattr(processor, "chat_template", None)
        return processor(texts, padding=True, padding_side=padding_side, return_tensors="pt",
                         add_special_tokens=special)

    def sampling_rate(self, processor: Any) -> int:
        return 16000


def wav_base64(audio: np.ndarray, sample_rate: int) -> str:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, audio, sample_rate, format="WAV", subtype="FLOAT")
    return base64.b64encode(buf.getvalue()).decode("ascii")


class VoxtralFamily(Family):
    """Voxtral: the mistral-common tokenizer renders and tokenizes in one step, audio goes in as base64 WAV."""

    def audio_content(self, item: ModelInput) -> dict:
        return {"type": "audio", "base64": wav_base64(item.audio, item.sample_rate)}

    def load_processor(self, source: str, revision: str | None, trust_remote_code: bool, **kwargs: Any) -> Any:
        proc = super().load_processor(source, revision, trust_remote_code, **kwargs)
        proc.tokenizer.padding_side = "left"
        return proc

    def render(self, processor: Any, item: ModelInput, system_prompt: str | None,
               audio_position: str | None) -> str:
        # the processor always tokenizes; the text form comes from the mistral-common tokenizer itself
        return processor.tokenizer.apply_chat_template(self.messages(item, system_prompt, audio_position),
                                                       tokenize=False)

    def encode(self, processor: Any, items: list[ModelInput], system_prompt: str | None = None,
               audio_position: str | None = None, padding_side: str = "left") -> Any:
        processor.tokenizer.padding_side = padding_side
        convs = [self.messages(it, system_prompt, audio_position) for it in items]
        return processor.apply_chat_template(convs, tokenize=True, return_dict=True, return_tensors="pt")


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("qwen2_audio", "Qwen2AudioForConditionalGeneration", ("qwen2_audio",), max_audio_s=30.0),
    Family("qwen2_5_omni", "Qwen2_5OmniThinkerForConditionalGeneration",
           ("qwen2_5_omni", "qwen2_5_omni_thinker"), needs=("torchvision",), max_audio_s=30.0,
           note="thinker only: the talker/token2wav weights are never loaded, no speech output"),
    Family("qwen3_omni", "Qwen3OmniMoeThinkerForConditionalGeneration",
           ("qwen3_omni_moe", "qwen3_omni_moe_thinker"), needs=("torchvision",),
           note="thinker only; generation.thinker_max_new_tokens is accepted as max_new_tokens"),
    # Gemma 3n's audio tower turns padded frames into audio tokens too, so with the extractor's default
    # "longest" padding an item's answer would depend on the clips it is batched with: pad every clip to
    # the model's fixed 30 s window (its 188 audio tokens) instead, as the Whisper-style encoders do.
    Family("gemma3n", "Gemma3nForConditionalGeneration", ("gemma3n",), needs=("torchvision", "timm"),
           note="the vision tower is a timm model, built even for audio-only use; audio padded to 30 s",
           audio_kwargs={"padding": "max_length", "max_length": 480_000}, max_audio_s=30.0),
    VoxtralFamily("voxtral", "VoxtralForConditionalGeneration", ("voxtral",), needs=("mistral_common",)),
    Family("audioflamingo3", "AudioFlamingo3ForConditionalGeneration", ("audioflamingo3",), audio_position="after",
           max_audio_s=600.0),
    TextFamily("text", "AutoModelForCausalLM", (), takes_audio=False),
]}

ALIASES = {"qwen2-audio": "qwen2_audio", "qwen2.5-omni": "qwen2_5_omni", "qwen3-omni": "qwen3_omni",
           "gemma-3n": "gemma3n", "gemma3n": "gemma3n", "audio-flamingo-3": "audioflamingo3", "af3": "audioflamingo3"}


def get_family(name: str) -> Family:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in FAMILIES:
        raise ValueError(f"unknown hf family {name!r}; known: {sorted(FAMILIES)}")
    return FAMILIES[key]


def family_for_model_type(model_type: str) -> Family:
    for fam in FAMILIES.values():
        if model_type in fam.model_types:
            return fam
    raise ValueError(f"no hf family handles model_type {model_type!r}: set 'family:' in the model entry "
                     f"(one of {sorted(FAMILIES)}; 'text' for any causal LM used as a text-only baseline)")
