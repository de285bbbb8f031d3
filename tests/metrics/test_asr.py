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
