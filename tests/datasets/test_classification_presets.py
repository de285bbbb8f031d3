"""Classification presets on fixtures laid out exactly as each release unpacks (MELD.Raw, VocalSound's
data/, Nonspeech7k's Zenodo files, TUT2017's evaluation folder, CochlScene's split folders, GTZAN's
genre folders, NSynth's examples.json): gold labels equal the source's, every item's options are the
benchmark's label set, items left out are counted; a wrong layout fails naming the file and what
was expected."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lalmbench.core.io import InputError
from lalmbench.data.adapters import adapt
from lalmbench.data.adapters.benchmarks import official_protocol, preset

MELD_HEADER = "Sr No.,Utterance,Speaker,Emotion,Sentiment,Dialogue_ID,Utterance_ID,Season,Episode,StartTime,EndTime"


def _audio(root: Path, names, fmt: str = "WAV") -> None:
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        sf.write(p, np.zeros(160, np.float32), 16000, format=fmt)


def _labels(res) -> list[str]:
    return [it["answer_text"] for it in res.items]


def test_every_classification_preset_names_family_rule_and_label_set():
    for name, family in (("meld", "speech_emotion"), ("vocalsound", "vocal_sound"), ("nonspeech7k", "vocal_sound"),
                         ("tut2017", "acoustic_scene"), ("cochlscene", "acoustic_scene"), ("gtzan", "music_genre"),
                         ("nsynth", "music_instrument"), ("crema_d", "speech_emotion")):
        spec = preset(name)
        assert spec["task_family"] == family and len(spec["classes"]) == len(set(spec["classes"])) >= 6
    assert official_protocol({"adapter": "meld"})["official"] == "qwen2_audio_exact"
    assert official_protocol({"adapter": "meld"})["official_also"][0]["scorer"] == "kimi_audio_judge"
    assert official_protocol({"adapter": "tut2017"})["official"]["scorer"] == "kimi_audio_judge"
    assert official_protocol({"adapter": "gtzan"})["official"] is None
    assert preset("esc50")["task_family"] == "sound_event" and preset("esc50")["kind"] == "open"
    assert preset("musiccaps")["task_family"] == "music_captioning"


def test_meld_test_csv_with_extracted_audio(tmp_path):
    raw = tmp_path / "MELD.Raw"
    rows = ['1,"Oh my God, he\'s lost it.",Phoebe,surprise,negative,0,0,4,7,"00:20:57,256","00:21:00,049"',
            "2,Okay.,Monica,neutral,neutral,0,1,4,7,\"00:21:00,100\",\"00:21:01,000\"",
            "3,Yay!,Rachel,joy,positive,3,2,1,5,\"00:01:00,100\",\"00:01:02,000\""]
    raw.mkdir()
    (raw / "test_sent_emo.csv").write_text(MELD_HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    clips = raw / "output_repeated_splits_test"
    _audio(clips, ["dia0_utt0.wav", "dia0_utt1.wav"])          # dia3_utt2's audio was never extracted
    res = adapt("meld", {"items": str(raw), "audio_root": str(clips), "missing_audio": "skip"}, dataset="meld")
    assert [it["id"] for it in res.items] == ["dia0_utt0", "dia0_utt1"]
    assert _labels(res) == ["surprise", "neutral"]
    assert [o["text"] for o in res.items[0]["options"]] == ["neutral", "joy", "sadness", "anger", "surprise",
                                                           "fear", "disgust"]
    assert res.items[0]["answer_label"] == "E" and res.items[0]["meta"]["Sentiment"] == "negative"
    assert res.items[0]["meta"]["Utterance"] == "Oh my God, he's lost it."
    assert res.stats["dropped"] == {"item:missing_audio": 1}


def test_meld_train_csv_headers_are_a_wrong_layout(tmp_path):
    src = tmp_path / "test_sent_emo.csv"
    src.write_text("Sr No.,Utterance,Speaker,Label,Dialogue_ID,Utterance_ID\n1,Hi,Ross,joy,0,0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test_sent_emo\.csv: no column 'Emotion' \(the answer\)"):
        adapt("meld", {"items": str(src), "audio_root": str(tmp_path)}, dataset="meld")


def _vocalsound(tmp_path: Path, records: list[dict]) -> Path:
    data = tmp_path / "vocalsound" / "data"
    (data / "datafiles").mkdir(parents=True)
    (data / "datafiles" / "te.json").write_text(json.dumps({"data": records}), encoding="utf-8")
    return data


def test_vocalsound_te_json_maps_audioset_ids_to_class_names(tmp_path):
    far = "/data/sls/scratch/yuangong/vocalsound/data/audio_16k/"
    data = _vocalsound(tmp_path, [{"wav": far + "f0003_0_cough.wav", "labels": "/m/01b_21"},
                                  {"wav": far + "m0083_0_sneeze.wav", "labels": "/m/01hsr_"},
                                  {"wav": far + "f0101_0_throatclearing.wav", "labels": "/m/0dl9sf8"},
                                  {"wav": far + "m0001_0_hum.wav", "labels": "/m/0xxx"}])
    _audio(data / "audio_16k", ["f0003_0_cough.wav", "m0083_0_sneeze.wav", "f0101_0_throatclearing.wav",
                                "m0001_0_hum.wav"])
    res = adapt("vocalsound", {"items": str(data), "audio_root": str(data / "audio_16k")}, dataset="vs")
    assert _labels(res) == ["Cough", "Sneeze", "Throat clearing"]
    assert res.items[0]["meta"]["labels_published"] == "/m/01b_21"
    assert res.items[2]["audio_path"].endswith("audio_16k/f0101_0_throatclearing.wav")
    assert res.stats["dropped"] == {"item:label_not_in_map": 1}


def test_vocalsound_without_labels_names_the_file_and_the_column(tmp_path):
    data = _vocalsound(tmp_path, [{"wav": "a.wav", "label": "cough"}])
    with pytest.raises(InputError, match=r"te\.json: value_maps names column 'labels'"):
        adapt("vocalsound", {"items": str(data), "audio_root": str(tmp_path)}, dataset="vs")


def test_nonspeech7k_test_metadata_csv(tmp_path):
    head = "Filename,File ID,Duration in ms,Class ID,Classname,Augment id,Augmentation type,source\n"
    body = ("111_4_0.wav,111,1000,4,screaming,0,Original,https://freesound.org/\n"
            "c_0_0.wav,5,1000,0,breath,0,Original,https://freesound.org/\n"
            "x_9_0.wav,7,1000,9,whistle,0,Original,https://freesound.org/\n")
    (tmp_path / "metadata of test set.csv").write_text(head + body, encoding="utf-8")
    _audio(tmp_path / "test", ["111_4_0.wav", "c_0_0.wav", "x_9_0.wav"])
    res = adapt("nonspeech7k", {"items": str(tmp_path), "audio_root": str(tmp_path / "test")}, dataset="ns")
    assert _labels(res) == ["screaming", "breath"]
    assert res.items[0]["meta"]["source"] == "https://freesound.org/"
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1}


def test_nonspeech7k_folder_without_its_metadata_names_the_pattern(tmp_path):
    (tmp_path / "metadata of train set .csv").write_text("Filename,Classname\na.wav,cough\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"no question files matching \['metadata of test set.csv'\]"):
        adapt("nonspeech7k", {"items": str(tmp_path), "audio_root": str(tmp_path)}, dataset="ns")


def test_tut2017_evaluation_meta_txt(tmp_path):
    root = tmp_path / "TUT-acoustic-scenes-2017-evaluation"
    root.mkdir()
    (root / "meta.txt").write_text("audio/1.wav\tbeach\naudio/2.wav\tcafe/restaurant\n"
                                   "audio/3.wav\tresidential_area\n", encoding="utf-8")
    _audio(root, ["audio/1.wav", "audio/2.wav", "audio/3.wav"])
    res = adapt("tut2017", {"items": str(root), "audio_root": str(root)}, dataset="tut")
    assert _labels(res) == ["beach", "cafe/restaurant", "residential_area"]
    assert [it["id"] for it in res.items] == ["audio/1.wav", "audio/2.wav", "audio/3.wav"]
    assert len(res.items[0]["options"]) == 15


def test_tut2017_comma_separated_meta_names_the_line(tmp_path):
    (tmp_path / "meta.txt").write_text("audio/1.wav\tbeach\naudio/2.wav,bus\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"meta\.txt: line 2 has 1 field\(s\).*expected 2 to 3: file, scene_label"):
        adapt("tut2017", {"items": str(tmp_path / "meta.txt"), "audio_root": str(tmp_path)}, dataset="tut")


def test_cochlscene_test_and_val_folders_scene_from_folder_name(tmp_path):
    root = tmp_path / "CochlScene"
    _audio(root, ["Test/Bus/Bus_01.wav", "Test/CrowdedIndoor/CI_02.wav", "Val/SubwayStation/SS_03.wav",
                  "Train/Bus/Bus_99.wav"])
    res = adapt("cochlscene", {"items": str(root)}, dataset="cochl")
    assert [(it["meta"]["split"], it["answer_text"]) for it in res.items] == [
        ("Test", "Bus"), ("Test", "CrowdedIndoor"), ("Val", "SubwayStation")]
    assert res.items[0]["clip_id"] == "Test/Bus/Bus_01.wav"


def test_cochlscene_pointed_at_one_split_says_what_layout_it_expects(tmp_path):
    _audio(tmp_path / "CochlScene" / "Test", ["Bus/Bus_01.wav"])
    with pytest.raises(InputError, match=r"no files matching \['Test/\*/\*.wav', 'Val/\*/\*.wav'\]; expected "
                                         r"<split>/<Scene>/<file>.wav"):
        adapt("cochlscene", {"items": str(tmp_path / "CochlScene" / "Test")}, dataset="cochl")


def test_gtzan_genre_folders_au_release(tmp_path):
    root = tmp_path / "genres"
    _audio(root, ["blues/blues.00000.au", "rock/rock.00042.au", "jazz/jazz.00054.au"], fmt="AU")
    res = adapt("gtzan", {"items": str(root)}, dataset="gtzan")
    assert _labels(res) == ["blues", "jazz", "rock"]
    assert [o["text"] for o in res.items[0]["options"]][:3] == ["blues", "classical", "country"]


def test_gtzan_file_in_another_genres_folder_is_named(tmp_path):
    root = tmp_path / "genres_original"
    _audio(root, ["blues/blues.00000.wav", "rock/blues.00001.wav"])
    with pytest.raises(InputError, match=r"rock/blues\.00001\.wav: its path does not match .*<genre>/<genre>\.000NN"):
        adapt("gtzan", {"items": str(root)}, dataset="gtzan")


def test_nsynth_examples_json_object_of_records(tmp_path):
    root = tmp_path / "nsynth-test"
    notes = {"bass_synthetic_068-049-025": {"note_str": "bass_synthetic_068-049-025", "pitch": 49, "velocity": 25,
                                            "instrument_family_str": "bass", "instrument_source_str": "synthetic",
                                            "qualities_str": ["dark"]},
             "keyboard_electronic_001-021-127": {"note_str": "keyboard_electronic_001-021-127", "pitch": 21,
                                                 "velocity": 127, "instrument_family_str": "keyboard",
                                                 "instrument_source_str": "electronic", "qualities_str": []}}
    root.mkdir()
    (root / "examples.json").write_text(json.dumps(notes), encoding="utf-8")
    _audio(root / "audio", [f"{k}.wav" for k in notes])
    res = adapt("nsynth", {"items": str(root), "audio_root": str(root / "audio")}, dataset="nsynth")
    assert [it["id"] for it in res.items] == list(notes)
    assert _labels(res) == ["bass", "keyboard"]
    assert res.items[0]["meta"]["instrument_source_str"] == "synthetic" and res.items[0]["meta"]["pitch"] == 49


def test_nsynth_examples_without_family_names_the_column(tmp_path):
    (tmp_path / "examples.json").write_text(json.dumps({"n1": {"note_str": "n1", "instrument": 3}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"examples\.json: no column 'instrument_family_str' \(the answer\)"):
        adapt("nsynth", {"items": str(tmp_path), "audio_root": str(tmp_path)}, dataset="nsynth")


ESC_HEADER = "filename,fold,target,category,esc10,src_file,take"


def test_esc50_meta_csv_open_items_with_the_category_as_reference(tmp_path):
    root = tmp_path / "ESC-50-master"
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "esc50.csv").write_text(ESC_HEADER + "\n1-100032-A-0.wav,1,0,dog,True,100032,A\n"
                                             "1-100038-A-14.wav,1,14,chirping_birds,False,100038,A\n"
                                             "5-9032-A-0.wav,5,0,dog,True,9032,A\n", encoding="utf-8")
    _audio(root / "audio", ["1-100032-A-0.wav", "1-100038-A-14.wav"])
    res = adapt("esc50", {"items": str(root), "audio_root": str(root), "missing_audio": "skip"}, dataset="esc")
    assert [(it["id"], it["answer_text"], it["references"]) for it in res.items] == [
        ("1-100032-A-0.wav", "dog", ["dog"]), ("1-100038-A-14.wav", "chirping_birds", ["chirping_birds"])]
    assert res.items[0]["options"] == [] and res.items[0]["meta"]["kind"] == "open"
    assert res.items[0]["meta"]["fold"] == "1" and res.items[0]["meta"]["esc10"] == "True"
    assert res.stats["dropped"] == {"item:missing_audio": 1}


def test_esc50_folder_without_meta_csv_names_the_pattern(tmp_path):
    _audio(tmp_path / "audio", ["1-100032-A-0.wav"])
    (tmp_path / "esc50.csv").write_text(ESC_HEADER + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"no question files matching \['meta/esc50.csv'\]"):
        adapt("esc50", {"items": str(tmp_path), "audio_root": str(tmp_path)}, dataset="esc")


def test_crema_d_emotion_from_the_file_name(tmp_path):
    _audio(tmp_path, ["AudioWAV/1001_DFA_ANG_XX.wav", "AudioWAV/1002_IEO_HAP_HI.wav", "AudioWAV/1003_TIE_XYZ_LO.wav"])
    res = adapt("crema_d", {"items": str(tmp_path)}, dataset="crema")
    assert [(it["id"], it["answer_text"], it["meta"]["level"]) for it in res.items] == [
        ("AudioWAV/1001_DFA_ANG_XX.wav", "anger", "XX"), ("AudioWAV/1002_IEO_HAP_HI.wav", "happy", "HI")]
    assert res.items[0]["meta"]["emotion_published"] == "ANG" and res.items[0]["meta"]["actor"] == "1001"
    assert res.stats["dropped"] == {"item:label_not_in_map": 1}


def test_crema_d_mp3_folder_only_is_a_wrong_layout(tmp_path):
    _audio(tmp_path, ["AudioWAV/1001_DFA_ANG.wav"])
    with pytest.raises(InputError, match=r"AudioWAV/1001_DFA_ANG\.wav: its path does not match .*expected "
                                         r"AudioWAV/<actor>_<sentence>_<emotion>_<level>\.wav"):
        adapt("crema_d", {"items": str(tmp_path)}, dataset="crema")


def test_musiccaps_public_csv_one_caption_item_per_segment(tmp_path):
    head = ("ytid,start_s,end_s,audioset_positive_labels,aspect_list,caption,author_id,is_balanced_subset,"
            "is_audioset_eval\n")
    rows = ("-0Gj8-vB1q4,30,40,\"/m/0140xf,/m/02cjck\",\"['low quality', 'sustained strings melody']\","
            "\"The low quality recording features a string melody.\",4,False,True\n"
            "-0SdAVK79lg,30,40,/m/0155w,\"['guitar']\",\"A song with a guitar.\",0,False,False\n")
    (tmp_path / "musiccaps-public.csv").write_text(head + rows, encoding="utf-8")
    _audio(tmp_path / "clips", ["-0Gj8-vB1q4.wav", "-0SdAVK79lg.wav"])
    res = adapt("musiccaps", {"items": str(tmp_path), "audio_root": str(tmp_path / "clips")}, dataset="mc")
    assert [it["references"] for it in res.items] == [["The low quality recording features a string melody."],
                                                      ["A song with a guitar."]]
    assert res.items[0]["meta"]["aspect_list"] == ["low quality", "sustained strings melody"]
    assert res.items[0]["meta"]["is_audioset_eval"] == "True" and res.items[0]["options"] == []


def test_musiccaps_csv_without_captions_names_the_column(tmp_path):
    (tmp_path / "musiccaps-public.csv").write_text("ytid,start_s,end_s\nabc,0,10\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"musiccaps-public\.csv: no column 'caption' \(the answer\)"):
        adapt("musiccaps", {"items": str(tmp_path), "audio_root": str(tmp_path)}, dataset="mc")


def _giantsteps(root: Path, kind: str, labels: dict[str, str]) -> None:
    ext = {"key": "key", "tempo": "bpm"}[kind]
    (root / "annotations" / kind).mkdir(parents=True)
    for track, text in labels.items():
        (root / "annotations" / kind / f"{track}.{ext}").write_text(text, encoding="utf-8")
    _audio(root / "audio", [f"{t}.mp3" for t in labels], fmt="WAV")


def test_giantsteps_key_files_give_the_key_as_one_of_24(tmp_path):
    _giantsteps(tmp_path, "key", {"1004923.LOFI": "F minor", "1007941.LOFI": "Eb major\n", "5377710.LOFI": "X dorian"})
    res = adapt("giantsteps_key", {"items": str(tmp_path)}, dataset="gsk")
    assert [(it["id"], it["answer_text"]) for it in res.items] == [("1004923.LOFI", "F minor"),
                                                                  ("1007941.LOFI", "Eb major")]
    assert len(res.items[0]["options"]) == 24 and res.items[0]["audio_path"].endswith("audio/1004923.LOFI.mp3")
    assert res.stats["dropped"] == {"item:answer_not_in_choices": 1}


def test_giantsteps_key_glob_on_audio_files_is_refused(tmp_path):
    (tmp_path / "annotations" / "key").mkdir(parents=True)
    (tmp_path / "annotations" / "key" / "1.LOFI.key").write_bytes(b"\xff\xfe" + b"\x00" * 5000)
    with pytest.raises(InputError, match=r"1\.LOFI\.key: 5002 bytes, too long for a label file"):
        adapt("giantsteps_key", {"items": str(tmp_path)}, dataset="gsk")


def test_giantsteps_tempo_bpm_files_open_items(tmp_path):
    _giantsteps(tmp_path, "tempo", {"1030011.LOFI": "126", "1114156.LOFI": "86"})
    res = adapt("giantsteps_tempo", {"items": str(tmp_path)}, dataset="gst")
    assert [(it["id"], it["references"]) for it in res.items] == [("1030011.LOFI", ["126"]), ("1114156.LOFI", ["86"])]
    assert res.items[0]["options"] == []


def test_giantsteps_tempo_without_annotations_says_what_it_expects(tmp_path):
    _audio(tmp_path / "audio", ["1.LOFI.mp3"])
    with pytest.raises(InputError, match=r"no files matching \['annotations/tempo/\*\.bpm'\]; expected "
                                         r"annotations/tempo/<track>\.LOFI\.bpm"):
        adapt("giantsteps_tempo", {"items": str(tmp_path)}, dataset="gst")


IEMOCAP_EVAL = """% [START_TIME - END_TIME] TURN_NAME EMOTION [V, A, D]

[6.2901 - 8.2357]\tSes01F_impro01_F000\tneu\t[2.5000, 2.5000, 2.5000]
C-E2:\tNeutral;\t()
C-E4:\tNeutral;\t()

[10.0100 - 11.3925]\tSes01F_impro01_F001\texc\t[3.0000, 3.5000, 3.0000]
[14.8872 - 18.0175]\tSes01F_impro01_M002\tfru\t[2.0000, 3.5000, 3.5000]
[20.0000 - 22.0000]\tSes01F_impro01_M003\txxx\t[2.5000, 3.0000, 3.0000]
"""


def test_iemocap_emoevaluation_lines_four_classes(tmp_path):
    root = tmp_path / "IEMOCAP_full_release"
    ev = root / "Session1" / "dialog" / "EmoEvaluation"
    (ev / "Categorical").mkdir(parents=True)
    (ev / "Ses01F_impro01.txt").write_text(IEMOCAP_EVAL, encoding="utf-8")
    (ev / "Categorical" / "Ses01F_impro01_e2_cat.txt").write_text("Ses01F_impro01_F000 :Neutral; ()\n")
    wav = "Session1/sentences/wav/Ses01F_impro01/"
    _audio(root, [wav + f"Ses01F_impro01_{u}.wav" for u in ("F000", "F001", "M002", "M003")])
    res = adapt("iemocap", {"items": str(root)}, dataset="iemocap")
    assert [(it["id"], it["answer_text"]) for it in res.items] == [("Ses01F_impro01_F000", "neutral"),
                                                                  ("Ses01F_impro01_F001", "happy")]
    assert res.items[1]["meta"]["emotion_published"] == "exc" and res.items[1]["meta"]["session"] == "1"
    assert res.items[0]["meta"]["start_s"] == "6.2901" and res.items[0]["audio_path"].endswith(
        wav + "Ses01F_impro01_F000.wav")
    assert res.stats["dropped"] == {"item:label_not_in_map": 2}


def test_iemocap_folder_of_other_text_says_what_lines_it_expects(tmp_path):
    ev = tmp_path / "Session2" / "dialog" / "EmoEvaluation"
    ev.mkdir(parents=True)
    (ev / "Ses02F_script01_1.txt").write_text("Ses02F_script01_1_F000 neutral\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"no line matching .* in 1 file\(s\) \(Ses02F_script01_1\.txt, \.\.\.\); "
                                         r"expected Session<n>/dialog/EmoEvaluation"):
        adapt("iemocap", {"items": str(tmp_path)}, dataset="iemocap")
