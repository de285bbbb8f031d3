"""Sentence embeddings for the analyses: the encoder (lalmbench.models.sentence_encoder, shared with
the official scoring rules) and the similarity arithmetic over its rows."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from lalmbench.models.sentence_encoder import DEFAULT_MODEL, Encoder, default_model_path, load_encoder

__all__ = ["DEFAULT_MODEL", "Encoder", "cosine_rows", "default_model_path", "load_encoder", "summary_stats"]


def cosine_rows(ea: np.ndarray, eb: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two embedding matrices (normalised again, so any encoder works)."""
    na = ea / np.linalg.norm(ea, axis=1, keepdims=True).clip(min=1e-12)
    nb = eb / np.linalg.norm(eb, axis=1, keepdims=True).clip(min=1e-12)
    return np.einsum("ij,ij->i", na, nb).astype(float)


def summary_stats(values: Sequence[float]) -> dict:
    """mean, sample std (ddof=1; NaN for one value) and n."""
    v = np.asarray(values, dtype=float)
    return {"n": int(v.size), "mean": float(v.mean()) if v.size else float("nan"),
            "std": float(v.std(ddof=1)) if v.size > 1 else float("nan")}
