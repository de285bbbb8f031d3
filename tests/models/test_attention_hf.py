"""Attention capture on the tiny checkpoints of every family that runs here.

Qwen2-Audio and Audio Flamingo 3 run in the core env too; the Omni thinkers, Gemma 3n and Voxtral
need the 'hf' env (make test-hf). Checked per family: the captured weights are what
``output_attentions=True`` returns for those layers, every row sums to 1 and is causal, and the
audio span in tokens.json is exactly the processor's expansion of the audio placeholder.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="attention capture needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="attention capture needs transformers (core env or envs/hf)")

import soundfile as sf  # noqa: E402
import tiny  # noqa: E402

from lalmbench.inference import prompts  # noqa: E402
from lalmbench.attention.capture import (AttentionTooLarge, audio_token_id, capture_item, capture_model,  # noqa: E402
                                         eager_entry)
from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from lalmbench.models.hf.loglik import build_option_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [{"label": "A", "text": "speech"}, {"label": "B", "text": "a pure tone"}]
ITEM = {"id": "it-0", "question": "What do you hear?", "options": OPTIONS}
TEMPLATE = (ROOT / "resources" / "prompts" / "mcq-default.txt").read_text()
# audio placeholders the processor writes for a 1 s clip (Gemma 3n: its fixed 188 per 30 s window;
# Voxtral: 30 s x 12.5 tokens/s; the Whisper-style encoders: 100 mel frames -> 50 -> 25)
EXPECTED_AUDIO_TOKENS = {"qwen2_audio": 25, "audioflamingo3": 25, "qwen2_5_omni": 25, "qwen3_omni": 13,
                         "gemma3n": 188, "voxtral": 375}
FIXTURES = {"qwen2_audio": "qwen2_audio_dir", "audioflamingo3": "af3_dir", "qwen2_5_omni": "qwen2_5_omni_dir",
            "qwen3_omni": "qwen3_omni_dir", "gemma3n": "gemma3n_dir", "voxtral": "voxtral_proc_dir"}


def model_input(audio) -> ModelInput:
    return ModelInput(id=ITEM["id"], prompt=prompts.render(TEMPLATE, ITEM), question=ITEM["question"], options=OPTIONS,
                      audio=audio, sample_rate=16000)


@pytest.fixture(scope="module", params=list(FIXTURES))
def family_model(request):
    fam = request.param
    if fam in ("qwen2_5_omni", "qwen3_omni") and not tiny.HAS_TORCHVISION:
        pytest.skip("the Omni processors need torchvision: run in the 'hf' env (make test-hf)")
    path = request.getfixturevalue(FIXTURES[fam])
    return fam, load_model("m", eager_entry({"backend": "hf", "model_id": str(path), "generation": {"max_new_tokens": 3},
                                            "attention": {}}))


def test_capture_is_output_attentions_rows_sum_to_one_and_audio_span_is_the_expansion(family_model):
    fam, hf = family_model
    assert hf.model.config._attn_implementation == "eager"
    inp = hf.prepare(model_input(tiny.tone(1.0)))
    attn, tokens, meta = capture_item(hf, inp, [0, -1 % 2], "all")
    ids = tokens["ids"]
    n = len(ids)
    assert attn.dtype == np.float16 and attn.shape == (2, hf.model.config.get_text_config().num_attention_heads, n, n)

    # what transformers itself returns with output_attentions=True, for the same sequence
    enc = hf.encode([inp])
    n_prompt = enc["input_ids"].shape[1]
    rows = build_option_rows(enc, [ids[n_prompt:]], hf._pad or 0)
    with torch.inference_mode():
        ref = hf.model(**rows, output_attentions=True).attentions
    np.testing.assert_allclose(attn[0], ref[0][0].float().numpy(), atol=1e-3)
    np.testing.assert_allclose(attn[1], ref[1][0].float().numpy(), atol=1e-3)

    a = attn.astype(np.float32)
    np.testing.assert_allclose(a.sum(-1), 1.0, atol=2e-3)
    assert not np.triu(a, k=1).any()  # causal: no weight on later tokens

    # the audio span is exactly where the processor put the audio placeholders
    placeholder = audio_token_id(hf.model)
    in_processor = [i for i, t in enumerate(enc["input_ids"][0].tolist()) if t == placeholder]
    (span,) = tokens["spans"]["audio"]
    assert list(range(*span)) == in_processor
    assert meta["n_audio_tokens"] == len(in_processor) == EXPECTED_AUDIO_TOKENS[fam]

    # text spans read back as the prompt's parts; the answer is what was generated after the prompt
    text = lambda k: "".join(tokens["tokens"][slice(*tokens["spans"][k][0])])  # noqa: E731
    assert tokens["notes"] == []
    assert text("question").strip() == ITEM["question"]
    assert text("options").strip() == prompts.render_options(OPTIONS)
    assert tokens["spans"]["answer"] == [[n_prompt, n]] and 1 <= n - n_prompt <= 3


def test_no_audio_item_has_no_audio_span(family_model):
    _, hf = family_model
    attn, tokens, meta = capture_item(hf, hf.prepare(model_input(None)), [0], "mean")
    assert tokens["spans"]["audio"] == [] and meta["n_audio_tokens"] == 0
    assert attn.shape[:2] == (1, 1)
    np.testing.assert_allclose(attn.astype(np.float32).sum(-1), 1.0, atol=2e-3)


def test_default_sdpa_gives_no_attentions_which_is_why_capture_loads_eager(qwen2_audio_dir):
    """transformers 5.23 loads the families with sdpa, whose output_attentions is an empty tuple."""
    hf = load_model("m", {"backend": "hf", "model_id": str(qwen2_audio_dir)})
    assert hf.model.config._attn_implementation == "sdpa"
    with torch.inference_mode():
        out = hf.model(**hf.encode([hf.prepare(model_input(tiny.tone(1.0)))]), output_attentions=True)
    assert not out.attentions


# ---------------------------------------------------------------- the job: size check first, files, resume
@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A results/ layout with one task of 3 items (1 s tones) as the capture job reads it."""
    (tmp_path / "resources" / "prompts").mkdir(parents=True)
    shutil.copy(ROOT / "resources" / "prompts" / "mcq-default.txt", tmp_path / "resources" / "prompts")
    tasks = tmp_path / "results" / "tasks" / "d"
    tasks.mkdir(parents=True)
    rows = []
    for i in range(3):
        wav = tmp_path / f"c{i}.wav"
        sf.write(wav, tiny.tone(1.0, 300 + 200 * i, seed=i), 16000)
        rows.append({**ITEM, "id": f"it/{i}", "task": "t", "dataset": "d", "audio_path": str(wav), "meta": {}})
    (tasks / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    audio = tmp_path / "results" / "audio" / "d"
    audio.mkdir(parents=True)
    (audio / "t.manifest.json").write_text(json.dumps({"sample_rate": 16000, "files": {}}))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def qwen2_audio_eager(qwen2_audio_dir):
    return load_model("m", eager_entry({"backend": "hf", "model_id": str(qwen2_audio_dir),
                                        "generation": {"max_new_tokens": 3}}))


def cfg(path, **attention):
    return {"backend": "hf", "model_id": str(path), "generation": {"max_new_tokens": 3}, "attention": attention}


def test_too_large_is_refused_before_any_forward_pass(workdir, qwen2_audio_dir, qwen2_audio_eager, monkeypatch):
    def no_forward(*a, **k):
        raise AssertionError("the model ran before the size check")

    monkeypatch.setattr(qwen2_audio_eager.model, "generate", no_forward)
    with pytest.raises(AttentionTooLarge) as e:
        capture_model(model_name="m", model_cfg=cfg(qwen2_audio_dir, heads="all", max_bytes="0.05MB"),
                      specs=[["d", "t", "audio", "mcq-default"]], root="att", hf=qwen2_audio_eager)
    # 2 layers x 2 heads x (92 prompt + 3 answer tokens)^2 x 2 bytes = 72,200 bytes
    assert str(e.value) == (
        "models.m.attention.max_bytes: 0.05 MB would need 0.07 MB for item 'it/0' (d/t, audio): 2 layers x 2 heads "
        "x 95 query x 95 key x 2 bytes (92 prompt + up to 3 answer tokens); lower max_items/layers or set heads: mean")
    assert not Path("att").exists()


def test_job_writes_each_items_files_and_a_rerun_reuses_them(workdir, qwen2_audio_dir, qwen2_audio_eager):
    spec = [["d", "t", "audio", "mcq-default"], ["d", "t", "no-audio", "mcq-default"]]
    man = capture_model(model_name="m", model_cfg=cfg(qwen2_audio_dir, layers=[-1], max_items=2), specs=spec,
                        root="att", hf=qwen2_audio_eager)
    assert (man["captured"], man["reused"]) == (4, 0)
    assert [(i["condition"], i["item"], i["dir"]) for i in man["items"]] == [
        ("audio", "it/0", "att/m/d/t/audio/it_0"), ("audio", "it/1", "att/m/d/t/audio/it_1"),
        ("no-audio", "it/0", "att/m/d/t/no-audio/it_0"), ("no-audio", "it/1", "att/m/d/t/no-audio/it_1")]
    d = Path("att/m/d/t/audio/it_0")
    assert sorted(p.name for p in d.iterdir()) == ["attn.npy", "meta.json", "tokens.json"]
    meta = json.loads((d / "meta.json").read_text())
    attn = np.load(d / "attn.npy")
    assert (meta["item_id"], meta["layers"], meta["n_decoder_layers"], meta["attn_implementation"]) == (
        "it/0", [1], 2, "eager")
    assert attn.dtype == np.float16 and list(attn.shape) == meta["shape"] == [1, 1, meta["seq_len"], meta["seq_len"]]
    again = capture_model(model_name="m", model_cfg=cfg(qwen2_audio_dir, layers=[-1], max_items=2), specs=spec,
                          root="att", hf=qwen2_audio_eager)
    assert (again["captured"], again["reused"]) == (0, 4)
    other = capture_model(model_name="m", model_cfg=cfg(qwen2_audio_dir, layers=[0], max_items=2), specs=spec[:1],
                          root="att", hf=qwen2_audio_eager)
    assert (other["captured"], other["reused"]) == (2, 0)  # other layers: recaptured
