"""Repeated sampling: ``generation.samples: k`` draws k outputs per item, each cached under its own key.

Sample 0 keeps the item's key, so a k=1 run of the same sampled entry is sample 0 of a k=5 run; sample
j > 0 is keyed by (item key, j). ``samples`` itself is left out of the model fingerprint, so raising k
from 5 to 8 generates exactly samples 5, 6 and 7 of each item and a rerun generates nothing. Each
sample is drawn with its own seed, derived from (the entry's ``seed``, the item id, j), so it is the
same whatever batch it ran in and whichever job drew it.

Only backends that decode by sampling accept k > 1 (:data:`SAMPLING_BACKENDS`), and only with a
sampling decode asked for explicitly (``do_sample: true`` for hf and vllm, ``temperature`` > 0 for an
OpenAI-compatible server): k greedy outputs would be k copies of one answer.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from lalmbench.core.provenance import config_hash

SAMPLES_KEY = "samples"
#: backends whose outputs vary with a seed and a temperature
SAMPLING_BACKENDS = ("hf", "vllm", "openai")


def samples_of(cfg: Mapping[str, Any]) -> int:
    """k: how many outputs the entry draws per item (1 unless ``generation.samples`` says more)."""
    return int((cfg.get("generation") or {}).get(SAMPLES_KEY, 1))


def slice_samples(variant: Mapping[str, Any], cfg: Mapping[str, Any]) -> int:
    """k for one predictions file: the entry's k for a main run, 1 for a sweep's variant (CircularEval's
    shifts, the determinism check's batch sizes), which reads one output per item."""
    return 1 if variant else samples_of(cfg)


def without_samples(generation: Mapping[str, Any]) -> dict[str, Any]:
    """The generation settings a backend passes on: ``samples`` is the pipeline's, not a decoding knob."""
    return {k: v for k, v in generation.items() if k != SAMPLES_KEY}


def sample_key(key: str, j: int) -> str:
    """Cache key of sample ``j`` of the item whose (sample 0) key is ``key``."""
    return key if j == 0 else config_hash({"item": key, "sample": int(j)})


def sample_seed(seed: int, item_id: str, j: int) -> int:
    """The seed sample ``j`` of an item is drawn with: a 31-bit hash of (seed, item id, j), so it does
    not depend on the batch, the shard or the order items are served in."""
    blob = json.dumps([int(seed), str(item_id), int(j)]).encode()
    return int(hashlib.sha256(blob).hexdigest()[:8], 16) & 0x7FFFFFFF


def run_fingerprint(model_fp: str, cfg: Mapping[str, Any]) -> str:
    """What a model's predictions files are made from: its fingerprint, plus k when k > 1 (a predictions
    file of k = 5 is stale once k is 8, though no cached output changed)."""
    k = samples_of(cfg)
    return model_fp if k == 1 else f"{model_fp}-k{k}"


def sampling_problem(name: str, entry: Mapping[str, Any]) -> str | None:
    """Why the entry cannot draw its ``generation.samples`` outputs per item, or None."""
    gen = entry.get("generation") or {}
    if not isinstance(gen, Mapping) or SAMPLES_KEY not in gen:
        return None
    k = gen[SAMPLES_KEY]
    where = f"models.{name}.generation.samples"
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return f"{where}: expected an integer >= 1, got {k!r}"
    if k == 1:
        return None
    backend = entry.get("backend")
    if backend not in SAMPLING_BACKENDS:
        return (f"{where}: model {name!r} (backend {backend!r}) cannot sample: its output for an item is fixed, so "
                f"{k} samples would be {k} copies of one answer; remove samples, or use a backend that samples "
                f"({', '.join(SAMPLING_BACKENDS)})")
    params = entry.get("params") if isinstance(entry.get("params"), Mapping) else {}
    if backend == "hf" and (entry.get("scoring") or params.get("scoring")) == "loglik":
        return (f"{where}: model {name!r} scores options by log-likelihood (scoring: loglik), which draws nothing; "
                f"remove samples or use scoring: generate")
    if backend in ("hf", "vllm") and gen.get("do_sample") is not True:
        return (f"{where}: model {name!r} decodes greedily, so {k} samples would be {k} copies of one output; "
                f"set generation.do_sample: true (and temperature, top_p)")
    if backend == "openai" and not float(gen.get("temperature") or 0) > 0:
        return (f"{where}: model {name!r} is sent temperature 0 (the default), so {k} samples would be {k} copies "
                f"of one output; set generation.temperature above 0")
    return None


def sampling_problems(models: Mapping[str, Any]) -> list[str]:
    """One message per model entry that asks for samples it cannot draw (config validation)."""
    out = []
    for name, entry in models.items():
        if isinstance(entry, Mapping):
            problem = sampling_problem(name, entry)
            if problem:
                out.append(problem)
    return out
