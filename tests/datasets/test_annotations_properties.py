"""The clips/events validators on generated tables (hypothesis): every valid table passes, and one
bad value anywhere is rejected with ``<file>: row N: <problem>`` naming the row it was put in."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tests.properties  # noqa: F401  (hypothesis profile)
from lalmbench.data.annotations import CLIP_COLUMNS, EVENT_COLUMNS, validate_clips, validate_events
from lalmbench.core.io import InputError

PATHS = st.sampled_from(["events.tsv", "data/my events.csv", "/abs/ann/strong.parquet"])
CLIP_IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789_-", min_size=1, max_size=10)
LABELS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 -'", min_size=1, max_size=20) \
    .map(str.strip).filter(bool)
SECONDS = st.floats(min_value=0.01, max_value=600, allow_nan=False)


@st.composite
def clips_tables(draw, min_size: int = 1) -> pd.DataFrame:
    ids = draw(st.lists(CLIP_IDS, min_size=min_size, max_size=8, unique=True))
    n = len(ids)
    return pd.DataFrame({
        "clip_id": ids,
        "audio_path": [f"audio/{c}.wav" for c in ids],
        "duration_s": draw(st.lists(st.one_of(st.just(np.nan), SECONDS), min_size=n, max_size=n)),
        "sample_rate": draw(st.lists(st.sampled_from([np.nan, 8000, 16000, 22050, 44100, 48000]), min_size=n,
                                     max_size=n)),
        "split": "test", "source": "generated"})


@st.composite
def valid_tables(draw, min_events: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A clips table and an events table that refers to it: 0 <= onset <= offset <= duration."""
    clips = draw(clips_tables())
    durations = clips.duration_s.fillna(600.0).to_numpy()
    fraction = st.floats(0, 1)
    drawn = draw(st.lists(st.tuples(st.integers(0, len(clips) - 1), fraction, fraction, LABELS,
                                    st.one_of(st.none(), LABELS)), min_size=min_events, max_size=15))
    rows = []
    for k, start, length, label, caption in drawn:
        onset = start * durations[k]
        rows.append({"clip_id": clips.clip_id.iloc[k], "onset_s": onset,
                     "offset_s": min(durations[k], onset + length * durations[k]), "label": label,
                     "caption": caption, "source": "generated"})
    events = pd.DataFrame(rows, columns=list(EVENT_COLUMNS))
    events = events.drop_duplicates(["clip_id", "onset_s", "offset_s", "label"]).reset_index(drop=True)
    return clips, events


def _rejected(call, path: str, pattern: str) -> str:
    with pytest.raises(InputError) as exc:
        call()
    msg = str(exc.value)
    assert re.match(re.escape(path) + pattern, msg), msg
    return msg


@given(valid_tables(), PATHS)
def test_every_valid_table_passes(tables, path):
    clips, events = tables
    validate_clips(clips, path)
    validate_events(events, path, clips.clip_id)


@st.composite
def bad_clips(draw) -> tuple[pd.DataFrame, int, str]:
    """A valid clips table with one bad value put into row ``i``; ``expected`` is the message after the row."""
    df = draw(clips_tables(min_size=2)).astype({"duration_s": object, "sample_rate": object})
    i = draw(st.integers(0, len(df) - 1))
    fault = draw(st.sampled_from(["clip_id", "duplicate", "audio_path", "duration", "sample_rate", "not a number"]))
    if fault == "duplicate":
        i = max(i, 1)
        j = draw(st.integers(0, i - 1))
        df.at[i, "clip_id"] = df.at[j, "clip_id"]
        expected = rf"duplicate clip_id '{re.escape(df.at[j, 'clip_id'])}' \(first at row {j + 1}\)"
    elif fault in ("clip_id", "audio_path"):
        df.at[i, fault] = draw(st.sampled_from(["", "  ", None]))
        expected = rf"{fault} is empty"
    elif fault == "duration":
        df.at[i, "duration_s"] = draw(st.one_of(st.floats(max_value=0), st.just(np.inf)))
        expected = r"duration_s must be a positive finite number of seconds"
    elif fault == "sample_rate":
        df.at[i, "sample_rate"] = draw(st.one_of(st.integers(max_value=0), st.just(16000.5), st.just(np.inf)))
        expected = r"sample_rate must be a positive integer"
    else:
        col = draw(st.sampled_from(["duration_s", "sample_rate"]))
        df.at[i, col] = draw(st.sampled_from(["ten", "16 kHz", "?"]))
        expected = rf"{col} is not a number"
    return df, i, expected


@given(bad_clips(), PATHS)
def test_a_bad_clips_value_is_rejected_naming_file_and_row(case, path):
    df, i, expected = case
    _rejected(lambda: validate_clips(df, path), path, rf": row {i + 1}: {expected}")


@st.composite
def bad_events(draw) -> tuple[pd.DataFrame, pd.DataFrame, int, str]:
    clips, df = draw(valid_tables(min_events=2))
    df = df.astype({"onset_s": object, "offset_s": object})
    i = draw(st.integers(0, len(df) - 1))
    fault = draw(st.sampled_from(["negative onset", "offset before onset", "not finite", "not a number", "label",
                                  "clip_id", "unknown clip", "duplicate"]))
    if fault == "negative onset":
        df.at[i, "onset_s"] = -draw(st.floats(min_value=1e-6, max_value=1e6))
        expected = r"onset_s is negative"
    elif fault == "offset before onset":
        df.at[i, "offset_s"] = df.at[i, "onset_s"] - draw(st.floats(min_value=1e-3, max_value=1e3))
        expected = r"offset_s \(.+\) is before onset_s \(.+\)"
    elif fault == "not finite":
        col = draw(st.sampled_from(["onset_s", "offset_s"]))
        df.at[i, col] = draw(st.sampled_from([np.nan, np.inf, -np.inf, None]))
        expected = rf"{col} is missing or not finite"
    elif fault == "not a number":
        col = draw(st.sampled_from(["onset_s", "offset_s"]))
        df.at[i, col] = draw(st.sampled_from(["1,5", "abc", "1.0s"]))
        expected = rf"{col} is not a number"
    elif fault in ("label", "clip_id"):
        df.at[i, fault] = draw(st.sampled_from(["", " ", "\t", None]))
        expected = rf"{fault} is empty"
    elif fault == "unknown clip":
        df.at[i, "clip_id"] = draw(CLIP_IDS.filter(lambda c: c not in set(clips.clip_id)))
        expected = r"clip_id is not in the clips table"
    else:
        i = max(i, 1)
        j = draw(st.integers(0, i - 1))
        for col in ("clip_id", "onset_s", "offset_s", "label"):
            df.at[i, col] = df.at[j, col]
        expected = r"exact duplicate of an earlier event"
    return clips, df, i, expected


@given(bad_events(), PATHS)
def test_a_bad_events_value_is_rejected_naming_file_and_row(case, path):
    clips, df, i, expected = case
    _rejected(lambda: validate_events(df, path, clips.clip_id), path, rf": row {i + 1}: {expected}")


@given(valid_tables(), PATHS, st.data())
def test_a_missing_column_is_named(tables, path, data):
    clips, events = tables
    col = data.draw(st.sampled_from(CLIP_COLUMNS))
    _rejected(lambda: validate_clips(clips.drop(columns=[col]), path), path,
              rf": clips table is missing column\(s\) \['{col}'\]")
    col = data.draw(st.sampled_from(EVENT_COLUMNS))
    _rejected(lambda: validate_events(events.drop(columns=[col]), path, clips.clip_id), path,
              rf": events table is missing column\(s\) \['{col}'\]")
