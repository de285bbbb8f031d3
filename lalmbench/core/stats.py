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
  discordant pairs), with Holm's correction over all pairs in a table.
"""
from __future__ import annotations

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


def paired_comparisons(correct: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """All pairwise exact McNemar tests between the columns (systems) of an items x systems
    boolean frame; Holm-adjusted p-values and a ``significant`` flag at ``alpha``.

    Rows with a missing value in either column of a pair are excluded from that pair and the
    count is reported (``n``), never silently imputed.
    """
    rows = []
    for a, b in combinations(list(correct.columns), 2):
        pair = correct[[a, b]].dropna()
        res = mcnemar_exact(pair[a].astype(bool).to_numpy(), pair[b].astype(bool).to_numpy())
        rows.append({"system_a": a, "system_b": b, **res})
    out = pd.DataFrame(rows, columns=["system_a", "system_b", "n", "a_only", "b_only", "acc_a", "acc_b",
                                      "diff", "p_value"])
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


def breakdown(decisions: pd.DataFrame, by: str | Sequence[str], *, correct_col: str = "correct",
              chance_col: str | None = "chance", alpha: float = 0.05, n_bins: int = 4) -> pd.DataFrame:
    """Accuracy per group of ``by`` with Wilson intervals and p-value against the group's chance.

    ``chance_col`` holds each item's chance level (1 / n_options); the group chance is its mean.
    Numeric fields with more than ``n_bins`` distinct values are grouped in quantile bins.
    Items whose group value is missing form their own group labelled ``<missing>``.
    """
    keys = [by] if isinstance(by, str) else list(by)
    missing = [k for k in keys + [correct_col] if k not in decisions.columns]
    if missing:
        raise KeyError(f"breakdown: column(s) {missing} not in decisions (have {list(decisions.columns)})")
    df = decisions.copy()
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
