"""ASR metrics: WER/CER with the Whisper text normaliser (whisper-normalizer) and jiwer, and a
permutation-invariant WER for multi-talker items.

Why the normaliser matters: reproductions of the same model differ by several WER points with and
without it ("Mr." vs "mister", "colour" vs "color", punctuation, casing); the normaliser used is
recorded in every result (``normalizer``).

Multi-talker (overlapped speech, e.g. LibriMix): the model returns one text per speaker in no
fixed order, and sometimes the wrong number of texts. We follow Serialized Output Training
(Kanda et al., 2020): every assignment of hypotheses to reference speakers is considered and the
one with the fewest errors is kept; a missing hypothesis counts as all deletions of its reference,
an extra one as all insertions. The assignment is solved exactly with the Hungarian algorithm on
the pairwise error matrix (equal to trying all permutations, without the factorial cost).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from lalmbench.core.io import InputError

NORMALIZERS = ("whisper_en", "whisper_basic", "none")


@lru_cache(maxsize=None)
def get_normalizer(name: str) -> Callable[[str], str]:
    """``whisper_en``: Whisper's English normaliser (spelling, numbers, contractions);
    ``whisper_basic``: Whisper's language-agnostic one (case, punctuation, symbols); ``none``."""
    if name == "whisper_en":
        from whisper_normalizer.english import EnglishTextNormalizer

        return EnglishTextNormalizer()
    if name == "whisper_basic":
        from whisper_normalizer.basic import BasicTextNormalizer

        return BasicTextNormalizer()
    if name == "none":
        return lambda s: " ".join(s.split())
    raise ValueError(f"unknown normalizer {name!r}; known: {list(NORMALIZERS)}")


def _words(text: str) -> list[str]:
    return text.split()


def edit_counts(ref: str, hyp: str, *, unit: str = "word") -> dict:
    """Substitutions, deletions, insertions, hits and reference length for one (normalised) pair.

    Handles empty strings (jiwer needs a non-empty reference): an empty reference makes every
    hypothesis unit an insertion, an empty hypothesis makes every reference unit a deletion."""
    import jiwer

    split = _words if unit == "word" else (lambda s: list(s))
    r, h = split(ref), split(hyp)
    if not r or not h:
        return {"sub": 0, "del": len(r), "ins": len(h), "hits": 0, "n_ref": len(r)}
    out = jiwer.process_words(ref, hyp) if unit == "word" else jiwer.process_characters(ref, hyp)
    return {"sub": out.substitutions, "del": out.deletions, "ins": out.insertions, "hits": out.hits,
            "n_ref": out.substitutions + out.deletions + out.hits}


def _errors(c: dict) -> int:
    return c["sub"] + c["del"] + c["ins"]


def sum_by_cluster(x: np.ndarray, clusters: Sequence) -> np.ndarray:
    """The rows of ``x`` (one per item) summed within each cluster label, one row per label in sorted
    order: a corpus statistic's counts per speaker, the unit a clustered bootstrap draws."""
    labels, group = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    out = np.zeros((len(labels),) + np.shape(x)[1:])
    np.add.at(out, group, x)
    return out


def ratio_bootstrap_ci(errors: np.ndarray, n_ref: np.ndarray, *, clusters: Sequence | None = None, seed: int = 0,
                       n_resamples: int = 2000, alpha: float = 0.05) -> tuple[float, float]:
    """Seeded percentile bootstrap of sum(errors)/sum(n_ref) (corpus WER is a ratio of sums, not a mean
    of item WERs). With ``clusters`` (one label per item, e.g. the speaker) whole clusters are drawn:
    one speaker's utterances share a voice and an accent, so they are not independent draws, and
    resampling them one by one makes the interval too narrow. (nan, nan) under 2 items (clusters)."""
    errors, n_ref = np.asarray(errors, dtype=float), np.asarray(n_ref, dtype=float)
    if clusters is not None:
        if len(clusters) != len(errors):
            raise InputError(f"ratio_bootstrap_ci: {len(clusters)} cluster labels for {len(errors)} items")
        errors, n_ref = sum_by_cluster(np.column_stack([errors, n_ref]), clusters).T
    n = len(errors)
    if n < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    num = errors[idx].sum(axis=1)
    den = n_ref[idx].sum(axis=1)
    ratios = np.where(den > 0, num / np.maximum(den, 1), np.nan)
    lo, hi = np.nanquantile(ratios, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def wer(references: Sequence[str], hypotheses: Sequence[str | None], *, normalizer: str = "whisper_en",
        unit: str = "word", seed: int = 0, clusters: Sequence | None = None) -> dict:
    """Corpus WER (``unit="word"``) or CER (``unit="char"``) with per-item counts.

    A missing hypothesis (None) is scored as an empty transcript (all deletions), never dropped.
    Returns ``value`` (errors / reference units), a bootstrap interval (over ``clusters``, e.g. the
    items' speakers, when given: ``ci_method`` says which), totals, ``per_item`` (list of dicts) and
    the ``normalizer``/``unit`` used.
    """
    if len(references) != len(hypotheses):
        raise InputError(f"wer: {len(references)} references but {len(hypotheses)} hypotheses")
    norm = get_normalizer(normalizer)
    per_item = []
    for i, (ref, hyp) in enumerate(zip(references, hypotheses)):
        if not isinstance(ref, str):
            raise InputError(f"wer: reference #{i} is {type(ref).__name__}, expected a string")
        c = edit_counts(norm(ref), norm(hyp or ""), unit=unit)
        per_item.append({**c, "errors": _errors(c), "missing_hypothesis": hyp is None})
    return _summarise(per_item, normalizer=normalizer, unit=unit, seed=seed, clusters=clusters)


def _summarise(per_item: list[dict], *, normalizer: str, unit: str, seed: int, clusters: Sequence | None = None,
               **extra) -> dict:
    errors = np.array([p["errors"] for p in per_item], dtype=float)
    n_ref = np.array([p["n_ref"] for p in per_item], dtype=float)
    total_ref = float(n_ref.sum())
    value = float(errors.sum() / total_ref) if total_ref else math.nan
    lo, hi = ratio_bootstrap_ci(errors, n_ref, clusters=clusters, seed=seed)
    method = "bootstrap" if clusters is None else f"bootstrap-clustered ({len(set(map(str, clusters)))} clusters)"
    return {"metric": "wer" if unit == "word" else "cer", "value": value, "ci_low": lo, "ci_high": hi,
            "ci_method": method, "n": len(per_item), "n_ref_units": int(total_ref),
            "substitutions": int(sum(p["sub"] for p in per_item)), "deletions": int(sum(p["del"] for p in per_item)),
            "insertions": int(sum(p["ins"] for p in per_item)), "normalizer": normalizer, "unit": unit,
            "per_item": per_item, **extra}


_SPEAKER_PREFIX = re.compile(r"^\s*(?:[-*•]\s*)?(?:(?:speaker|person|talker|voice)\s*[\w]+|[12AB])\s*[:：)\]-]\s*",
                             re.IGNORECASE)


def split_speakers(text: str | None) -> list[str]:
    """A multi-talker response -> one transcript per speaker: one per non-empty line, with
    "Speaker 1:", "Person A:", "- " prefixes removed."""
    if not text:
        return []
    out = []
    for line in str(text).splitlines():
        line = _SPEAKER_PREFIX.sub("", line).strip()
        if line:
            out.append(line)
    return out


def pi_counts(references: Sequence[str], hypotheses: Sequence[str], *, normalizer: str = "whisper_en",
              unit: str = "word") -> dict:
    """Minimum-error assignment of hypotheses to reference speakers for one item.

    Unequal counts are padded with empty strings (a missing speaker is all deletions, an extra
    hypothesis all insertions). Returns the summed counts and the chosen ``assignment``
    (hypothesis index per reference, -1 for none)."""
    from scipy.optimize import linear_sum_assignment

    norm = get_normalizer(normalizer)
    refs = [norm(r) for r in references]
    hyps = [norm(h) for h in hypotheses]
    size = max(len(refs), len(hyps))
    refs_p = refs + [""] * (size - len(refs))
    hyps_p = hyps + [""] * (size - len(hyps))
    counts = [[edit_counts(r, h, unit=unit) for h in hyps_p] for r in refs_p]
    cost = np.array([[_errors(c) for c in row] for row in counts], dtype=float)
    rows, cols = linear_sum_assignment(cost)
    chosen = [counts[r][c] for r, c in zip(rows, cols)]
    total = {k: int(sum(c[k] for c in chosen)) for k in ("sub", "del", "ins", "hits", "n_ref")}
    assignment = [int(c) if c < len(hyps) else -1 for r, c in zip(rows, cols) if r < len(refs)]
    return {**total, "errors": _errors(total), "assignment": assignment, "n_ref_speakers": len(refs),
            "n_hyp_speakers": len(hyps)}


def pi_wer(references: Sequence[Sequence[str]], hypotheses: Sequence[str | Sequence[str] | None], *,
           normalizer: str = "whisper_en", unit: str = "word", seed: int = 0) -> dict:
    """Permutation-invariant corpus WER over multi-talker items.

    ``references``: per item, one transcript per speaker. ``hypotheses``: per item either the raw
    response (split with :func:`split_speakers`) or a list of per-speaker texts. Also reports
    ``speaker_count_match_rate``: the share of responses with as many texts as speakers (the seed
    notes saw 89% for SALMONN on LibriMix; the rest still count, with the padding rule).
    """
    if len(references) != len(hypotheses):
        raise InputError(f"pi_wer: {len(references)} references but {len(hypotheses)} hypotheses")
    per_item = []
    for i, (refs, hyp) in enumerate(zip(references, hypotheses)):
        if not refs or not all(isinstance(r, str) for r in refs):
            raise InputError(f"pi_wer: item #{i} needs a list of reference transcripts, got {refs!r}")
        hyps = split_speakers(hyp) if hyp is None or isinstance(hyp, str) else list(hyp)
        per_item.append(pi_counts(refs, hyps, normalizer=normalizer, unit=unit))
    match = float(np.mean([p["n_ref_speakers"] == p["n_hyp_speakers"] for p in per_item])) if per_item else math.nan
    out = _summarise(per_item, normalizer=normalizer, unit=unit, seed=seed, speaker_count_match_rate=match)
    out["metric"] = "pi_" + out["metric"]
    return out
