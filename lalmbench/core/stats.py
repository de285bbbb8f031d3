"""Statistics for benchmark numbers: intervals, tests against chance, paired comparisons, breakdowns.

All computations delegate to scipy/statsmodels (tested against their reference values); this
module only fixes the conventions the tables use:

- intervals are 95% unless told otherwise; Wilson for proportions (good coverage at small n and
  near 0/1, unlike the normal approximation), a seeded percentile bootstrap over items for any
  other per-item statistic;
- the test against chance is the *two-sided* exact binomial test: a model can be significantly
  *below* chance (a position bias that always answers "A" on items balanced away from A, or a
  parser that fails systematically), and a one-sided test would hide that;
- paired model comparisons on the same items use the exact McNemar test (binomial on the
  discordant pairs), with Holm's correction over all pairs in a table, and the smallest accuracy
  difference the pair's n could detect at 80% power (so "not significant" can be read as "too few
  items" when it is);
- items that share a clip (several questions about one recording) are not independent: where a
  clip carries more than one item, the interval and the test against chance use the clustered
  variance (clip as cluster, the cluster-robust standard error of a mean, as statsmodels computes
  it) through the design effect, and the bootstrap resamples clips, not items.
"""
from __future__ import annotations

import json
import math
from itertools import combinations
from typing import Callable, Sequence

import numpy as np
import pandas as pd


def wilson_interval(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for k successes out of n; (nan, nan) when n == 0."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(int(k), int(n), alpha=alpha, method="wilson")
    return (max(0.0, float(lo)), min(1.0, float(hi)))


def p_vs_chance(k: int, n: int, chance: float) -> float:
    """Exact two-sided binomial test of k/n against ``chance``; nan when n == 0 or chance is not in (0, 1).

    Two-sided on purpose: see the module docstring (below-chance results are findings too).
    With items of different option counts, pass the mean chance: the exact null is then
    Poisson-binomial, whose variance is at most the binomial's with the same mean, so this test
    is conservative (never overstates significance).
    """
    if n == 0 or not (0.0 < chance < 1.0) or math.isnan(chance):
        return math.nan
    from scipy.stats import binomtest

    return float(binomtest(int(k), int(n), float(chance), alternative="two-sided").pvalue)


def bootstrap_ci(values: Sequence[float] | np.ndarray, statistic: Callable = np.mean, *, seed: int = 0,
                 n_resamples: int = 2000, alpha: float = 0.05) -> tuple[float, float]:
    """Seeded percentile bootstrap over items (scipy.stats.bootstrap). (nan, nan) for < 2 values.

    Percentile rather than BCa: BCa is undefined for constant samples (all correct), which happen.
    """
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return (math.nan, math.nan)
    if np.all(x == x[0]):
        v = float(statistic(x))
        return (v, v)
    from scipy.stats import bootstrap

    res = bootstrap((x,), statistic, n_resamples=n_resamples, confidence_level=1 - alpha,
                    method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def _cluster_patterns(k: Sequence[int] | np.ndarray, n: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (successes, size) patterns of the clusters and how many clusters have each."""
    pairs = np.stack([np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)], axis=1)
    pat, counts = np.unique(pairs, axis=0, return_counts=True)
    return pat[:, 0], pat[:, 1], counts


def bootstrap_proportion_ci(k: int | Sequence[int], n: int | Sequence[int], *, seed: int = 0,
                            n_resamples: int = 10000, alpha: float = 0.05) -> tuple[float, float]:
    """Seeded percentile bootstrap of a proportion: ``k``/``n`` as two ints (independent items),
    or as per-cluster successes and sizes (a cluster bootstrap: clips are resampled, not items).

    Resampling G clusters with replacement only matters through how many of each distinct
    (successes, size) pattern are drawn, which is Multinomial(G, pattern shares); drawing those
    counts is the same bootstrap as resampling cluster indices (tests check it against
    scipy.stats.bootstrap) at O(n_resamples x patterns) instead of O(n_resamples x G). Two ints
    are G = n clusters of size one.
    """
    if np.ndim(k) == 0:
        k, n = int(k), int(n)
        if n == 0:
            return (math.nan, math.nan)
        ks, ns, counts = np.array([1, 0]), np.array([1, 1]), np.array([k, n - k])
    else:
        ks, ns, counts = _cluster_patterns(k, n)
        if ns.sum() == 0 or counts.sum() == 0:
            return (math.nan, math.nan)
    g = int(counts.sum())
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(g, counts / g, size=n_resamples)
    size = draws @ ns
    means = np.divide(draws @ ks, size, out=np.full(n_resamples, np.nan), where=size > 0)
    lo, hi = np.nanquantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def design_effect(correct: Sequence[bool] | np.ndarray, clusters: Sequence | np.ndarray) -> float:
    """Variance of the accuracy with clip as cluster over its variance with independent items.

    Both as statsmodels computes a mean's standard error (OLS on a constant; ``cov_type="cluster"``
    with its small-sample factor G/(G-1), against the plain OLS variance p(1-p)/(n-1)), so the
    effect is exactly 1 when every clip has one item. With all items right (or all wrong) both are
    zero; the items then agree within every clip, and the effect is its value under perfect
    within-clip agreement, sum(n_c^2)/n (the mean clip size when clips are equal). nan for n < 2.
    """
    y = np.asarray(correct, dtype=float)
    n = y.size
    if n < 2:
        return math.nan
    codes = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)), use_na_sentinel=False)[0]
    sizes = np.bincount(codes).astype(float)
    g = sizes.size
    p = y.mean()
    if g < 2:
        return float(n)
    if p in (0.0, 1.0):
        return float((sizes ** 2).sum() / n)
    resid = np.bincount(codes, weights=y - p)
    v_cluster = g / (g - 1) * float((resid ** 2).sum()) / n ** 2
    v_iid = p * (1 - p) / (n - 1)
    return v_cluster / v_iid


def clustered_proportion_summary(correct: Sequence[bool] | np.ndarray, clusters: Sequence | np.ndarray,
                                 chance: float | None = None, alpha: float = 0.05) -> dict:
    """:func:`proportion_summary` for items that may share a clip (``clusters``: one clip id per item).

    Adds ``n_clips``, ``design_effect`` and ``ci_method``. Where every clip carries one item this is
    the Wilson interval and the exact binomial test, unchanged. Otherwise the interval is Wilson's at
    the effective sample size n / deff (Kish), and the test against chance is the Rao-Scott
    corrected score test (the chi-square of k/n against chance divided by deff); deff is floored at
    1, so clustering never narrows an interval. ``wilson_ci_low``/``wilson_ci_high`` keep the
    item-level interval for comparison.
    """
    y = np.asarray(correct, dtype=bool)
    n, k = int(y.size), int(y.sum())
    clip = pd.Series(np.asarray(clusters, dtype=object))
    n_clips = int(clip.nunique(dropna=False))
    out = proportion_summary(k, n, chance, alpha)
    out.update({"n_clips": n_clips, "design_effect": 1.0 if n and n_clips == n else float(design_effect(y, clip)),
                "wilson_ci_low": out["ci_low"], "wilson_ci_high": out["ci_high"], "ci_method": "wilson"})
    if n == 0 or n_clips == n:
        return out
    deff = max(1.0, out["design_effect"])
    n_eff = n / deff
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k / n * n_eff, n_eff, alpha=alpha, method="wilson")
    out.update({"ci_low": max(0.0, float(lo)), "ci_high": min(1.0, float(hi)), "ci_method": "wilson-clustered"})
    if chance is not None and 0.0 < chance < 1.0:
        from scipy.stats import chi2

        stat = n * (k / n - chance) ** 2 / (chance * (1 - chance)) / deff
        out["p_vs_chance"] = float(chi2.sf(stat, 1))
    return out


def min_detectable_difference(n: int, discordant: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest accuracy difference a paired McNemar test on ``n`` items detects with ``power``,
    given the share of items the two systems answer differently (Connor 1987's normal
    approximation: n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, solved for d). nan when no
    item is discordant (the systems never differ) or n is 0."""
    if n <= 0 or not 0 < discordant <= 1:
        return math.nan
    from scipy.optimize import brentq
    from scipy.stats import norm

    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)

    def gap(d: float) -> float:
        return (za * math.sqrt(discordant) + zb * math.sqrt(max(discordant - d * d, 0.0))) / math.sqrt(n) - d

    hi = math.sqrt(discordant)
    if gap(hi) > 0:
        return hi  # even the largest difference the discordance allows is not detectable
    return float(brentq(gap, 0.0, hi))


def mcnemar_exact(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> dict:
    """Exact McNemar test on paired per-item correctness of two models (same items, same order).

    Returns n, b (A right, B wrong), c (A wrong, B right), the accuracy difference and the p-value.
    """
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired comparison needs equal lengths, got {a.size} and {b.size}")
    n = int(a.size)
    n01 = int(np.sum(a & ~b))
    n10 = int(np.sum(~a & b))
    if n01 + n10 == 0:
        p = 1.0
    else:
        from statsmodels.stats.contingency_tables import mcnemar

        table = [[int(np.sum(a & b)), n01], [n10, int(np.sum(~a & ~b))]]
        p = float(mcnemar(table, exact=True).pvalue)
    return {"n": n, "a_only": n01, "b_only": n10, "acc_a": float(a.mean()) if n else math.nan,
            "acc_b": float(b.mean()) if n else math.nan,
            "diff": float(a.mean() - b.mean()) if n else math.nan, "p_value": p}


def paired_means_test(mean_a: Sequence[float], mean_b: Sequence[float], alpha: float = 0.05,
                      power: float = 0.8) -> dict:
    """Paired t-test (scipy.stats.ttest_rel) on per-item accuracies in [0, 1], for systems scored by the
    mean over k sampled outputs per item: the item, not the sample, is the unit, so the k samples of an
    item never count as k items. Keys as :func:`mcnemar_exact` (``a_only``/``b_only``: items where one
    system's mean is higher) plus ``min_detectable_diff``, the normal approximation
    (z_a + z_b) sd(diff) / sqrt(n); p is 1 when the two never differ."""
    a, b = np.asarray(mean_a, dtype=float), np.asarray(mean_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired comparison needs equal lengths, got {a.size} and {b.size}")
    n, d = int(a.size), a - b
    if n == 0:
        return {"n": 0, "a_only": 0, "b_only": 0, "acc_a": math.nan, "acc_b": math.nan, "diff": math.nan,
                "p_value": 1.0, "min_detectable_diff": math.nan}
    from scipy.stats import norm, ttest_rel

    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    p = float(ttest_rel(a, b).pvalue) if sd > 0 else 1.0
    mdd = (norm.ppf(1 - alpha / 2) + norm.ppf(power)) * sd / math.sqrt(n) if sd > 0 else math.nan
    return {"n": n, "a_only": int((d > 0).sum()), "b_only": int((d < 0).sum()), "acc_a": float(a.mean()),
            "acc_b": float(b.mean()), "diff": float(d.mean()), "p_value": p, "min_detectable_diff": mdd}


def _binary(x: pd.Series) -> bool:
    return bool(x.isin([0, 1, True, False]).all())


def paired_comparisons(correct: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """All pairwise exact McNemar tests between the columns (systems) of an items x systems
    boolean frame; Holm-adjusted p-values, a ``significant`` flag at ``alpha`` and
    ``min_detectable_diff`` (the accuracy difference the pair's n detects at 80% power, at ``alpha``
    before Holm's correction, given the pair's observed share of discordant items). A column of
    per-item means (a system scored over k samples per item) makes its pairs a paired t-test on
    the per-item means (:func:`paired_means_test`).

    Rows with a missing value in either column of a pair are excluded from that pair and the
    count is reported (``n``), never silently imputed.
    """
    rows = []
    for a, b in combinations(list(correct.columns), 2):
        pair = correct[[a, b]].dropna()
        if _binary(pair[a]) and _binary(pair[b]):
            res = mcnemar_exact(pair[a].astype(bool).to_numpy(), pair[b].astype(bool).to_numpy())
            res["min_detectable_diff"] = min_detectable_difference(
                res["n"], (res["a_only"] + res["b_only"]) / res["n"] if res["n"] else 0.0, alpha)
        else:
            res = paired_means_test(pair[a].astype(float).to_numpy(), pair[b].astype(float).to_numpy(), alpha)
        rows.append({"system_a": a, "system_b": b, **res})
    out = pd.DataFrame(rows, columns=["system_a", "system_b", "n", "a_only", "b_only", "acc_a", "acc_b",
                                      "diff", "p_value", "min_detectable_diff"])
    if len(out):
        from statsmodels.stats.multitest import multipletests

        out["p_holm"] = multipletests(out["p_value"].to_numpy(), alpha=alpha, method="holm")[1]
    else:
        out["p_holm"] = pd.Series(dtype=float)
    out["significant"] = out["p_holm"] < alpha
    return out


def proportion_summary(k: int, n: int, chance: float | None = None, alpha: float = 0.05) -> dict:
    """value, Wilson interval and (if ``chance``) the two-sided binomial p-value for k/n."""
    lo, hi = wilson_interval(k, n, alpha)
    return {"n": int(n), "k": int(k), "value": (k / n) if n else math.nan, "ci_low": lo, "ci_high": hi,
            "p_vs_chance": p_vs_chance(k, n, chance) if chance is not None else math.nan}


def bin_numeric(values: pd.Series, n_bins: int = 4) -> pd.Series:
    """Quantile bins ("[lo, hi]" labels) for a numeric meta field with more than ``n_bins`` distinct
    values (gap length, duration ratio...), so a breakdown has groups big enough for an interval."""
    v = pd.to_numeric(values, errors="coerce")
    cats = pd.qcut(v, q=n_bins, duplicates="drop")
    labels = cats.astype(object).map(lambda iv: f"[{iv.left:.4g}, {iv.right:.4g}]" if isinstance(iv, pd.Interval) else None)
    return labels


def _is_list(v) -> bool:
    return isinstance(v, (list, tuple, np.ndarray)) or (isinstance(v, str) and v.startswith("[") and v.endswith("]"))


def _elements(v) -> list:
    """A breakdown cell's groups: a list-valued field (a list, or the JSON list text a decisions file
    holds for one, e.g. ``["Reasoning", "Perception"]``) gives one group per element; anything else one."""
    if isinstance(v, str) and v.startswith("[") and v.endswith("]"):
        try:
            parsed = json.loads(v)
        except ValueError:
            return [v]
        return parsed if isinstance(parsed, list) and parsed else [v]
    if isinstance(v, (list, tuple, np.ndarray)):
        return list(v) if len(v) else [None]
    return [v]


def explode_lists(df: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """``df`` with one row per element of each list-valued cell of ``cols``: an item whose MMAU-style
    category is ``["A", "B"]`` counts in group A and in group B (``["A"]`` is simply A)."""
    for c in cols:
        if df[c].map(_is_list).any():
            df = df.assign(**{c: df[c].map(_elements)}).explode(c)
    return df


def breakdown(decisions: pd.DataFrame, by: str | Sequence[str], *, correct_col: str = "correct",
              chance_col: str | None = "chance", alpha: float = 0.05, n_bins: int = 4) -> pd.DataFrame:
    """Accuracy per group of ``by`` with Wilson intervals and p-value against the group's chance.

    ``chance_col`` holds each item's chance level (1 / n_options); the group chance is its mean.
    Numeric fields with more than ``n_bins`` distinct values are grouped in quantile bins.
    Items whose group value is missing form their own group labelled ``<missing>``. A list-valued
    field groups by element (:func:`explode_lists`): an item counts in the group of each of its values.
    """
    keys = [by] if isinstance(by, str) else list(by)
    missing = [k for k in keys + [correct_col] if k not in decisions.columns]
    if missing:
        raise KeyError(f"breakdown: column(s) {missing} not in decisions (have {list(decisions.columns)})")
    df = explode_lists(decisions.copy(), keys)
    for k in keys:
        col = df[k]
        numeric = pd.to_numeric(col, errors="coerce")
        if col.notna().any() and numeric[col.notna()].notna().all() and numeric.nunique() > n_bins \
                and col.map(lambda x: not isinstance(x, bool)).all():
            col = bin_numeric(numeric, n_bins)
        df[k] = col.astype(object).where(col.notna(), "<missing>").astype(str)
    rows = []
    for key, g in df.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        n = len(g)
        k = int(g[correct_col].astype(bool).sum())
        chance = float(g[chance_col].mean()) if chance_col and chance_col in g else None
        rows.append({**dict(zip(keys, key)), **proportion_summary(k, n, chance, alpha),
                     "chance": chance if chance is not None else math.nan})
    return pd.DataFrame(rows)


def meta_breakdowns(decisions: pd.DataFrame, *, max_groups: int = 50, n_bins: int = 4) -> pd.DataFrame:
    """:func:`breakdown` for every ``meta_*`` column of a decisions frame, stacked in one long
    table (field, group, n, value, ci_low, ci_high, chance, p_vs_chance). Fields with more than
    ``max_groups`` categories (ids, free text) are skipped: no interval would be meaningful."""
    out = []
    for col in sorted(c for c in decisions.columns if c.startswith("meta_")):
        if decisions[col].astype(str).nunique() > max_groups and pd.to_numeric(decisions[col], errors="coerce").isna().any():
            continue
        b = breakdown(decisions, col, n_bins=n_bins).rename(columns={col: "group"})
        b.insert(0, "field", col[len("meta_"):])
        out.append(b)
    cols = ["field", "group", "n", "k", "value", "ci_low", "ci_high", "p_vs_chance", "chance"]
    return pd.concat(out, ignore_index=True)[cols] if out else pd.DataFrame(columns=cols)
