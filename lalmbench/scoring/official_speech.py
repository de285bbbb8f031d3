"""The model reports' own ASR and speech-translation scoring, reproduced for ``value_official``.

Why: "why don't I get the reported WER" is mostly text normalisation. Qwen2-Audio's
``eval_audio/evaluate_asr.py`` (QwenLM/Qwen2-Audio @ 595360e) and Kimi-Audio's evalkit
``almeval/metrics/wer.py`` (MoonshotAI/Kimi-Audio-Evalkit @ 4080c49) score the same transcripts
differently, so both rules exist and a preset names the one its report used. Neither script's code is
here: these rules are written from what the scripts do and checked against them, run unmodified, by
the corpora in tests/data/official/ (docs/scoring-official.md).

Both WER rules, per pair (reference, hypothesis):
  1. ``remove_sp``: ``<|...|>`` tags -> a space, blanks collapsed, the space before ``!,.?;:``
     dropped, leading spaces stripped; for zh every blank removed.
  2. yue: zhconv to zh-cn. en: Whisper's English normaliser. zh: the speechio Chinese normaliser
     (``cn_tn.TextNorm`` as both scripts configure it); every other language (en and yue too):
     Whisper's basic normaliser.
  3. Evaluation tokenizer: sacreBLEU's tokenizer (Qwen2-Audio ``none``, Kimi-Audio ``zh``), tokens
     made only of Unicode punctuation dropped (an empty token between two spaces too), lower case.
  4. Qwen2-Audio: zh and yue are scored on characters (the tokens joined, split into characters);
     Kimi-Audio keeps the tokens (its ``zh`` tokenizer already splits CJK characters).
  5. Corpus WER = sum of edit distances / sum of reference lengths (never a mean of item WERs).
Kimi-Audio also leaves out items whose prediction is the text ``null``.

The Chinese normaliser also rewrites Arabic numbers (dates, money, phone numbers, fractions,
percentages, counts) as Chinese numerals (:mod:`lalmbench.scoring.cn_numbers`).

BLEU (Qwen2-Audio ``evaluate_st.py``): sacreBLEU corpus BLEU per ``source`` with the tokenizer of
the target language (``ja-mecab`` for ja, ``zh`` for zh, ``13a`` otherwise), default smoothing, the
raw output as the hypothesis. Per item the sacreBLEU sufficient statistics are kept, so a corpus of
items is their sum (what ``corpus_bleu`` computes) and a breakdown group is scored the same way.
"""
from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache
from typing import Callable

from lalmbench.core.io import InputError
from lalmbench.scoring.metrics.asr import get_normalizer

_PUNCS = "!,.?;:"
#: punctuation cn_tn's TextNorm replaces by a space (its CN_PUNCS + string.punctuation)
_CN_PUNCS = ("！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃《》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿"
             "–—‘’‛“”„‟…‧﹏·〈〉-")
_ZH_PUNCT = str.maketrans({c: " " for c in _CN_PUNCS + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"})


def remove_sp(text: str, language: str) -> str:
    """Both scripts' ``remove_sp``: special tags out, blanks collapsed, no space before ``!,.?;:``."""
    t = re.sub(r"<\|.*?\|>", " ", text)
    t = re.sub(r"\s+", " ", t)
    t = re.sub(f" ?([{_PUNCS}])", r"\1", t)
    t = t.lstrip(" ")
    if language == "zh":
        t = re.sub(r"\s+", "", t)
    return t


def chinese_text_norm(text: str) -> str:
    """cn_tn's ``TextNorm()`` as both scripts configure it (every option off): Arabic numbers to
    Chinese numerals (:func:`lalmbench.scoring.cn_numbers.normalize_numbers`), then Chinese and
    ASCII punctuation to spaces."""
    from lalmbench.scoring.cn_numbers import normalize_numbers

    return normalize_numbers(text).translate(_ZH_PUNCT)


def _to_simplified(text: str) -> str:
    try:
        import zhconv
    except ImportError:
        raise InputError("Cantonese (yue) scoring needs zhconv, which the core env pins (envs/core/requirements.txt: "
                         "zhconv==1.4.3); reinstall the env from its lock") from None

    return zhconv.convert(text, "zh-cn")


@lru_cache(maxsize=None)
def _sacre_tokenizer(name: str) -> Callable[[str], str]:
    if name == "none":
        return lambda s: s
    if name == "zh":
        from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

        return TokenizerZh()
    raise ValueError(f"unknown evaluation tokenizer {name!r}")


def _drop_punct_tokens(sent: str) -> str:
    """EvaluationTokenizer.remove_punctuation: split on single spaces, drop every token whose
    characters are all Unicode punctuation (an empty token too), join with single spaces."""
    return " ".join(t for t in sent.split(" ") if not all(unicodedata.category(c)[0] == "P" for c in t))


def wer_tokens(text: str, language: str, *, rule: str = "qwen2_audio") -> list[str]:
    """The units one side of a pair is scored on, after ``remove_sp`` (steps 2-4 of the module doc)."""
    if language == "yue":
        text = _to_simplified(text)
    if language == "en":
        text = get_normalizer("whisper_en")(text)
    if language == "zh":
        text = chinese_text_norm(text)
    else:
        text = get_normalizer("whisper_basic")(text)
    tok = _sacre_tokenizer("none" if rule == "qwen2_audio" else "zh")
    items = _drop_punct_tokens(tok(text)).lower().split()
    if rule == "qwen2_audio" and language in ("zh", "yue"):
        items = list("".join(items))
    return items


def edit_distance(a: list[str], b: list[str]) -> int:
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a, b))


def item_language(item: dict, cfg: dict) -> str:
    """The rule's language: ``language`` in the rule's settings, else the item's meta field
    ``language_field`` mapped through ``languages`` (e.g. Common Voice's ``zh-CN`` -> zh)."""
    if cfg.get("language"):
        return str(cfg["language"])
    field = cfg.get("language_field")
    if not field:
        raise InputError("an ASR official rule needs `language` (en, zh, yue, fr, ...) or `language_field`")
    value = (item.get("meta") or {}).get(field)
    if value in (None, ""):
        raise InputError(f"item {item.get('id')!r}: no meta.{field} to take the scoring language from")
    table = cfg.get("languages") or {}
    if str(value) in table:
        return str(table[str(value)])
    return str(value).split("-")[0].split("_")[0].lower()


def _reference(item: dict) -> str:
    refs = item.get("references") or ([item["answer_text"]] if item.get("answer_text") is not None else [])
    if not refs:
        raise InputError(f"item {item.get('id')!r}: an ASR/ST official rule needs a reference text")
    return str(refs[0])


def wer_rule(items: list[dict], raw: list[str | None], cfg: dict, *, rule: str) -> list:
    """Per item: ``stats`` = (edit distance, reference length), score = their ratio; the corpus value
    is :func:`wer_aggregate`. A failed generation is an empty transcript."""
    from lalmbench.scoring.official import OfficialItem

    out = []
    for it, r in zip(items, raw):
        lang = item_language(it, cfg)
        hyp = "" if r is None else r
        if rule == "kimi_audio" and hyp == "null":
            out.append(OfficialItem(None, pred=hyp, reason="prediction 'null': the script leaves it out"))
            continue
        ref = _reference(it)
        ref_items = wer_tokens(remove_sp(ref, lang), lang, rule=rule)
        hyp_items = wer_tokens(remove_sp(hyp, lang), lang, rule=rule)
        d = edit_distance(ref_items, hyp_items)
        n = len(ref_items)
        out.append(OfficialItem(d / n if n else math.inf if d else 0.0, pred=" ".join(hyp_items),
                                reason=None if r is not None else "no output: scored as an empty transcript",
                                stats=(float(d), float(n))))
    return out


def qwen2_audio_wer(items: list[dict], raw: list[str | None], cfg: dict) -> list:
    return wer_rule(items, raw, cfg, rule="qwen2_audio")


def kimi_audio_wer(items: list[dict], raw: list[str | None], cfg: dict) -> list:
    return wer_rule(items, raw, cfg, rule="kimi_audio")


def wer_aggregate(stats: list[tuple], cfg: dict) -> float:
    """Sum of distances / sum of reference lengths (the scripts' ``distance/ref_length``)."""
    d = sum(s[0] for s in stats)
    n = sum(s[1] for s in stats)
    return d / n if n else math.nan


# --- BLEU --------------------------------------------------------------------------------------------

def st_tokenizer(lang: str) -> str:
    """evaluate_st.py's tokenizer for a target language."""
    return {"ja": "ja-mecab", "zh": "zh"}.get(lang, "13a")


def target_language(item: dict, cfg: dict) -> str:
    """``target_field`` of the item's meta (CoVoST 2's file name), else the script's own reading of
    ``source``: ``source.split("_")[-2]``."""
    meta = item.get("meta") or {}
    if cfg.get("target_field"):
        v = meta.get(cfg["target_field"])
        if v in (None, ""):
            raise InputError(f"item {item.get('id')!r}: no meta.{cfg['target_field']} (the target language)")
        return str(v)
    src = str(meta.get("source") or "")
    parts = src.split("_")
    if len(parts) < 2:
        raise InputError(f"item {item.get('id')!r}: source {src!r} does not name a target language the way "
                         f"evaluate_st.py reads it (source.split('_')[-2])")
    return parts[-2]


@lru_cache(maxsize=None)
def _bleu(tokenize: str):
    from sacrebleu.metrics import BLEU

    try:
        return BLEU(tokenize=tokenize)
    except Exception as exc:  # ja-mecab without mecab-python3 / ipadic
        raise InputError(f"BLEU tokenizer {tokenize!r} is not usable here: {type(exc).__name__}: {exc}") from None


def qwen2_audio_bleu(items: list[dict], raw: list[str | None], cfg: dict) -> list:
    """Per item sacreBLEU's sufficient statistics with the target language's tokenizer; score =
    that item's sentence BLEU from them (display only); the value is :func:`bleu_aggregate`."""
    from lalmbench.scoring.official import OfficialItem

    out = []
    for it, r in zip(items, raw):
        tok = st_tokenizer(target_language(it, cfg))
        metric = _bleu(tok)
        stats = metric._extract_corpus_statistics(["" if r is None else r], [[_reference(it)]])[0]
        out.append(OfficialItem(bleu_from_stats([float(x) for x in stats]), pred=tok,
                                reason=None if r is not None else "no output: scored as an empty translation",
                                stats=tuple(float(x) for x in stats)))
    return out


def bleu_from_stats(stats: list[float]) -> float:
    """BLEU from summed statistics ``[hyp length, ref length, matches 1-4, totals 1-4]`` as
    sacreBLEU 1.5.1 (the version evaluate_st.py's instructions pin) computes it with its default
    ``exp`` smoothing. Unlike sacreBLEU 2.x, which returns 0 when no n-gram matches at all, 1.5.1
    smooths that case too, so an output sharing no word with its reference still scores above 0."""
    sys_len, ref_len, correct, total = stats[0], stats[1], stats[2:6], stats[6:10]
    precisions = [0.0] * 4
    smooth = 1.0
    for n in range(4):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    bp = 1.0 if sys_len >= ref_len else (math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0)
    return bp * math.exp(sum(math.log(p) if p else -9999999999 for p in precisions) / 4)


def bleu_aggregate(stats: list[tuple], cfg: dict) -> float:
    """corpus_bleu over the items: their statistics summed, scored once."""
    if not stats:
        return math.nan
    return bleu_from_stats([sum(col) for col in zip(*stats)])
