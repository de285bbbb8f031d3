"""k sampled outputs per item: pass@k, majority@k and avg@k against hand-computed values, and the
clustered interval's coverage on simulated models of known accuracy."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import comb

from lalmbench.core.stats import clustered_proportion_summary
from lalmbench.scoring.run import score_run_files
from lalmbench.scoring.sampled import majority_vote, pass_at_k, sampled_scores

OPTS = [{"label": x, "text": t} for x, t in zip("ABC", ("cat", "dog", "bird"))]


@pytest.mark.parametrize("n, c, k, expected", [
    (5, 0, 1, 0.0), (5, 2, 1, 0.4), (5, 2, 2, 1 - 3 / 10), (5, 1, 5, 1.0), (10, 3, 5, 1 - 21 / 252), (4, 4, 2, 1.0)])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k, exact=True) / comb(n, k, exact=True), abs=1e-12)


def test_pass_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(3, 4, 1)


@pytest.mark.parametrize("labels, expected", [
    (["B", "A", "A"], "A"), (["A", "B", "A", None, "B"], "A"), (["C", None, "B", "B"], "B"),
    (["B", "C"], "B"), ([None, None], None)])
def test_majority_takes_the_most_frequent_parsed_answer_ties_to_the_first(labels, expected):
    assert majority_vote(labels) == expected


def write_run(tmp_path, samples: dict[str, list[str | None]], gold: dict[str, str]) -> tuple[pd.DataFrame, dict]:
    items = [{"id": i, "question": "Which animal?", "options": OPTS, "answer_label": g, "clip_id": f"c-{i}"}
             for i, g in gold.items()]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    preds = pd.DataFrame({"id": list(samples), "raw_output": [s[0] for s in samples.values()], "error": None,
                          "samples": [json.dumps([{"raw_output": x, "error": None} for x in s])
                                      for s in samples.values()]})
    preds.to_parquet(tmp_path / "preds.parquet")
    metrics = score_run_files(items_path=str(tmp_path / "items.jsonl"),
                              predictions_path=str(tmp_path / "preds.parquet"),
                              parser_cfg={}, config_hash="h", run=["m", "d", "t", "audio", "p"],
                              decisions_path=str(tmp_path / "decisions.parquet"),
                              metrics_path=str(tmp_path / "metrics.json"))
    return pd.read_parquet(tmp_path / "decisions.parquet"), metrics


def test_a_sampled_run_scores_avg_pass_and_majority_by_hand(tmp_path):
    decisions, metrics = write_run(tmp_path, {"x": ["A", "B", "A"], "y": ["A", "C", "I am not sure"],
                                              "z": ["C", "C", "C"]}, {"x": "A", "y": "B", "z": "C"})
    rows = {r["metric"]: r for r in metrics["extra_metrics"]}
    assert metrics["value"] == pytest.approx(2 / 3) and metrics["samples"] == 3  # the headline: sample 0
    assert rows["accuracy@3_mean"]["value"] == pytest.approx(5 / 9)
    assert rows["pass@3"]["value"] == pytest.approx(2 / 3) and rows["majority@3"]["value"] == pytest.approx(2 / 3)
    assert rows["pass@3"]["chance"] == pytest.approx(1 - (2 / 3) ** 3)
    assert all(r["n"] == 3 and r["ci_low"] <= r["value"] <= r["ci_high"] for r in rows.values())
    assert decisions["samples_correct"].tolist() == [2, 0, 3]
    assert decisions["majority_label"].tolist() == ["A", "A", "C"]  # y: A and C tie, A came first
    assert decisions["majority_correct"].tolist() == [True, False, True]
    assert decisions["sample_agreement"].tolist() == pytest.approx([2 / 3, 1 / 3, 1.0])
    assert decisions["pass_at_k"].tolist() == [1.0, 0.0, 1.0]
    # j = 1: the mean over samples and sample 0's vote; j = 2: x's first two tie (A first), y's A is wrong
    curve = metrics["sampling_curve"]
    assert [c["k"] for c in curve] == [1, 2, 3]
    assert [c["pass"] for c in curve] == pytest.approx([5 / 9, 2 / 3, 2 / 3])
    assert [c["majority"] for c in curve] == pytest.approx([2 / 3, 2 / 3, 2 / 3])


def simulate(rng, n_items: int, k: int, clip_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(items x k correctness, clip per item) of a model whose accuracy on each clip's items is drawn
    from Beta(3, 2): its true accuracy is 0.6."""
    p = np.repeat(rng.beta(3, 2, size=n_items // clip_size), clip_size)
    return rng.random((n_items, k)) < p[:, None], np.arange(n_items) // clip_size


def frames(right: np.ndarray, clips: np.ndarray) -> list[pd.DataFrame]:
    """The k decisions frames score_mcq would write for these outcomes (gold A, a wrong answer is B)."""
    base = pd.DataFrame({"id": [f"i{j}" for j in range(len(right))], "gold_label": "A", "n_options": 4,
                         "clip_id": [f"c{c}" for c in clips]})
    return [base.assign(correct=right[:, s], pred_label=np.where(right[:, s], "A", "B"), outcome="x")
            for s in range(right.shape[1])]


def test_the_avg_row_is_the_summary_over_all_samples_clustered_by_clip():
    right, clips = simulate(np.random.default_rng(1), 90, 5, 3)
    _, rows = sampled_scores(frames(right, clips))
    want = clustered_proportion_summary(right.ravel(), np.repeat(clips, 5), 0.25)
    assert rows[0]["metric"] == "accuracy@5_mean" and rows[0]["ci_method"] == "wilson-clustered"
    assert (rows[0]["value"], rows[0]["ci_low"], rows[0]["ci_high"]) == (want["value"], want["ci_low"], want["ci_high"])
    assert rows[0]["design_effect"] > 1.5  # five samples of one clip's three items agree far more than chance


@pytest.mark.parametrize("clip_size", [1, 3])
def test_the_clustered_interval_covers_the_truth_at_its_nominal_rate(clip_size):
    """1,000 simulated runs of 150 items x 5 samples: the accuracy@k_mean interval covers the true
    accuracy 95% of the time (within 3 binomial standard deviations of 1,000 runs); treating the 750
    samples as independent items does not."""
    rng = np.random.default_rng(2021)
    runs, k, n_items, truth = 1000, 5, 150, 0.6
    covered = naive = by_item = 0
    for _ in range(runs):
        right, clips = simulate(rng, n_items, k, clip_size)
        r = clustered_proportion_summary(right.ravel(), np.repeat(clips, k))
        covered += r["ci_low"] <= truth <= r["ci_high"]
        naive += r["wilson_ci_low"] <= truth <= r["wilson_ci_high"]
        if clip_size > 1:  # the items of one clip as separate clusters
            r = clustered_proportion_summary(right.ravel(), np.repeat(np.arange(n_items), k))
            by_item += r["ci_low"] <= truth <= r["ci_high"]
    tol = 3 * math.sqrt(0.95 * 0.05 / runs)
    assert abs(covered / runs - 0.95) <= tol, covered / runs  # measured: 0.935 (clips of 1), 0.942 (of 3)
    assert naive / runs < 0.95 - tol, naive / runs
    if clip_size > 1:
        assert by_item / runs < 0.95 - tol, by_item / runs


def test_an_open_answer_run_with_samples_is_flagged_as_scoring_sample_0_only():
    import json

    import pandas as pd

    from lalmbench.scoring.sampled import open_samples_flag

    one = {"raw_output": "a dog barks", "error": None}
    preds = pd.DataFrame({"id": ["a", "b"], "raw_output": ["a dog barks", "rain"],
                          "samples": [json.dumps([one] * 3), json.dumps([one] * 3)]})
    assert open_samples_flag(preds).startswith("3 samples per item drawn; this open-answer metric scores sample 0")
    assert open_samples_flag(preds.drop(columns="samples")) is None
