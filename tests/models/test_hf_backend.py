"""The hf backend on tiny random checkpoints: real processors, chat templates, generate, loading errors."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the hf backend needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="the hf backend needs transformers (core env or envs/hf)")

import tiny  # noqa: E402

from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from lalmbench.models.hf.loading import ModelLoadError  # noqa: E402

PROMPT = "What is the sound? (A) speech (B) music (C) dog barking (D) silence"
OPTIONS = [{"label": "A", "text": "speech"}, {"label": "B", "text": "music"},
           {"label": "C", "text": "dog barking"}, {"label": "D", "text": "silence"}]


def item(i: int, audio, prompt: str = PROMPT) -> ModelInput:
    return ModelInput(id=f"it{i}", prompt=prompt, question=prompt, options=OPTIONS, audio=audio, sample_rate=16000)


def hf(path, **cfg):
    return load_model("m", {"backend": "hf", "model_id": str(path), "generation": {"max_new_tokens": 5}, **cfg})


@pytest.fixture(scope="module")
def qwen2_audio(qwen2_audio_dir):
    return hf(qwen2_audio_dir, batch_size=4)


@pytest.fixture(scope="module")
def af3(af3_dir):
    return hf(af3_dir, batch_size=4)


def first_step_logits(model, it: ModelInput):
    enc = model.encode([model.prepare(it)])
    with torch.inference_mode():
        return model.model(**enc).logits[0, -1]


# ------------------------------------------------------------------ generation
@pytest.mark.parametrize("fixture", ["qwen2_audio", "af3"])
def test_batched_generation_matches_one_by_one(fixture, request):
    """Length-sorted, left-padded batches give the same answers and token counts as single items, in order."""
    model = request.getfixturevalue(fixture)
    items = [item(i, tiny.tone(d, 200 + 150 * i, seed=i)) for i, d in enumerate([1.0, 3.0, 0.5])]
    batched = model.generate(items)
    single = [model.generate([it])[0] for it in items]
    assert [o.error for o in batched] == [None] * 3
    assert [o.raw_output for o in batched] == [o.raw_output for o in single]
    assert [o.input_tokens for o in batched] == [o.input_tokens for o in single]
    assert [o.output_tokens for o in batched] == [o.output_tokens for o in single]
    # longer audio -> more audio placeholder tokens in the prompt
    n_in = [o.input_tokens for o in batched]
    assert n_in[1] > n_in[0] > n_in[2]
    assert all(0 < o.output_tokens <= 5 for o in batched)
    assert batched[0].extra["generation"]["do_sample"] is False


@pytest.mark.parametrize("fixture", ["qwen2_audio", "af3"])
def test_audio_reaches_the_model(fixture, request):
    """Same prompt, tone vs silence vs another tone: the next-token logits must change."""
    model = request.getfixturevalue(fixture)
    tone = first_step_logits(model, item(0, tiny.tone(2.0, 440)))
    silence = first_step_logits(model, item(0, np.zeros(32000, np.float32)))
    other = first_step_logits(model, item(0, tiny.tone(2.0, 2000, seed=3)))
    assert float((tone - silence).abs().max()) > 1e-3
    assert float((tone - other).abs().max()) > 1e-3
    again = first_step_logits(model, item(0, tiny.tone(2.0, 440)))
    assert torch.allclose(tone, again)  # deterministic: the differences above are the audio's doing


def test_no_audio_condition_builds_a_text_only_prompt(qwen2_audio):
    audio_id = qwen2_audio.processor.audio_token_id
    with_audio = qwen2_audio.encode([item(0, tiny.tone(1.0))])["input_ids"][0].tolist()
    without = qwen2_audio.encode([item(0, None)])["input_ids"][0].tolist()
    assert audio_id in with_audio and audio_id not in without
    text = qwen2_audio.family.render(qwen2_audio.processor, item(0, None), None, None)
    assert "<|audio_bos|>" not in text and "Audio 1:" not in text and PROMPT in text
    out = qwen2_audio.generate([item(0, None), item(1, tiny.tone(1.0))])
    assert [o.error for o in out] == [None, None]
    assert out[0].input_tokens < out[1].input_tokens


def test_resamples_to_the_processor_rate(qwen2_audio):
    at16 = tiny.tone(1.0, 440, sr=16000)
    at8 = tiny.tone(1.0, 440, sr=8000)
    it8 = ModelInput(id="x", prompt=PROMPT, question="", options=[], audio=at8, sample_rate=8000)
    prepared = qwen2_audio.prepare(it8)
    assert prepared.sample_rate == 16000 and len(prepared.audio) == len(at16)
    assert np.corrcoef(prepared.audio, at16)[0, 1] > 0.9  # the same tone, not just the same length
    n8 = qwen2_audio.encode([prepared])["input_ids"].shape[1]
    assert n8 == qwen2_audio.encode([item(0, at16)])["input_ids"].shape[1]


def test_bad_item_fails_alone(qwen2_audio):
    bad = np.full(16000, np.nan, np.float32)
    out = qwen2_audio.generate([item(0, tiny.tone(1.0)), item(1, bad), item(2, np.zeros(0, np.float32))])
    assert out[0].error is None and out[0].raw_output is not None
    assert "NaN" in out[1].error and out[1].raw_output is None
    assert "non-empty" in out[2].error


def test_greedy_overrides_a_sampling_checkpoint_and_records_it(qwen2_audio_dir, tmp_path):
    """A checkpoint whose generation_config samples (as Qwen2.5-Omni's does) still decodes greedily."""
    ckpt = tmp_path / "sampling"
    shutil.copytree(qwen2_audio_dir, ckpt)
    gc = json.loads((ckpt / "generation_config.json").read_text())
    gc.update(do_sample=True, temperature=0.9, top_p=0.8, top_k=40)
    (ckpt / "generation_config.json").write_text(json.dumps(gc))
    model = hf(ckpt)
    eff = model.effective_generation
    assert eff["do_sample"] is False and "temperature" not in eff
    assert eff["overrode_checkpoint_defaults"]["do_sample"] is True
    it = item(0, tiny.tone(1.5))
    # the answer is the argmax path, computed here token by token without generate()
    enc = model.encode([model.prepare(it)])
    ids = enc["input_ids"]
    for _ in range(5):
        step = {**enc, "input_ids": ids, "attention_mask": torch.ones_like(ids)}
        with torch.inference_mode():
            ids = torch.cat([ids, model.model(**step).logits[:, -1:].argmax(-1)], 1)
    greedy = model.tokenizer.decode(ids[0, enc["input_ids"].shape[1]:], skip_special_tokens=True).strip()
    assert model.generate([it])[0].raw_output == greedy
    # asking for sampling explicitly is honoured and recorded
    sampler = hf(ckpt, generation={"max_new_tokens": 5, "do_sample": True, "temperature": 1.5})
    assert sampler.effective_generation["do_sample"] is True
    assert sampler.effective_generation["temperature"] == 1.5


def test_thinker_max_new_tokens_alias(qwen2_audio_dir):
    model = hf(qwen2_audio_dir, generation={"thinker_max_new_tokens": 3})
    assert model.effective_generation["max_new_tokens"] == 3
    assert model.generate([item(0, tiny.tone(1.0))])[0].output_tokens <= 3


# ------------------------------------------------------------------ text-only baseline
def test_text_family_is_a_text_only_baseline(text_lm_dir):
    model = hf(text_lm_dir, family="text", batch_size=2)
    out = model.generate([item(0, None), item(1, None, prompt="Short?")])
    assert [o.error for o in out] == [None, None]
    assert out[0].input_tokens > out[1].input_tokens > 0
    refused = model.generate([item(2, tiny.tone(1.0))])[0]
    assert refused.raw_output is None and "no-audio" in refused.error


# ------------------------------------------------------------------ config and loading errors
def test_family_is_inferred_from_the_checkpoint(qwen2_audio, af3):
    assert qwen2_audio.family.name == "qwen2_audio"
    assert af3.family.name == "audioflamingo3"
    assert af3.provenance()["model_class"] == "AudioFlamingo3ForConditionalGeneration"


def test_unknown_config_key_is_an_error(qwen2_audio_dir):
    with pytest.raises(ValueError, match="unknown key.*dtpye"):
        hf(qwen2_audio_dir, dtpye="bfloat16")
    with pytest.raises(ValueError, match="unknown key.*dtpye"):
        hf(qwen2_audio_dir, params={"dtpye": "bfloat16"})
    with pytest.raises(ValueError, match=r"\['dtype'\] given both"):
        hf(qwen2_audio_dir, dtype="float32", params={"dtype": "float32"})
    with pytest.raises(ValueError, match="batch_size.*top level"):
        hf(qwen2_audio_dir, params={"batch_size": 4})


def test_backend_keys_may_sit_under_params(qwen2_audio_dir):
    model = hf(qwen2_audio_dir, params={"dtype": "float32", "scoring": "loglik", "loglik_norm": "sum"})
    assert (model.settings.dtype, model.settings.scoring, model.settings.loglik_norm) == ("float32", "loglik", "sum")


def test_missing_local_checkpoint_says_what_to_download(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist.*`hf download <hub id>`"):
        hf(tmp_path / "nope", family="qwen2_audio")


def test_offline_hub_id_says_what_to_download(monkeypatch, tmp_path):
    # set after huggingface_hub was imported (it reads HF_HUB_OFFLINE once): still honoured
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with pytest.raises(ModelLoadError) as err:
        load_model("m", {"backend": "hf", "model_id": "Qwen/Qwen2-Audio-7B-Instruct", "revision": "abc123"})
    msg = str(err.value)
    assert "is not in the local hub cache" in msg and "HF_HUB_OFFLINE is set" in msg
    assert "`hf download Qwen/Qwen2-Audio-7B-Instruct --revision abc123`" in msg
    assert str(tmp_path / "hf-home") in msg


def test_unreachable_hub_fails_at_once_naming_hf_download(monkeypatch, tmp_path):
    """No HF_HUB_OFFLINE and no network: refused after one short probe, not after ~25 s of retries."""
    import huggingface_hub.constants as c

    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there: refused at once
    with pytest.raises(ModelLoadError) as err:
        load_model("m", {"backend": "hf", "model_id": "nobody/no-such-model", "revision": "abc123"})
    msg = str(err.value)
    assert "'nobody/no-such-model' at revision 'abc123' is not in the local hub cache" in msg
    assert "the Hub (http://127.0.0.1:9) cannot be reached" in msg
    assert "`hf download nobody/no-such-model --revision abc123`" in msg
    assert str(tmp_path / "hf-home") in msg and "HF_HUB_OFFLINE=1" in msg


def test_cached_hub_id_is_loaded_offline(monkeypatch, tmp_path):
    """The offline check must not refuse what the cache holds: from_pretrained gets the call."""
    from lalmbench.models.hf.loading import call_from_pretrained

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    repo = tmp_path / "hf-home" / "hub" / "models--nobody--cached"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    calls = []
    assert call_from_pretrained("config", lambda *a, **k: calls.append((a, k)) or "loaded", "nobody/cached",
                                None) == "loaded"
    assert calls == [(("nobody/cached",), {"revision": None})]


def test_checkpoint_with_missing_weights_is_refused(qwen2_audio_dir, tmp_path):
    """Random-initialised weights under a real model's name would be scored as if real: refuse them."""
    from safetensors.torch import load_file, save_file

    ckpt = tmp_path / "partial"
    shutil.copytree(qwen2_audio_dir, ckpt)
    weights = load_file(ckpt / "model.safetensors")
    dropped = [k for k in weights if "layers.1.mlp.down_proj" in k]
    assert dropped
    save_file({k: v for k, v in weights.items() if k not in dropped}, ckpt / "model.safetensors",
              metadata={"format": "pt"})
    with pytest.raises(ModelLoadError, match="lacks .* weight"):
        hf(ckpt)


def test_torchvision_families_say_which_env_they_need(qwen2_5_omni_dir):
    if tiny.HAS_TORCHVISION:
        pytest.skip("torchvision present: the full Omni path runs in test_hf_families.py")
    with pytest.raises(ModelLoadError, match="torchvision.*envs/hf"):
        hf(qwen2_5_omni_dir)


def test_af3_no_audio_prompt(af3):
    text = af3.family.render(af3.processor, item(0, None), None, None)
    assert "<sound>" not in text and PROMPT in text
    with_audio = af3.family.render(af3.processor, item(0, tiny.tone(1.0)), None, None)
    # the real AF3 template puts <sound> at the front of the user turn, whatever the family's audio_position
    assert with_audio.index("<sound>") < with_audio.index(PROMPT)
    out = af3.generate([item(0, None)])[0]
    assert out.error is None and out.input_tokens < af3.generate([item(0, tiny.tone(1.0))])[0].input_tokens


def test_system_prompt_goes_in_a_system_turn(qwen2_audio):
    text = qwen2_audio.family.render(qwen2_audio.processor, item(0, tiny.tone(1.0)), "Be brief.", None)
    assert text.startswith("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n")
    assert "You are a helpful assistant." not in text  # replaces the template's default system turn


def test_clips_beyond_the_processor_window_are_flagged(qwen2_audio):
    """Qwen2-Audio's processor keeps the first 30 s; a longer clip is answered on a cut, and says so."""
    long, short = qwen2_audio.generate([item(0, tiny.tone(31.0)), item(1, tiny.tone(29.0))])
    assert long.extra["audio_truncated"] == {"duration_s": 31.0, "model_max_s": 30.0}
    assert "audio_truncated" not in short.extra
    assert long.input_tokens == qwen2_audio.generate([item(2, tiny.tone(30.0))])[0].input_tokens


def test_a_failing_batch_marks_each_item_for_a_single_retry(qwen2_audio_dir, monkeypatch):
    """E.g. out of memory on a batch holding a long clip: every item carries the error, none is lost;
    the same items alone then succeed (the runner's retry at batch size 1)."""
    model = hf(qwen2_audio_dir, batch_size=4)
    real = model.model.generate

    def oom_on_batches(**kw):
        if kw["input_ids"].shape[0] > 1:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(**kw)

    monkeypatch.setattr(model.model, "generate", oom_on_batches)
    items = [item(i, tiny.tone(1.0 + i)) for i in range(3)]
    out = model.generate(items)
    assert all(o.raw_output is None and "batch of 3 failed" in o.error and "out of memory" in o.error for o in out)
    retried = [model.generate([it])[0] for it in items]
    assert all(o.error is None and o.raw_output is not None for o in retried)


def test_text_family_without_a_chat_template(text_lm_dir, tmp_path):
    import shutil

    ckpt = tmp_path / "plain"
    shutil.copytree(text_lm_dir, ckpt)
    cfg = json.loads((ckpt / "tokenizer_config.json").read_text())
    cfg.pop("chat_template", None)
    (ckpt / "tokenizer_config.json").write_text(json.dumps(cfg))
    (ckpt / "chat_template.jinja").unlink(missing_ok=True)
    model = hf(ckpt, family="text", system_prompt="Be brief.")
    assert model.family.render(model.tokenizer, item(0, None), "Be brief.", None) == "Be brief.\n\n" + PROMPT
    assert model.generate([item(0, None)])[0].error is None
