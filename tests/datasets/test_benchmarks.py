"""Benchmark presets on records in each benchmark's published format: gold answers equal the source's,
option order and meta fields kept, items left out counted exactly (never silently, never fatal)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import soundfile as sf

from lalmbench.core.io import InputError, read_json, read_jsonl
from lalmbench.data.adapters import adapt
from lalmbench.data.adapters.benchmarks import official_protocol, preset, preset_names
from lalmbench.data.adapters.common import DatasetMissing
from lalmbench.data.adapters.reader import split_embedded

DATA = Path(__file__).resolve().parents[1] / "data" / "datasets"


def _touch(root: Path, names) -> None:
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        sf.write(p, np.zeros(160, np.float32), 16000, format="WAV")


def _wav_bytes() -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.zeros(160, np.float32), 16000, format="WAV")
    return buf.getvalue()


def test_every_preset_names_its_official_scorer_and_breakdowns():
    names = set(preset_names())
    assert {"mmau", "mmau_pro", "mmar", "mmsu", "air_bench", "sakura", "clotho_aqa", "audiocaps",
            "voicebench"} <= names
    assert official_protocol({"adapter": "mmau"})["official"] == "mmau_string_match"
    assert official_protocol({"adapter": "mmar"})["breakdowns"][:2] == ["modality", "category"]
    assert official_protocol({"adapter": "sakura", "params": {}})["breakdowns"] == [["track", "hop"]]
    assert official_protocol({"adapter": "air_bench", "params": {"split": "chat"}})["official"] == \
        "air_bench_chat_judge"
    assert official_protocol({"adapter": "mmau_pro"}) == {"official": ["mmau_pro_nearest_choice",
                                                                       "mmau_pro_instruction"],
                                                          "breakdowns": ["category"],
                                                          "kinds": ["mcq", "open", "instruction"],
                                                          "multi_audio": True}
    assert official_protocol({"adapter": "clotho"})["official"] is None


def test_unknown_preset_choice_says_did_you_mean():
    with pytest.raises(ValueError, match="did you mean 'chat'"):
        preset("air_bench", {"split": "chta"})


def test_mmau_list_valued_category_stays_a_list_and_where_matches_it(tmp_path):
    from lalmbench.tasks.imported import select_items

    src = DATA / "mmau" / "mmau-test-mini-list-category.json"
    recs = json.loads(src.read_text())
    _touch(tmp_path, [r["audio_id"] for r in recs])
    res = adapt("mmau", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmau")
    assert [it["meta"]["category"] for it in res.items] == [["Reasoning"], ["Reasoning"]]
    kept, _ = select_items(res.items, res.clips, {"where": {"category": "Reasoning"}}, seed=0, dataset="mmau",
                           task="t")
    assert len(kept) == 2


def test_mmau_sample_gold_equals_source_answer_with_order_and_meta(tmp_path):
    src = DATA / "mmau" / "mmau-test-mini-sample.json"
    recs = json.loads(src.read_text())
    _touch(tmp_path, [r["audio_id"] for r in recs])
    res = adapt("mmau", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmau")
    assert len(res.items) == len(recs) and res.stats["dropped"] == {}
    assert res.stats["notes"] == {"item:duplicate_choices_merged": 2}
    for it, r in zip(res.items, recs):
        assert it["answer_text"] == r["answer"].strip()
        # source order kept; a repeated choice text (two in this sample) is merged into its first place
        assert [o["text"] for o in it["options"]] == list(dict.fromkeys(c.strip() for c in r["choices"]))
        for k in ("dataset", "task", "split", "category", "sub-category", "difficulty"):
            assert it["meta"][k] == r[k]
        assert it["meta"]["kind"] == "mcq" and it["clip_id"] == r["audio_id"][2:]


def test_mmar_answer_not_in_choices_is_left_out_and_counted(tmp_path):
    src = DATA / "mmar" / "MMAR-meta.json"
    recs = json.loads(src.read_text())
    _touch(tmp_path, [r["audio_path"] for r in recs])
    res = adapt("mmar", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmar")
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1}
    assert [it["id"] for it in res.items] == ["0", "1", "3"]
    by_id = {r["id"]: r for r in recs}
    for it in res.items:
        r = by_id[it["id"]]
        assert it["answer_text"] == r["answer"] and [o["text"] for o in it["options"]] == r["choices"]
        for k in ("modality", "category", "sub-category", "language", "source", "url", "timestamp"):
            assert it["meta"][k] == r[k]


def _mmau_pro_parquet(path: Path) -> list[dict]:
    recs = [
        {"id": "p1", "audio_path": ["data/a.wav"], "question": "What plays?", "choices": ["piano", "drums"],
         "answer": "drums", "category": "music", "task_identifier": None, "kwargs": None},
        {"id": "p2", "audio_path": ["data/a.wav", "data/b.wav"], "question": "Which clip is louder?",
         "choices": ["first", "second"], "answer": "second", "category": "multi", "task_identifier": None,
         "kwargs": None},
        {"id": "p3", "audio_path": ["data/b.wav"], "question": "Describe the scene.", "choices": [],
         "answer": "A busy street with cars.", "category": "open", "task_identifier": None, "kwargs": None},
        {"id": "p4", "audio_path": ["data/b.wav"], "question": "Describe it in under 20 words.", "choices": [],
         "answer": "", "category": "instruction following", "task_identifier": "length_constraints:number_words",
         "kwargs": '{"relation": "less than", "num_words": 20}'},
        {"id": "p5", "audio_path": ["data/a.wav"], "question": "How many beats?", "choices": ["1", "3"],
         "answer": "2", "category": "sound", "task_identifier": None, "kwargs": None},
        {"id": "p6", "audio_path": ["data/gone.wav"], "question": "What plays?", "choices": ["x", "y"],
         "answer": "x", "category": "music", "task_identifier": None, "kwargs": None},
        {"id": "p7", "audio_path": ["data/a.wav"], "question": "What plays?", "choices": [],
         "answer": "piano", "category": "music", "task_identifier": None, "kwargs": None},
    ]
    pq.write_table(pa.Table.from_pylist(recs), path)
    return recs


def test_mmau_pro_keeps_multi_audio_open_and_instruction_items(tmp_path):
    src = tmp_path / "test.parquet"
    _mmau_pro_parquet(src)
    _touch(tmp_path, ["data/a.wav", "data/b.wav"])
    res = adapt("mmau_pro", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmau-pro")
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1, "item:missing_audio": 1,
                                    "item:too_few_choices": 1}
    assert res.stats["kinds"] == {"mcq": 2, "open": 1, "instruction": 1}
    it = {i["id"]: i for i in res.items}
    assert it["p2"]["clip_id"] == "data/a.wav" and it["p2"]["clip_ids"] == ["data/a.wav", "data/b.wav"]
    assert it["p2"]["audio_paths"] == [str(tmp_path / "data/a.wav"), str(tmp_path / "data/b.wav")]
    assert "audio_paths" not in it["p1"] and it["p1"]["answer_label"] == "B"
    assert it["p3"]["options"] == [] and it["p3"]["answer_label"] is None
    assert it["p3"]["references"] == ["A busy street with cars."] and it["p3"]["meta"]["kind"] == "open"
    assert it["p4"]["meta"]["instruction"] == {"task_identifier": "length_constraints:number_words",
                                               "kwargs": {"relation": "less than", "num_words": 20}}
    assert sorted(res.clips["clip_id"]) == ["data/a.wav", "data/b.wav"]


def test_mmsu_embedded_audio_written_once_by_content(tmp_path):
    wav = _wav_bytes()
    rows = [{"id": f"m{i}", "audio": {"bytes": wav, "path": f"m{i}.wav"}, "question": "Which word is stressed?",
             "choice_a": "I", "choice_b": "never", "choice_c": "said", "choice_d": "that", "answer_gt": ans,
             "task_name": "stress_detection", "category": "Perception", "sub-category": "Phonology",
             "sub-sub-category": "Prosody"} for i, ans in enumerate(["never", "said", ""])]
    shards = tmp_path / "mmsu" / "data"
    shards.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), shards / "test-00000-of-00001.parquet")
    out = tmp_path / "results" / "audio"
    res = adapt("mmsu", {"items": str(tmp_path / "mmsu"), "embedded_audio_dir": str(out)}, dataset="mmsu")
    assert res.stats["dropped"] == {"item:missing_answer": 1}
    assert [it["answer_text"] for it in res.items] == ["never", "said"]
    assert [it["answer_label"] for it in res.items] == ["B", "C"]
    assert len(list(out.iterdir())) == 1                 # same bytes -> one file
    assert Path(res.items[0]["audio_path"]).read_bytes() == wav
    assert res.items[0]["meta"]["sub-sub-category"] == "Prosody" and "audio" not in res.items[0]["meta"]


def test_air_bench_foundation_template_paths_and_drops(tmp_path):
    src = DATA / "air_bench" / "Foundation_meta.json"
    recs = json.loads(src.read_text())
    _touch(tmp_path, [f"{r['task_name']}_{r['dataset_name']}/{r['path']}" for r in recs[:3]])
    res = adapt("air_bench", {"items": str(src), "audio_root": str(tmp_path)}, dataset="air")
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1, "item:missing_audio": 1}
    a, b = res.items
    assert a["id"] == "0" and [o["text"] for o in a["options"]] == ["male", "female"] and a["answer_label"] == "B"
    assert b["answer_text"] == "sad" and b["audio_path"] == str(tmp_path / "Speech_Emotion_Recognition_IEMOCAP"
                                                                   / "Ses01F_impro01_F000.wav")
    assert b["meta"]["task_name"] == "Speech_Emotion_Recognition" and b["meta"]["dataset_name"] == "IEMOCAP"


def test_air_bench_chat_items_are_open(tmp_path):
    src = DATA / "air_bench" / "Chat_meta.json"
    recs = json.loads(src.read_text())
    _touch(tmp_path, [f"{r['task_name']}_{r['dataset_name']}/{r['path']}" for r in recs])
    res = adapt("air_bench", {"items": str(src), "audio_root": str(tmp_path), "split": "chat"}, dataset="air")
    assert [it["references"] for it in res.items] == [[r["answer_gt"]] for r in recs]
    assert {it["meta"]["kind"] for it in res.items} == {"open"}
    assert res.items[0]["meta"]["meta_info"] == recs[0]["meta_info"]


def test_split_embedded_options():
    assert split_embedded("What animal? (a) dog (b) crow (c) cat") == ("What animal?", ["dog", "crow", "cat"])


def test_sakura_data_dir_both_hops_with_track(tmp_path):
    root = DATA / "sakura" / "data"
    _touch(tmp_path, ["Animal/audio/dog_1.wav", "Animal/audio/crow_2.wav", "Emotion/audio/happy_1.wav"])
    res = adapt("sakura", {"items": str(root), "audio_root": str(tmp_path)}, dataset="sakura")
    assert res.stats["rows_read"] == 3 and res.stats["dropped"] == {"item:answer_not_in_choices": 1}
    got = {it["id"]: it for it in res.items}
    assert sorted(got) == ["Animal-crow_2.wav-multi", "Animal-crow_2.wav-single", "Animal-dog_1.wav-multi",
                           "Animal-dog_1.wav-single", "Emotion-happy_1.wav-single"]
    dog = got["Animal-dog_1.wav-multi"]
    assert dog["question"] == "What body part does the animal in the audio use to dig?"
    assert [o["text"] for o in dog["options"]] == ["Beak", "Fins", "Claws", "Wings"]
    assert dog["answer_label"] == "C" and dog["answer_text"] == "Claws"
    assert dog["meta"]["track"] == "Animal" and dog["meta"]["hop"] == "multi"
    assert dog["meta"]["attribute_label"] == "dog"
    single = adapt("sakura", {"items": str(root / "Animal" / "metadata.csv"), "audio_root": str(tmp_path),
                              "hop": "single"}, dataset="sakura")
    assert [it["answer_text"] for it in single.items] == ["dog", "crow"]


def test_clotho_aqa_three_annotators_one_item_yes_no_as_mcq(tmp_path):
    src = DATA / "clotho_aqa" / "clotho_aqa_test.csv"
    _touch(tmp_path, ["birds_morning.wav", "rain_roof.wav"])
    res = adapt("clotho_aqa", {"items": str(src), "audio_root": str(tmp_path)}, dataset="caqa")
    assert res.stats["rows_read"] == 12 and res.stats["dropped"] == {"item:no_majority_answer": 1}
    chirp, animal, rain = res.items
    assert [o["text"] for o in chirp["options"]] == ["yes", "no"] and chirp["answer_text"] == "yes"
    assert chirp["references"] == ["yes", "yes", "no"] and chirp["meta"]["confidence"] == ["yes", "yes", "maybe"]
    assert animal["meta"]["kind"] == "open" and animal["answer_text"] == "birds"
    assert animal["references"] == ["birds", "bird", "birds"]
    assert rain["answer_label"] == "A"


def test_audiocaps_long_format_five_references(tmp_path):
    src = DATA / "audiocaps" / "test.csv"
    _touch(tmp_path, ["7fmOlUlwoNg_20.wav", "6BJ455B1aAs_0.wav"])
    res = adapt("audiocaps", {"items": str(src), "audio_root": str(tmp_path)}, dataset="ac")
    assert [len(it["references"]) for it in res.items] == [5, 5]
    assert res.items[0]["references"][0] == "Constant rattling noise and sharp vibrations"
    assert res.items[0]["meta"]["audiocap_id"] == ["103549", "103548", "103541", "103540", "103542"]
    assert res.items[0]["question"] == "Describe the audio in one sentence."


def test_voicebench_subset_from_shards_and_ifeval_instruction(tmp_path):
    wav = _wav_bytes()
    (tmp_path / "vb" / "sd-qa").mkdir(parents=True)
    (tmp_path / "vb" / "ifeval").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([{"audio": {"bytes": wav, "path": "q.wav"}, "prompt": "Who wrote Hamlet?",
                                          "reference": "William Shakespeare"}]),
                   tmp_path / "vb" / "sd-qa" / "usa-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist([{"audio": {"bytes": wav, "path": "i.wav"}, "prompt": "Write 3 lines.",
                                          "key": 1000, "instruction_id_list": ["length_constraints:number_words"],
                                          "kwargs": [{"num_words": 3, "relation": "at least"}]}]),
                   tmp_path / "vb" / "ifeval" / "test-00000-of-00001.parquet")
    out = tmp_path / "audio"
    qa = adapt("voicebench", {"items": str(tmp_path / "vb"), "subset": "sd-qa", "embedded_audio_dir": str(out)},
               dataset="vb")
    assert qa.items[0]["references"] == ["William Shakespeare"] and qa.items[0]["meta"]["split"] == "usa"
    assert qa.items[0]["meta"]["prompt"] == "Who wrote Hamlet?"
    with pytest.raises(InputError, match="no question files matching"):
        adapt("voicebench", {"items": str(tmp_path / "vb"), "subset": "sd-qa", "split": "gbr",
                             "embedded_audio_dir": str(out)}, dataset="vb")
    ife = adapt("voicebench", {"items": str(tmp_path / "vb"), "subset": "ifeval", "embedded_audio_dir": str(out)},
                dataset="vb")
    assert ife.items[0]["meta"]["instruction"] == {"task_identifier": ["length_constraints:number_words"],
                                                   "kwargs": [{"num_words": 3, "relation": "at least"}]}


def test_hub_id_not_in_cache_gives_the_download_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DatasetMissing, match="hf download ddwang2000/MMSU --repo-type dataset --local-dir"):
        adapt("mmsu", {"items": "ddwang2000/MMSU"}, dataset="mmsu")


def test_nothing_usable_left_fails_naming_the_reasons(tmp_path):
    src = DATA / "mmar" / "MMAR-meta.json"
    with pytest.raises(InputError, match=r"no usable item .*'item:answer_not_in_choices': 1, 'item:missing_audio': 3"):
        adapt("mmar", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmar")


def test_import_task_of_one_kind_keeps_every_clip_of_multi_audio_items(tmp_path):
    from lalmbench.tasks.imported import select_items

    src = tmp_path / "test.parquet"
    _mmau_pro_parquet(src)
    _touch(tmp_path, ["data/a.wav", "data/b.wav"])
    res = adapt("mmau_pro", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmau-pro")
    mcq, stats = select_items(res.items, res.clips, {"kind": "mcq"}, seed=0, dataset="mmau-pro", task="mmau-pro")
    assert [it["id"] for it in mcq] == ["p1", "p2"] and stats["dropped"] == {"item:other_kind": 2}
    assert mcq[1]["audio_paths"] == [str(tmp_path / "data/a.wav"), str(tmp_path / "data/b.wav")]


def test_questions_adapter_letter_and_index_answers_from_choice_columns(tmp_path):
    src = tmp_path / "q.tsv"
    src.write_text("qid\tclip\tprompt\tA\tB\tC\tgold\n"
                   "1\tx.wav\tWhich?\tdog\tcat\tcow\tb\n"
                   "2\tx.wav\tWhich?\tdog\tcat\tcow\tz\n")
    _touch(tmp_path, ["x.wav"])
    cols = {"id": "qid", "question": "prompt", "choices": ["A", "B", "C"], "answer": "gold",
            "answer_format": "letter", "audio": "clip"}
    res = adapt("questions", {"items": str(src), "audio_root": str(tmp_path), "columns": cols}, dataset="q")
    assert [(it["id"], it["answer_text"]) for it in res.items] == [("1", "cat")]
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1}
    src.write_text("qid\tclip\tprompt\tA\tB\tC\tgold\n1\tx.wav\tWhich?\tdog\tcat\tcow\t2\n")
    res = adapt("questions", {"items": str(src), "audio_root": str(tmp_path),
                              "columns": dict(cols, answer_format="index")}, dataset="q")
    assert res.items[0]["answer_text"] == "cow" and res.items[0]["meta"] == {"kind": "mcq", "source": "questions"}


def test_save_to_disk_folder_with_embedded_audio(tmp_path):
    import pyarrow.ipc as ipc

    d = tmp_path / "saved"
    d.mkdir()
    table = pa.Table.from_pylist([{"id": "s1", "audio": {"bytes": _wav_bytes(), "path": None},
                                   "question": "Yes?", "choices": ["yes", "no"], "answer": "no"}])
    with ipc.new_stream(str(d / "data-00000-of-00001.arrow"), table.schema) as w:
        w.write_table(table)
    (d / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}))
    res = adapt("questions", {"items": str(d), "embedded_audio_dir": str(tmp_path / "a")}, dataset="s")
    assert res.items[0]["answer_label"] == "B" and res.items[0]["audio_path"].endswith(".wav")


def test_hub_id_resolved_from_the_local_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    snap = cache / "datasets--gamma-lab-umd--MMAU-Pro" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (cache / "datasets--gamma-lab-umd--MMAU-Pro" / "refs").mkdir()
    (cache / "datasets--gamma-lab-umd--MMAU-Pro" / "refs" / "main").write_text("abc123")
    _mmau_pro_parquet(snap / "test.parquet")
    _touch(tmp_path, ["data/a.wav", "data/b.wav"])
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(cache))
    res = adapt("mmau_pro", {"items": "gamma-lab-umd/MMAU-Pro", "audio_root": str(tmp_path)}, dataset="pro")
    assert len(res.items) == 4


def test_list_valued_category_scores_in_its_plain_breakdown_group(tmp_path):
    from lalmbench.scoring.mcq import score_mcq

    src = DATA / "mmau" / "mmau-test-mini-list-category.json"
    recs = json.loads(src.read_text())
    _touch(tmp_path, [r["audio_id"] for r in recs])
    items = adapt("mmau", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmau").items
    preds = [{"id": it["id"], "raw_output": it["answer_label"]} for it in items]
    decisions, _ = score_mcq(items, pd.DataFrame(preds), {})
    assert decisions["meta_category"].tolist() == ["Reasoning", "Reasoning"]


def test_mmar_blank_choice_item_is_kept_with_the_published_list_for_the_official_rule(tmp_path):
    # one of MMAR-meta.jsonl's four items whose choice list ends with a blank entry
    rec = {"id": "BV1Tm4y1h7JU_00-00-00_00-00-25", "audio_path": "./audio/BV1Tm4y1h7JU_00-00-00_00-00-25.wav",
           "question": "Did the person in the audio enter the room?", "choices": ["Entered", "Did not enter", ""],
           "answer": "Entered", "modality": "mix-sound-speech", "category": "Semantic Layer",
           "sub-category": "Content Analysis", "language": "zh"}
    src = tmp_path / "MMAR-meta.jsonl"
    src.write_text(json.dumps(rec) + "\n")
    _touch(tmp_path, [rec["audio_path"]])
    res = adapt("mmar", {"items": str(src), "audio_root": str(tmp_path)}, dataset="mmar")
    assert res.stats.get("dropped", {}) == {} and res.stats["notes"] == {"item:blank_choices_not_options": 1}
    (it,) = res.items
    assert [o["text"] for o in it["options"]] == ["Entered", "Did not enter"] and it["answer_label"] == "A"
    assert it["published"] == {"choices": ["Entered", "Did not enter", ""], "answer": "Entered"}
    from lalmbench.scoring.official import score_official

    per, summary = score_official({"scorer": "mmau_string_match"}, [it], ["The person entered."])
    assert per["official_score"].tolist() == [1.0] and summary["n_official"] == 1


def test_mmar_meta_jsonl_as_the_repository_ships_it_reads_like_the_json(tmp_path):
    recs = json.loads((DATA / "mmar" / "MMAR-meta.json").read_text())
    repo = tmp_path / "MMAR"
    repo.mkdir()
    (repo / "MMAR-meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    _touch(tmp_path, [r["audio_path"] for r in recs])
    for items in (repo / "MMAR-meta.jsonl", repo):     # the file, or the repository's folder
        res = adapt("mmar", {"items": str(items), "audio_root": str(tmp_path)}, dataset="mmar")
        assert [it["id"] for it in res.items] == ["0", "1", "3"]


def test_a_folder_is_read_through_the_benchmarks_own_file_names(tmp_path):
    """A user's outputs kept beside the question file are never read as questions; a preset with no
    file pattern refuses a folder, naming what it holds."""
    src = DATA / "mmau" / "mmau-test-mini-sample.json"
    recs = json.loads(src.read_text())
    folder = tmp_path / "MMAU"
    folder.mkdir()
    (folder / "mmau-test-mini.json").write_text(src.read_text())
    (folder / "qwen2-audio-outputs.jsonl").write_text(json.dumps({"id": "x", "model_prediction": "A"}) + "\n")
    _touch(tmp_path, [r["audio_id"] for r in recs])
    res = adapt("mmau", {"items": str(folder), "audio_root": str(tmp_path)}, dataset="mmau")
    assert len(res.items) == len(recs) and not res.stats["dropped"]
    (folder / "test.csv").write_text("audiocap_id,youtube_id,start_time,caption\n")
    with pytest.raises(InputError, match=r"MMAU: params.items is a folder, and 'audiocaps' names no file pattern to "
                                         r"find the benchmark's own files in it \(it holds mmau-test-mini.json, "
                                         r"qwen2-audio-outputs.jsonl, test.csv\); set params.items to the question "
                                         r"file, or params.pattern"):
        adapt("audiocaps", {"items": str(folder), "audio_root": str(tmp_path)}, dataset="ac")


def test_only_imported_outputs_scored_reads_no_audio_folder(tmp_path):
    """audio_needed: false (the workflow sets it when no model hears the dataset): no audio_root, or one
    that does not exist, and items whose files are absent are all kept, their paths as written."""
    src = DATA / "mmau" / "mmau-test-mini-sample.json"
    recs = json.loads(src.read_text())
    for params in ({}, {"audio_root": str(tmp_path / "never-downloaded")}):
        res = adapt("mmau", {"items": str(src), "audio_needed": False, **params}, dataset="mmau")
        assert len(res.items) == len(recs) and not res.stats["dropped"]
        assert res.stats["audio"].startswith("not read: only imported outputs")
    assert res.items[0]["audio_path"] == str(tmp_path / "never-downloaded" / recs[0]["audio_id"][2:])
    with pytest.raises(InputError, match=r"params.audio_root is not set"):
        adapt("mmau", {"items": str(src)}, dataset="mmau")


# --- hostile or broken question files -------------------------------------------------------------------
def _save_to_disk(folder: Path, rows: list[dict], state: object) -> Path:
    """A save_to_disk-style folder: one arrow shard and the given state.json content."""
    import pyarrow.ipc as ipc

    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows)
    with ipc.new_stream(str(folder / "data-00000-of-00001.arrow"), table.schema) as w:
        w.write_table(table)
    (folder / "state.json").write_text(state if isinstance(state, str) else json.dumps(state))
    return folder


ROW = {"id": "s1", "audio": {"bytes": _wav_bytes(), "path": None}, "question": "Yes?", "choices": ["yes", "no"],
       "answer": "no"}


def test_a_state_json_naming_a_file_outside_its_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    pq.write_table(pa.Table.from_pylist([dict(ROW, id="stolen")]), outside / "other.parquet")
    d = _save_to_disk(tmp_path / "a" / "b", [ROW], {"_data_files": [{"filename": "../../outside/other.parquet"}]})
    with pytest.raises(InputError, match=r"state.json: _data_files names '../../outside/other.parquet', which is "
                                         r"outside .*b; a save_to_disk folder lists only its own files"):
        adapt("questions", {"items": str(d), "embedded_audio_dir": str(tmp_path / "x")}, dataset="s")
    os_link = d / "link.parquet"
    os_link.symlink_to(outside / "other.parquet")
    (d / "state.json").write_text(json.dumps({"_data_files": [{"filename": "link.parquet"}]}))
    with pytest.raises(InputError, match="which is outside"):
        adapt("questions", {"items": str(d), "embedded_audio_dir": str(tmp_path / "x")}, dataset="s")


@pytest.mark.parametrize("state, message", [
    ("{not json", r"state.json: not a datasets save_to_disk state \(a JSON object with _data_files\)"),
    ("[1, 2]", r"state.json: not a datasets save_to_disk state"),
    (json.dumps({"_data_files": ["x"]}), r"state.json: _data_files must be a list of \{\"filename\": ...\} objects"),
    (json.dumps({"_data_files": [{"filename": 3}]}), r"_data_files must be a list"),
])
def test_a_broken_state_json_names_itself(tmp_path, state, message):
    d = _save_to_disk(tmp_path / "saved", [ROW], state)
    with pytest.raises(InputError, match=message):
        adapt("questions", {"items": str(d), "embedded_audio_dir": str(tmp_path / "x")}, dataset="s")


def test_rows_nested_too_deep_or_holding_a_lone_surrogate_are_left_out_counted(tmp_path):
    _touch(tmp_path, ["x.wav"])
    good = {"id": "ok", "audio": "x.wav", "question": "Which?", "choices": ["dog", "cat"], "answer": "cat"}
    deep = '{"id": "deep", "audio": "x.wav", "question": "Which?", "choices": ' + "[" * 100_000 + "]" * 100_000 + "}"
    lines = [json.dumps(good), '{"id": "bad\\ud800", "audio": "x.wav", "question": "Which?", '
             '"choices": ["dog", "cat"], "answer": "cat"}', deep,
             json.dumps(dict(good, id="text", choices="[" * 100_000 + "]" * 100_000))]
    src = tmp_path / "q.jsonl"
    src.write_text("\n".join(lines) + "\n")
    cols = {"id": "id", "question": "question", "choices": "choices", "answer": "answer", "audio": "audio"}
    res = adapt("questions", {"items": str(src), "audio_root": str(tmp_path), "columns": cols}, dataset="q")
    assert [it["id"] for it in res.items] == ["ok"]
    assert res.stats["dropped"] == {"item:invalid_unicode": 1, "item:nested_too_deep": 1, "item:too_few_choices": 1}
