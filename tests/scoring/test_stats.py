"""Statistics against scipy/statsmodels reference values and known textbook numbers."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, bootstrap
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from lalmbench.core.stats import (bootstrap_ci, bootstrap_proportion_ci, breakdown, clustered_proportion_summary,
                                  design_effect, mcnemar_exact, min_detectable_difference, p_vs_chance,
                                  paired_comparisons, wilson_interval)


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (45, 100), (1, 3), (731, 1000)])
def test_wilson_matches_statsmodels(k, n):
    lo, hi = wilson_interval(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)


def test_wilson_known_value():
    # Wilson 95% for 45/100: (0.3561, 0.5476), e.g. Newcombe (1998) style tables
    lo, hi = wilson_interval(45, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.3561, 0.5476)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_p_vs_chance_is_two_sided_exact_binomial():
    assert p_vs_chance(45, 100, 0.25) == pytest.approx(binomtest(45, 100, 0.25).pvalue)
    # far below chance is significant too (position bias): a one-sided "greater" test would give ~1
    assert p_vs_chance(5, 100, 0.25) < 1e-5
    assert binomtest(5, 100, 0.25, alternative="greater").pvalue > 0.99
    assert p_vs_chance(25, 100, 0.25) == pytest.approx(1.0)
    assert math.isnan(p_vs_chance(0, 0, 0.25))


def test_mcnemar_matches_statsmodels():
    rng = np.random.default_rng(3)
    a = rng.random(200) < 0.7
    b = rng.random(200) < 0.55
    res = mcnemar_exact(a, b)
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert res["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert res["a_only"] == int(np.sum(a & ~b)) and res["b_only"] == int(np.sum(~a & b))
    assert mcnemar_exact([True, False], [True, False])["p_value"] == 1.0
    with pytest.raises(ValueError, match="equal lengths"):
        mcnemar_exact([True], [True, False])


def test_paired_table_flags_only_real_differences():
    n = 300
    rng = np.random.default_rng(0)
    good = rng.random(n) < 0.9
    same = good.copy()
    same[:3] = ~same[:3]  # 3 discordant items: not significant
    weak = rng.random(n) < 0.4
    table = paired_comparisons(pd.DataFrame({"good": good, "same": same, "weak": weak}))
    sig = {(r.system_a, r.system_b): r.significant for r in table.itertuples()}
    assert sig == {("good", "same"): False, ("good", "weak"): True, ("same", "weak"): True}
    assert (table["p_holm"] >= table["p_value"]).all()


def test_bootstrap_ci_seeded_and_close_to_scipy():
    x = np.r_[np.ones(60), np.zeros(40)]
    a = bootstrap_ci(x, seed=7)
    assert a == bootstrap_ci(x, seed=7)
    ref = bootstrap((x,), np.mean, method="percentile", rng=np.random.default_rng(7), n_resamples=2000)
    assert a == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert bootstrap_ci(np.ones(10)) == (1.0, 1.0)


def test_binomial_bootstrap_equals_item_bootstrap_in_distribution():
    lo, hi = bootstrap_proportion_ci(600, 1000, seed=1, n_resamples=20000)
    ref = bootstrap((np.r_[np.ones(600), np.zeros(400)],), np.mean, method="percentile",
                    rng=np.random.default_rng(2), n_resamples=20000)
    assert lo == pytest.approx(ref.confidence_interval.low, abs=0.004)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=0.004)
    assert bootstrap_proportion_ci(600, 1000, seed=1) == bootstrap_proportion_ci(600, 1000, seed=1)


def test_breakdown_by_meta_with_intervals():
    df = pd.DataFrame({"meta_cat": ["x"] * 10 + ["y"] * 20 + [None] * 2,
                       "correct": [True] * 10 + [False] * 20 + [True, False],
                       "chance": 0.5})
    out = breakdown(df, "meta_cat").set_index("meta_cat")
    assert list(out.index) == ["<missing>", "x", "y"]
    assert out.loc["x", "value"] == 1.0 and out.loc["y", "value"] == 0.0
    assert out.loc["y", "ci_high"] == pytest.approx(proportion_confint(0, 20, method="wilson")[1])
    assert out.loc["y", "p_vs_chance"] == pytest.approx(binomtest(0, 20, 0.5).pvalue)
    with pytest.raises(KeyError, match="meta_nope"):
        breakdown(df, "meta_nope")


def test_numeric_meta_is_binned_and_all_meta_fields_broken_down():
    from lalmbench.core.stats import meta_breakdowns

    n = 40
    df = pd.DataFrame({"meta_gap_s": np.linspace(0.1, 2.0, n), "meta_family": ["a", "b"] * (n // 2),
                       "meta_clip": [f"c{i}" for i in range(n)], "correct": [i >= n // 2 for i in range(n)],
                       "chance": 0.5})
    out = meta_breakdowns(df, max_groups=10)
    assert set(out["field"]) == {"gap_s", "family"}  # 40 distinct clip ids: skipped
    gap = out[out["field"] == "gap_s"]
    assert len(gap) == 4 and list(gap["n"]) == [10] * 4
    assert list(gap["value"]) == [0.0, 0.0, 1.0, 1.0]  # correctness rises with the gap: visible per bin
    assert (gap["ci_low"] <= gap["value"]).all()


# four clips of three items; the items of a clip answered alike: (1,1,1) (1,1,1) (0,0,0) (0,0,0)
ALIKE = np.repeat([1, 1, 0, 0], 3).astype(bool)
CLIPS = np.repeat(["c1", "c2", "c3", "c4"], 3)


def test_design_effect_by_hand_and_as_statsmodels_computes_it():
    # clustered variance G/(G-1) * sum_c (k_c - p n_c)^2 / n^2 = 4/3 * 4 * 1.5^2 / 144 = 1/12;
    # item variance p(1-p)/(n-1) = 0.25/11; their ratio 11/3
    assert design_effect(ALIKE, CLIPS) == pytest.approx(11 / 3)
    import statsmodels.api as sm

    mixed = np.array([1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1], dtype=float)
    ones = np.ones(12)
    ratio = (sm.OLS(mixed, ones).fit(cov_type="cluster", cov_kwds={"groups": np.repeat(range(4), 3)}).bse[0]
             / sm.OLS(mixed, ones).fit().bse[0]) ** 2
    assert design_effect(mixed, CLIPS) == pytest.approx(ratio)
    assert design_effect(mixed, np.arange(12)) == pytest.approx(1.0)
    # all right: items agree within every clip; the effect is the clip size
    assert design_effect(np.ones(12, bool), CLIPS) == 3.0


def test_clustered_interval_widens_when_the_items_of_a_clip_are_answered_alike():
    s = clustered_proportion_summary(ALIKE, CLIPS, chance=0.25)
    # Wilson at n_eff = 12 / (11/3) = 36/11 with p = 0.5: 0.5 -+ 0.3674 (by hand)
    assert (s["n_clips"], s["ci_method"]) == (4, "wilson-clustered")
    assert (s["ci_low"], s["ci_high"]) == pytest.approx((0.1326, 0.8674), abs=1e-4)
    assert (s["wilson_ci_low"], s["wilson_ci_high"]) == pytest.approx((0.2538, 0.7462), abs=1e-4)
    # Rao-Scott: 12 * 0.25^2 / 0.1875 / (11/3) = 1.0909 on one degree of freedom
    assert s["p_vs_chance"] == pytest.approx(0.2963, abs=1e-4)
    one_each = clustered_proportion_summary(ALIKE, np.arange(12), chance=0.25)
    assert one_each["ci_method"] == "wilson" and one_each["design_effect"] == 1.0
    assert (one_each["ci_low"], one_each["ci_high"]) == (s["wilson_ci_low"], s["wilson_ci_high"])
    assert one_each["p_vs_chance"] == p_vs_chance(6, 12, 0.25)


def test_cluster_bootstrap_resamples_clips():
    k = np.array([3, 3, 0, 0] * 25)
    lo, hi = bootstrap_proportion_ci(k, np.full(100, 3), seed=3, n_resamples=20000)
    clips = np.repeat(k / 3, 1)  # per-clip means of equal-size clips: the clip bootstrap of the mean
    ref = bootstrap((clips,), np.mean, method="percentile", rng=np.random.default_rng(4), n_resamples=20000)
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), abs=0.01)
    item_lo, item_hi = bootstrap_proportion_ci(150, 300, seed=3)
    assert hi - lo > 1.5 * (item_hi - item_lo)  # 100 clips of three alike items carry ~100 items' information


def test_min_detectable_difference_by_hand():
    # 100 items, 20% discordant: d = (1.96 * sqrt(0.2) + 0.8416 * sqrt(0.2 - d^2)) / 10 -> 0.1238
    assert min_detectable_difference(100, 0.2) == pytest.approx(0.1238, abs=1e-4)
    assert min_detectable_difference(1000, 0.2) < min_detectable_difference(100, 0.2)
    assert math.isnan(min_detectable_difference(100, 0.0))
    t = paired_comparisons(pd.DataFrame({"a": [True] * 60 + [False] * 40, "b": [True] * 40 + [False] * 60}))
    assert t["min_detectable_diff"].iloc[0] == pytest.approx(min_detectable_difference(100, 0.2))


def test_list_valued_fields_group_by_element():
    """MMAU stores some categories as lists: ["Reasoning"] is the group Reasoning, and an item with two
    values counts in both groups (in our breakdown and in the paper's table beside the official rule)."""
    from lalmbench.scoring.mcq import score_mcq
    from lalmbench.scoring.official import paper_breakdown

    opts = [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}]
    cats = [["Reasoning"], "Reasoning", ["Reasoning", "Perception"], "Perception"]
    items = [{"id": f"i{k}", "options": opts, "answer_label": "A", "meta": {"category": c}} for k, c in enumerate(cats)]
    dec, _ = score_mcq(items, pd.DataFrame({"id": [it["id"] for it in items], "raw_output": ["A", "B", "A", "A"]}), {})
    assert dec["meta_category"].tolist()[:2] == ["Reasoning", "Reasoning"]
    b = breakdown(dec, "meta_category").set_index("meta_category")
    assert b.loc["Reasoning", ["n", "k"]].tolist() == [3, 2] and b.loc["Perception", ["n", "k"]].tolist() == [2, 2]
    assert "['Reasoning']" not in b.index and len(b) == 2
    paper = paper_breakdown(dec.assign(official_score=dec["correct"].astype(float)), ["category"])
    assert [(r["group"], r["n"], r["value_official"]) for r in paper] == [("Perception", 2, 1.0),
                                                                          ("Reasoning", 3, 2 / 3)]


def test_a_sampled_system_is_compared_on_per_item_means_with_a_paired_t_test():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(4)
    greedy = rng.random(200) < 0.55
    sampled = np.clip(greedy * 0.6 + rng.random(200) * 0.5, 0, 1)  # means over k samples: fractions
    t = paired_comparisons(pd.DataFrame({"greedy": greedy, "sampled": sampled}))
    (row,) = t.to_dict("records")
    assert row["p_value"] == pytest.approx(ttest_rel(greedy.astype(float), sampled).pvalue)
    assert row["diff"] == pytest.approx(greedy.mean() - sampled.mean())
    assert row["n"] == 200 and row["a_only"] + row["b_only"] <= 200
    sd = np.std(greedy - sampled, ddof=1)
    assert row["min_detectable_diff"] == pytest.approx((1.959964 + 0.841621) * sd / np.sqrt(200), rel=1e-5)
    same = paired_comparisons(pd.DataFrame({"a": sampled, "b": sampled}))
    assert same.loc[0, "p_value"] == 1.0 and not same.loc[0, "significant"]
