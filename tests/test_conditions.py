import numpy as np
import pytest

from lalmbench.inference.conditions import apply_condition, shuffled_sources


def test_silence_and_noise_keep_duration():
    x = (0.1 * np.sin(np.arange(16000) / 5)).astype(np.float32)
    s = apply_condition("silence", x, seed=0, item_id="a")
    n = apply_condition("noise", x, seed=0, item_id="a")
    assert s.shape == x.shape and not s.any()
    assert n.shape == x.shape
    assert np.sqrt(np.mean(n ** 2)) == pytest.approx(np.sqrt(np.mean(x ** 2)), rel=0.05)
    assert np.array_equal(n, apply_condition("noise", x, seed=0, item_id="a"))  # seeded per item
    assert not np.array_equal(n, apply_condition("noise", x, seed=0, item_id="b"))
    assert apply_condition("no-audio", x, seed=0, item_id="a") is None


def test_unknown_condition_is_named():
    with pytest.raises(ValueError, match="unknown condition 'loud'"):
        apply_condition("loud", np.zeros(3, np.float32), seed=0, item_id="a")


def test_shuffled_gives_every_item_another_items_audio():
    ids = [f"i{k}" for k in range(7)]
    paths = [f"p{k}.wav" for k in range(7)]
    m = shuffled_sources(ids, paths, seed=0)
    assert sorted(m.values()) == sorted(paths)
    assert all(m[i] != p for i, p in zip(ids, paths))
    assert m == shuffled_sources(list(reversed(ids)), list(reversed(paths)), seed=0)


def test_shuffled_never_gives_an_item_its_own_clip_when_items_share_clips():
    ids = [f"q{i}" for i in range(20)]
    paths = [f"clip{i % 4}.wav" for i in range(20)]  # 5 questions per clip
    m = shuffled_sources(ids, paths, seed=0)
    assert all(m[i] != p for i, p in zip(ids, paths))
    assert len({m[i] for i, p in zip(ids, paths) if p == "clip0.wav"}) == 1  # one other clip per clip


def test_shuffled_with_a_single_clip_says_why_it_cannot():
    with pytest.raises(ValueError, match=r"needs items from at least two audio clips; all 3 items use one.wav"):
        shuffled_sources(["a", "b", "c"], ["one.wav"] * 3, seed=0)
