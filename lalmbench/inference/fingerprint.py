"""What makes a prediction: the fingerprints that key the prediction cache.

A model entry's *fingerprint* covers only what can change its outputs (backend, model id,
revision, generation settings but ``samples``, seed, scoring mode, env). How a job is provisioned (resources,
batch size, error budget) and which runs it serves (conditions, prompts, tasks) are left out, so raising a
runtime after a timeout, changing the batch size or adding a condition never regenerates
finished predictions. An *item key* adds everything the model sees for one item: the rendered
prompt, the condition, the item's content and its audio's content.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping

from lalmbench.core.provenance import config_hash

#: model-entry keys that say how or where a model runs (or describe it), never what it answers
PROVISIONING_KEYS = frozenset({"resources", "batch_size", "shards", "conditions", "prompts", "tasks", "attention",
                               "max_error_rate", "description"})


def model_fingerprint(model_cfg: Mapping[str, Any]) -> str:
    """Hash of the prediction-relevant part of a model entry (equal entries -> equal hash anywhere).

    hf/vllm entries add the backends' prompt version (lalmbench.models.hf.presets.PROMPT_VERSION).
    A model lalmbench fetches itself (``model_id: lalmbench:offline-llm``) adds the sha256 its file is
    pinned to, so re-pinning it to other weights regenerates its predictions; an imported model
    (``backend: imported``) adds its file's digest, so editing the file regenerates them."""
    from lalmbench.inference.sampling import without_samples
    from lalmbench.models import base, imported, offline_llm

    relevant = {k: v for k, v in model_cfg.items() if k not in PROVISIONING_KEYS}
    if isinstance(relevant.get("generation"), Mapping):
        # how many outputs per item, not what each is: raising k only adds samples (lalmbench.inference.sampling)
        relevant["generation"] = without_samples(relevant["generation"])
    if model_cfg.get("backend") in ("hf", "vllm"):
        from lalmbench.models.hf.presets import PROMPT_VERSION

        # how these backends turn an entry into prompt ids (BOS, presets) is code: its version is part of the key
        relevant["prompt_version"] = PROMPT_VERSION
    elif model_cfg.get("backend") in base.BACKEND_MODULES:
        version = base.backend_class(str(model_cfg.get("model_id", "")), model_cfg["backend"]).compute_version
        if version:
            relevant["compute_version"] = version
    if model_cfg.get("model_id") == offline_llm.MODEL_ID:
        relevant["pinned_sha256"] = offline_llm.GGUF_SHA256
    if model_cfg.get("backend") == imported.BACKEND:
        # labels and missing say how to score the outputs, not what they are: a change re-scores, nothing more
        relevant["params"] = {k: v for k, v in relevant["params"].items() if k not in ("labels", "missing")}
        relevant.update(imported.content_key(model_cfg))
    return config_hash(relevant)


def file_digest(path: str | Path) -> str:
    """sha1 of a file's bytes: an audio file edited in place (same path) still changes the key."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha1").hexdigest()


def item_key(*, model_fp: str, condition: str, prompt_text: str, item: Mapping[str, Any], audio_digest: str | None,
             sample_rate: int, variant: Mapping[str, Any] | None = None) -> str:
    """Content address of one prediction.

    ``item`` contributes what a backend receives (id, question, options, task, meta): the id seeds
    per-item conditions and baselines; ``answer`` is left out (a corrected gold label re-scores,
    it does not re-run the model). ``variant`` separates deliberate re-generations of the same
    input (the determinism sweep's batch sizes)."""
    seen = {k: item.get(k) for k in ("id", "question", "options", "task", "meta")}
    return config_hash({"model": model_fp, "condition": condition, "prompt": prompt_text, "item": seen,
                        "audio": audio_digest, "sample_rate": sample_rate, "variant": dict(variant or {})})
