"""The rubric LLM: a ``models:`` entry asked text-only prompts, greedy or seeded sampling, cached.

The cache is :class:`lalmbench.scoring.judge.CachedLLM`'s (the judge's); the key is a hash of the model
entry's fingerprint (the prediction cache's: backend, model id, revision, generation settings,
not batch size or resources), the rendered prompt text, the sampling settings and the seed. So a
rerun with the same settings calls the model for nothing, and changing any of them asks again.
"""
from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any, Sequence

from lalmbench.scoring.judge import GREEDY, CachedLLM, JudgePrompt, load_prompt

ROOT = Path(__file__).resolve().parents[2]
PROMPT_DIR = ROOT / "resources" / "prompts" / "rubrics"
RUBRIC_VERSION = "1"
#: the reply reader each rubric prompt names (``verdict:`` in its YAML)
READERS = ("rubric_criteria", "rubric_merge", "rubric_verdicts")


def load_rubric_prompt(name: str) -> JudgePrompt:
    """``resources/prompts/rubrics/<name>.yaml`` (``propose``, ``merge``, ``score``) or a path."""
    return load_prompt(name, prompt_dir=PROMPT_DIR, verdicts=READERS)


def sampling_settings(mode: str, *, temperature: float, top_p: float, max_new_tokens: int) -> dict:
    """Decoding settings forced on the LLM's entry: greedy, or sampling with these values."""
    if mode == "deterministic":
        return {**GREEDY, "max_new_tokens": int(max_new_tokens)}
    if mode == "stochastic":
        return {"do_sample": True, "temperature": float(temperature), "top_p": float(top_p),
                "max_new_tokens": int(max_new_tokens)}
    raise ValueError(f"rubrics.mode: must be 'deterministic' or 'stochastic', got {mode!r}")


class RubricLLM(CachedLLM):
    """The LLM that proposes, merges and scores. ``seed`` is set on the backend before each call
    (the hf backend seeds torch per batch with it); sampling runs one prompt per call, so a reply
    depends only on (model, prompt, settings, seed), never on which other prompts were cached."""

    def __init__(self, model_name: str, model_cfg: dict, generation: dict, *, cache_dir: str | Path | None = None,
                 model: Any = None):
        super().__init__(model_name, model_cfg, generation, cache_dir=cache_dir, model=model)
        self.sampling = dict(generation)

    @cached_property
    def fingerprint(self) -> str:
        """The model entry's prediction fingerprint (seed excluded: it is keyed per call); the entry
        is fixed once built, so it is hashed once, not once per prompt's cache key."""
        from lalmbench.inference.fingerprint import model_fingerprint

        return model_fingerprint({k: v for k, v in self.cfg.items() if k != "seed"})

    def cache_key(self, rendered: str, seed: int) -> str:
        payload = json.dumps({"model": self.fingerprint, "prompt": rendered, "sampling": self.sampling,
                              "seed": int(seed), "version": RUBRIC_VERSION}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def complete(self, prompt: JudgePrompt, records: Sequence[dict], *, seed: int, stage: str) -> list[dict]:
        """Replies (``raw``, ``error``, ``cached``, ``cache_key``) to ``prompt`` rendered with each record."""
        rendered = [prompt.render(r) for r in records]
        keys = [self.cache_key(p, seed) for p in rendered]
        ids = [f"{stage}-{i}" for i in range(len(records))]

        def seed_model(model: Any) -> None:
            model.seed = int(seed)

        sampled = bool(self.sampling.get("do_sample"))
        return self.ask_rendered(rendered, ids, keys, task=f"rubric-{stage}", meta={"rubric_stage": stage},
                                 batch_size=1 if sampled else None, before_generate=seed_model)

    def describe(self) -> dict:
        """What identifies the LLM in every output: entry name, backend, model id, fingerprint, sampling."""
        return {"llm": self.name, "backend": self.cfg.get("backend"), "model_id": self.cfg.get("model_id"),
                "revision": self.cfg.get("revision"), "fingerprint": self.fingerprint, "sampling": self.sampling,
                "rubric_version": RUBRIC_VERSION}
