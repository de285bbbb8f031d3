import numpy as np
import pytest
import soundfile as sf

from lalmbench.core import io
from lalmbench.data.audio_cache import cache_task_audio


def test_cache_resamples_once_and_maps_paths(tmp_path):
    t = np.arange(44100) / 44100
    stereo = np.stack([0.5 * np.sin(2 * np.pi * 440 * t), 0.5 * np.sin(2 * np.pi * 440 * t)], axis=1)
    src = tmp_path / "a.flac"
    sf.write(src, stereo, 44100)
    io.write_jsonl(tmp_path / "t.jsonl", [{"id": "1", "audio_path": str(src)}, {"id": "2", "audio_path": str(src)}])
    m = cache_task_audio(str(tmp_path / "t.jsonl"), str(tmp_path / "cache"), str(tmp_path / "m.json"), 16000)
    assert list(m) == [str(src)]
    x, sr = sf.read(m[str(src)])
    assert sr == 16000 and x.ndim == 1 and len(x) == 16000
    spectrum = np.abs(np.fft.rfft(x))
    assert abs(np.argmax(spectrum) * 16000 / len(x) - 440) < 2
    assert io.read_json(tmp_path / "m.json")["files"] == m


def test_missing_audio_fails_naming_the_file(tmp_path):
    io.write_jsonl(tmp_path / "t.jsonl", [{"id": "1", "audio_path": str(tmp_path / "gone.wav")}])
    with pytest.raises(io.InputError, match=r"t.jsonl: 1 of 1 audio files unusable; first: .*gone.wav: audio file not found"):
        cache_task_audio(str(tmp_path / "t.jsonl"), str(tmp_path / "c"), str(tmp_path / "m.json"), 16000)
    assert not (tmp_path / "m.json").exists()
