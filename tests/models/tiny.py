"""Tiny random audio-LMs built from the real transformers config classes, saved like hub checkpoints.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here with ``tokenizers`` on a few
sentences, the audio front end is the real ``WhisperFeatureExtractor`` / ``Gemma3nAudioFeatureExtractor``.
Each ``build_*`` writes a directory that ``from_pretrained`` reads exactly as it would read a real
checkpoint, so the hf backend runs its real loading, processor, chat-template and generate code on it.
Weights are random (fixed seed): outputs are gibberish, but they are deterministic and they depend
on the audio, which is what the tests check.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np

CORPUS = [
    "You are a helpful assistant.", "What is the sound in this audio?", "Transcribe the audio.",
    "Describe the audio in one sentence.", "A dog is barking in the distance.",
    "The quick brown fox jumps over the lazy dog.", "Answer with the letter of the correct option.",
    "(A) speech (B) music (C) dog barking (D) silence", "system user assistant model Audio 1:",
    "Which sound comes first? Options: bird, car horn, siren, applause.",
] * 20

# Every tiny text model: hidden size H, 2 attention heads of HEAD_DIM = H / 2 (vLLM's CPU attention takes head sizes
# 32, 64, 80, ... and its Qwen2 derives the head size from hidden_size / heads, as the published checkpoints do)
H = 128
HEAD_DIM = 64
# Qwen's multimodal rope splits head_dim / 2 rotary pairs into (time, height, width): the real [16, 24, 24] of 128
MROPE_SECTION = [8, 12, 12]

HAS_TORCHVISION = importlib.util.find_spec("torchvision") is not None
HAS_MISTRAL_COMMON = importlib.util.find_spec("mistral_common") is not None


def train_tokenizer(specials: list[str], vocab_size: int = 600, **named):
    """A byte-level BPE tokenizer trained on CORPUS, wrapped as a fast transformers tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, **named)


def tone(seconds: float, freq: float = 440.0, sr: int = 16000, seed: int = 0) -> np.ndarray:
    """A sine tone plus a little noise: audio that is clearly not silence."""
    t = np.arange(int(seconds * sr)) / sr
    rng = np.random.default_rng(seed)
    return (0.3 * np.sin(2 * np.pi * freq * t) + 0.05 * rng.standard_normal(t.shape)).astype(np.float32)


def _qwen_text(tok, **extra) -> dict:
    return dict(vocab_size=len(tok), hidden_size=H, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=H // HEAD_DIM, num_key_value_heads=1, head_dim=HEAD_DIM,
                max_position_embeddings=4096,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, **extra)


# The published checkpoints' weight names, which vLLM's loaders read as they are (transformers maps them on load):
# transformers 5.19 (the vllm envs' pin) saves a composite model's LM as language_model.model.model.*, 5.23 as the
# published language_model.model.*
PUBLISHED_NAMES = [(re.compile(r"^language_model\.model\.model\."), "language_model.model.")]


def publish_key_names(out: Path) -> None:
    """Rewrite ``out``'s weights under the published checkpoint's names (a no-op where they already are)."""
    from safetensors.torch import load_file, save_file

    path = out / "model.safetensors"
    weights = load_file(path)
    renamed = {}
    for key, value in weights.items():
        for pattern, repl in PUBLISHED_NAMES:
            key = pattern.sub(repl, key)
        renamed[key] = value
    if list(renamed) != list(weights):
        save_file(renamed, path, metadata={"format": "pt"})


def _finish(model, tok, out: Path, processor=None) -> Path:
    model.eval()
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    publish_key_names(out)
    (processor or tok).save_pretrained(out)
    return out


QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def build_qwen2_audio(out: Path, chunk_s: int = 30, text: dict | None = None, audio: dict | None = None) -> Path:
    """Qwen2-Audio with its own processor and built-in default chat template.

    ``text`` / ``audio`` override the text-model / audio-encoder config (sizes, layers): the
    batching bench builds a bigger one so that compute, not per-call overhead, dominates."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = train_tokenizer(QWEN_SPECIALS + ["<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>"],
                          eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fe = T.WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, chunk_length=chunk_s)
    proc = T.Qwen2AudioProcessor(feature_extractor=fe, tokenizer=tok)
    cfg = T.Qwen2AudioConfig(
        audio_config={**dict(model_type="qwen2_audio_encoder", d_model=64, encoder_layers=2, encoder_attention_heads=2,
                             encoder_ffn_dim=128, num_mel_bins=128, max_source_positions=chunk_s * 50), **(audio or {})},
        text_config=dict(model_type="qwen2", **{**_qwen_text(tok), **(text or {})}),
        audio_token_id=tok.convert_tokens_to_ids("<|AUDIO|>"))
    return _finish(T.Qwen2AudioForConditionalGeneration(cfg), tok, out, proc)


CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}"
          "{% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}AUDIO_PLACEHOLDER"
          "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


# what nvidia/audio-flamingo-3-hf's template renders (transformers' test_processing_audioflamingo3 expects
# "<|im_start|>user\n<sound>What is ...?<|im_end|>" for a text-then-audio message): a default system turn,
# then every <sound> of the turn at its front, then its text, wherever the audio entries sat
AF3_CHAT = ("{% for m in messages %}{% if loop.first and m['role'] != 'system' %}<|im_start|>system\n"
            "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ m['role'] }}\n"
            "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
            "{% for c in m['content'] %}{% if c['type'] == 'audio' %}<sound>{% endif %}{% endfor %}"
            "{% for c in m['content'] %}{% if c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
            "{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def build_audioflamingo3(out: Path) -> Path:
    """Audio Flamingo 3 with the real AudioFlamingo3Processor and a template that renders as the real one
    (default system turn, <sound> hoisted to the front of the user turn)."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = train_tokenizer(QWEN_SPECIALS + ["<sound>"], eos_token="<|im_end|>", pad_token="<|endoftext|>")
    proc = T.AudioFlamingo3Processor(feature_extractor=T.WhisperFeatureExtractor(feature_size=128), tokenizer=tok,
                                     chat_template=AF3_CHAT)
    cfg = T.AudioFlamingo3Config(
        audio_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2),
        text_config=dict(model_type="qwen2", **_qwen_text(tok)),
        audio_token_id=tok.convert_tokens_to_ids("<sound>"))
    return _finish(T.AudioFlamingo3ForConditionalGeneration(cfg), tok, out, proc)


def build_text_lm(out: Path, specials: tuple[str, ...] = ()) -> Path:
    """A plain Qwen2 causal LM with a ChatML template: the text-only baseline. ``specials``: more tokens
    of its own (``<think>``, ``</think>`` for a thinking model's tokenizer)."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = train_tokenizer(QWEN_SPECIALS + list(specials), eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tok.chat_template = CHATML.replace("AUDIO_PLACEHOLDER", "")
    return _finish(T.Qwen2ForCausalLM(T.Qwen2Config(**_qwen_text(tok))), tok, out)


OMNI_NAMED = {"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>",
              "image_token": "<|IMAGE|>", "video_token": "<|VIDEO|>", "vision_bos_token": "<|vision_bos|>",
              "vision_eos_token": "<|vision_eos|>"}
OMNI_CHAT = ("{% for m in messages %}{% if loop.first and m['role'] != 'system' %}<|im_start|>system\n"
             "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ m['role'] }}\n"
             "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
             "{% if c['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>"
             "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
             "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def _omni_tokenizer():
    return train_tokenizer(QWEN_SPECIALS + list(OMNI_NAMED.values()), eos_token="<|im_end|>",
                           pad_token="<|endoftext|>", extra_special_tokens=OMNI_NAMED)


# Qwen3-Omni's real template writes no system turn of its own (its README's evaluation setting: none)
QWEN3_OMNI_CHAT = OMNI_CHAT.replace("{% if loop.first and m['role'] != 'system' %}<|im_start|>system\n"
                                    "You are a helpful assistant.<|im_end|>\n{% endif %}", "")


def _omni_processor(proc_cls, tok, chat_template: str, chunk_length: int = 30):
    """The real Omni processor; its image/video sub-processors need torchvision. ``chunk_length`` is the
    extractor's window in seconds (Qwen2.5-Omni's real preprocessor_config.json: 300, n_samples 4,800,000)."""
    import transformers as T

    fe = T.WhisperFeatureExtractor(feature_size=128, chunk_length=chunk_length)
    return proc_cls(image_processor=T.Qwen2VLImageProcessor(), video_processor=T.Qwen2VLVideoProcessor(),
                    feature_extractor=fe, tokenizer=tok, chat_template=chat_template)


def build_qwen2_5_omni(out: Path) -> Path:
    """The full Qwen2.5-Omni checkpoint layout (thinker only, enable_audio_output=False)."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = _omni_tokenizer()
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in OMNI_NAMED.items()}
    thinker = T.Qwen2_5OmniThinkerConfig(
        audio_config=dict(d_model=32, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64,
                          num_mel_bins=128, output_dim=H),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=H,
                           fullatt_block_indexes=[0]),
        # the published thinker's LM does not tie lm_head to the embeddings (the text config's default does)
        text_config=dict(**_qwen_text(tok), tie_word_embeddings=False,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": MROPE_SECTION}),
        audio_token_index=ids["audio_token"], image_token_index=ids["image_token"],
        video_token_index=ids["video_token"], audio_start_token_id=ids["audio_bos_token"],
        audio_end_token_id=ids["audio_eos_token"], vision_start_token_id=ids["vision_bos_token"],
        user_token_id=0)
    cfg = T.Qwen2_5OmniConfig(thinker_config=thinker.to_dict(), enable_audio_output=False)
    model = T.Qwen2_5OmniForConditionalGeneration(cfg)
    proc = _omni_processor(T.Qwen2_5OmniProcessor, tok, OMNI_CHAT, chunk_length=300) if HAS_TORCHVISION else None
    model.thinker.generation_config.eos_token_id = tok.eos_token_id
    # the real checkpoint samples by default: reproduce that so the backend's greedy override is exercised
    for gc in (model.generation_config, model.thinker.generation_config):
        gc.do_sample, gc.temperature, gc.top_p, gc.top_k = True, 0.9, 0.8, 40
    return _finish(model, tok, out, proc)


def build_qwen3_omni(out: Path) -> Path:
    """The full Qwen3-Omni-MoE checkpoint layout with a tiny MoE thinker, no talker."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = _omni_tokenizer()
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in OMNI_NAMED.items()}
    thinker = T.Qwen3OmniMoeThinkerConfig(
        audio_config=dict(d_model=32, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, output_dim=H,
                          downsample_hidden_size=16, num_mel_bins=128),
        # image_size (num_position_embeddings ** 0.5 x patch_size) and apply_vit_abs_pos_embed: vLLM reads both
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=H,
                           deepstack_visual_indexes=[0], num_position_embeddings=64, image_size=128,
                           apply_vit_abs_pos_embed=True),
        text_config=dict(**_qwen_text(tok), tie_word_embeddings=False, moe_intermediate_size=32, num_experts=4, num_experts_per_tok=2,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": MROPE_SECTION,
                                          "interleaved": True}),
        audio_token_id=ids["audio_token"], image_token_id=ids["image_token"], video_token_id=ids["video_token"],
        audio_start_token_id=ids["audio_bos_token"], user_token_id=0)
    thinker.vision_start_token_id = ids["vision_bos_token"]
    thinker.audio_end_token_id = ids["audio_eos_token"]
    cfg = T.Qwen3OmniMoeConfig(thinker_config=thinker.to_dict(), enable_audio_output=False)
    model = T.Qwen3OmniMoeForConditionalGeneration(cfg)
    proc = _omni_processor(T.Qwen3OmniMoeProcessor, tok, QWEN3_OMNI_CHAT) if HAS_TORCHVISION else None
    model.thinker.generation_config.eos_token_id = tok.eos_token_id
    return _finish(model, tok, out, proc)


def build_voxtral(out: Path) -> Path:
    """Voxtral model; no processor (its tokenizer is a mistral-common Tekken file, not built here)."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok = train_tokenizer(["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AUDIO]", "[BEGIN_AUDIO]"],
                          bos_token="<s>", eos_token="</s>", pad_token="<unk>")
    cfg = T.VoxtralConfig(
        audio_config=dict(hidden_size=32, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                          num_mel_bins=128),
        text_config=dict(model_type="llama", vocab_size=len(tok), hidden_size=H, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=H // HEAD_DIM, num_key_value_heads=1,
                         head_dim=HEAD_DIM, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id),
        audio_token_id=tok.convert_tokens_to_ids("[AUDIO]"))
    return _finish(T.VoxtralForConditionalGeneration(cfg), tok, out)


HAS_TIMM = importlib.util.find_spec("timm") is not None

# renders as google/gemma-3n-E2B-it's template: {{ bos_token }} first, a system message folded into the first
# user turn, text trimmed, one <audio_soft_token> per audio entry in order
GEMMA_CHAT = ("{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
              "{% set sys = messages[0]['content'] if messages[0]['content'] is string "
              "else messages[0]['content'][0]['text'] %}{% set prefix = sys + '\n\n' %}"
              "{% set loop_messages = messages[1:] %}{% else %}{% set prefix = '' %}"
              "{% set loop_messages = messages %}{% endif %}"
              "{% for m in loop_messages %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
              "{{ prefix if loop.first else '' }}"
              "{% if m['content'] is string %}{{ m['content'] | trim }}{% else %}{% for c in m['content'] %}"
              "{% if c['type'] == 'audio' %}<audio_soft_token>{% elif c['type'] == 'text' %}{{ c['text'] | trim }}"
              "{% endif %}{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}"
              "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


def _gemma3n_tokenizer():
    """A BPE tokenizer laid out like Gemma 3n's vocab, scaled down: text ids below 384 (boi/boa at the end),
    vision ids 384..447 (eoi, image soft token), audio ids 448..511 (eoa, audio soft token)."""
    named = {"boi_token": "<start_of_image>", "boa_token": "<start_of_audio>", "eoi_token": "<end_of_image>",
             "image_token": "<image_soft_token>", "eoa_token": "<end_of_audio>", "audio_token": "<audio_soft_token>"}
    from transformers import PreTrainedTokenizerFast

    base = train_tokenizer(["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"], vocab_size=360)
    raw = base.backend_tokenizer
    layout = {380: named["boi_token"], 381: named["boa_token"], 384: named["eoi_token"],
              385: named["image_token"], 448: named["eoa_token"], 449: named["audio_token"]}
    # runs of newlines are single tokens in Gemma's vocabulary, and vLLM's Gemma 3n processor looks them up
    raw.add_tokens(["\n", "\n\n", "\n\n\n", "\n\n\n\n"])
    assert raw.get_vocab_size() <= 380
    for i in range(raw.get_vocab_size(), 512):
        raw.add_special_tokens([layout.get(i, f"<unused{i}>")])
    # the real tokenizer is saved with add_bos_token=True: plain tokenization prepends <bos> (id 2)
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", eos_token="<end_of_turn>",
                                  bos_token="<bos>", extra_special_tokens=named, add_bos_token=True)
    return tok, named


def build_gemma3n(out: Path) -> Path:
    """Gemma 3n (tiny text/audio towers, timm resnet10t as the vision tower) with its real processor."""
    import torch
    import transformers as T

    torch.manual_seed(0)
    tok, named = _gemma3n_tokenizer()
    ids = {k: tok.convert_tokens_to_ids(v) for k, v in named.items()}
    assert ids == {"boi_token": 380, "boa_token": 381, "eoi_token": 384, "image_token": 385, "eoa_token": 448,
                   "audio_token": 449}, ids
    cfg = T.Gemma3nConfig(
        text_config=dict(vocab_size=512, vocab_size_per_layer_input=384, hidden_size=H, intermediate_size=128,
                         num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1, head_dim=HEAD_DIM,
                         hidden_size_per_layer_input=8, num_kv_shared_layers=2, laurel_rank=4, sliding_window=64,
                         layer_types=["sliding_attention", "full_attention"] * 2, activation_sparsity_pattern=[0.0] * 4,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id),
        audio_config=dict(hidden_size=32, conf_num_attention_heads=2, conf_num_hidden_layers=1,
                          sscp_conv_channel_size=[16, 8], vocab_offset=448, vocab_size=64),
        vision_config=dict(hidden_size=64, vocab_offset=384, vocab_size=64, architecture="resnet10t"),
        audio_soft_tokens_per_image=188, boa_token_id=381, eoa_token_id=448, audio_token_id=449,
        boi_token_id=380, eoi_token_id=384, image_token_id=385)
    proc = T.Gemma3nProcessor(feature_extractor=T.Gemma3nAudioFeatureExtractor(),
                              image_processor=T.SiglipImageProcessor(), tokenizer=tok, chat_template=GEMMA_CHAT,
                              audio_seq_length=188, image_seq_length=4)  # 188 = the real 30 s budget
    return _finish(T.Gemma3nForConditionalGeneration(cfg), tok, out, proc)


def _whisper_positions(model) -> None:
    """Whisper's sinusoidal position table in the audio encoder, as the published weights hold it (a random init
    otherwise): vLLM's Voxtral encoder computes the sinusoids itself and never reads the stored table."""
    import torch
    from transformers.models.whisper.modeling_whisper import sinusoids

    table = next(m for name, m in model.named_modules() if name.split(".")[-1] == "audio_tower").embed_positions
    with torch.no_grad():
        table.weight.copy_(sinusoids(*table.weight.shape))


def build_voxtral_with_processor(out: Path, n_vocab: int = 500, n_special: int = 100) -> Path:
    """Voxtral with its real processor: a small Tekken tokenizer file cut from the Tekken vocabulary that
    mistral-common ships in its wheel (first ``n_vocab`` byte-level merges), plus Voxtral's audio section
    (12.5 audio tokens per second, 30 s chunks), loaded through transformers' MistralCommonBackend."""
    import json

    import mistral_common
    import torch
    import transformers as T
    from mistral_common.tokens.tokenizers.base import SpecialTokens

    torch.manual_seed(0)
    out.mkdir(parents=True, exist_ok=True)
    src = json.loads((Path(mistral_common.__file__).parent / "data" / "tekken_240911.json").read_text())
    tekken = {
        "config": {**src["config"], "default_vocab_size": n_special + n_vocab, "default_num_special_tokens": n_special,
                   "num_vocab_tokens": n_vocab, "version": "v7"},
        "vocab": src["vocab"][:n_vocab],
        "special_tokens": [{"rank": i, "token_str": s.value, "is_control": True} for i, s in enumerate(SpecialTokens)],
        "audio": {"sampling_rate": 16000, "frame_rate": 12.5, "chunk_length_s": 30.0,
                  "audio_encoding_config": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400}}}
    (out / "tekken.json").write_text(json.dumps(tekken))
    tok = T.MistralCommonBackend(tokenizer_path=str(out / "tekken.json"))
    bos, eos, pad = (tok.convert_tokens_to_ids(t) for t in ("<s>", "</s>", "<pad>"))
    cfg = T.VoxtralConfig(
        audio_config=dict(hidden_size=32, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
                          num_mel_bins=128),
        text_config=dict(model_type="llama", vocab_size=n_special + n_vocab, hidden_size=H, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=H // HEAD_DIM, num_key_value_heads=1,
                         head_dim=HEAD_DIM, bos_token_id=bos, eos_token_id=eos, pad_token_id=pad),
        audio_token_id=tok.convert_tokens_to_ids("[AUDIO]"))
    model = T.VoxtralForConditionalGeneration(cfg).eval()
    _whisper_positions(model)
    model.generation_config.eos_token_id, model.generation_config.pad_token_id = eos, pad
    model.save_pretrained(out)
    publish_key_names(out)
    T.VoxtralProcessor(feature_extractor=T.WhisperFeatureExtractor(feature_size=128), tokenizer=tok).save_pretrained(out)
    write_voxtral_mistral_format(out, cfg)
    return out


# Voxtral's hub repos also hold the Mistral layout, which vLLM loads (config_format/load_format mistral):
# params.json and consolidated.safetensors, whose names map onto the HF ones as vLLM's loader reads them
_MISTRAL_NAMES = [
    (r"language_model\.model\.embed_tokens\.", "mm_whisper_embeddings.tok_embeddings."),
    (r"language_model\.model\.norm\.", "norm."),
    (r"language_model\.lm_head\.", "output."),
    (r"language_model\.model\.layers\.(\d+)\.self_attn\.([qkvo])_proj\.", r"layers.\1.attention.w\2."),
    (r"language_model\.model\.layers\.(\d+)\.input_layernorm\.", r"layers.\1.attention_norm."),
    (r"language_model\.model\.layers\.(\d+)\.post_attention_layernorm\.", r"layers.\1.ffn_norm."),
    (r"language_model\.model\.layers\.(\d+)\.mlp\.gate_proj\.", r"layers.\1.feed_forward.w1."),
    (r"language_model\.model\.layers\.(\d+)\.mlp\.down_proj\.", r"layers.\1.feed_forward.w2."),
    (r"language_model\.model\.layers\.(\d+)\.mlp\.up_proj\.", r"layers.\1.feed_forward.w3."),
    (r"audio_tower\.conv([12])\.", lambda m: f"mm_whisper_embeddings.whisper_encoder.conv_layers.{int(m[1]) - 1}.conv."),
    (r"audio_tower\.layers\.(\d+)\.self_attn\.([qkv])_proj\.",
     r"mm_whisper_embeddings.whisper_encoder.transformer.layers.\1.attention.w\2."),
    (r"audio_tower\.layers\.(\d+)\.self_attn\.out_proj\.",
     r"mm_whisper_embeddings.whisper_encoder.transformer.layers.\1.attention.wo."),
    (r"audio_tower\.layers\.(\d+)\.self_attn_layer_norm\.",
     r"mm_whisper_embeddings.whisper_encoder.transformer.layers.\1.attention_norm."),
    (r"audio_tower\.layers\.(\d+)\.final_layer_norm\.",
     r"mm_whisper_embeddings.whisper_encoder.transformer.layers.\1.ffn_norm."),
    (r"audio_tower\.layers\.(\d+)\.fc([12])\.",
     r"mm_whisper_embeddings.whisper_encoder.transformer.layers.\1.feed_forward.w\2."),
    (r"audio_tower\.layer_norm\.", "mm_whisper_embeddings.whisper_encoder.transformer.norm."),
    (r"multi_modal_projector\.linear_1\.", "mm_whisper_embeddings.audio_language_projection.0."),
    (r"multi_modal_projector\.linear_2\.", "mm_whisper_embeddings.audio_language_projection.2."),
]


def _mistral_rotary_order(w, n_heads: int):
    """HF's q/k rows (rotate-half pairs) back in Mistral's interleaved order: the inverse of the permutation
    vLLM's Mistral loader (and transformers' conversion script) applies."""
    rows, cols = w.shape
    return w.view(n_heads, 2, rows // n_heads // 2, cols).transpose(1, 2).reshape(rows, cols).contiguous()


def write_voxtral_mistral_format(out: Path, cfg) -> None:
    """params.json + consolidated.safetensors holding the same weights as model.safetensors."""
    import json

    from safetensors.torch import load_file, save_file

    text, audio = cfg.text_config, cfg.audio_config
    weights = {}
    for key, value in load_file(out / "model.safetensors").items():
        if key == "audio_tower.embed_positions.weight":
            continue  # sinusoidal: vLLM's Whisper encoder makes its own
        for pattern, repl in _MISTRAL_NAMES:
            new, n = re.subn("^" + pattern, repl, key)
            if n:
                break
        else:
            raise ValueError(f"Voxtral weight {key!r} has no Mistral name")
        if new.startswith("layers.") and ".attention.wq." in new:
            value = _mistral_rotary_order(value, text.num_attention_heads)
        elif new.startswith("layers.") and ".attention.wk." in new:
            value = _mistral_rotary_order(value, text.num_key_value_heads)
        weights[new] = value
    save_file(weights, out / "consolidated.safetensors", metadata={"format": "pt"})
    params = {
        "dim": text.hidden_size, "n_layers": text.num_hidden_layers, "head_dim": text.head_dim,
        "hidden_dim": text.intermediate_size, "n_heads": text.num_attention_heads,
        "n_kv_heads": text.num_key_value_heads, "rope_theta": text.rope_parameters["rope_theta"],
        "norm_eps": text.rms_norm_eps, "vocab_size": text.vocab_size,
        "max_position_embeddings": text.max_position_embeddings,
        "multimodal": {"whisper_model_args": {
            "encoder_args": {"dim": audio.hidden_size, "n_layers": audio.num_hidden_layers,
                             "hidden_dim": audio.intermediate_size, "n_heads": audio.num_attention_heads,
                             "head_dim": audio.hidden_size // audio.num_attention_heads, "vocab_size": 51866,
                             "max_source_positions": audio.max_source_positions,
                             "audio_encoding_args": {"num_mel_bins": audio.num_mel_bins, "window_size": 400,
                                                     "sampling_rate": 16000, "hop_length": 160}},
            "downsample_args": {"downsample_factor": cfg.audio_config.intermediate_size // audio.hidden_size}}},
    }
    (out / "params.json").write_text(json.dumps(params, indent=2))
