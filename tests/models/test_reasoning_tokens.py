"""A thinking span's tokens are counted apart from the answer's (extra.reasoning_tokens, all.tsv
reasoning_tokens_mean), from the generated ids and the tokenizer's own ``<think>``/``</think>`` ids."""
from __future__ import annotations

import pytest

pytest.importorskip("transformers", reason="the tiny tokenizer is a transformers tokenizer")

from lalmbench.models.hf.generation import count_reasoning_tokens, think_token_ids  # noqa: E402
from tests.models.tiny import QWEN_SPECIALS, train_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def thinking():
    """A Qwen3-like tokenizer: <think> and </think> are single tokens."""
    return train_tokenizer(QWEN_SPECIALS + ["<think>", "</think>"], eos_token="<|im_end|>", pad_token="<|endoftext|>")


def test_the_span_is_counted_up_to_its_closing_token(thinking):
    think = think_token_ids(thinking)
    assert None not in think and think[0] != think[1]
    span = thinking.encode("<think>A dog is barking.</think>", add_special_tokens=False)
    answer = thinking.encode("B", add_special_tokens=False)
    assert count_reasoning_tokens(span + answer, think) == len(span)
    # the template opened the span in the prompt: the output starts inside it
    assert count_reasoning_tokens(span[1:] + answer, think) == len(span) - 1
    # cut by max_new_tokens before </think>: every token from <think> on is reasoning
    assert count_reasoning_tokens(answer + span[:-1], think) == len(span) - 1
    assert count_reasoning_tokens(answer, think) == 0


def test_a_tokenizer_without_the_markers_counts_nothing():
    plain = train_tokenizer(QWEN_SPECIALS, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    assert think_token_ids(plain) == (None, None)
    assert count_reasoning_tokens(plain.encode("<think>x</think>B", add_special_tokens=False),
                                  think_token_ids(plain)) is None


@pytest.mark.slow
def test_the_hf_backend_records_the_spans_tokens_of_what_it_generated(tmp_path):
    """A tiny thinking LM pushed (sequence_bias) to write one token, then </think>, then again: the
    span is its first 2 tokens of 4, whatever the answer decodes to."""
    pytest.importorskip("torch")
    from lalmbench.models.base import ModelInput, load_model
    from tests.models.tiny import build_text_lm

    model_dir = build_text_lm(tmp_path / "think-lm", ("<think>", "</think>"))
    model = load_model("t", {"backend": "hf", "model_id": str(model_dir), "family": "text",
                             "generation": {"max_new_tokens": 4}})
    a, end = 40, think_token_ids(model.tokenizer)[1]
    model.generation_config.sequence_bias = [[[a], 50.0], [[a, end], 100.0]]
    item = ModelInput(id="x", prompt="What is the sound?", question="q", options=[], audio=None, sample_rate=16000)
    (out,) = model.generate([item])
    model.close()
    assert out.error is None and out.output_tokens == 4 and out.extra["reasoning_tokens"] == 2
