"""Shared preparation: the fast text normalisation agrees with Python's regex rules."""
from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from lalmbench.tasks.prep import normalise_text


def python_rules(texts: list[str]) -> list[str]:
    s = pd.Series(texts, dtype="string[python]")
    return (s.str.lower().str.replace(r"[^\w\s]", " ", regex=True).str.replace(r"\s+", " ", regex=True)
            .str.strip()).tolist()


def test_normalise_text_examples():
    texts = ["A dog barks.", "a dog  barks", "A DOG BARKS!", "A_b c-d", "x\x1cy", "a\x0bb",
             "Un chien aboie à côté.", "A kettle\u00a0whistles.", "狗在叫。", "  ", ""]
    got = normalise_text(pd.Series(texts, dtype="string")).tolist()
    assert got == ["a dog barks", "a dog barks", "a dog barks", "a_b c d", "x y", "a b",
                   "un chien aboie à côté", "a kettle whistles", "狗在叫", "", ""]
    assert got == python_rules(texts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text(), min_size=1, max_size=20))
def test_normalise_text_matches_python_regex_rules(texts):
    """ASCII texts go through pyarrow's RE2 with the classes spelled out; the result must be what
    Python's Unicode \\w and \\s give, control characters included."""
    assert normalise_text(pd.Series(texts, dtype="string")).tolist() == python_rules(texts)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=2, max_size=12).filter(lambda o: sum(o) > 0))
def test_answer_balance_chi_square_is_scipys(obs):
    from scipy.stats import chisquare

    from lalmbench.tasks.options import _chi

    got = _chi(obs, len(obs))[f"n_options={len(obs)}"]
    res = chisquare(obs)
    assert got == {"observed": obs, "chi2": float(res.statistic), "p": float(res.pvalue)}
