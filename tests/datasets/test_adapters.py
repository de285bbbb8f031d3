"""Dataset adapters on real-format samples: tables, imported items, path safety, clear errors."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from lalmbench.data.annotations import validate_clips, validate_events
from lalmbench.data.adapters import adapt
from lalmbench.data.adapters.common import DatasetMissing, resolve_audio
from lalmbench.data.adapters.run import adapt_dataset_files
from lalmbench.tasks.run import import_task_files
from lalmbench.core.io import InputError, read_jsonl
from lalmbench.tasks import build_items

DATA = Path(__file__).resolve().parents[1] / "data" / "datasets"


def _touch_audio(root: Path, names, sr=16000, seconds=0.1):
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        sf.write(p, np.zeros(int(sr * seconds), np.float32), sr, format="WAV")


# --- TACoBeLAL ---------------------------------------------------------------------------

def _tacobelal_root(tmp_path):
    names = pd.read_csv(DATA / "tacobelal" / "annotations_strong.csv")["filename"].unique()
    root = tmp_path / "audio"
    _touch_audio(root, names)
    return root


def test_tacobelal_strong_csv_to_contract_tables(tmp_path):
    root = _tacobelal_root(tmp_path)
    res = adapt("tacobelal", {"annotations": str(DATA / "tacobelal" / "annotations_strong.csv"),
                              "audio_root": str(root)}, dataset="tacobelal")
    validate_clips(res.clips, "clips")
    validate_events(res.events, "events", res.clips["clip_id"])
    assert len(res.events) == 14 and len(res.clips) == 3
    row = res.events.iloc[0]
    assert row["clip_id"] == "102876.mp3" and row["onset_s"] == 0.0
    assert row["caption"] == row["label"] == "A solo trumpet plays a clean phrase in a jazz style."
    assert res.clips["audio_path"].iloc[0] == str(root / "102876.mp3")


def test_tacobelal_mcq_items_round_trip_unchanged_in_meaning(tmp_path):
    root = _tacobelal_root(tmp_path)
    src = DATA / "tacobelal" / "mcq_event_timeline_sample.jsonl"
    res = adapt("tacobelal", {"mcq_jsonl": str(src), "audio_root": str(root)}, dataset="tacobelal")
    orig = read_jsonl(src)
    assert len(res.items) == len(orig) == 11
    for it, o in zip(res.items, orig):
        assert it["id"] == o["id"] and it["question"] == o["question"]
        assert [x["label"] for x in it["options"]] == [x["label"] for x in o["options"]]
        assert [x["text"] for x in it["options"]] == [x["text"] for x in o["options"]]
        assert [x["type"] for x in it["options"]] == [x["type"] for x in o["options"]]
        assert it["answer_label"] == o["answer_label"] and it["answer_text"] == o["answer_text"]
        assert it["meta"]["answer_type"] == o["answer_type"]
        assert it["audio_path"] == str(root / o["audio_filename"])


def test_tacobelal_next_family_agrees_with_tacobelal_answers(tmp_path):
    """Our NEXT builder on the same strong annotations gives TACoBeLAL's answers."""
    root = _tacobelal_root(tmp_path)
    res = adapt("tacobelal", {"annotations": str(DATA / "tacobelal" / "annotations_strong.csv"),
                              "audio_root": str(root)}, dataset="t")
    items, stats = build_items("next", res.events, res.clips,
                               {"n_options": 3, "max_items_per_clip": 20, "tie_tolerance_s": 0.0}, seed=0,
                               dataset="t", task="next")
    expected = {(o["audio_filename"], o["base_event"]["text"]): o["answer_text"]
                for o in read_jsonl(DATA / "tacobelal" / "mcq_event_timeline_sample.jsonl")}
    ours = {(it["clip_id"], it["meta"]["base_text"]): it["answer_text"] for it in items}
    assert len(items) == 14 and stats["dropped"] == {}          # one item per event of the 3 clips
    assert set(expected) <= set(ours)                          # the curated file is a subset of bases
    assert {k: ours[k] for k in expected} == expected


def test_import_task_stamps_names_and_filters(tmp_path):
    root = _tacobelal_root(tmp_path)
    out = tmp_path / "data"
    cfg = {"adapter": "tacobelal", "params": {"mcq_jsonl": str(DATA / "tacobelal" / "mcq_event_timeline_sample.jsonl"),
                                              "annotations": str(DATA / "tacobelal" / "annotations_strong.csv"),
                                              "audio_root": str(root)}}
    adapt_dataset_files(cfg, dataset="tacobelal", clips_path=str(out / "clips.parquet"),
                        events_path=str(out / "events.parquet"), items_path=str(out / "items.jsonl"),
                        stats_path=str(out / "adapt.stats.json"))
    tcfg = {"task": {"dataset": "tacobelal", "family": "import", "params": {"where": {"answer_type": "none"}}},
            "seed": 0}
    import_task_files(tcfg, dataset="tacobelal", task="tb-next-none", clips_path=str(out / "clips.parquet"),
                      source_items=str(out / "items.jsonl"), items_path=str(tmp_path / "t.jsonl"),
                      stats_path=str(tmp_path / "t.stats.json"))
    items = read_jsonl(tmp_path / "t.jsonl")
    n_none = sum(1 for o in read_jsonl(DATA / "tacobelal" / "mcq_event_timeline_sample.jsonl")
                 if o["answer_type"] == "none")
    assert len(items) == n_none == 3
    assert {it["task"] for it in items} == {"tb-next-none"} and {it["dataset"] for it in items} == {"tacobelal"}
    stats = json.loads((tmp_path / "t.stats.json").read_text())
    assert stats["dropped"] == {"item:filtered_out_by_where": 8} and stats["rows_read"] == 11


# --- MMAU, Clotho ------------------------------------------------------------------------

def test_mmau_items_keep_answers_and_categories(tmp_path):
    src = DATA / "mmau" / "mmau-test-mini-sample.json"
    recs = json.loads(src.read_text())
    root = tmp_path / "mmau"
    _touch_audio(root, [r["audio_id"] for r in recs])
    res = adapt("mmau", {"items": str(src), "audio_root": str(root)}, dataset="mmau")
    assert len(res.items) == len(recs)
    for it, r in zip(res.items, recs):
        assert it["answer_text"] == r["answer"]
        assert [o["text"] for o in it["options"]] == list(dict.fromkeys(r["choices"]))
        assert it["options"][["A", "B", "C", "D", "E", "F", "G", "H"].index(it["answer_label"])]["text"] == r["answer"]
        assert it["meta"]["category"] == r["category"] and it["meta"]["sub-category"] == r["sub-category"]
        assert it["meta"]["difficulty"] == r["difficulty"]
    assert {len(it["options"]) for it in res.items} == {2, 4, 8}
    # the sample's two 5-choice MMAU items really repeat their answer choice: merged, counted
    assert res.stats["notes"] == {"item:duplicate_choices_merged": 2} and res.stats["dropped"] == {}
    assert [len(res.items[i]["options"]) for i in (9, 10)] == [4, 4]
    assert res.items[9]["meta"]["choices_merged_from"] == 5


def test_mmau_answer_not_in_choices_is_left_out_and_counted(tmp_path):
    recs = json.loads((DATA / "mmau" / "mmau-test-mini-sample.json").read_text())
    recs[2]["answer"] = "Banjo"
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(recs))
    root = tmp_path / "a"
    _touch_audio(root, [r["audio_id"] for r in recs])
    res = adapt("mmau", {"items": str(p), "audio_root": str(root)}, dataset="mmau")
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1}
    assert recs[2]["id"] not in {it["id"] for it in res.items} and len(res.items) == len(recs) - 1


def test_clotho_captioning_items_have_five_references(tmp_path):
    src = DATA / "clotho" / "clotho_captions_evaluation.csv"
    df = pd.read_csv(src)
    root = tmp_path / "evaluation"
    _touch_audio(root, df["file_name"])
    res = adapt("clotho", {"captions": str(src), "audio_root": str(root)}, dataset="clotho")
    assert len(res.items) == 4
    it = res.items[0]
    assert it["clip_id"] == "Santa Motor.wav" and len(it["references"]) == 5
    assert it["references"][0] == "A machine whines and squeals while rhythmically punching or stamping."
    assert it["options"] == [] and it["answer_label"] is None
    assert res.clips["split"].iloc[0] == "evaluation"


# --- AudioSet-strong, generic ------------------------------------------------------------

def _audioset_params(tmp_path, **kw):
    root = tmp_path / "as"
    _touch_audio(root, ["YxlGt805lTA_30000.wav", "-BHwNbGCZWs_0.wav"])
    p = {"annotations": str(DATA / "audioset_strong" / "audioset_eval_strong_sample.tsv"),
         "labels": str(DATA / "audioset_strong" / "mid_to_display_name.tsv"), "audio_root": str(root)}
    p.update(kw)
    return p


def test_audioset_strong_maps_mids_to_names(tmp_path):
    res = adapt("audioset_strong", _audioset_params(tmp_path), dataset="as")
    assert list(res.events["label"][:4]) == ["Speech", "Cheering", "Bark", "Bark"]
    assert res.clips["clip_id"].tolist() == ["YxlGt805lTA_30000", "-BHwNbGCZWs_0"]
    assert res.clips["duration_s"].tolist() == [10.0, 10.0]
    validate_events(res.events, "e", res.clips["clip_id"])
    items, stats = build_items("count", res.events, res.clips, {"max_items_per_clip": 5}, seed=0, dataset="as",
                               task="count")
    bark = [it for it in items if it["meta"]["text"] == "Bark"]
    assert len(bark) == 1 and bark[0]["answer_text"] == "2"


def test_audioset_unknown_mid_names_the_row(tmp_path):
    bad = tmp_path / "bad.tsv"
    text = (DATA / "audioset_strong" / "audioset_eval_strong_sample.tsv").read_text()
    bad.write_text(text.replace("/m/0bt9lr", "/m/xxxx"))
    with pytest.raises(InputError, match=r"bad.tsv: row 7: label '/m/xxxx' is not in"):
        adapt("audioset_strong", _audioset_params(tmp_path, annotations=str(bad)), dataset="as")


def test_missing_audio_error_and_skip_counts(tmp_path):
    p = _audioset_params(tmp_path)
    (Path(p["audio_root"]) / "-BHwNbGCZWs_0.wav").unlink()
    with pytest.raises(InputError, match=r"row 5: audio file .*-BHwNbGCZWs_0.wav does not exist"):
        adapt("audioset_strong", p, dataset="as")
    res = adapt("audioset_strong", dict(p, missing_audio="skip"), dataset="as")
    assert len(res.clips) == 1
    assert res.stats["dropped"] == {"clip:missing_audio": 1, "event:clip_missing_audio": 3}


def test_generic_column_mapping(tmp_path):
    src = DATA / "generic" / "desed_style.tsv"
    root = tmp_path / "desed"
    _touch_audio(root, pd.read_csv(src, sep="\t")["filename"].unique())
    res = adapt("generic", {"events": str(src), "audio_root": str(root), "clip_duration_s": 10.0,
                            "columns": {"clip_id": "filename", "onset_s": "onset", "offset_s": "offset",
                                        "label": "event_label"}}, dataset="desed")
    assert len(res.events) == 5 and len(res.clips) == 2
    assert res.events["label"].tolist()[:2] == ["Vacuum_cleaner", "Dog"]
    assert res.events["source"].iloc[0] == "desed"


# --- path safety and offline errors ------------------------------------------------------

@pytest.mark.parametrize("rel", ["../outside.wav", "a/../../outside.wav", "/etc/passwd"])
def test_audio_path_escaping_root_is_an_error(tmp_path, rel):
    with pytest.raises(InputError, match=r"row 2: audio path .* escapes the dataset's audio root"):
        resolve_audio(tmp_path / "root", ["ok.wav", rel], source="items.json", check_exists=False)


def test_absolute_path_inside_root_is_accepted(tmp_path):
    root = tmp_path / "root"
    paths, _ = resolve_audio(root, [str(root / "sub" / "x.wav")], source="s", check_exists=False)
    assert paths == [str(root / "sub" / "x.wav")]


def test_mmau_item_escaping_root_names_item(tmp_path):
    recs = json.loads((DATA / "mmau" / "mmau-test-mini-sample.json").read_text())[:2]
    recs[1]["audio_id"] = "../../secret.wav"
    p = tmp_path / "m.json"
    p.write_text(json.dumps(recs))
    (tmp_path / "root").mkdir()
    with pytest.raises(InputError, match=r"m.json: row 2: audio path '../../secret.wav' escapes"):
        adapt("mmau", {"items": str(p), "audio_root": str(tmp_path / "root"), "check_audio": False}, dataset="mmau")


def test_offline_missing_dataset_says_what_to_download(tmp_path):
    with pytest.raises(DatasetMissing, match=r"zenodo.org/records/15379789"):
        adapt("tacobelal", {"annotations": str(tmp_path / "nope.csv"), "audio_root": str(tmp_path)}, dataset="tb")
    with pytest.raises(DatasetMissing, match=r"params.labels is not set.*research.google.com/audioset"):
        adapt("audioset_strong", {"annotations": str(DATA / "audioset_strong" / "audioset_eval_strong_sample.tsv")},
              dataset="as")


def test_tacobelal_bad_row_named(tmp_path):
    root = _tacobelal_root(tmp_path)
    text = (DATA / "tacobelal" / "annotations_strong.csv").read_text().splitlines()
    parts = text[3].rsplit(",", 2)
    text[3] = f"{parts[0]},{parts[2]},{parts[1]}"           # swap onset/offset on data row 3
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match=r"bad.csv: row 3: onset/offset must be numbers with 0 <= onset <= offset"):
        adapt("tacobelal", {"annotations": str(bad), "audio_root": str(root)}, dataset="tb")
    res = adapt("tacobelal", {"annotations": str(bad), "audio_root": str(root), "invalid_rows": "drop"}, dataset="tb")
    assert res.stats["dropped"] == {"event:invalid_time": 1} and len(res.events) == 13


def test_tacobelal_caption_failing_the_checks_leaves_no_tables(tmp_path):
    """The events parquet is encoded while the tables are checked; a failed check leaves no file."""
    root = _tacobelal_root(tmp_path)
    text = (DATA / "tacobelal" / "annotations_strong.csv").read_text().splitlines()
    fn, caption, rest = text[2].split(",", 2)
    text[2] = f"{fn},{caption[:4]}\x01{caption[4:]},{rest}"      # a control character in data row 2
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(text) + "\n")
    out = tmp_path / "data"
    with pytest.raises(InputError, match=r"bad.csv: row 2: label contains control character U\+0001"):
        adapt_dataset_files({"adapter": "tacobelal", "params": {"annotations": str(bad), "audio_root": str(root)}},
                            dataset="tb", clips_path=str(out / "clips.parquet"), events_path=str(out / "events.parquet"),
                            items_path=str(out / "items.jsonl"), stats_path=str(out / "stats.json"))
    assert sorted(p.name for p in out.iterdir()) == []


def test_audioset_audio_pattern_fields(tmp_path):
    root = tmp_path / "desed"
    _touch_audio(root, ["YYxlGt805lTA_30.000_40.000.wav", "Y-BHwNbGCZWs_0.000_10.000.wav"])
    p = _audioset_params(tmp_path, audio_root=str(root), audio_pattern="Y{ytid}_{start_s:.3f}_{end_s:.3f}.wav")
    res = adapt("audioset_strong", p, dataset="as")
    assert [Path(x).name for x in res.clips["audio_path"]] == ["YYxlGt805lTA_30.000_40.000.wav",
                                                               "Y-BHwNbGCZWs_0.000_10.000.wav"]


def test_tacobelal_unextracted_zip_says_unzip(tmp_path):
    (tmp_path / "audio.zip").write_bytes(b"PK")
    with pytest.raises(DatasetMissing, match=r"audio.zip does: unzip it there first"):
        adapt("tacobelal", {"annotations": str(DATA / "tacobelal" / "annotations_strong.csv"),
                            "audio_root": str(tmp_path / "audio")}, dataset="tb")


def test_tacobelal_mcq_line_with_a_lone_surrogate_or_nested_too_deep_is_named(tmp_path):
    root = _tacobelal_root(tmp_path)
    lines = (DATA / "tacobelal" / "mcq_event_timeline_sample.jsonl").read_text().splitlines()
    rec = json.loads(lines[1])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(rec).replace(json.dumps(rec["id"]), '"id\\ud800"')] + lines[2:]))
    with pytest.raises(InputError, match=r"bad.jsonl:2: text that is not Unicode \(a lone surrogate"):
        adapt("tacobelal", {"mcq_jsonl": str(bad), "audio_root": str(root)}, dataset="tb")
    bad.write_text("\n".join([lines[0], '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}"] + lines[2:]))
    with pytest.raises(InputError, match=r"bad.jsonl:2: values nested too deep to read"):
        adapt("tacobelal", {"mcq_jsonl": str(bad), "audio_root": str(root)}, dataset="tb")
