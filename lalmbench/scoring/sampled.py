"""Scores of k sampled outputs per item: avg@k, pass@k and majority@k, with intervals for clustered samples.

An item's k samples are not k independent items: a hard item is wrong in most of them. Every
interval here therefore clusters, by clip where items share one (``clip_id``), else by item, through
:func:`lalmbench.core.stats.clustered_proportion_summary` (Wilson at the Kish effective sample size
n / design effect). ``accuracy@k_mean`` is the share of all n x k samples that are right (each item
weighs the same: k is fixed); ``pass@k`` is Chen et al. (2021)'s unbiased estimator, one when any
sample is right at k = n; ``majority@k`` scores the most frequent parsed answer (ties: the one given
first; unparseable samples do not vote). Per item, ``sample_agreement`` is the share of its samples
that give the majority answer.
"""
from __future__ import annotations

import json
import math
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.core.stats import clustered_proportion_summary

#: decisions columns of a sampled run (per item), after the sample-0 columns of an ordinary one
ITEM_COLUMNS = ["samples_k", "samples_correct", "samples_mean", "pass_at_k", "majority_label", "majority_correct",
                "sample_agreement"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are right: 1 - C(n-c, k) / C(n, k) (Chen et al. 2021,
    in its numerically stable product form)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def majority_votes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of an items x k array of parsed answers (None: unparseable): (the most frequent answer,
    None when no sample parsed; a tie goes to the tied answer given first, the share of the k samples
    that give it)."""
    labels = np.asarray(labels, dtype=object)
    n, k = labels.shape
    codes, uniques = pd.factorize(pd.Series(labels.ravel(), dtype=object), use_na_sentinel=True)
    codes = codes.reshape(n, k)
    counts = np.zeros((n, max(len(uniques), 1)), dtype=np.int64)
    rows, cols = np.nonzero(codes >= 0)
    np.add.at(counts, (rows, codes[rows, cols]), 1)
    best = counts.max(axis=1)
    own = np.where(codes >= 0, np.take_along_axis(counts, np.maximum(codes, 0), axis=1), -1)
    first = np.argmax(own == best[:, None], axis=1)  # the first sample whose answer has the top count
    winner = codes[np.arange(n), first]
    out = np.array([None] * n, dtype=object)
    found = (best > 0) & (winner >= 0)
    out[found] = np.asarray(uniques, dtype=object)[winner[found]]
    return out, np.where(found, best / k, 0.0)


def majority_vote(labels: Sequence[str | None]) -> str | None:
    """The most frequent answer among the parsed ones; a tie goes to the tied answer given first."""
    return majority_votes(np.array([list(labels)], dtype=object))[0][0]


def sample_outputs(preds: pd.DataFrame) -> list[pd.DataFrame]:
    """One predictions frame per sample (``raw_output`` and ``error`` of sample j), from the ``samples``
    column a k > 1 predictions file carries (lalmbench.inference.materialize)."""
    per_item = [json.loads(s) for s in preds["samples"]]
    ks = {len(s) for s in per_item}
    if len(ks) != 1:
        raise ValueError(f"predictions: items carry different numbers of samples ({sorted(ks)})")
    (k,) = ks
    return [preds.assign(raw_output=[s[j]["raw_output"] for s in per_item], error=[s[j]["error"] for s in per_item])
            for j in range(k)]


def open_samples_flag(preds: pd.DataFrame) -> str | None:
    """The flag of an open-answer run whose model drew k > 1 samples per item: its metrics (WER, BLEU,
    CIDEr ...) score sample 0 only, and all.tsv must say so rather than pass it off as a sampled score."""
    if "samples" not in preds.columns or not len(preds):
        return None
    k = len(json.loads(preds["samples"].iloc[0]))
    return (f"{k} samples per item drawn; this open-answer metric scores sample 0 only "
            f"(accuracy@k_mean, pass@k and majority@k are computed for multiple-choice tasks)")


def _row(metric: str, summary: dict, n_items: int, chance: float, parse_failure_rate: float | None = None) -> dict:
    return {"metric": metric, "value": summary["value"], "ci_low": summary["ci_low"], "ci_high": summary["ci_high"],
            "n": n_items, "chance": chance, "p_vs_chance": summary["p_vs_chance"],
            "parse_failure_rate": parse_failure_rate, "design_effect": summary["design_effect"],
            "ci_method": summary["ci_method"]}


def sampling_curve(correct: np.ndarray, labels: np.ndarray, gold: np.ndarray) -> list[dict]:
    """Accuracy against j = 1..k from one run of k samples per item: pass@j (the unbiased estimator from
    all k) and majority@j (the vote of the first j samples). avg@j is the same for every j, avg@k."""
    n, k = correct.shape
    c = correct.sum(axis=1)
    out = []
    for j in range(1, k + 1):
        maj, _ = majority_votes(labels[:, :j])
        ok = [m is not None and m == g for m, g in zip(maj, gold)]
        out.append({"k": j, "pass": float(np.mean([pass_at_k(k, int(ci), j) for ci in c])) if n else math.nan,
                    "majority": float(np.mean(ok)) if n else math.nan})
    return out


def sampled_scores(decisions: Sequence[pd.DataFrame]) -> tuple[pd.DataFrame, list[dict]]:
    """(per-item columns :data:`ITEM_COLUMNS`, the metrics rows) from one decisions frame per sample
    (same items, same order, as :func:`lalmbench.scoring.mcq.score_mcq` writes them)."""
    k = len(decisions)
    first = decisions[0]
    n = len(first)
    correct = np.stack([d["correct"].to_numpy(dtype=bool) for d in decisions], axis=1)  # n x k
    labels = np.stack([d["pred_label"].to_numpy(dtype=object) for d in decisions], axis=1)
    clips = (first["clip_id"] if "clip_id" in first.columns else first["id"]).astype(str).to_numpy()
    gold = first["gold_label"].to_numpy(dtype=object)
    c = correct.sum(axis=1)
    majority, agree = majority_votes(labels)
    maj_ok = np.array([m is not None and m == g for m, g in zip(majority, gold)], dtype=bool)
    items = pd.DataFrame({"samples_k": k, "samples_correct": c, "samples_mean": c / k,
                          "pass_at_k": [pass_at_k(k, int(ci), k) for ci in c], "majority_label": majority,
                          "majority_correct": maj_ok, "sample_agreement": agree})
    p1 = 1.0 / first["n_options"].to_numpy(dtype=float)
    unparsed = float(np.mean([(d["outcome"] == "unparseable").mean() for d in decisions])) if n else math.nan
    rows = [
        # every sample, clustered by clip (else item): an item's k samples are one cluster
        _row(f"accuracy@{k}_mean", clustered_proportion_summary(correct.ravel(), np.repeat(clips, k), p1.mean()),
             n, float(p1.mean()), unparsed),
        _row(f"pass@{k}", clustered_proportion_summary(c > 0, clips, float(np.mean(1 - (1 - p1) ** k))),
             n, float(np.mean(1 - (1 - p1) ** k))),
        # a uniform guesser's majority answer is uniform too (ties go to the first): chance stays 1/options
        _row(f"majority@{k}", clustered_proportion_summary(maj_ok, clips, p1.mean()), n, float(p1.mean())),
    ]
    return items, rows
