"""Sentence embeddings cached across captioning jobs.

Every model and condition of a captioning task is scored against the same reference captions, so
their sentence-BERT embeddings are computed once and read back by every later job: SBERT-sim then
only encodes the candidates (a fifth of the sentences on Clotho).

Layout: ``<root>/<model fingerprint>/<shard>.npz``, each shard holding ``keys`` (SHA-256 of each
sentence, hex) and ``emb`` (float32, one row per key). The fingerprint hashes what decides an
embedding (weights, tokenizer vocabulary, modules, library versions, device: see the worker), so a
changed model never reads another model's vectors. A shard is named by the hash of its keys and
written to a temporary file then renamed: two jobs writing the same sentences write the same file,
and a reader never sees half a shard.

Stdlib + numpy only: imported by the captioning worker (as a sibling file, numpy 1.26) and by the
core env's tests (numpy 2).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np


def sentence_key(sentence: str) -> str:
    """Cache key of one sentence (exact text: the worker caches PTB-tokenised sentences)."""
    return hashlib.sha256(sentence.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Embeddings of one model (``fingerprint``) under ``root``."""

    def __init__(self, root: str | os.PathLike, fingerprint: str):
        if not fingerprint or "/" in fingerprint or fingerprint.startswith("."):
            raise ValueError(f"embedding cache: fingerprint {fingerprint!r} is not a hex digest")
        self.dir = Path(root) / fingerprint

    def lookup(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached rows for those of ``keys`` any shard holds."""
        wanted = set(keys)
        found: dict[str, np.ndarray] = {}
        if not self.dir.is_dir():
            return found
        for shard in sorted(self.dir.glob("*.npz")):
            if len(found) == len(wanted):
                break
            try:
                with np.load(shard, allow_pickle=False) as z:
                    shard_keys = z["keys"].astype(str)
                    rows = [i for i, k in enumerate(shard_keys) if k in wanted and k not in found]
                    if rows:
                        emb = z["emb"]
                        found.update((shard_keys[i], emb[i]) for i in rows)
            except (OSError, ValueError, KeyError) as exc:
                raise RuntimeError(f"{shard}: not a readable embedding cache shard ({exc}); delete it to "
                                   "recompute those embeddings") from exc
        return found

    def store(self, keys: Sequence[str], emb: np.ndarray) -> Path:
        """Write one shard (atomically); returns its path."""
        keys_arr = np.asarray(list(keys), dtype="S64")
        emb = np.ascontiguousarray(emb, dtype=np.float32)
        if emb.ndim != 2 or len(emb) != len(keys_arr):
            raise ValueError(f"embedding cache: {len(keys_arr)} keys but embeddings of shape {emb.shape}")
        self.dir.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(b"".join(keys_arr.tolist())).hexdigest()[:32]
        path = self.dir / f"{name}.npz"
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, keys=keys_arr, emb=emb)
            os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the cache from other users of a shared dir
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


def embed_cached(sentences: Sequence[str], encode: Callable[[list[str]], np.ndarray],
                 cache: EmbeddingCache | None) -> tuple[np.ndarray, dict]:
    """Embeddings of ``sentences`` (one row each, in order): each distinct sentence is encoded at
    most once, and only when ``cache`` does not hold it; the new ones are stored.

    Returns ``(embeddings, {"sentences", "distinct", "cached", "computed"})``.
    """
    distinct = list(dict.fromkeys(sentences))
    keys = [sentence_key(s) for s in distinct]
    found = cache.lookup(keys) if cache is not None else {}
    missing = [i for i, k in enumerate(keys) if k not in found]
    new = np.asarray(encode([distinct[i] for i in missing]), dtype=np.float32) if missing else None
    if new is not None and cache is not None:
        cache.store([keys[i] for i in missing], new)
    rows: dict[str, np.ndarray] = dict(found)
    if new is not None:
        rows.update((keys[i], new[j]) for j, i in enumerate(missing))
    index = {s: i for i, s in enumerate(distinct)}
    table = np.stack([rows[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
    out = table[[index[s] for s in sentences]] if len(sentences) else table
    return out, {"sentences": len(sentences), "distinct": len(distinct), "cached": len(found),
                 "computed": len(missing)}
