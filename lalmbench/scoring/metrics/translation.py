"""Speech-translation metrics: sacreBLEU (and chrF) with the tokenizer chosen per target language.

The tokenizer is the single biggest reason published En->Zh / En->Ja BLEU disagree (seed notes:
the same SALMONN outputs give En->Zh 34.4 with ``zh``, 35.0 with ``char``, 23.1 with
``flores101``; En->Ja 6.7 with ``ja-mecab`` vs 11.8 with ``char``). So the tokenizer is chosen by
a named convention (``convention=``) or explicitly (``tokenize=``) and always recorded in the
output together with sacreBLEU's signature.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from lalmbench.core.io import InputError

#: target language -> sacreBLEU tokenizer, per the reference implementation each benchmark uses
CONVENTIONS: dict[str, dict[str, str]] = {
    # Qwen2-Audio's evaluation code (CoVoST2): ja-mecab for Japanese, zh for Chinese, 13a otherwise
    "qwen2-audio": {"ja": "ja-mecab", "zh": "zh", "*": "13a"},
    # AudioBench: flores101 (SentencePiece) for Chinese
    "audiobench": {"zh": "flores101", "*": "13a"},
    # the paper SALMONN cites for its ST numbers: character-level BLEU for Chinese and Japanese
    "char-cjk": {"zh": "char", "ja": "char", "*": "13a"},
    # sacreBLEU's recommendation when nothing else is specified
    "sacrebleu": {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab", "*": "13a"},
}
DEFAULT_CONVENTION = "qwen2-audio"


def tokenizer_for(target_lang: str, *, convention: str = DEFAULT_CONVENTION, tokenize: str | None = None) -> str:
    """The sacreBLEU tokenizer for ``target_lang`` (ISO 639-1, e.g. ``zh``) under ``convention``;
    an explicit ``tokenize`` wins."""
    if tokenize:
        return tokenize
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown BLEU convention {convention!r}; known: {sorted(CONVENTIONS)}")
    table = CONVENTIONS[convention]
    lang = (target_lang or "").lower().split("-")[0].split("_")[0]
    return table.get(lang, table["*"])


def bleu(hypotheses: Sequence[str | None], references: Sequence[str | Sequence[str]], *, target_lang: str,
         convention: str = DEFAULT_CONVENTION, tokenize: str | None = None, seed: int = 0,
         n_resamples: int = 1000, alpha: float = 0.05) -> dict:
    """Corpus BLEU (sacreBLEU, default options but the tokenizer) with a seeded percentile bootstrap
    interval over items, chrF, per-item sentence BLEU, the tokenizer and sacreBLEU's signature.

    ``references``: one string per item, or a list of references per item (all items the same
    count). A missing hypothesis (None) is scored as an empty translation, never dropped.
    """
    from sacrebleu.metrics import BLEU, CHRF

    if len(hypotheses) != len(references):
        raise InputError(f"bleu: {len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise InputError("bleu: nothing to score")
    refs = [[r] if isinstance(r, str) else list(r) for r in references]
    n_refs = {len(r) for r in refs}
    if len(n_refs) != 1:
        raise InputError(f"bleu: every item needs the same number of references, got counts {sorted(n_refs)}")
    for i, r in enumerate(refs):
        if not all(isinstance(x, str) for x in r):
            raise InputError(f"bleu: reference of item #{i} is not a string: {r!r}")
    hyps = [" ".join((h or "").split()) for h in hypotheses]
    ref_streams = [list(s) for s in zip(*refs)]
    tok = tokenizer_for(target_lang, convention=convention, tokenize=tokenize)
    metric = BLEU(tokenize=tok, trg_lang=(target_lang or "").split("-")[0])
    score = metric.corpus_score(hyps, ref_streams)
    chrf = CHRF().corpus_score(hyps, ref_streams)
    # bootstrap over items on sacreBLEU's own sufficient statistics (n-gram matches, lengths)
    stats = np.asarray(metric._extract_corpus_statistics(hyps, ref_streams), dtype=float)
    lo = hi = math.nan
    if len(hyps) > 1:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(hyps), size=(n_resamples, len(hyps)))
        boot = [metric._compute_score_from_stats(stats[i].sum(axis=0).tolist()).score for i in idx]
        lo, hi = (float(x) for x in np.quantile(boot, [alpha / 2, 1 - alpha / 2]))
    sent_metric = BLEU(tokenize=tok, trg_lang=metric.trg_lang, effective_order=True)
    sent = [sent_metric.sentence_score(h, [r[j] for r in ref_streams]).score for j, h in enumerate(hyps)]
    return {"metric": "bleu", "value": float(score.score), "ci_low": lo, "ci_high": hi, "ci_method": "bootstrap",
            "n": len(hyps), "chrf": float(chrf.score), "tokenize": tok, "convention": None if tokenize else convention,
            "target_lang": target_lang, "signature": str(metric.get_signature()),
            "n_missing_hypotheses": sum(h is None for h in hypotheses), "sentence_bleu": sent}
