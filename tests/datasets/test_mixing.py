"""AIR-Bench-style mixing: levels and offsets are what the annotations say; deterministic; builders use it."""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from lalmbench.data.mixing import mix_dataset, plan_mixtures, render_mixture, rms_dbfs
from lalmbench.tasks import build_items

SR = 16000


def _sources(tmp_path, n=4, seconds=1.0):
    rng = np.random.default_rng(0)
    rows, evs = [], []
    for i in range(n):
        t = np.arange(int(SR * seconds)) / SR
        x = (0.3 * np.sin(2 * np.pi * (300 + 200 * i) * t) + 0.01 * rng.standard_normal(len(t))).astype(np.float32)
        p = tmp_path / f"src{i}.wav"
        sf.write(p, x, SR, subtype="FLOAT")
        rows.append({"clip_id": f"src{i}", "audio_path": str(p), "duration_s": seconds, "sample_rate": SR,
                     "split": "x", "source": "t"})
        evs.append({"clip_id": f"src{i}", "onset_s": 0.0, "offset_s": seconds, "label": f"tone {i}",
                    "caption": f"a {300 + 200 * i} Hz tone", "source": "t"})
    return pd.DataFrame(rows), pd.DataFrame(evs)


def test_render_sets_relative_levels_and_offsets():
    a = np.sin(2 * np.pi * 440 * np.arange(SR) / SR).astype(np.float32)
    b = 0.01 * np.sin(2 * np.pi * 880 * np.arange(SR) / SR).astype(np.float32)
    mix, scale = render_mixture([a, b], [0.0, 1.5], [0.0, -6.0], sample_rate=SR, ref_dbfs=-20)
    assert len(mix) == int(2.5 * SR) and scale == 1.0
    assert rms_dbfs(mix[: SR]) == pytest.approx(-20, abs=0.05)              # a alone at the reference level
    assert rms_dbfs(mix[int(1.5 * SR):]) == pytest.approx(-26, abs=0.05)    # b alone, 6 dB quieter
    assert np.all(mix[SR:int(1.5 * SR)] == 0)                              # the gap is silent


def test_plan_is_deterministic_and_separates_levels():
    clips = pd.DataFrame({"clip_id": [f"c{i}" for i in range(10)], "audio_path": [f"a{i}.wav" for i in range(10)]})
    p1 = plan_mixtures(clips, {"n_mixtures": 20, "n_sources": 3, "min_level_diff_db": 4}, seed=3)
    p2 = plan_mixtures(clips.iloc[::-1], {"n_mixtures": 20, "n_sources": 3, "min_level_diff_db": 4}, seed=3)
    pd.testing.assert_frame_equal(p1, p2)
    for _, g in p1.groupby("mix_id"):
        assert g["source_clip_id"].nunique() == 3 and g["offset_s"].iloc[0] == 0
        assert np.min(np.diff(np.sort(g["gain_db"].to_numpy()))) >= 4 - 1e-9
    assert not p1.equals(plan_mixtures(clips, {"n_mixtures": 20, "n_sources": 3, "min_level_diff_db": 4}, seed=4))


def test_mix_dataset_annotations_feed_order_and_louder(tmp_path):
    clips, events = _sources(tmp_path)
    params = {"n_mixtures": 6, "min_offset_s": 0.5, "max_offset_s": 1.0, "gain_db": [-12, 12],
              "min_level_diff_db": 6}
    mc, me, plan = mix_dataset(clips, events, params, seed=0, audio_dir=str(tmp_path / "mix"), dataset="m")
    assert len(mc) == 6 and len(me) == 12
    # each mixture's annotations say which source, when and how loud; the audio agrees
    for mix_id, g in me.groupby("clip_id"):
        x, sr = sf.read(mc.set_index("clip_id").loc[mix_id, "audio_path"])
        first, second = g.sort_values("onset_s").itertuples()
        alone = x[: int(second.onset_s * sr)]
        assert rms_dbfs(alone) == pytest.approx(-25 + first.level_db + 20 * np.log10(
            plan[plan.mix_id == mix_id]["global_scale"].iloc[0]), abs=0.1)
    order, _ = build_items("order", me, mc, {"min_gap_s": 0.3, "allow_overlap": True}, seed=0, dataset="m",
                           task="mix-order")
    assert len(order) == 6
    for it in order:
        g = me[me.clip_id == it["clip_id"]].sort_values("onset_s")
        assert it["answer_text"] == g["caption"].iloc[0]
    louder, st = build_items("louder", me, mc, {}, seed=0, dataset="m", task="mix-louder")
    assert len(louder) == 6
    for it in louder:
        g = me[me.clip_id == it["clip_id"]]
        assert it["answer_text"] == g.loc[g["level_db"].idxmax(), "caption"]
    # deterministic: same seed -> identical audio bytes
    mc2, _, _ = mix_dataset(clips, events, params, seed=0, audio_dir=str(tmp_path / "mix2"), dataset="m")
    h = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()  # noqa: E731
    assert [h(p) for p in mc["audio_path"]] == [h(p) for p in mc2["audio_path"]]
