"""Statistics against scipy/statsmodels reference values and known textbook numbers."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, bootstrap
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from lalmbench.scoring.mcq import bootstrap_proportion_ci
from lalmbench.core.stats import bootstrap_ci, breakdown, mcnemar_exact, p_vs_chance, paired_comparisons, wilson_interval


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
