"""sacreBLEU with a per-language tokenizer, recorded in the output."""
import pytest
import sacrebleu

from lalmbench.core.io import InputError
from lalmbench.scoring.metrics.translation import bleu, tokenizer_for

ZH_HYP = ["今天天气很好，我们去公园散步吧。", "他昨天买了一本新书。", "我不知道这是什么声音。"]
ZH_REF = ["今天天气很好，我们去公园走走吧。", "他昨天买了一本书。", "我不知道那是什么声音。"]


def test_tokenizer_conventions():
    assert tokenizer_for("zh") == "zh" and tokenizer_for("ja") == "ja-mecab" and tokenizer_for("de") == "13a"
    assert tokenizer_for("zh", convention="audiobench") == "flores101"
    assert tokenizer_for("ja", convention="char-cjk") == "char"
    assert tokenizer_for("zh", tokenize="char") == "char"
    with pytest.raises(ValueError, match="unknown BLEU convention"):
        tokenizer_for("zh", convention="mine")


@pytest.mark.parametrize("convention,tok", [("qwen2-audio", "zh"), ("char-cjk", "char")])
def test_bleu_equals_sacrebleu_and_records_tokenizer(convention, tok):
    res = bleu(ZH_HYP, ZH_REF, target_lang="zh", convention=convention)
    assert res["value"] == pytest.approx(sacrebleu.corpus_bleu(ZH_HYP, [ZH_REF], tokenize=tok).score)
    assert res["tokenize"] == tok and f"tok:{tok}" in res["signature"]
    assert res["ci_low"] <= res["value"] <= res["ci_high"]
    assert len(res["sentence_bleu"]) == 3


def test_tokenizer_choice_moves_the_score():
    a = bleu(ZH_HYP, ZH_REF, target_lang="zh", tokenize="zh")["value"]
    b = bleu(ZH_HYP, ZH_REF, target_lang="zh", tokenize="13a")["value"]
    assert a != pytest.approx(b)  # 13a does not split Chinese characters


def test_japanese_mecab_runs_offline():
    res = bleu(["私は猫が好きです。"], ["私は犬が好きです。"], target_lang="ja")
    assert res["tokenize"] == "ja-mecab" and 0 < res["value"] < 100


def test_missing_hypothesis_is_empty_not_dropped_and_bad_input_errors():
    res = bleu([None, "a cat"], ["a dog", "a cat"], target_lang="en")
    assert res["n"] == 2 and res["n_missing_hypotheses"] == 1
    assert res["value"] == pytest.approx(sacrebleu.corpus_bleu(["", "a cat"], [["a dog", "a cat"]]).score)
    with pytest.raises(InputError, match="2 hypotheses but 1 references"):
        bleu(["a", "b"], ["a"], target_lang="en")
    with pytest.raises(InputError, match="same number of references"):
        bleu(["a", "b"], [["a"], ["b", "c"]], target_lang="en")
