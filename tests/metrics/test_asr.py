"""WER/CER with the Whisper normaliser and permutation-invariant WER, checked against jiwer."""
import jiwer
import pytest

from lalmbench.core.io import InputError
from lalmbench.scoring.metrics.asr import get_normalizer, pi_wer, split_speakers, wer


def test_whisper_normaliser_changes_the_number_and_is_recorded():
    refs = ["Mr. Smith has two dogs.", "The colour is grey!"]
    hyps = ["mister smith has 2 dogs", "the color is gray"]
    raw = wer(refs, hyps, normalizer="none")
    norm = wer(refs, hyps, normalizer="whisper_en")
    assert raw["value"] == pytest.approx(jiwer.wer(refs, hyps))
    assert norm["value"] == 0.0 and raw["value"] > 0.5
    assert (norm["normalizer"], norm["metric"]) == ("whisper_en", "wer")


def test_corpus_wer_is_errors_over_reference_words_and_matches_jiwer():
    refs = ["a b c d", "e f", "g h i"]
    hyps = ["a x c d", "e f g", "h i"]
    res = wer(refs, hyps, normalizer="none")
    assert res["value"] == pytest.approx(jiwer.wer(refs, hyps))
    assert (res["substitutions"], res["deletions"], res["insertions"], res["n_ref_units"]) == (1, 1, 1, 9)
    assert res["ci_low"] <= res["value"] <= res["ci_high"]
    cer = wer(refs, hyps, normalizer="none", unit="char")
    assert cer["metric"] == "cer" and cer["value"] == pytest.approx(jiwer.cer(refs, hyps))


def test_missing_and_empty_are_counted_not_dropped():
    res = wer(["hello world", "again"], [None, "again"], normalizer="none")
    assert res["value"] == pytest.approx(2 / 3) and res["per_item"][0]["missing_hypothesis"]
    res = wer(["", "a"], ["uh", "a"], normalizer="none")  # empty reference: hypothesis words are insertions
    assert res["insertions"] == 1 and res["value"] == 1.0
    with pytest.raises(InputError, match="2 references but 1 hypotheses"):
        wer(["a", "b"], ["a"])


def test_split_speakers():
    assert split_speakers("Speaker 1: hello there\n\nSpeaker 2: good morning") == ["hello there", "good morning"]
    assert split_speakers("- Person A: hi\n- Person B: bye") == ["hi", "bye"]
    assert split_speakers(None) == []


def test_pi_wer_finds_the_best_speaker_order():
    refs = [["the cat sat on the mat", "a dog barked twice"]]
    swapped = pi_wer(refs, ["a dog barked twice\nthe cat sat on the mat"], normalizer="none")
    assert swapped["value"] == 0.0 and swapped["per_item"][0]["assignment"] == [1, 0]
    # equals the minimum over both orders computed with jiwer directly
    hyp = ["a dog barked", "the cat sat on a mat"]
    best = min(_pair_errors(refs[0], order) for order in (hyp, hyp[::-1]))
    res = pi_wer(refs, [hyp], normalizer="none")
    assert res["per_item"][0]["errors"] == best and res["value"] == pytest.approx(best / 10)


def _pair_errors(refs, hyps):
    out = jiwer.process_words(list(refs), list(hyps))
    return out.substitutions + out.deletions + out.insertions


def test_pi_wer_unequal_counts_pad_with_empty():
    refs = [["hello there", "good morning"]]
    one = pi_wer(refs, ["good morning"], normalizer="none")  # missing speaker: its words are deletions
    assert one["per_item"][0]["errors"] == 2 and one["value"] == 0.5
    assert one["per_item"][0]["assignment"] == [-1, 0]
    three = pi_wer(refs, ["hello there\ngood morning\nextra words"], normalizer="none")  # extra: insertions
    assert three["per_item"][0]["errors"] == 2 and three["speaker_count_match_rate"] == 0.0
    assert pi_wer(refs, [["hello there", "good morning"]], normalizer="none")["speaker_count_match_rate"] == 1.0


def test_unknown_normaliser():
    with pytest.raises(ValueError, match="unknown normalizer"):
        get_normalizer("nltk")


def test_speaker_clustered_interval_is_wider_when_a_speakers_items_are_alike():
    """Ten speakers, ten utterances each: one speaker's utterances all go well or all go badly. Drawing
    utterances one by one treats 100 correlated items as independent; drawing speakers does not."""
    import numpy as np

    from lalmbench.scoring.metrics.asr import ratio_bootstrap_ci

    rng = np.random.default_rng(1)
    speaker_rate = rng.uniform(0.0, 0.4, size=10)               # each speaker's own error rate
    speakers = np.repeat([f"spk{i}" for i in range(10)], 10)
    n_ref = np.full(100, 20.0)
    errors = np.round(np.repeat(speaker_rate, 10) * 20)
    lo_i, hi_i = ratio_bootstrap_ci(errors, n_ref)
    lo_c, hi_c = ratio_bootstrap_ci(errors, n_ref, clusters=speakers)
    assert lo_c <= errors.sum() / n_ref.sum() <= hi_c
    assert hi_c - lo_c > 2.5 * (hi_i - lo_i)
    # speakers that do not differ: the clustered interval is no wider than the items' by much
    flat = rng.binomial(20, 0.2, size=100).astype(float)
    lo_f, hi_f = ratio_bootstrap_ci(flat, n_ref, clusters=speakers)
    lo_g, hi_g = ratio_bootstrap_ci(flat, n_ref)
    assert (hi_f - lo_f) < 1.6 * (hi_g - lo_g)
    assert ratio_bootstrap_ci(errors[:10], n_ref[:10], clusters=speakers[:10]) != ratio_bootstrap_ci(
        errors[:10], n_ref[:10])                                  # one speaker: no interval
    with pytest.raises(InputError, match="3 cluster labels for 100 items"):
        ratio_bootstrap_ci(errors, n_ref, clusters=["a", "b", "c"])


def test_asr_scoring_clusters_by_the_items_speakers_and_says_so():
    from lalmbench.scoring.metrics.open import _asr

    import pandas as pd

    refs = ["the cat sat", "a dog ran", "birds sing", "rain falls", "wind blows", "sun shines"]
    items = [{"id": str(i), "references": [r], "meta": {"speaker": "s1" if i < 3 else "s2"}}
             for i, r in enumerate(refs)]
    raw = ["the cat sat", "a dog ran", "birds sing", "rain", "wind", "sun"]
    _, head, extra, info = _asr("asr", items, raw, pd.DataFrame({"id": [str(i) for i in range(6)]}), {}, None)
    assert info["ci_method"] == "bootstrap-clustered (2 clusters)"
    assert head["value"] == pytest.approx(3 / 14)              # three words dropped of 14
    one = [dict(it, meta={"speaker": "s1"}) for it in items]             # one speaker: items are drawn
    assert _asr("asr", one, raw, pd.DataFrame({"id": [str(i) for i in range(6)]}), {}, None)[3]["ci_method"] == \
        "bootstrap"
    items[0]["meta"] = {}
    assert _asr("asr", items, raw, pd.DataFrame({"id": [str(i) for i in range(6)]}), {}, None)[3]["ci_method"] == \
        "bootstrap"
