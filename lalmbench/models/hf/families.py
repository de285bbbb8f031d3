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
import re
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
    # where the processor's audio limit lives (it silently cuts longer clips, so outputs say so): "extractor"
    # (the Whisper-style extractor's n_samples), "audio_kwargs" (our fixed max_length), "max_audio_len"
    # (the processor attribute, AF3) or "" (whole clip kept). Read from the loaded processor, never a constant.
    audio_limit: str = ""
    # the real chat template renders several audio entries of one user turn in order
    multi_audio: bool = False
    # the real template puts the audio itself, wherever it sits in the message: audio_position has no effect
    fixed_audio_position: str | None = None
    # end-of-turn tokens generation must stop at, whatever the checkpoint's generation_config says
    stop_tokens: tuple[str, ...] = ()

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
    def clips(self, item: ModelInput) -> list[np.ndarray]:
        """The clips this family's prompt carries: all of them in order when its template takes several,
        else the one ``audio`` (items with several clips arrive joined for such families)."""
        return item.clips if self.multi_audio else ([] if item.audio is None else [item.audio])

    def messages(self, item: ModelInput, system_prompt: str | None, audio_position: str | None) -> list[dict]:
        """The chat for one item; no audio entry at all when the item has no audio (no-audio condition)."""
        text = [{"type": "text", "text": item.prompt}]
        audio = [self.audio_content(item, k, clip) for k, clip in enumerate(self.clips(item))]
        before = (audio_position or self.audio_position) == "before"
        msgs = [{"role": "user", "content": audio + text if before else text + audio}]
        if system_prompt:
            msgs.insert(0, {"role": "system", "content": [{"type": "text", "text": system_prompt}]})
        return msgs

    def audio_content(self, item: ModelInput, k: int, clip: np.ndarray) -> dict:
        # the array goes to the processor call separately; the "audio" key is there for templates that test
        # for the key rather than the type (Qwen2-Audio's hub template: `'audio' in content`)
        return {"type": "audio", "audio": f"{item.id}#{k}"}

    def audio_limit_s(self, processor: Any) -> float | None:
        """Longest clip (seconds) the loaded processor passes on; None when it keeps the whole clip."""
        fe = getattr(processor, "feature_extractor", None)
        if self.audio_limit == "extractor" and fe is not None and getattr(fe, "n_samples", None):
            return float(fe.n_samples) / float(fe.sampling_rate)
        if self.audio_limit == "audio_kwargs" and "max_length" in self.audio_kwargs:
            return float(self.audio_kwargs["max_length"]) / float(self.sampling_rate(processor))
        if self.audio_limit == "max_audio_len" and getattr(processor, "max_audio_len", None):
            return float(processor.max_audio_len)
        return None

    def adds_bos(self, processor: Any) -> bool:
        """Whether tokenizing text with special tokens on prepends BOS (Gemma 3n's add_bos_token=True)."""
        tok = self.tokenizer(processor)
        bos = getattr(tok, "bos_token_id", None)
        if bos is None:
            return False
        return tok("a")["input_ids"][:1] == [bos]

    def prompt_text(self, processor: Any, item: ModelInput, system_prompt: str | None,
                    audio_position: str | None) -> str:
        """The prompt text for an engine that tokenizes it with special tokens on (vLLM's ``generate``):
        the rendered template less its leading BOS when the tokenizer adds one itself, so ids start with
        one BOS, as transformers' own ``apply_chat_template(tokenize=True)`` gives."""
        text = self.render(processor, item, system_prompt, audio_position)
        bos = getattr(self.tokenizer(processor), "bos_token", None)
        if bos and text.startswith(bos) and self.adds_bos(processor):
            text = text[len(bos):]
        return text

    def stop_token_ids(self, processor: Any) -> list[int]:
        tok = self.tokenizer(processor)
        ids = [tok.convert_tokens_to_ids(t) for t in self.stop_tokens]
        return [int(i) for i in ids if i is not None and i != getattr(tok, "unk_token_id", None)]

    def render(self, processor: Any, item: ModelInput, system_prompt: str | None,
               audio_position: str | None) -> str:
        return processor.apply_chat_template(self.messages(item, system_prompt, audio_position),
                                             add_generation_prompt=True, tokenize=False)

    def encode(self, processor: Any, items: list[ModelInput], system_prompt: str | None = None,
               audio_position: str | None = None, padding_side: str = "left") -> Any:
        """Processor outputs for a batch: token ids with audio placeholders expanded, audio features."""
        texts = [self.render(processor, it, system_prompt, audio_position) for it in items]
        per_item = [self.clips(it) for it in items]
        if any(per_item) and not all(per_item):
            raise ValueError("a batch mixes items with and without audio; encode them separately")
        audios = [clip for clips in per_item for clip in clips]
        # padding goes to the tokenizer only: a top-level padding=True would also pad the audio features to
        # the longest clip, while the Whisper-style encoders expect their fixed 30 s window
        text_kwargs: dict[str, Any] = {"padding": True, "padding_side": padding_side}
        bos = getattr(self.tokenizer(processor), "bos_token", None)
        if bos and all(t.startswith(bos) for t in texts):
            # the template wrote BOS already (Gemma 3n): a tokenizer saved with add_bos_token=True would add a
            # second one; transformers' apply_chat_template(tokenize=True) switches it off the same way
            text_kwargs["add_special_tokens"] = False
        kwargs: dict[str, Any] = dict(text=texts, return_tensors="pt", text_kwargs=text_kwargs)
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

    def audio_content(self, item: ModelInput, k: int, clip: np.ndarray) -> dict:
        return {"type": "audio", "base64": wav_base64(clip, item.sample_rate)}

    def adds_bos(self, processor: Any) -> bool:
        return False  # mistral-common writes BOS in the rendered conversation and tokenizes it as is

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


PROBE_PROMPT = "{prompt}"


def probe_render(family: Family, processor: Any, system_prompt: str | None, audio_position: str | None) -> str | None:
    """The rendered prompt of a one-clip item whose text is ``{prompt}``: the template around every prompt."""
    audio = np.zeros(1600, dtype=np.float32) if family.takes_audio else None
    probe = ModelInput(id="probe", prompt=PROBE_PROMPT, question="", options=[], audio=audio, sample_rate=16000)
    try:
        text = family.render(processor, probe, system_prompt, audio_position)
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return None
    # a template that expands the audio itself (Voxtral: one [AUDIO] per 80 ms) would make this record long
    return re.sub(r"(\[[A-Z_]+\]|<[^<>\s]+>)\1{7,}", lambda m: f"{m.group(1)}x{len(m.group(0)) // len(m.group(1))}",
                  text)


def audio_note(item: ModelInput, clips: list[np.ndarray], limit_s: float | None) -> dict[str, Any]:
    """``{"audio_truncated": {...}}`` when the processor keeps only the first ``limit_s`` seconds of a clip."""
    if limit_s is None or not clips:
        return {}
    longest = max(len(c) for c in clips) / item.sample_rate
    if longest <= limit_s + 1e-6:
        return {}
    return {"audio_truncated": {"duration_s": round(longest, 3), "model_max_s": round(limit_s, 3)}}


IM_END = ("<|im_end|>",)

FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("qwen2_audio", "Qwen2AudioForConditionalGeneration", ("qwen2_audio",), audio_limit="extractor",
           multi_audio=True, stop_tokens=IM_END),
    # the real preprocessor_config.json has chunk_length 300 (n_samples 4,800,000): a 300 s limit, not 30 s
    Family("qwen2_5_omni", "Qwen2_5OmniThinkerForConditionalGeneration",
           ("qwen2_5_omni", "qwen2_5_omni_thinker"), needs=("torchvision",), audio_limit="extractor",
           multi_audio=True, stop_tokens=IM_END,
           note="thinker only: the talker/token2wav weights are never loaded, no speech output"),
    Family("qwen3_omni", "Qwen3OmniMoeThinkerForConditionalGeneration",
           ("qwen3_omni_moe", "qwen3_omni_moe_thinker"), needs=("torchvision",), multi_audio=True,
           stop_tokens=IM_END, note="thinker only; generation.thinker_max_new_tokens is accepted as max_new_tokens"),
    # Gemma 3n's audio tower turns padded frames into audio tokens too, so with the extractor's default
    # "longest" padding an item's answer would depend on the clips it is batched with: pad every clip to
    # the model's fixed 30 s window (its 188 audio tokens) instead, as the Whisper-style encoders do.
    Family("gemma3n", "Gemma3nForConditionalGeneration", ("gemma3n",), needs=("torchvision", "timm"),
           note="the vision tower is a timm model, built even for audio-only use; audio padded to 30 s",
           audio_kwargs={"padding": "max_length", "max_length": 480_000}, audio_limit="audio_kwargs",
           multi_audio=True, stop_tokens=("<end_of_turn>",)),
    # mistral-common renders each audio chunk of a user turn in order: [BEGIN_AUDIO][AUDIO]... per clip
    VoxtralFamily("voxtral", "VoxtralForConditionalGeneration", ("voxtral",), needs=("mistral_common",),
                  multi_audio=True),
    # the real template writes every <sound> at the front of the user turn, before the text
    Family("audioflamingo3", "AudioFlamingo3ForConditionalGeneration", ("audioflamingo3",), audio_position="after",
           audio_limit="max_audio_len", fixed_audio_position="before", stop_tokens=IM_END),
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
