"""The signal baseline on synthetic signals whose answers are known exactly, and on a small generated suite."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from lalmbench.models import signal_baseline as sb
from lalmbench.models import signal_features as sfeat
from lalmbench.models.base import ModelInput, load_model
from lalmbench.models.yamnet import default_dir, missing_files
from lalmbench.data.synth import sounds
from lalmbench.data.synth.scenes import generate_scenes
from lalmbench.data.synth.trivial import FIRST_SECOND, PATTERNS, generate_family
from lalmbench.tasks import build_items

SR = 16000


@pytest.fixture(scope="module")
def model():
    return load_model("signal", {"backend": "signal", "params": {"yamnet": False}})


def _opts(texts, types=None):
    return [{"label": "ABCDEFG"[i], "text": t, "type": (types or {}).get(t, "x"), "meta": {}}
            for i, t in enumerate(texts)]


def _ask(model, audio, family, texts, **meta):
    x = ModelInput(id="i", prompt="", question="", options=_opts(texts, meta.pop("types", None)), audio=audio,
                   sample_rate=SR, meta={"family": family, **meta})
    (out,) = model.generate([x])
    return out


def _seq(*parts: tuple[np.ndarray, float]) -> np.ndarray:
    """Sounds each followed by a silence of the given length, after 0.3 s of silence."""
    out = [np.zeros(int(0.3 * SR), np.float32)]
    for snd, gap in parts:
        out += [snd, np.zeros(int(gap * SR), np.float32)]
    return np.concatenate(out)


def test_440_then_880_hz_is_the_second_tone_higher(model):
    audio = _seq((sounds.tone(440, 0.5, SR), 0.4), (sounds.tone(880, 0.5, SR), 0.3))
    out = _ask(model, audio, "pitch_order", FIRST_SECOND)
    assert out.raw_output == "B"
    assert out.extra["method"] == "pitch_order"
    assert out.extra["option_values"]["A"] == pytest.approx(440, rel=0.02)
    assert out.extra["option_values"]["B"] == pytest.approx(880, rel=0.02)
    assert [s["onset_s"] for s in out.extra["segments"]] == pytest.approx([0.3, 1.2], abs=0.02)


def test_reversed_options_give_the_same_sound(model):
    audio = _seq((sounds.tone(880, 0.5, SR), 0.4), (sounds.tone(440, 0.5, SR), 0.3))
    assert _ask(model, audio, "pitch_order", FIRST_SECOND).raw_output == "A"
    assert _ask(model, audio, "pitch_order", FIRST_SECOND[::-1]).raw_output == "B"


def test_louder_longer_and_gap(model):
    loud = _seq((sounds.tone(500, 0.5, SR, -20), 0.4), (sounds.tone(500, 0.5, SR, -8), 0.3))
    out = _ask(model, loud, "loudness_order", FIRST_SECOND)
    assert out.raw_output == "B" and out.extra["loudness_measure"] == "lufs"
    assert out.extra["option_values"]["B"] - out.extra["option_values"]["A"] == pytest.approx(12, abs=0.5)
    long = _seq((sounds.tone(500, 0.9, SR), 0.4), (sounds.tone(500, 0.3, SR), 0.3))
    out = _ask(model, long, "duration_order", FIRST_SECOND)
    assert out.raw_output == "A" and out.extra["option_values"]["A"] == pytest.approx(0.9, abs=0.03)
    for gap, want in ((0.1, "A"), (1.0, "B")):
        beeps = _seq((sounds.tone(800, 0.15, SR), gap), (sounds.tone(800, 0.15, SR), 0.3))
        out = _ask(model, beeps, "gap_length", ["a short pause", "a long pause"])
        assert out.raw_output == want and out.extra["gap_s"] == pytest.approx(gap, abs=0.03)


def test_two_beeps_count_two(model):
    audio = _seq((sounds.tone(800, 0.12, SR), 0.2), (sounds.tone(800, 0.12, SR), 0.3))
    out = _ask(model, audio, "beep_count", ["1", "2", "3", "4"])
    assert (out.raw_output, out.extra["count"]) == ("B", 2)


def test_pitch_contour_rising_then_falling(model):
    audio = _seq((sounds.tone(300, 0.3, SR), 0.2), (sounds.tone(600, 0.3, SR), 0.2), (sounds.tone(320, 0.3, SR), 0.3))
    out = _ask(model, audio, "pitch_pattern", PATTERNS)
    assert out.raw_output == "C" and out.extra["contour"] == [1, -1]
    assert sb.contour("falling then rising") == (-1, 1)
    assert sb.measured_contour([300.0, 450.0, 700.0]) == (1,)


def _scene() -> np.ndarray:
    """low tone 0.5-1.3 s, noise burst 2.0-2.6 s, click train 3.5-4.3 s, high tone 4.8-5.4 s."""
    canvas = np.zeros(6 * SR, np.float32)
    rng = np.random.default_rng(0)
    sounds.place(canvas, sounds.tone(220, 0.8, SR), 0.5, SR)
    sounds.place(canvas, sounds.noise_burst(0.6, SR, rng), 2.0, SR)
    sounds.place(canvas, sounds.click_train(0.8, SR), 3.5, SR)
    sounds.place(canvas, sounds.tone(1600, 0.6, SR), 4.8, SR)
    return canvas


def test_scene_events_are_found_where_they_are(model):
    evs = sfeat.events(_scene(), SR)
    got = [(e.kind, round(e.onset_s, 1), round(e.offset_s, 1)) for e in evs]
    assert got == [("tonal", 0.5, 1.3), ("broadband", 2.0, 2.6), ("broadband", 3.5, 4.3), ("tonal", 4.8, 5.4)]
    assert evs[0].f_median_hz == pytest.approx(220, rel=0.03)
    assert evs[1].impulsiveness_db < 6 < 16 < evs[2].impulsiveness_db


def test_scene_order_next_and_presence(model):
    audio = _scene()
    out = _ask(model, audio, "order", ["a burst of hissing noise", "a low-pitched tone"], ask="first")
    assert out.raw_output == "B"
    assert out.extra["options"]["A"]["onset_s"] == pytest.approx(2.0, abs=0.03)
    out = _ask(model, audio, "order", ["a burst of hissing noise", "a low-pitched tone"], ask="last")
    assert out.raw_output == "A"
    none = "This is the last event, no immediate event after."
    texts = ["a high-pitched tone", none, "a rapid train of clicks"]
    out = _ask(model, audio, "next", texts, base_text="a burst of hissing noise", types={none: "none"})
    assert out.raw_output == "C"
    out = _ask(model, audio, "next", texts, base_text="a high-pitched tone", types={none: "none"})
    assert out.raw_output == "B" and out.extra["next_event"] is None
    assert _ask(model, audio, "presence", ["Yes", "No"], text="a rapid train of clicks").raw_output == "A"
    assert _ask(model, audio, "presence", ["Yes", "No"], text="a rising chirp").raw_output == "B"


def test_silence_and_unknown_families_fall_back_by_text_never_by_position(model):
    silent = np.zeros(2 * SR, np.float32)
    out = _ask(model, silent, "pitch_order", FIRST_SECOND)
    assert out.extra == {"method": "fallback", "reason": "no sound found", "segments": []}
    flipped = _ask(model, silent, "pitch_order", FIRST_SECOND[::-1])
    chosen = {o["label"]: o["text"] for o in _opts(FIRST_SECOND)}[out.raw_output]
    assert {o["label"]: o["text"] for o in _opts(FIRST_SECOND[::-1])}[flipped.raw_output] == chosen
    out = _ask(model, _scene(), "mmau", ["x", "y"])
    assert out.extra["reason"] == "family 'mmau' is not one the signal baseline measures"
    x = ModelInput(id="o", prompt="", question="", options=[], audio=silent, sample_rate=SR, meta={})
    assert model.generate([x])[0].error == "signal baseline answers multiple-choice items only"


def test_yamnet_tags_scene_events():
    if missing_files(default_dir()):
        pytest.skip(f"YAMNet not fetched into {default_dir()} (make yamnet)")
    m = load_model("signal", {"backend": "signal"})
    out = _ask(m, _scene(), "presence", ["Yes", "No"], text="a burst of hissing noise")
    noise = out.extra["events"][1]
    assert out.raw_output == "A"
    assert {"White noise", "Noise", "Pink noise"} & set(noise["yamnet"])


def _accuracy(model, items) -> float:
    right = 0
    for it in items:
        audio, sr = sf.read(it["audio_path"], dtype="float32")
        x = ModelInput(id=it["id"], prompt="", question=it["question"], options=it["options"], audio=audio,
                       sample_rate=sr, meta=it["meta"])
        right += model.generate([x])[0].raw_output == it["answer_label"]
    return right / len(items)


@pytest.mark.parametrize("family", ["pitch_order", "loudness_order", "duration_order", "gap_length", "beep_count",
                                    "pitch_pattern"])
def test_generated_trivial_items_are_answered(model, tmp_path, family):
    items, *_ = generate_family(family, 8, tmp_path, seed=3, dataset="d", task=family)
    assert _accuracy(model, items) == 1.0


def test_generated_scene_items_are_answered(model, tmp_path):
    clips, events = generate_scenes(tmp_path, n_clips=8, seed=3)
    for family, params in (("order", {"n_options": 2, "min_gap_s": 0.3}), ("next", {"n_options": 3}),
                           ("presence", {})):
        items, _ = build_items(family, events, clips, params, seed=3, dataset="d", task=family)
        assert _accuracy(model, items) >= 0.9, family
