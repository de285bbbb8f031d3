"""The rubric LLM through the real hf backend: a tiny random Qwen2 causal LM (tests/models/tiny.py)."""
from __future__ import annotations

import pytest

from lalmbench.rubrics.files import make_llm
from lalmbench.rubrics.llm import load_rubric_prompt

pytest.importorskip("transformers")

SETTINGS = {"mode": "stochastic", "temperature": 1.0, "top_p": 1.0, "max_new_tokens": 12}
RECORDS = [{"examples": "Clip 1\nReferences:\n  - A dog is barking in the distance.\nModel's caption: a dog\n"},
           {"examples": "Clip 1\nReferences:\n  - The quick brown fox.\nModel's caption: a fox\n"}]


@pytest.fixture(scope="module")
def entry(tmp_path_factory):
    from tests.models.tiny import build_text_lm

    ckpt = build_text_lm(tmp_path_factory.mktemp("tiny_text_lm"))
    return {"backend": "hf", "family": "text", "model_id": str(ckpt), "batch_size": 2}


def replies(entry, settings, seed, cache_dir=None):
    llm = make_llm("tiny", entry, {**settings, "cache_dir": cache_dir})
    out = llm.complete(load_rubric_prompt("propose"), RECORDS, seed=seed, stage="propose")
    assert all(r["error"] is None for r in out), out
    return [r["raw"] for r in out], llm


def test_sampling_is_reproducible_with_a_seed_and_differs_with_another(entry):
    a, llm = replies(entry, SETTINGS, seed=3)
    assert llm.model.effective_generation["do_sample"] is True
    assert replies(entry, SETTINGS, seed=3)[0] == a
    assert replies(entry, SETTINGS, seed=4)[0] != a


def test_greedy_ignores_the_seed(entry):
    greedy = {**SETTINGS, "mode": "deterministic"}
    a, llm = replies(entry, greedy, seed=3)
    assert llm.model.effective_generation["do_sample"] is False
    assert replies(entry, greedy, seed=4)[0] == a


def test_cached_replies_never_load_the_model(entry, tmp_path):
    first, llm = replies(entry, SETTINGS, seed=3, cache_dir=tmp_path)
    assert llm.calls == 2
    again, llm2 = replies(entry, SETTINGS, seed=3, cache_dir=tmp_path)
    assert again == first and llm2.calls == 0 and llm2._model is None
