"""Bad audio is an error naming the file (truncated, empty, NaN/inf, a folder), or a warning (anti-phase stereo)."""
import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lalmbench.core import io
from lalmbench.data.audio import load_audio
from lalmbench.data.audio_cache import cache_task_audio
from lalmbench.inference import partial_path, run_inference
from lalmbench.data.synth.trivial import generate_family

TEMPLATE = Path(__file__).resolve().parents[1] / "resources" / "prompts" / "mcq-default.txt"
SR = 16000


def _tone(n: int = SR) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * 440 * np.arange(n) / SR)).astype(np.float32)


def _truncated(path: Path, subtype: str = "PCM_16") -> Path:
    sf.write(path, _tone(), SR, subtype=subtype)
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    return path


@pytest.mark.parametrize("subtype, held", [("PCM_16", 7989), ("PCM_24", 7992), ("FLOAT", 7990)])
def test_truncated_wav_names_file_and_both_frame_counts(tmp_path, subtype, held):
    p = _truncated(tmp_path / "half.wav", subtype)
    with pytest.raises(io.InputError) as exc:
        load_audio(p, SR)
    assert str(exc.value) == (f"{p}: truncated audio: the header declares 16000 frames but the file holds only "
                              f"{held} (50%); the file was cut short (re-download or re-export it)")


def test_complete_wav_with_extra_chunks_loads(tmp_path):
    p = tmp_path / "ok.wav"
    sf.write(p, _tone(), SR, subtype="FLOAT")  # FLOAT WAVs carry fact and PEAK chunks before data
    assert len(load_audio(p, SR)) == SR


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b""), "no audio samples (empty file, 0 bytes)"),
    (lambda p: sf.write(p, np.zeros(0, np.float32), SR), "no audio samples (empty or header-only file)"),
    (lambda p: (_truncated(p), p.write_bytes(p.read_bytes()[:44])), "no audio samples (empty or header-only file)"),
    (lambda p: sf.write(p, np.r_[_tone(100), np.nan, _tone(10)].astype(np.float32), SR, subtype="FLOAT"),
     "1 non-finite samples (NaN/inf), first at frame 100 (channel 1)"),
    (lambda p: sf.write(p, np.stack([_tone(50), np.r_[_tone(20), np.inf, -np.inf, _tone(28)]], 1), SR,
                        subtype="FLOAT"), "2 non-finite samples (NaN/inf), first at frame 20 (channel 2)"),
], ids=["zero-bytes", "no-frames", "header-only", "nan", "inf"])
def test_empty_or_non_finite_audio_is_an_error_naming_the_file(tmp_path, make, message):
    p = tmp_path / "bad.wav"
    make(p)
    with pytest.raises(io.InputError, match=re.escape(f"{p}: {message}")):
        load_audio(p, SR)


@pytest.mark.parametrize("path", [".", "sub"])
def test_a_folder_is_not_an_audio_file(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    with pytest.raises(io.InputError, match=rf"^{re.escape(path)}: is a directory, not an audio file$"):
        load_audio(path, SR)


def test_anti_phase_stereo_warns_with_channel_and_downmix_rms(tmp_path, caplog):
    x = _tone()
    sf.write(tmp_path / "anti.wav", np.stack([x, -x], 1), SR, subtype="FLOAT")
    sf.write(tmp_path / "same.wav", np.stack([x, x], 1), SR, subtype="FLOAT")
    sf.write(tmp_path / "quiet.wav", np.zeros((SR, 2), np.float32), SR)
    with caplog.at_level(logging.WARNING, logger="lalmbench.data.audio"):
        y = load_audio(tmp_path / "anti.wav", SR)
        load_audio(tmp_path / "same.wav", SR)
        load_audio(tmp_path / "quiet.wav", SR)
    assert np.abs(y).max() == 0  # what the model would hear
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / 'anti.wav'}: the mono downmix nearly cancels (channel RMS 0.3536, 0.3536, downmix RMS 0): "
        "the channels are in anti-phase, so a model hears near-silence; fix the file's polarity or pick one channel"]


def test_cache_audio_stops_naming_the_truncated_file(tmp_path, caplog):
    good = tmp_path / "good.wav"
    sf.write(good, _tone(), SR)
    bad = _truncated(tmp_path / "half.wav")
    io.write_jsonl(tmp_path / "t.jsonl", [{"id": "1", "audio_path": str(good)}, {"id": "2", "audio_path": str(bad)}])
    with pytest.raises(io.InputError) as exc, caplog.at_level(logging.ERROR, logger="lalmbench.data.audio_cache"):
        cache_task_audio(str(tmp_path / "t.jsonl"), str(tmp_path / "c"), str(tmp_path / "m.json"), SR)
    assert str(exc.value).startswith(f"{tmp_path / 't.jsonl'}: 1 of 2 audio files unusable; first: {bad}: truncated "
                                     "audio: the header declares 16000 frames but the file holds only 7989 (50%)")
    assert [r.getMessage() for r in caplog.records][0].startswith(f"{bad}: truncated audio")
    assert not (tmp_path / "m.json").exists()


def test_truncated_audio_is_an_item_error_at_generation(tmp_path):
    items, *_ = generate_family("gap_length", 3, tmp_path, seed=0, dataset="d", task="g")
    items[1]["audio_path"] = str(_truncated(tmp_path / "half.wav"))
    io.write_jsonl(tmp_path / "g.jsonl", items)
    with pytest.raises(RuntimeError, match="1/3 items failed"):
        run_inference(items_path=str(tmp_path / "g.jsonl"), out_path=str(tmp_path / "g.parquet"), model_name="r",
                      model_cfg={"backend": "random"}, condition="audio", prompt_name="p", template_path=str(TEMPLATE))
    rows = [json.loads(line) for line in partial_path(tmp_path / "g.parquet").read_text().splitlines()]
    errors = {r["id"]: r["error"] for r in rows}
    assert errors[items[1]["id"]] == (f"InputError: {tmp_path / 'half.wav'}: truncated audio: the header declares "
                                      "16000 frames but the file holds only 7989 (50%); the file was cut short "
                                      "(re-download or re-export it)")
    assert errors[items[0]["id"]] is None and errors[items[2]["id"]] is None
