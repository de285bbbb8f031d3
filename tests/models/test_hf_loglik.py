"""Option log-likelihood scoring on tiny checkpoints, checked against a plain unpadded forward pass."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the hf backend needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="the hf backend needs transformers (core env or envs/hf)")

import tiny  # noqa: E402

from lalmbench.models.base import ModelInput, load_model  # noqa: E402
from lalmbench.models.hf.loglik import option_target  # noqa: E402

OPTIONS = [{"label": "A", "text": "speech"}, {"label": "B", "text": "dog barking in the distance"},
           {"label": "C", "text": "music"}]
PROMPT = "What is the sound? (A) speech (B) dog barking in the distance (C) music"


def it(audio, options=OPTIONS) -> ModelInput:
    return ModelInput(id="q1", prompt=PROMPT, question=PROMPT, options=options, audio=audio, sample_rate=16000)


def manual_sum(model, item: ModelInput, target: str) -> float:
    """log p(target | prompt) from one forward pass over prompt+target, no padding, no batching."""
    enc = model.encode([model.prepare(item)])
    ids = model.tokenizer(target, add_special_tokens=False)["input_ids"]
    full = dict(enc)
    full["input_ids"] = torch.cat([enc["input_ids"], torch.tensor([ids])], 1)
    full["attention_mask"] = torch.ones_like(full["input_ids"])
    with torch.inference_mode():
        logp = model.model(**full).logits.log_softmax(-1)
    n = enc["input_ids"].shape[1]
    return sum(float(logp[0, n - 1 + j, t]) for j, t in enumerate(ids))


@pytest.fixture(scope="module")
def scorer(qwen2_audio_dir):
    return load_model("ll", {"backend": "hf", "model_id": str(qwen2_audio_dir), "scoring": "loglik"})


def test_scores_match_an_unbatched_forward_pass(scorer):
    out = scorer.generate([it(tiny.tone(2.0))])[0]
    assert out.error is None
    scores = out.extra["options"]
    for opt in OPTIONS:
        expected = manual_sum(scorer, it(tiny.tone(2.0)), opt["text"])
        assert scores[opt["label"]]["sum"] == pytest.approx(expected, abs=1e-3)
        assert scores[opt["label"]]["mean"] == pytest.approx(expected / scores[opt["label"]]["n_tokens"], abs=1e-3)
    best = max(scores, key=lambda lab: scores[lab]["mean"])
    assert out.raw_output == best == out.extra["chosen"]
    assert out.output_tokens == 0 and out.input_tokens > 0


def test_sum_and_mean_normalisation_pick_by_their_own_score(qwen2_audio_dir):
    outs = {}
    for norm in ("sum", "mean"):
        m = load_model("ll", {"backend": "hf", "model_id": str(qwen2_audio_dir), "scoring": "loglik",
                              "loglik_norm": norm})
        outs[norm] = m.generate([it(tiny.tone(2.0))])[0]
    for norm, out in outs.items():
        sc = out.extra["options"]
        assert out.raw_output == max(sc, key=lambda lab: sc[lab][norm])
    # the long option B has many tokens, so its summed log-prob is the lowest by far
    sums = outs["sum"].extra["options"]
    assert sums["B"]["sum"] < min(sums["A"]["sum"], sums["C"]["sum"])


def test_scores_depend_on_the_audio(scorer):
    a = scorer.generate([it(tiny.tone(2.0, 440))])[0].extra["options"]
    s = scorer.generate([it(np.zeros(32000, np.float32))])[0].extra["options"]
    assert max(abs(a[k]["sum"] - s[k]["sum"]) for k in a) > 1e-3


def test_no_audio_and_targets(scorer, text_lm_dir):
    out = scorer.generate([it(None)])[0]
    assert out.error is None and out.raw_output in {"A", "B", "C"}
    text = load_model("t", {"backend": "hf", "model_id": str(text_lm_dir), "family": "text", "scoring": "loglik",
                            "loglik_target": "label_text"})
    out = text.generate([it(None)])[0]
    assert out.extra["target"] == "label_text" and out.raw_output in {"A", "B", "C"}
    assert option_target(OPTIONS[1], "label_text") == "B. dog barking in the distance"
    assert option_target(OPTIONS[1], "label") == "B"


def test_item_without_options_is_an_item_error(scorer):
    out = scorer.generate([it(tiny.tone(1.0), options=[]), it(tiny.tone(1.0))])
    assert "needs options" in out[0].error and out[1].error is None


@pytest.mark.parametrize("family", ["qwen2_audio", "text"])
def test_single_token_labels_are_scored_from_one_pass_over_the_prompt(family, qwen2_audio_dir, text_lm_dir):
    ckpt, audio = (qwen2_audio_dir, tiny.tone(2.0)) if family == "qwen2_audio" else (text_lm_dir, None)
    model = load_model("ll", {"backend": "hf", "model_id": str(ckpt), "family": family, "scoring": "loglik",
                              "loglik_target": "label"})
    out = model.generate([it(audio)])[0]
    scores = out.extra["options"]
    assert [scores[o["label"]]["n_tokens"] for o in OPTIONS] == [1, 1, 1]
    for opt in OPTIONS:
        assert scores[opt["label"]]["sum"] == pytest.approx(manual_sum(model, it(audio), opt["label"]), abs=1e-3)
    assert out.raw_output == max(scores, key=lambda lab: scores[lab]["mean"])
