"""A malformed annotation file stops the task build with the file, row and problem named."""
import json
import logging

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from lalmbench.data.annotations import fit_events_to_clips
from lalmbench.data.adapters.run import adapt_dataset_files
from lalmbench.core.io import InputError
from lalmbench.data.synth.scenes import generate_scenes
from lalmbench.tasks.run import build_task_files

CFG = {"task": {"family": "order", "params": {}}, "dataset": {}, "seed": 0, "scale": 1, "sample_rate": 16000}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("scenes")
    clips, events = generate_scenes(d, n_clips=4, seed=0)
    return clips, events


def _build(tmp_path, clips, events):
    clips.to_parquet(tmp_path / "clips.parquet")
    events.to_parquet(tmp_path / "events.parquet")
    build_task_files(CFG, dataset="d", task="t", clips_path=str(tmp_path / "clips.parquet"),
                     events_path=str(tmp_path / "events.parquet"), items_path=str(tmp_path / "t.jsonl"),
                     stats_path=str(tmp_path / "t.stats.json"))


def test_valid_tables_build(tmp_path, tables):
    _build(tmp_path, *tables)
    items = [json.loads(l) for l in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert items and all(it["answer_label"] in ("A", "B") for it in items)


@pytest.mark.parametrize("corrupt, message", [
    (lambda e: e.assign(offset_s=e.offset_s.where(e.index != 2, e.onset_s - 0.1)), r"row 3: .*offset"),
    (lambda e: e.assign(onset_s=e.onset_s.where(e.index != 4, float("nan"))), r"row 5: .*onset_s"),
    (lambda e: e.drop(columns=["label"]), r"missing column\(s\) \['label'\]"),
    (lambda e: e.assign(clip_id=e.clip_id.where(e.index != 1, "ghost")), r"row 2: .*(unknown|not in).*ghost"),
])
def test_bad_events_name_file_row_and_problem(tmp_path, tables, corrupt, message):
    clips, events = tables
    with pytest.raises(InputError, match=message) as exc:
        _build(tmp_path, clips, corrupt(events.copy()))
    assert "events.parquet" in str(exc.value)
    assert not (tmp_path / "t.jsonl").exists()  # nothing half-written


def test_duplicate_clip_ids_are_named(tmp_path, tables):
    clips, events = tables
    dup = pd.concat([clips, clips.iloc[[0]]], ignore_index=True)
    with pytest.raises(InputError, match=r"clips.parquet: row 5: .*duplicate.*scene-00000"):
        _build(tmp_path, dup, events)


# --- user files through an adapter: errors name the file and its data row -------------------------

def _adapt(tmp_path, csv_text: str, **params):
    """Run the adapter rule entry on a generic CSV; a.wav and b.wav exist under the audio root."""
    root = tmp_path / "audio"
    root.mkdir(exist_ok=True)
    for name in ("a.wav", "b.wav"):
        sf.write(root / name, np.zeros(1600, np.float32), 16000)
    ev = tmp_path / "ev.csv"
    ev.write_text(csv_text)
    out = tmp_path / "out"
    stats = adapt_dataset_files({"adapter": "generic", "params": {"events": str(ev), "audio_root": str(root),
                                                                  **params}},
                                dataset="g", clips_path=str(out / "clips.parquet"),
                                events_path=str(out / "events.parquet"), items_path=str(out / "items.jsonl"),
                                stats_path=str(out / "adapt.stats.json"))
    return ev, out, stats


HEAD = "clip_id,onset_s,offset_s,label,duration_s\n"


@pytest.mark.parametrize("rows, message", [
    # row 1's clip has no audio and is skipped: rows are still the file's data rows, not the derived table's
    ("gone.wav,0,1,dog,5\na.wav,0,1,dog,5\na.wav,2,3,cat,5\na.wav,0,1,dog,5\n",
     "row 4: exact duplicate of an earlier event (same clip_id, onset_s, offset_s, label) (label='dog')"),
    ("gone.wav,0,1,dog,5\na.wav,0,1,dog,5\na.wav,-2,3,cat,5\n",
     "row 3: onset_s is negative; expected seconds from the clip start (onset_s=-2.0)"),
    ("gone.wav,0,1,dog,5\na.wav,0,1,dog,5\nb.wav,3,2,cat,5\n",
     "row 3: offset_s (2) is before onset_s (3); expected onset_s <= offset_s"),
    ("gone.wav,0,1,dog,5\na.wav,0,1,dog,5\nb.wav,3,4,cat,-5\n",
     "row 3: duration_s must be a positive finite number of seconds (or empty if unknown) (duration_s=-5.0)"),
])
def test_adapter_errors_name_the_users_file_and_data_row(tmp_path, rows, message):
    with pytest.raises(InputError) as exc:
        _adapt(tmp_path, HEAD + rows, missing_audio="skip", columns={"duration_s": "duration_s"})
    assert str(exc.value) == f"{tmp_path / 'ev.csv'}: {message}"


def test_empty_annotation_file_is_named(tmp_path):
    with pytest.raises(InputError) as exc:
        _adapt(tmp_path, "")
    assert str(exc.value) == f"{tmp_path / 'ev.csv'}: empty file, expected a header with columns " \
                             "['clip_id', 'onset_s', 'offset_s', 'label']"


def test_newlines_and_tabs_in_labels_become_one_space(tmp_path):
    _, out, stats = _adapt(tmp_path, 'clip_id,onset_s,offset_s,label\na.wav,0,1,"dog\n barking"\n'
                                     'a.wav,2,3,"cat\t\tmeowing "\nb.wav,0,1,dog\nb.wav,2,3,bird\n',
                           clip_duration_s=5)
    assert pd.read_parquet(out / "events.parquet")["label"].tolist() == ["dog barking", "cat meowing", "dog", "bird"]
    assert stats["text_whitespace_collapsed"] == 2
    build_task_files(CFG, dataset="g", task="t", clips_path=str(out / "clips.parquet"),
                     events_path=str(out / "events.parquet"), items_path=str(tmp_path / "t.jsonl"),
                     stats_path=str(tmp_path / "t.stats.json"))
    texts = [o["text"] for line in (tmp_path / "t.jsonl").read_text().splitlines() for o in json.loads(line)["options"]]
    assert {"dog barking", "cat meowing"} <= set(texts)


@pytest.mark.parametrize("label, code", [("\x1b[31mdog", "001B"), ("dog\x00", "0000"), ("do\x7fg", "007F")])
def test_other_control_characters_in_labels_are_an_error(tmp_path, label, code):
    with pytest.raises(InputError) as exc:
        _adapt(tmp_path, f"clip_id,onset_s,offset_s,label\na.wav,0,1,cat\na.wav,2,3,{label}\n")
    assert str(exc.value) == (f"{tmp_path / 'ev.csv'}: row 2: label contains control character U+{code}; labels and "
                              f"captions must be printable text (label={label!r})")


# --- events outside their clip ---------------------------------------------------------------------

def test_events_beyond_the_clip_are_dropped_or_cut_and_counted(tmp_path, caplog):
    clips = pd.DataFrame({"clip_id": ["a", "b"], "audio_path": ["a.wav", "b.wav"], "duration_s": [5.0, 5.0],
                          "sample_rate": [16000, 16000], "split": "", "source": "t"})
    events = pd.DataFrame({"clip_id": ["a", "a", "b", "b", "b"], "onset_s": [0.0, 2.0, 0.0, 100.0, 3.0],
                           "offset_s": [1.0, 3.0, 1.0, 130.0, 7.0], "label": ["dog", "cat", "dog", "late bird", "horn"],
                           "caption": None, "source": "t"})
    with caplog.at_level(logging.INFO, logger="lalmbench.tasks"):
        _build(tmp_path, clips, events)
    stats = json.loads((tmp_path / "t.stats.json").read_text())
    assert stats["dropped"]["event:starts_after_clip_end"] == 1 and stats["events_cut_at_clip_end"] == 1
    assert stats["rows_read"] == 5
    texts = {o["text"] for line in (tmp_path / "t.jsonl").read_text().splitlines() for o in json.loads(line)["options"]}
    assert texts == {"dog", "cat", "horn"}
    assert "t: 1 events end after their clip's duration_s; their offset_s is cut at the clip end" in caplog.messages
    assert any(m.startswith("t: 2 items; dropped {") and "'event:starts_after_clip_end': 1" in m
               for m in caplog.messages)


def test_fit_events_to_clips_leaves_unknown_durations_alone():
    clips = pd.DataFrame({"clip_id": ["a", "b"], "duration_s": [np.nan, 2.0]})
    events = pd.DataFrame({"clip_id": ["a", "b", "b"], "onset_s": [50.0, 1.0, 2.0], "offset_s": [60.0, 2.5, 3.0]})
    out, late, cut = fit_events_to_clips(events, clips)
    assert (late, cut) == (1, 1)
    assert out.to_dict("list") == {"clip_id": ["a", "b"], "onset_s": [50.0, 1.0], "offset_s": [60.0, 2.0]}


def test_fit_events_to_clips_without_any_known_duration_keeps_every_event():
    clips = pd.DataFrame({"clip_id": ["a", "b"], "duration_s": [np.nan, np.nan]})
    events = pd.DataFrame({"clip_id": ["a", "b"], "onset_s": [50.0, 1.0], "offset_s": [60.0, 2.5]})
    out, late, cut = fit_events_to_clips(events, clips)
    assert (late, cut) == (0, 0)
    assert out.to_dict("list") == {"clip_id": ["a", "b"], "onset_s": [50.0, 1.0], "offset_s": [60.0, 2.5]}


def test_captions_stored_as_the_labels_are_read_once_and_others_as_stored(tmp_path):
    from lalmbench.core.io import read_parquet, read_parquet_with_copy

    same = pd.DataFrame({"clip_id": ["a", "b"], "label": ["dog barks", "cat"], "caption": ["dog barks", "cat"]})
    same.to_parquet(tmp_path / "same.parquet")
    got = read_parquet_with_copy(tmp_path / "same.parquet", "caption", of="label")
    assert got.equals(read_parquet(tmp_path / "same.parquet")) and list(got.columns) == ["clip_id", "label", "caption"]
    differ = same.assign(caption=["dog barks", "cats"])
    differ.to_parquet(tmp_path / "differ.parquet")
    assert read_parquet_with_copy(tmp_path / "differ.parquet", "caption", of="label")["caption"].tolist() == \
        ["dog barks", "cats"]
    same[["clip_id", "label"]].to_parquet(tmp_path / "none.parquet")
    assert list(read_parquet_with_copy(tmp_path / "none.parquet", "caption", of="label").columns) == ["clip_id", "label"]


def test_string_columns_read_as_categories_hold_the_stored_values_and_keep_the_stamp(tmp_path):
    """``read_parquet(categories=...)`` gives the file's strings as codes into its dictionary; a file
    stored otherwise (plain pages, one dictionary per row group) gives the same values; the checks'
    stamp is the same as for the strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from lalmbench.data.annotations import validated_stamp
    from lalmbench.core.io import read_parquet, write_parquet

    labels = [f"sound number {i % 3000} is heard" for i in range(20000)]
    events = pd.DataFrame({"clip_id": [f"c{i % 50}" for i in range(20000)], "onset_s": 0.0, "offset_s": 1.0,
                           "label": labels, "caption": labels, "source": "t"})
    clips = pd.DataFrame({"clip_id": [f"c{i}" for i in range(50)], "audio_path": "a.wav"})
    write_parquet(tmp_path / "e.parquet", events)
    got = read_parquet(tmp_path / "e.parquet", categories=("clip_id", "label", "onset_s"))
    assert list(got.columns) == list(events.columns)
    assert isinstance(got["label"].dtype, pd.CategoricalDtype) and len(got["label"].cat.categories) == 3000
    assert got["onset_s"].dtype == float and got["caption"].tolist() == labels == got["label"].tolist()
    assert validated_stamp(clips, got) == validated_stamp(clips, events)
    for name, kw in (("plain", {"dictionary_pagesize_limit": 1000}), ("groups", {"row_group_size": 3000})):
        pq.write_table(pa.Table.from_pandas(events), tmp_path / f"{name}.parquet", **kw)
        other = read_parquet(tmp_path / f"{name}.parquet", categories=("label",))
        assert other["label"].tolist() == labels, name


def test_blank_labels_are_found_with_or_without_padding():
    """The byte-level shortcut (no string starts or ends with a space) gives what stripping gives."""
    import pyarrow as pa

    from lalmbench.data.annotations import _blank, edges_plain

    plain = pd.Series(pd.arrays.ArrowStringArray(pa.array(["dog", "", None, "a b"])))
    padded = pd.Series(pd.arrays.ArrowStringArray(pa.array(["dog", " ", "\u00a0", "a b\t", None])))
    assert edges_plain(pa.array(plain.array)) and not edges_plain(pa.array(padded.array))
    assert _blank(plain).tolist() == [False, True, True, False]
    assert _blank(padded).tolist() == [False, True, True, False, True]
