"""What each family's real checkpoint is fed, token for token, on tiny checkpoints configured like the real ones.

The tiny builders (tiny.py) reproduce the settings that change the ids: Gemma 3n's tokenizer adds BOS
(``add_bos_token=True``) and its template writes ``{{ bos_token }}``; AF3's template hoists ``<sound>``;
Qwen2.5-Omni's extractor window is 300 s; Qwen3-Omni's template writes no system turn of its own. Each test
asserts the rendered text and the first ids for generation, log-likelihood scoring and the vLLM prompt path.
"""
from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch", reason="the hf backend needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="the hf backend needs transformers (core env or envs/hf)")

import tiny  # noqa: E402

from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from lalmbench.models.check import main as check_main  # noqa: E402
from lalmbench.models.hf.families import get_family  # noqa: E402
from lalmbench.models.hf.presets import QWEN_OMNI_SYSTEM, apply_preset  # noqa: E402
from lalmbench.models.vllm_backend import build_prompt_request, sampling_kwargs  # noqa: E402
from lalmbench.workflow.model_entries import family_warnings  # noqa: E402

needs_hf_env = pytest.mark.skipif(not tiny.HAS_TORCHVISION, reason="the Omni/Gemma processors need the 'hf' env")
Q = "What is the sound?"
DIRS = {"qwen2_audio": "qwen2_audio_dir", "qwen2_5_omni": "qwen2_5_omni_dir", "qwen3_omni": "qwen3_omni_dir",
        "gemma3n": "gemma3n_dir", "audioflamingo3": "af3_dir", "voxtral": "voxtral_proc_dir"}
QWEN_USER = "<|im_start|>user\n<|audio_bos|><|AUDIO|><|audio_eos|>What is the sound?<|im_end|>\n<|im_start|>assistant\n"
EXPECTED_TEXT = {
    "qwen2_audio": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                   "Audio 1: <|audio_bos|><|AUDIO|><|audio_eos|>\nWhat is the sound?<|im_end|>\n<|im_start|>assistant\n",
    "qwen2_5_omni": f"<|im_start|>system\n{QWEN_OMNI_SYSTEM}<|im_end|>\n" + QWEN_USER,
    "qwen3_omni": QWEN_USER,
    "gemma3n": "<bos><start_of_turn>user\n<audio_soft_token>What is the sound?<end_of_turn>\n<start_of_turn>model\n",
    "audioflamingo3": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                      "<sound>What is the sound?<|im_end|>\n<|im_start|>assistant\n",
}


def item(seconds=1.0, prompt=Q, audios=None):
    audio = tiny.tone(seconds) if audios is None else audios[0]
    return ModelInput(id="r0", prompt=prompt, question=prompt, options=[], audio=audio, sample_rate=16000,
                      audios=audios)


def processor(family, request):
    if family in ("qwen2_5_omni", "qwen3_omni") and not tiny.HAS_TORCHVISION:
        pytest.skip("the Omni processors need torchvision: the 'hf' env")
    d = request.getfixturevalue(DIRS[family])
    return d, get_family(family).load_processor(str(d), None, False)


def preset_render(family, proc, it):
    cfg, _ = apply_preset("m", family, {})
    fam = get_family(family)
    return fam, cfg, fam.render(proc, it, cfg.get("system_prompt"), cfg.get("audio_position"))


@pytest.mark.parametrize("family", sorted(EXPECTED_TEXT))
def test_rendered_prompt_and_vllm_ids_match_the_real_template(family, request):
    _, proc = processor(family, request)
    fam, cfg, text = preset_render(family, proc, item())
    assert text == EXPECTED_TEXT[family]
    tok = fam.tokenizer(proc)
    hf_ids = fam.encode(proc, [item()], cfg.get("system_prompt"), cfg.get("audio_position"))["input_ids"][0].tolist()
    # vLLM tokenizes the prompt text with special tokens on, then expands the audio placeholder itself
    req = build_prompt_request(item(), family, proc, cfg.get("system_prompt"), cfg.get("audio_position"))
    vllm_ids = tok(req["prompt"])["input_ids"]
    unexpanded = tok(text, add_special_tokens=False)["input_ids"]
    assert vllm_ids == unexpanded
    n = unexpanded.index(tok.convert_tokens_to_ids(
        {"gemma3n": "<audio_soft_token>", "audioflamingo3": "<sound>"}.get(family, "<|audio_bos|>")))
    # Gemma 3n's processor expands its placeholder to "\n\n<start_of_audio>...": after the template's "\n" that is
    # one "\n\n\n" token, as in the real vocabulary (vLLM's Gemma 3n processor merges them the same way)
    k = n - 1 if family == "gemma3n" else n
    assert hf_ids[:k] == vllm_ids[:k]
    if family == "gemma3n":
        assert hf_ids[k] == tok.convert_tokens_to_ids("\n\n\n")
    assert len(req["multi_modal_data"]["audio"]) == 1


@needs_hf_env
def test_gemma3n_ids_start_with_one_bos_in_generation_loglik_and_vllm(gemma3n_dir):
    """The real Gemma 3n template writes <bos> and its tokenizer adds one too: the ids must start [2, <start_of_turn>]."""
    model = load_model("g", {"backend": "hf", "model_id": str(gemma3n_dir), "generation": {"max_new_tokens": 2}})
    bos, sot = model.tokenizer.bos_token_id, model.tokenizer.convert_tokens_to_ids("<start_of_turn>")
    it = model.prepare(item())
    for side in ("left", "right"):  # generation pads left, log-likelihood scoring right
        ids = model.encode([it], padding_side=side)["input_ids"][0].tolist()
        assert ids[:2] == [bos, sot]
        assert ids.count(bos) == 1
        assert ids.count(model.processor.audio_token_id) == 188  # the fixed 30 s window
    out = model.generate([item()])[0]
    assert out.error is None and out.input_tokens == len(ids)
    vllm_ids = model.tokenizer(build_prompt_request(it, "gemma3n", model.processor)["prompt"])["input_ids"]
    assert vllm_ids[:2] == [bos, sot] and vllm_ids.count(bos) == 1
    assert model.provenance()["rendered_prompt"].startswith("<bos><start_of_turn>user\n<audio_soft_token>{prompt}")


@needs_hf_env
def test_qwen2_5_omni_keeps_300_s_and_flags_only_longer_clips(qwen2_5_omni_dir):
    model = load_model("o", {"backend": "hf", "model_id": str(qwen2_5_omni_dir), "generation": {"max_new_tokens": 1}})
    assert model.family.audio_limit_s(model.processor) == 300.0
    aid = model.processor.tokenizer.convert_tokens_to_ids("<|AUDIO|>")

    def n_audio(sec):
        return int((model.encode([model.prepare(item(sec))])["input_ids"] == aid).sum())

    assert n_audio(60.0) > 1.9 * n_audio(30.0)  # nothing cut at 30 s
    assert model.audio_note(item(60.0)) == {}
    assert model.audio_note(item(301.0)) == {"audio_truncated": {"duration_s": 301.0, "model_max_s": 300.0}}


def test_af3_audio_position_has_no_effect_and_says_so(af3_dir):
    fam, proc = get_family("audioflamingo3"), get_family("audioflamingo3").load_processor(str(af3_dir), None, False)
    assert fam.render(proc, item(), None, "after") == fam.render(proc, item(), None, "before")
    notes = family_warnings({"af3": {"backend": "hf", "model_id": "x", "family": "audioflamingo3",
                                     "audio_position": "after"}, "q": {"backend": "hf", "model_id": "x",
                                                                       "family": "qwen2_audio", "audio_position": "after"}})
    assert notes == ["models.af3.audio_position: audio_position: after has no effect for family 'audioflamingo3': "
                     "its chat template puts the audio before the text whatever the setting, so an audio-position "
                     "comparison compares nothing"]
    with pytest.warns(UserWarning, match="has no effect for family 'audioflamingo3'"):
        load_model("af3", {"backend": "hf", "model_id": str(af3_dir), "audio_position": "after"})


def test_qwen2_audio_numbers_several_clips_in_order(qwen2_audio_dir):
    fam, proc = get_family("qwen2_audio"), get_family("qwen2_audio").load_processor(str(qwen2_audio_dir), None, False)
    two = item(audios=[tiny.tone(1.0), tiny.tone(2.0, 300)], prompt="Which is longer?")
    text = fam.render(proc, two, None, "before")
    assert ("<|im_start|>user\nAudio 1: <|audio_bos|><|AUDIO|><|audio_eos|>\n"
            "Audio 2: <|audio_bos|><|AUDIO|><|audio_eos|>\nWhich is longer?<|im_end|>") in text
    ids = fam.encode(proc, [two])["input_ids"][0]
    aid = proc.tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    assert int((ids == aid).sum()) == 25 + 50  # 1 s and 2 s clips, 25 audio tokens a second, in order
    req = build_prompt_request(two, "qwen2_audio", proc)
    assert [len(a) for a, _ in req["multi_modal_data"]["audio"]] == [16000, 32000]


def test_preset_fills_only_what_the_entry_leaves_unset():
    cfg, info = apply_preset("o", "qwen2_5_omni", {"generation": {"max_new_tokens": 8}})
    assert cfg["system_prompt"] == QWEN_OMNI_SYSTEM and info["from_preset"]["system_prompt"] == QWEN_OMNI_SYSTEM
    assert apply_preset("o", "qwen2_5_omni", {"system_prompt": None})[0]["system_prompt"] is None
    assert "system_prompt" not in apply_preset("o", "qwen2_5_omni", {"preset": "none"})[0]
    q3, _ = apply_preset("q", "qwen3_omni", {"generation": {"max_new_tokens": 8}})
    assert q3 == {"audio_position": "before", "generation": {"max_new_tokens": 8, "do_sample": False}}
    with pytest.raises(ValueError, match="preset must be one of"):
        apply_preset("q", "qwen3_omni", {"preset": "author"})


def test_stop_at_im_end_is_explicit_for_hf_and_vllm(qwen2_audio_dir, tmp_path):
    import shutil

    from transformers import GenerationConfig

    ckpt = tmp_path / "q"
    shutil.copytree(qwen2_audio_dir, ckpt)
    GenerationConfig(eos_token_id=0, pad_token_id=0).save_pretrained(ckpt)  # lists <|endoftext|> only
    model = load_model("q", {"backend": "hf", "model_id": str(ckpt)})
    im_end = model.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert model.generation_config.eos_token_id == [0, im_end]
    assert sampling_kwargs({}, get_family("qwen2_audio").stop_token_ids(model.processor))["stop_token_ids"] == [im_end]


@needs_hf_env
@pytest.mark.parametrize("family", sorted(DIRS))
def test_check_render_only_prints_the_prompt_ids_and_limits(family, request, tmp_path, capsys):
    d = request.getfixturevalue(DIRS[family])
    entry = tmp_path / "entry.yaml"
    entry.write_text(f"backend: hf\nmodel_id: {d}\nfamily: {family}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_main([str(entry), "--render-only", "--seconds", "2"]) == 0
    out = capsys.readouterr().out
    assert "--- rendered prompt (hf) ---" in out and "first: " in out and "generation: {" in out
    limit = {"qwen2_audio": "30.0 s", "qwen2_5_omni": "300.0 s", "gemma3n": "30.0 s", "audioflamingo3": "600.0 s",
             "qwen3_omni": "whole clip kept", "voxtral": "whole clip kept"}[family]
    assert f"audio limit: {limit}" in out
    tokens = {"qwen2_audio": 50, "qwen2_5_omni": 50, "gemma3n": 188, "audioflamingo3": 50, "voxtral": 375}
    if family in tokens:  # 25 a second for the Whisper-style encoders; fixed windows for Gemma 3n and Voxtral
        assert f"audio tokens: {tokens[family]} for a 2.0 s clip" in out
    if family == "gemma3n":
        assert "first: 2:'<bos>' 3:'<start_of_turn>'" in out


def test_voxtral_renders_each_clip_in_order(voxtral_proc_dir):
    fam = get_family("voxtral")
    proc = fam.load_processor(str(voxtral_proc_dir), None, False)
    two = item(audios=[tiny.tone(1.0), tiny.tone(31.0, 300)], prompt="Which is longer?")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = fam.render(proc, two, None, "before")
    # 12.5 audio tokens a second in 30 s chunks: 375 for the 1 s clip, 750 for the 31 s one
    assert text.replace("[AUDIO]", "") == "<s>[INST][BEGIN_AUDIO][BEGIN_AUDIO]Which is longer?[/INST]"
    assert text.count("[AUDIO]") == 375 + 750
    assert fam.encode(proc, [two])["input_features"].shape[0] == 3


def test_check_finds_an_entry_by_name_and_suggests_close_names(tmp_path):
    from lalmbench.models.check import load_entry

    cfg = tmp_path / "config.yaml"
    cfg.write_text("models:\n  qwen2-audio:\n    backend: hf\n    model_id: Qwen/Qwen2-Audio-7B-Instruct\n")
    assert load_entry("qwen2-audio", str(cfg)) == ("qwen2-audio", {"backend": "hf",
                                                                  "model_id": "Qwen/Qwen2-Audio-7B-Instruct"})
    with pytest.raises(SystemExit, match="no model entry 'qwen2-audi'; did you mean 'qwen2-audio'"):
        load_entry("qwen2-audi", str(cfg))


def test_a_new_prompt_version_regenerates_hf_and_vllm_predictions(monkeypatch):
    from lalmbench.inference.fingerprint import model_fingerprint
    from lalmbench.models.hf import presets

    hf = {"backend": "hf", "model_id": "google/gemma-3n-E2B-it"}
    other = {"backend": "random"}
    before = model_fingerprint(hf), model_fingerprint(other)
    monkeypatch.setattr(presets, "PROMPT_VERSION", presets.PROMPT_VERSION + 1)
    assert model_fingerprint(hf) != before[0]
    assert model_fingerprint(other) == before[1]


def test_hf_models_declare_multi_audio_from_their_family_and_accept_the_gap_key(qwen2_audio_dir, af3_dir):
    q = load_model("q", {"backend": "hf", "model_id": str(qwen2_audio_dir), "multi_audio_gap_s": 0.5,
                         "generation": {"max_new_tokens": 2}})
    a = load_model("a", {"backend": "hf", "model_id": str(af3_dir)})
    assert (q.multi_audio, a.multi_audio) == (True, False)
    two = q.generate([item(audios=[tiny.tone(1.0), tiny.tone(2.0, 300)])])[0]
    one = q.generate([item()])[0]
    line = len(q.tokenizer("Audio 2: <|audio_bos|><|audio_eos|>\n")["input_ids"])
    assert two.error is None and two.input_tokens == one.input_tokens + line + 50  # "Audio 2:" line + 2 s of audio
