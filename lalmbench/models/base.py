"""The model interface every backend implements, and the registry keyed by ``backend:``.

Rules never import a backend: inference asks :func:`load_model` for the backend named in the
model's config entry. Backend modules are imported lazily so the driver process never pays
for (or needs) torch, transformers or vLLM unless a model that uses them actually runs.
"""
from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# backend name -> module that registers it on import
BACKEND_MODULES: dict[str, str] = {
    "random": "lalmbench.models.baselines",
    "text-overlap": "lalmbench.models.baselines",
    "cascade": "lalmbench.models.cascade",
    "signal": "lalmbench.models.signal_baseline",
    "openai": "lalmbench.models.openai_compat",
    "hf": "lalmbench.models.hf",
    "vllm": "lalmbench.models.vllm_backend",
    "imported": "lalmbench.models.imported",
}

_REGISTRY: dict[str, type["Model"]] = {}

#: keys of every model entry that the pipeline reads (where and how a model runs), not its backend:
#: the backends that refuse unknown keys accept these, so a new pipeline key is added here once
PIPELINE_KEYS = frozenset({"backend", "env", "resources", "conditions", "prompts", "tasks", "seed", "description",
                           "max_error_rate", "attention", "multi_audio_gap_s", "shards"})


@dataclass
class ModelInput:
    """One item as a model sees it after the condition and prompt template were applied.

    ``audio`` is mono float32 at ``sample_rate`` or ``None`` (the ``no-audio`` condition).
    ``audios`` holds every clip, in order, when an item has several and the model declares
    ``multi_audio`` (``audio`` is then the first clip); otherwise it is ``None`` and ``audio`` is
    what the model hears (for a multi-clip item: the clips joined by silence).
    ``prompt`` is the rendered user text; ``question``/``options`` stay available for backends
    that score options themselves (log-likelihood, cascade). ``seed``: set when the entry draws
    several samples per item (lalmbench.inference.sampling); a backend that samples draws this
    output with it, whatever else is in the batch.
    """

    id: str
    prompt: str
    question: str
    options: list[dict]
    audio: np.ndarray | None
    sample_rate: int
    task: str = ""
    meta: dict = field(default_factory=dict)
    audios: list[np.ndarray] | None = None
    seed: int | None = None

    @property
    def clips(self) -> list[np.ndarray]:
        """Every clip of the item in order: ``audios`` when set, else ``[audio]``, else none."""
        if self.audios:
            return list(self.audios)
        return [] if self.audio is None else [self.audio]

    @property
    def duration_s(self) -> float:
        return 0.0 if self.audio is None else len(self.audio) / self.sample_rate


@dataclass
class ModelOutput:
    raw_output: str | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    extra: dict | None = None  # backend-specific detail (JSON-serialisable), e.g. the cascade's rendering


class Model(ABC):
    """A backend instance for one model config entry.

    ``generate`` is batched: it gets up to ``batch_size`` inputs and returns one output per
    input, in order. A backend that can fail per item returns ``ModelOutput(error=...)`` for
    that item instead of raising, so the rest of the batch survives.
    """

    backend: str = ""
    #: True when the backend renders several audio entries in one turn (``ModelInput.audios``);
    #: every other model gets a multi-clip item's clips joined (``multi_audio_gap_s``)
    multi_audio: bool = False
    #: how this backend's own code computes outputs from the same entry (weights as run, features); a change
    #: bumps it, and the model fingerprint includes it, so cached predictions regenerate (hf/vllm: PROMPT_VERSION)
    compute_version: str = ""

    def __init__(self, name: str, cfg: dict[str, Any]):
        self.name = name
        self.cfg = cfg
        self.seed = int(cfg.get("seed", 0))

    @property
    def model_id(self) -> str:
        return str(self.cfg.get("model_id", self.name))

    @property
    def model_revision(self) -> str:
        return str(self.cfg.get("revision", "") or "")

    @abstractmethod
    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        ...

    def provenance(self) -> dict[str, Any]:
        """What, besides model_id/revision, a reader needs to reproduce an output (family, dtype,
        effective generation settings...). Stored with every prediction as ``backend_info``."""
        return {}

    def close(self) -> None:
        """Free accelerators/threads; default does nothing."""


def register_backend(name: str) -> Callable[[type[Model]], type[Model]]:
    def deco(cls: type[Model]) -> type[Model]:
        cls.backend = name
        _REGISTRY[name] = cls
        return cls

    return deco


def backend_class(name: str, backend: Any) -> type[Model]:
    """The registered class of ``backend`` (its module imported on first use); ``name`` is the model entry's."""
    if backend not in BACKEND_MODULES and backend not in _REGISTRY:
        known = ", ".join(sorted(set(BACKEND_MODULES) | set(_REGISTRY)))
        raise ValueError(f"model {name!r}: unknown backend {backend!r} (known: {known})")
    if backend not in _REGISTRY:
        importlib.import_module(BACKEND_MODULES[backend])
    return _REGISTRY[backend]


def load_model(name: str, cfg: dict[str, Any]) -> Model:
    return backend_class(name, cfg.get("backend"))(name, cfg)
