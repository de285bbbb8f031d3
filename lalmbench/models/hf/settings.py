"""The hf backend's view of one ``models:`` entry, validated once at load time.

Every key the backend reads is listed here with its default, so a typo in a config (``dtpye:``)
is an error naming the model entry rather than a silently ignored setting.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lalmbench.models.base import PIPELINE_KEYS

GENERATION_DEFAULTS: dict[str, Any] = {"max_new_tokens": 128, "do_sample": False, "num_beams": 1}
SCORING_MODES = ("generate", "loglik")
LOGLIK_TARGETS = ("text", "label", "label_text")
LOGLIK_NORMS = ("mean", "sum")


def flatten_params(name: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Backend keys may sit at the top of the entry or under ``params:`` (as other backends use); not both."""
    params = cfg.get("params") or {}
    if not isinstance(params, dict):
        raise ValueError(f"model {name!r}: 'params' must be a mapping, got {type(params).__name__}")
    top_only = sorted(set(params) & {"batch_size", "seed", "model_id", "revision", "backend", "env"})
    if top_only:
        raise ValueError(f"model {name!r}: {top_only} belong at the top level of the entry, not under params "
                         "(the pipeline reads them there)")
    both = sorted(set(params) & (set(cfg) - {"params"}))
    if both:
        raise ValueError(f"model {name!r}: key(s) {both} given both at the top level and under params")
    return {**{k: v for k, v in cfg.items() if k != "params"}, **params}


@dataclass
class HFSettings:
    model_id: str
    revision: str | None = None
    family: str | None = None
    dtype: str = "auto"
    attn_implementation: str | None = None
    device_map: str | dict | None = None
    trust_remote_code: bool = False
    batch_size: int = 1
    generation: dict = field(default_factory=dict)
    scoring: str = "generate"
    loglik_target: str = "text"
    loglik_norm: str = "mean"
    system_prompt: str | None = None
    preset: str = "authors"  # the family's published evaluation setting (presets.py) fills unset keys; "none": off
    audio_position: str | None = None  # "before" | "after" the prompt text; None = the family's default
    processor_id: str | None = None  # load the processor from another repo/dir than the weights
    gguf_file: str | None = None  # a GGUF checkpoint in model_id (text family only; transformers dequantises it)
    seed: int = 0

    @classmethod
    def from_cfg(cls, name: str, cfg: dict[str, Any]) -> "HFSettings":
        cfg = flatten_params(name, cfg)
        known = set(cls.__dataclass_fields__) | PIPELINE_KEYS
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise ValueError(f"model {name!r} (backend hf): unknown key(s) {unknown}; "
                             f"known: {sorted(known)}")
        if not cfg.get("model_id"):
            raise ValueError(f"model {name!r} (backend hf): 'model_id' is required (a hub id such as "
                             "'Qwen/Qwen2-Audio-7B-Instruct' or a local checkpoint directory)")
        kw = {k: v for k, v in cfg.items() if k in cls.__dataclass_fields__}
        s = cls(**kw)
        s.revision = str(s.revision) if s.revision not in (None, "") else None
        s.batch_size = int(s.batch_size)
        if s.batch_size < 1:
            raise ValueError(f"model {name!r}: batch_size must be >= 1, got {s.batch_size}")
        if not isinstance(s.generation, dict):
            raise ValueError(f"model {name!r}: 'generation' must be a mapping, got {type(s.generation).__name__}")
        for key, allowed in (("scoring", SCORING_MODES), ("loglik_target", LOGLIK_TARGETS),
                             ("loglik_norm", LOGLIK_NORMS)):
            if getattr(s, key) not in allowed:
                raise ValueError(f"model {name!r}: {key} must be one of {list(allowed)}, got {getattr(s, key)!r}")
        if s.preset not in ("authors", "none"):
            raise ValueError(f"model {name!r}: preset must be 'authors' or 'none', got {s.preset!r}")
        if s.audio_position not in (None, "before", "after"):
            raise ValueError(f"model {name!r}: audio_position must be 'before' or 'after', got {s.audio_position!r}")
        if s.gguf_file is not None and (not isinstance(s.gguf_file, str) or not s.gguf_file):
            raise ValueError(f"model {name!r}: gguf_file must be a file name inside model_id, got {s.gguf_file!r}")
        if s.gguf_file and s.family not in (None, "text"):
            raise ValueError(f"model {name!r}: gguf_file loads a text-only causal LM; family must be 'text' "
                             f"(or unset), got {s.family!r}")
        if not isinstance(s.trust_remote_code, bool):
            raise ValueError(f"model {name!r}: trust_remote_code must be true or false")
        return s
