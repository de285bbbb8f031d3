"""Strict clips/events validators: each problem names the file, the 1-based row and what was expected."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lalmbench.data.annotations import validate_clips, validate_events
from lalmbench.core.io import InputError


def _clips(**over):
    df = pd.DataFrame({"clip_id": ["a", "b", "c"], "audio_path": ["a.wav", "b.wav", "c.wav"],
                       "duration_s": [10.0, 10.0, np.nan], "sample_rate": [16000, 16000, None],
                       "split": "test", "source": "t"})
    for k, v in over.items():
        df[k] = v
    return df


def _events(**over):
    df = pd.DataFrame({"clip_id": ["a", "a", "b"], "onset_s": [0.0, 1.0, 2.0], "offset_s": [0.5, 2.0, 3.0],
                       "label": ["tone", "chirp", "hum"], "caption": [None, "a chirp", None], "source": "t"})
    for k, v in over.items():
        df[k] = v
    return df


def test_valid_tables_pass():
    validate_clips(_clips(), "clips.parquet")
    validate_events(_events(), "events.parquet", {"a", "b", "c"})


@pytest.mark.parametrize("over,msg", [
    ({"clip_id": ["a", "b", "a"]}, r"clips.parquet: row 3: duplicate clip_id 'a' \(first at row 1\)"),
    ({"clip_id": ["a", " ", "c"]}, r"clips.parquet: row 2: clip_id is empty"),
    ({"audio_path": ["a.wav", None, "c.wav"]}, r"clips.parquet: row 2: audio_path is empty"),
    ({"duration_s": [10.0, -1.0, 3.0]}, r"clips.parquet: row 2: duration_s must be a positive finite number"),
    ({"sample_rate": [16000, 0, 16000]}, r"clips.parquet: row 2: sample_rate must be a positive integer"),
])
def test_clip_problems_name_the_row(over, msg):
    with pytest.raises(InputError, match=msg):
        validate_clips(_clips(**over), "clips.parquet")


def test_missing_column_is_named():
    with pytest.raises(InputError, match=r"clips.parquet: clips table is missing column\(s\) \['duration_s'\]"):
        validate_clips(_clips().drop(columns=["duration_s"]), "clips.parquet")
    with pytest.raises(InputError, match=r"ev.tsv: events table is missing column\(s\) \['caption'\]"):
        validate_events(_events().drop(columns=["caption"]), "ev.tsv", {"a", "b"})


@pytest.mark.parametrize("over,msg", [
    ({"offset_s": [0.5, 0.9, 3.0]}, r"ev.tsv: row 2: offset_s \(0.9\) is before onset_s \(1\)"),
    ({"onset_s": [0.0, np.nan, 2.0]}, r"ev.tsv: row 2: onset_s is missing or not finite"),
    ({"offset_s": [0.5, 2.0, np.inf]}, r"ev.tsv: row 3: offset_s is missing or not finite"),
    ({"onset_s": ["0", "x", "2"]}, r"ev.tsv: row 2: onset_s is not a number \(onset_s='x'\)"),
    ({"onset_s": [-0.5, 1.0, 2.0]}, r"ev.tsv: row 1: onset_s is negative"),
    ({"clip_id": ["a", "a", "zz"]}, r"ev.tsv: row 3: clip_id is not in the clips table \(clip_id='zz'\)"),
    ({"label": ["tone", "", "hum"]}, r"ev.tsv: row 2: label is empty"),
    ({"onset_s": [0.0, 0.0, 2.0], "offset_s": [0.5, 0.5, 3.0], "label": ["tone", "tone", "hum"]},
     r"ev.tsv: row 2: exact duplicate of an earlier event"),
])
def test_event_problems_name_the_row(over, msg):
    with pytest.raises(InputError, match=msg):
        validate_events(_events(**over), "ev.tsv", {"a", "b", "c"})


def test_many_bad_rows_are_counted():
    ev = _events(offset_s=[0.0, 0.5, 1.0])
    ev["onset_s"] = [1.0, 2.0, 3.0]
    with pytest.raises(InputError, match=r"row 1: .*3 rows have offset_s < onset_s"):
        validate_events(ev, "ev.tsv", {"a", "b"})


def test_whitespace_is_collapsed_by_pythons_rules():
    """Every character Python counts as whitespace (no-break and ideographic spaces included) is
    collapsed, and no other (a zero-width space is text), as ``re.sub(r"\\s+", " ", x).strip()`` does."""
    import re
    import sys

    from lalmbench.data.annotations import collapse_whitespace_counted

    spaces = [chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace()]
    texts = [f"{c}dog{c}{c}barks{c}" for c in spaces] + ["dog\u200bbarks", "dog barks", None]
    out, n = collapse_whitespace_counted(pd.Series(texts, dtype=object))
    assert out.tolist()[:-1] == [re.sub(r"\s+", " ", t).strip() for t in texts[:-1]]
    assert out.isna().tolist()[-1] and n == len(spaces)
