"""Inference: model outputs for task items, generated once per model and cached by content.

Data flow: a model's *slices* (``slices.py``: one predictions file each) -> ``model_job.py`` (one
job per model: load once, fill the cache) -> ``cache.py`` (append-only, keyed by
``fingerprint.py``) -> ``materialize.py`` (one parquet per slice). ``plan.py`` tells the rules which
slices a model serves; :func:`run_inference` does all of it for a single file.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from lalmbench.inference.cache import environments_path
from lalmbench.inference.model_job import generate
from lalmbench.inference.materialize import PREDICTION_COLUMNS, materialize
from lalmbench.inference.slices import Slice
from lalmbench.models.base import Model

__all__ = ["PREDICTION_COLUMNS", "Slice", "generate", "materialize", "partial_path", "run_inference"]


def partial_path(out_path: str | Path) -> Path:
    """Cache file of a standalone :func:`run_inference` (removed once its parquet is written)."""
    out_path = Path(out_path)
    return out_path.with_name(out_path.name + ".partial.jsonl")


def run_inference(*, items_path: str, out_path: str, model_name: str, model_cfg: dict, condition: str,
                  prompt_name: str, template_path: str, sample_rate: int = 16000, max_error_rate: float = 0.0,
                  model: Model | None = None, audio_manifest: str | None = None,
                  cache_path: str | Path | None = None) -> pd.DataFrame:
    """One predictions file in one call (tests, notebooks). Without ``cache_path`` the finished rows
    live in ``<out>.partial.jsonl`` until the parquet is written, so a killed call resumes."""
    sl = Slice(items=str(items_path), condition=condition, prompt=prompt_name, template=str(template_path),
               out=str(out_path), manifest=audio_manifest)
    cache = Path(cache_path) if cache_path else partial_path(out_path)
    generate(model_name=model_name, model_cfg=model_cfg, slices=[sl], cache_path=cache, sample_rate=sample_rate,
             max_error_rate=max_error_rate, model=model)
    df = materialize(sl, model_cfg=model_cfg, cache_path=cache, sample_rate=sample_rate)
    if cache_path is None:
        cache.unlink(missing_ok=True)
        environments_path(cache).unlink(missing_ok=True)
    return df
