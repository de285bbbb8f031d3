"""vLLM backend request building, engine/sampling arguments and output mapping, without vLLM installed."""
from __future__ import annotations

import base64
import dataclasses
import importlib.util
import io
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from lalmbench.models import vllm_backend as vb
from lalmbench.models.base import ModelInput, load_model

PROMPT = "Which sound comes first? (A) bird (B) siren"


def item(audio, sr=16000, i=0) -> ModelInput:
    return ModelInput(id=f"v{i}", prompt=PROMPT, question=PROMPT, options=[], audio=audio, sample_rate=sr)


def tone(sec=1.0, sr=16000):
    t = np.arange(int(sec * sr)) / sr
    return (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_missing_vllm_says_which_env_to_use():
    with pytest.raises(ImportError, match="envs/vllm/requirements.txt"):
        load_model("q", {"backend": "vllm", "model_id": "Qwen/Qwen2-Audio-7B-Instruct", "family": "qwen2_audio"})


def test_config_is_checked_before_anything_loads():
    with pytest.raises(ValueError, match="'family' is required"):
        vb.check_config("q", {"backend": "vllm", "model_id": "x"})
    with pytest.raises(ValueError, match="unknown key.*tensor_paralel_size"):
        vb.check_config("q", {"backend": "vllm", "model_id": "x", "family": "qwen2_audio", "tensor_paralel_size": 2})
    with pytest.raises(ValueError, match="unknown hf family"):
        vb.check_config("q", {"backend": "vllm", "model_id": "x", "family": "whisper"})


def test_engine_kwargs():
    kw = vb.engine_kwargs({"model_id": "Qwen/Qwen3-Omni-30B-A3B-Instruct", "family": "qwen3_omni", "revision": "abc",
                           "tensor_parallel_size": 2, "max_model_len": 8192, "seed": 7, "dtype": "bfloat16"})
    assert kw == {"model": "Qwen/Qwen3-Omni-30B-A3B-Instruct", "tensor_parallel_size": 2, "trust_remote_code": False,
                  "seed": 7, "limit_mm_per_prompt": {"audio": 5}, "revision": "abc", "tokenizer_revision": "abc",
                  "max_model_len": 8192, "dtype": "bfloat16", "disable_log_stats": False}
    vox = vb.engine_kwargs({"model_id": "mistralai/Voxtral-Mini-3B-2507", "family": "voxtral",
                            "engine_args": {"enable_prefix_caching": False}})
    assert vox["tokenizer_mode"] == vox["config_format"] == vox["load_format"] == "mistral"
    assert vox["enable_prefix_caching"] is False
    assert vb.engine_kwargs({"model_id": "m", "family": "text"})["limit_mm_per_prompt"] == {"audio": 0}
    # AF3 hears a multi-clip item joined (its vLLM model takes one clip); Voxtral's takes at most 5
    assert vb.engine_kwargs({"model_id": "m", "family": "af3"})["limit_mm_per_prompt"] == {"audio": 1}
    with pytest.raises(ValueError, match="family 'voxtral' takes \\(5 per prompt\\)"):
        vb.check_config("v", {"model_id": "m", "family": "voxtral", "limit_mm_per_prompt": {"audio": 6}})
    assert vb.default_mode("voxtral") == "chat" and vb.default_mode("qwen2_audio") == "prompt"


def test_sampling_kwargs_greedy_by_default():
    assert vb.sampling_kwargs({"generation": {"max_new_tokens": 32, "temperature": 0.7}}) == {
        "max_tokens": 32, "seed": 0, "temperature": 0.0}
    assert vb.sampling_kwargs({"seed": 3, "generation": {"thinker_max_new_tokens": 8, "do_sample": True,
                                                         "top_p": 0.9}}) == {
        "max_tokens": 8, "seed": 3, "top_p": 0.9, "temperature": 1.0}
    with pytest.raises(ValueError, match="beam search"):
        vb.sampling_kwargs({"generation": {"num_beams": 4}})
    with pytest.raises(ValueError, match="length_penalty.*no SamplingParams equivalent"):
        vb.sampling_kwargs({"generation": {"length_penalty": 1.2}})


def test_chat_messages_carry_the_audio_losslessly():
    audio = tone(0.5, 8000)
    msgs = vb.build_chat_messages(item(audio, sr=8000), system_prompt="Be brief.")
    assert msgs[0] == {"role": "system", "content": "Be brief."}
    audio_part, text_part = msgs[1]["content"]
    assert text_part == {"type": "text", "text": PROMPT}
    url = audio_part["audio_url"]["url"]
    assert url.startswith("data:audio/wav;base64,")
    decoded, sr = sf.read(io.BytesIO(base64.b64decode(url.split(",", 1)[1])), dtype="float32")
    assert sr == 8000 and np.array_equal(decoded, audio)
    assert vb.build_chat_messages(item(None)) == [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    after = vb.build_chat_messages(item(audio), audio_position="after")[0]["content"]
    assert [p["type"] for p in after] == ["text", "audio_url"]


# ---------------------------------------------------------------- prompt mode with a real HF processor
@pytest.fixture(scope="module")
def processor(qwen2_audio_dir):
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(qwen2_audio_dir)


# Qwen2-Audio-7B-Instruct's prompt as its model card and vLLM's audio example
# (examples/offline_inference/audio_language.py, run_qwen2_audio) write it out, by hand
QWEN2_AUDIO_HEAD = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
QWEN2_AUDIO_TAIL = "<|im_end|>\n<|im_start|>assistant\n"
QWEN2_AUDIO_SLOT = "Audio 1: <|audio_bos|><|AUDIO|><|audio_eos|>\n"


def test_prompt_request_is_the_documented_qwen2_audio_format(processor):
    audio = tone(1.0, 22050)
    req = vb.build_prompt_request(item(audio, sr=22050), "qwen2_audio", processor)
    assert req["prompt"] == QWEN2_AUDIO_HEAD + QWEN2_AUDIO_SLOT + PROMPT + QWEN2_AUDIO_TAIL
    # vLLM's documented multi_modal_data: one (array, sample rate) pair per placeholder, resampled by vLLM
    assert list(req) == ["prompt", "multi_modal_data"] and list(req["multi_modal_data"]) == ["audio"]
    (arr, sr), = req["multi_modal_data"]["audio"]
    assert sr == 22050 and arr.dtype == np.float32 and np.array_equal(arr, audio)
    assert vb.build_prompt_request(item(None), "qwen2_audio", processor) == {
        "prompt": QWEN2_AUDIO_HEAD + PROMPT + QWEN2_AUDIO_TAIL}  # vLLM's audio_count=0 prompt, no audio data
    own_system = vb.build_prompt_request(item(audio), "qwen2_audio", processor, system_prompt="Be brief.")
    assert own_system["prompt"] == ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n" + QWEN2_AUDIO_SLOT
                                    + PROMPT + QWEN2_AUDIO_TAIL)


def test_prompt_request_is_what_the_model_card_conversation_renders(processor):
    """The model card's conversation (audio part, then text), through the checkpoint's processor."""
    conversation = [{"role": "user", "content": [{"type": "audio", "audio_url": "clip.wav"},
                                                 {"type": "text", "text": PROMPT}]}]
    expected = processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
    assert vb.build_prompt_request(item(tone()), "qwen2_audio", processor)["prompt"] == expected


def test_vllm_request_feeds_the_model_the_same_tokens_and_features_as_the_hf_backend(processor):
    """vLLM expands the placeholder by calling the checkpoint's HF processor on the request's
    prompt and audio; that must give the ids and features the hf backend feeds its model."""
    import torch

    from lalmbench.models.hf.families import get_family

    audio = tone(1.0, 16000)
    req = vb.build_prompt_request(item(audio), "qwen2_audio", processor)
    (arr, sr), = req["multi_modal_data"]["audio"]
    via_vllm = processor(text=[req["prompt"]], audio=[arr], sampling_rate=sr, return_tensors="pt")
    via_hf = get_family("qwen2_audio").encode(processor, [item(audio)])
    assert via_vllm["input_ids"].tolist() == via_hf["input_ids"].tolist()
    assert torch.equal(via_vllm["input_features"], via_hf["input_features"])
    audio_id = processor.tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    # 1 s at 16 kHz: 100 mel frames, halved by the conv stride and again by the pooling -> 25 tokens
    assert via_hf["input_ids"][0].tolist().count(audio_id) == 25


def test_generate_maps_outputs_and_fails_a_batch_as_a_whole(processor):
    class FakeLLM:
        def __init__(self, fail=False):
            self.fail, self.seen = fail, None

        def generate(self, reqs, sampling_params=None, use_tqdm=False):
            if self.fail:
                raise ValueError("prompt too long")
            self.seen = reqs
            # vLLM 0.32's RequestOutput: metrics (RequestStateStats) only while the engine logs stats
            return [SimpleNamespace(prompt_token_ids=list(range(10 + i)) + [7] * i,
                                    outputs=[SimpleNamespace(text=f" ans{i} ", token_ids=[1, 2, 3],
                                                             finish_reason="stop")],
                                    metrics=SimpleNamespace(first_token_latency=0.25) if i == 0 else None)
                    for i in range(len(reqs))]

    model = object.__new__(vb.VLLMModel)  # everything __init__ sets, minus the engine start-up
    model.cfg, model.family, model.mode, model.processor = {}, "qwen2_audio", "prompt", processor
    model.llm, model.params, model.limit_s = FakeLLM(), None, 30.0
    model.audio_id, model.think = 7, (None, 2)  # the audio placeholder's id, </think>'s id
    out = model.generate([item(tone()), item(None, i=1), item(tone(31.0), i=2)])
    assert [o.extra["input_audio_tokens"] for o in out] == [1, 2, 3]  # placeholders in the prompt ids
    assert [o.extra["reasoning_tokens"] for o in out] == [2, 2, 2]  # up to and including </think>
    assert out[0].extra["ttft_s"] == 0.25 and "ttft_s" not in out[1].extra
    assert [o.raw_output for o in out] == ["ans0", "ans1", "ans2"]
    assert "audio_truncated" not in out[0].extra
    assert out[2].extra["audio_truncated"] == {"duration_s": 31.0, "model_max_s": 30.0}
    assert [o.input_tokens for o in out] == [10, 12, 14] and out[0].output_tokens == 3
    assert "multi_modal_data" in model.llm.seen[0] and "multi_modal_data" not in model.llm.seen[1]
    model.llm = FakeLLM(fail=True)
    out = model.generate([item(tone()), item(tone(), i=1)])
    assert all(o.raw_output is None and "prompt too long" in o.error for o in out)
    model.llm = FakeLLM()
    two = ModelInput(id="two", prompt=PROMPT, question=PROMPT, options=[], audio=tone(), audios=[tone(), tone(2.0)],
                     sample_rate=16000)
    assert model.generate([two])[0].error is None  # a multi-clip family takes up to 5 clips unless told
    assert [len(a) for a, _ in model.llm.seen[0]["multi_modal_data"]["audio"]] == [16000, 32000]
    model.cfg = {"limit_mm_per_prompt": {"audio": 1}}
    err = model.generate([two])[0].error
    assert "family 'qwen2_audio': item(s) ['two']" in err and "set limit_mm_per_prompt: {audio: N}" in err
    model.cfg, model.family = {}, "audioflamingo3"  # its clips would be cut to the first: refused, not dropped
    err = model.generate([two])[0].error
    assert "family 'audioflamingo3' takes one clip per prompt, item(s) ['two']" in err


def test_importing_the_backends_loads_no_torch():
    """The Snakemake driver may import the registry; torch/transformers load only when a model runs."""
    import subprocess
    import sys

    code = ("import sys, lalmbench.models.vllm_backend, lalmbench.models.hf; "
            "print(sorted(m for m in ('torch', 'transformers', 'vllm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert out.stdout.strip() == "[]"


def test_each_sample_gets_its_own_seed_in_its_own_sampling_params(monkeypatch):
    fake = SimpleNamespace(SamplingParams=lambda **kw: SimpleNamespace(**kw))
    monkeypatch.setattr(vb, "_require_vllm", lambda: fake)
    model = object.__new__(vb.VLLMModel)
    model.sampling = vb.sampling_kwargs({"generation": {"do_sample": True, "temperature": 0.7, "samples": 5},
                                         "seed": 2})
    model.params = fake.SamplingParams(**model.sampling)
    assert model.sampling["seed"] == 2 and "samples" not in model.sampling
    assert model.request_params([item(None), item(None, i=1)]) is model.params  # unseeded: the entry's params
    seeded = [dataclasses.replace(item(None, i=i), seed=s) for i, s in enumerate((11, 12))]
    params = model.request_params(seeded)
    assert [p.seed for p in params] == [11, 12] and all(p.temperature == 0.7 for p in params)
