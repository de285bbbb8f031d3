"""Each family's evaluation preset: the prompt setting its authors published for benchmark numbers.

A model entry gets its family's preset unless it says ``preset: none``; any key the entry gives itself
(``system_prompt``, ``audio_position``, ``generation.*``) wins over the preset. Decoding stays greedy for
every family (the project default, and what Qwen3-Omni's evaluation setting asks). The rendered system
prompt (the preset's, or the one the chat template writes by itself) is recorded in each backend's
provenance, so a reader sees what the model was told.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# bumped whenever what the hf/vllm backends feed a model for the same entry changes (template handling, BOS,
# presets): it is part of the model fingerprint, so predictions made the old way are regenerated
PROMPT_VERSION = 2

# Qwen2.5-Omni's own default system prompt (its model card, and vLLM's examples/offline_inference/audio_language.py)
QWEN_OMNI_SYSTEM = ("You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of "
                    "perceiving auditory and visual inputs, as well as generating text and speech.")

PRESET_KEYS = ("system_prompt", "audio_position")


@dataclass(frozen=True)
class Preset:
    system_prompt: str | None  # None: we write no system turn (the template may still write its own default)
    audio_position: str | None  # None: the family's default
    source: str  # where the setting is published
    generation: dict = field(default_factory=dict, hash=False)


PRESETS: dict[str, Preset] = {
    "qwen2_audio": Preset(None, "before", "Qwen2-Audio-7B-Instruct model card: audio, then the instruction; the "
                          "template's own system turn ('You are a helpful assistant.')"),
    "qwen2_5_omni": Preset(QWEN_OMNI_SYSTEM, "before", "Qwen2.5-Omni model card and vLLM's audio_language.py "
                           "example: Qwen's long default system prompt, audio before the text"),
    "qwen3_omni": Preset(None, "before", "Qwen3-Omni README, 'Setting for Evaluation': greedy decoding, no "
                         "system prompt for any benchmark, text after the audio", {"do_sample": False}),
    "gemma3n": Preset(None, "before", "Gemma 3n model card: no system turn, the audio then the text"),
    "voxtral": Preset(None, "before", "Voxtral model card: audio chunk(s) then the text, no system prompt "
                      "(its card samples at temperature 0.2 for chat; the benchmark decodes greedily)"),
    "audioflamingo3": Preset(None, None, "audio-flamingo-3-hf model card: the template's own system turn; its "
                             "template puts <sound> at the front of the user turn whatever the order"),
}

PRESET_NAMES = ("authors", "none")


def apply_preset(name: str, family: str, cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The entry with its family's preset filled in under the keys it does not set itself, and a record of
    what came from the preset (for provenance)."""
    choice = cfg.get("preset", "authors")
    if choice not in PRESET_NAMES:
        raise ValueError(f"model {name!r}: preset must be one of {list(PRESET_NAMES)}, got {choice!r}")
    preset = PRESETS.get(family)
    if choice == "none" or preset is None:
        return dict(cfg), {"preset": "none"}
    out, used = dict(cfg), {}
    for key in PRESET_KEYS:
        if key not in cfg and getattr(preset, key) is not None:
            out[key] = used[key] = getattr(preset, key)
    gen = dict(cfg.get("generation") or {})
    for key, val in preset.generation.items():
        if key not in gen:
            gen[key] = used.setdefault("generation", {})[key] = val
    if gen:
        out["generation"] = gen
    return out, {"preset": "authors", "from_preset": used, "source": preset.source}


def audio_position_note(family: Any, audio_position: str | None) -> str | None:
    """A warning when the entry sets audio_position for a family whose template ignores it."""
    fixed = getattr(family, "fixed_audio_position", None)
    if audio_position is None or fixed is None:
        return None
    return (f"audio_position: {audio_position} has no effect for family {family.name!r}: its chat template puts "
            f"the audio {fixed} the text whatever the setting, so an audio-position comparison compares nothing")
