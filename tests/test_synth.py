"""The synthetic generator: annotations must describe the audio, and seeds must reproduce it."""
import hashlib

import numpy as np
import pytest
import soundfile as sf

from lalmbench.data.synth.scenes import generate_scenes
from lalmbench.data.synth.trivial import FAMILIES, generate_family


def _energy_check(clips, events):
    for clip in clips.itertuples():
        x, sr = sf.read(clip.audio_path, dtype="float32")
        mask = np.zeros(len(x), bool)
        for ev in events[events.clip_id == clip.clip_id].itertuples():
            mask[int(round(ev.onset_s * sr)):int(round(ev.offset_s * sr))] = True
        # every annotated region has energy, and nothing outside them does (pure silence)
        assert np.max(np.abs(x[~mask]), initial=0.0) < 1e-3, clip.clip_id
        for ev in events[events.clip_id == clip.clip_id].itertuples():
            seg = x[int(round(ev.onset_s * sr)):int(round(ev.offset_s * sr))]
            assert np.sqrt(np.mean(seg ** 2)) > 0.01, (clip.clip_id, ev.label)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_trivial_family_annotations_match_audio(tmp_path, family):
    items, clips, events, stats = generate_family(family, 8, tmp_path, seed=3, dataset="d", task=family)
    assert len(items) == 8 and stats["items_written"] == 8
    _energy_check(clips, events)


def test_scene_annotations_match_audio(tmp_path):
    clips, events = generate_scenes(tmp_path, n_clips=6, seed=1)
    assert set(events.columns) == {"clip_id", "onset_s", "offset_s", "label", "caption", "source"}
    assert (events.offset_s > events.onset_s).all()
    assert (events.groupby("clip_id").size() >= 3).all()
    _energy_check(clips, events)


def test_beep_count_items_count_the_rendered_beeps(tmp_path):
    items, clips, events, _ = generate_family("beep_count", 12, tmp_path, seed=0, dataset="d", task="bc")
    per_clip = events.groupby("clip_id").size()
    for it in items:
        assert int(it["answer_text"]) == per_clip[it["clip_id"]]
        assert [o["text"] for o in it["options"]] == sorted((o["text"] for o in it["options"]), key=int)


def test_pitch_order_answer_matches_rendered_frequencies(tmp_path):
    items, _, events, _ = generate_family("pitch_order", 10, tmp_path, seed=0, dataset="d", task="po")
    for it in items:
        f1, f2 = (float(c.split()[1]) for c in events[events.clip_id == it["clip_id"]].caption)
        assert it["answer_text"] == ("the first tone" if f1 > f2 else "the second tone")


def test_answer_positions_are_balanced(tmp_path):
    items, _, _, stats = generate_family("pitch_pattern", 40, tmp_path, seed=0, dataset="d", task="pp")
    assert stats["answer_position_histogram"] == {"A": 10, "B": 10, "C": 10, "D": 10}


def _digest(tmp, seed):
    items, clips, _, _ = generate_family("gap_length", 6, tmp, seed=seed, dataset="d", task="g")
    h = hashlib.sha256()
    for c in clips.audio_path:
        h.update(open(c, "rb").read())
    return [it["answer_label"] for it in items], h.hexdigest()


def test_same_seed_same_audio_and_items(tmp_path):
    assert _digest(tmp_path / "a", 5) == _digest(tmp_path / "b", 5)
    assert _digest(tmp_path / "c", 6)[1] != _digest(tmp_path / "a", 5)[1]
