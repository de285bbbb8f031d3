"""The sentence-embedding cache SBERT-sim reads reference embeddings from (core env; a counting
encoder stands in for the model, the captioning-env test in test_captioning.py uses the real one)."""
import numpy as np
import pytest

from lalmbench.scoring.metrics.embedding_cache import EmbeddingCache, embed_cached


class CountingEncoder:
    """Deterministic 3-d 'embeddings' from the text; records what it was asked to encode."""

    def __init__(self, scale: float = 1.0):
        self.calls: list[list[str]] = []
        self.scale = scale

    def __call__(self, sentences):
        self.calls.append(list(sentences))
        return np.array([[len(s), s.count("a"), self.scale] for s in sentences], dtype=np.float32)


REFS = ["a dog barks", "rain falls", "a dog barks", "birds sing at dawn"]


def test_second_job_encodes_nothing_and_gets_the_same_rows(tmp_path):
    enc = CountingEncoder()
    first, stats1 = embed_cached(REFS, enc, EmbeddingCache(tmp_path, "f" * 64))
    assert enc.calls == [["a dog barks", "rain falls", "birds sing at dawn"]]  # the repeated one once
    assert stats1 == {"sentences": 4, "distinct": 3, "cached": 0, "computed": 3}
    again, stats2 = embed_cached(REFS, enc, EmbeddingCache(tmp_path, "f" * 64))
    assert len(enc.calls) == 1 and stats2 == {"sentences": 4, "distinct": 3, "cached": 3, "computed": 0}
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(first[0], first[2])
    assert first.dtype == np.float32 and first.shape == (4, 3)


def test_another_model_fingerprint_misses(tmp_path):
    embed_cached(REFS, CountingEncoder(), EmbeddingCache(tmp_path, "a" * 64))
    other = CountingEncoder(scale=2.0)
    emb, stats = embed_cached(REFS, other, EmbeddingCache(tmp_path, "b" * 64))
    assert stats["computed"] == 3 and len(other.calls) == 1
    assert emb[:, 2].tolist() == [2.0] * 4  # the other model's vectors, not the cached ones


def test_only_new_sentences_are_encoded_and_added(tmp_path):
    cache = EmbeddingCache(tmp_path, "c" * 64)
    embed_cached(REFS[:2], CountingEncoder(), cache)
    enc = CountingEncoder()
    emb, stats = embed_cached(REFS, enc, cache)
    assert enc.calls == [["birds sing at dawn"]] and stats["cached"] == 2
    assert emb[3].tolist() == [18.0, 2.0, 1.0]
    shards = sorted(p.name for p in (tmp_path / ("c" * 64)).iterdir())
    assert len(shards) == 2 and all(s.endswith(".npz") for s in shards)  # no temporary file left


def test_no_cache_still_dedupes():
    enc = CountingEncoder()
    emb, stats = embed_cached(["x", "x", "y"], enc, None)
    assert enc.calls == [["x", "y"]] and stats["cached"] == 0 and emb.shape == (3, 3)


def test_unreadable_shard_names_the_file(tmp_path):
    cache = EmbeddingCache(tmp_path, "d" * 64)
    shard = cache.store(["k"], np.ones((1, 3)))
    shard.write_bytes(b"not a zip")
    with pytest.raises(RuntimeError, match=rf"{shard.name}: not a readable embedding cache shard .*delete it"):
        cache.lookup(["k"])
