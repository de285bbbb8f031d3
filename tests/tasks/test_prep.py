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


def test_texts_numbered_as_read_give_the_rows_and_representatives_of_sorted_codes():
    """``text_order=False`` (the next family) keeps a categorical's own numbering of the texts; rows
    tied in (clip, onset, offset) are still ordered by their texts, and each normalised text keeps
    the first of its spellings in code point order, as with sorted codes."""
    import numpy as np

    from lalmbench.tasks.prep import prepare_events
    from tests.tasks.conftest import make_tables

    rng = np.random.default_rng(0)
    spellings = ["dog barks", "Dog barks.", "DOG barks!", "a bell rings", "wind", "Wind", "zither", "hum"]
    rows = []
    for c in range(60):
        for _ in range(6):                      # few distinct onsets, so many rows tie with another
            lab = str(rng.choice(spellings))
            on = float(rng.integers(0, 3))
            rows.append((f"c{c:02d}", on, on + float(rng.integers(1, 3)), lab, lab))
    events, clips = make_tables(rows)
    events = events.drop_duplicates(["clip_id", "onset_s", "offset_s", "label"]).reset_index(drop=True)
    coded = events.assign(label=pd.Categorical(events["label"], categories=sorted(spellings, reverse=True)))
    coded["caption"] = coded["label"]
    sorted_ = prepare_events(events.assign(caption=events["label"]), clips, {}, repeats="keep")
    as_read = prepare_events(coded, clips, {}, repeats="keep", norm_order=False, text_order=False)
    assert list(as_read.texts) == sorted(spellings, reverse=True)          # the categorical's numbering
    assert as_read.ev["row"].tolist() == sorted_.ev["row"].tolist()
    assert as_read.texts[as_read.ev["tcode"]].tolist() == sorted_.texts[sorted_.ev["tcode"]].tolist()
    reps = as_read.text_uniques[as_read.ev["norm"]].tolist()
    assert reps == sorted_.text_uniques[sorted_.ev["norm"]].tolist()
    assert {"DOG barks!", "Wind"} <= set(reps) and not {"dog barks", "Dog barks.", "wind"} & set(reps)


def test_format_texts_is_str_format():
    from lalmbench.tasks.prep import format_texts

    texts = ["a dog", "{x}", 'say "hi"', ""]
    for template in ['What follows "{text}"?', "{text}", "{{literal}} {text} {{}}", "{text} and {text}",
                     "{text!r}", "{text:>8}", "no field"]:
        assert format_texts(template, texts) == [template.format(text=t) for t in texts], template
