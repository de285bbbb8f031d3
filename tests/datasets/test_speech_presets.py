"""The ASR and speech-translation presets read their benchmarks' release layouts (LibriSpeech's
``*.trans.txt`` beside flac, AISHELL's one transcript file over a split's audio folder, Common Voice's
quoted-text TSV, FLEURS' header-less TSV, CoVoST 2's TSVs over Common Voice clips, Qwen2-Audio's
converted ``*_eval.jsonl``), and a wrong layout fails naming the file and what was expected.

Every fixture is written under tmp_path exactly as the release lays it out (audio files are a few
bytes: the reader checks they exist, it does not decode them)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lalmbench.core.io import InputError
from lalmbench.data.adapters import adapt


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"RIFF0000WAVE")


def _read(preset: str, params: dict):
    return adapt(preset, params, dataset=preset)


def librispeech(root: Path) -> Path:
    """LibriSpeech/test-clean/<speaker>/<chapter>/ with a trans.txt and flac files, and a test-other chapter."""
    ls = root / "LibriSpeech"
    for subset, spk, chap, lines in (("test-clean", "1089", "134686", ["HE HOPED THERE WOULD BE STEW FOR DINNER",
                                                                      "STUFF IT INTO YOU HIS BELLY COUNSELLED HIM"]),
                                     ("test-clean", "121", "121726", ["ALSO A POPULAR CONTRIVANCE"]),
                                     ("test-other", "1688", "142285", ["THERE'S IRON THEY SAY IN ALL OUR BLOOD"])):
        d = ls / subset / spk / chap
        d.mkdir(parents=True)
        ids = [f"{spk}-{chap}-{i:04d}" for i in range(len(lines))]
        (d / f"{spk}-{chap}.trans.txt").write_text("".join(f"{i} {t}\n" for i, t in zip(ids, lines)))
        for i in ids:
            _touch(d / f"{i}.flac")
    return ls


def test_librispeech_reads_the_release_layout(tmp_path):
    ls = librispeech(tmp_path)
    res = _read("librispeech", {"items": str(ls), "audio_root": str(ls), "subset": "test-clean"})
    items = {it["id"]: it for it in res.items}
    assert set(items) == {"1089-134686-0000", "1089-134686-0001", "121-121726-0000"}
    it = items["1089-134686-0001"]
    assert it["references"] == ["STUFF IT INTO YOU HIS BELLY COUNSELLED HIM"]
    assert it["audio_path"].endswith("test-clean/1089/134686/1089-134686-0001.flac")
    assert it["meta"]["speaker"] == "1089" and it["meta"]["chapter"] == "134686" and it["meta"]["kind"] == "open"
    assert it["meta"]["subset"] == "test-clean"
    other = _read("librispeech", {"items": str(ls), "audio_root": str(ls), "subset": "test-other"})
    assert [it["id"] for it in other.items] == ["1688-142285-0000"]


def test_librispeech_missing_flac_is_counted_and_a_wrong_layout_names_what_was_expected(tmp_path):
    ls = librispeech(tmp_path)
    (ls / "test-clean" / "121" / "121726" / "121-121726-0000.flac").unlink()
    res = _read("librispeech", {"items": str(ls), "audio_root": str(ls), "subset": "test-clean"})
    assert res.stats["dropped"] == {"item:missing_audio": 1} and len(res.items) == 2
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "transcripts.txt").write_text("1089-134686-0000 HELLO\n")
    with pytest.raises(InputError, match=r"no question files matching .*test-clean.*expected LibriSpeech/<subset>/"
                                         r"<speaker>/<chapter>/<speaker>-<chapter>\.trans\.txt"):
        _read("librispeech", {"items": str(flat), "audio_root": str(flat), "subset": "test-clean"})


def aishell1(root: Path) -> tuple[Path, Path]:
    base = root / "data_aishell"
    tr = base / "transcript" / "aishell_transcript_v0.8.txt"
    tr.parent.mkdir(parents=True)
    tr.write_text("BAC009S0002W0122 而 对 楼市 成交 抑制 作用 最 大 的 限 购\n"
                  "BAC009S0764W0121 甚至 出现 交易 几乎 停滞 的 情况\n"
                  "BAC009S0764W0122 一二线 城市 虽然 也 处于 调整 中\n", encoding="utf-8")
    _touch(base / "wav" / "train" / "S0002" / "BAC009S0002W0122.wav")
    for i in ("BAC009S0764W0121", "BAC009S0764W0122", "BAC009S0764W0199"):   # the last has no transcript
        _touch(base / "wav" / "test" / "S0764" / f"{i}.wav")
    return tr, base / "wav" / "test"


def test_aishell1_items_are_the_split_folders_audio_joined_to_the_transcript(tmp_path):
    tr, test = aishell1(tmp_path)
    res = _read("aishell1", {"items": str(tr), "audio_root": str(test)})
    assert [it["id"] for it in res.items] == ["BAC009S0764W0121", "BAC009S0764W0122"]
    assert res.items[0]["references"] == ["甚至 出现 交易 几乎 停滞 的 情况"]
    assert res.items[0]["meta"]["speaker"] == "S0764"
    assert res.stats["dropped"] == {"item:no_transcript": 1}
    assert res.stats["notes"] == {"rows:transcripts_of_other_splits": 1}
    with pytest.raises(InputError, match=r"no audio files matching '\*\*/\*\.wav'; expected data_aishell/"):
        _read("aishell1", {"items": str(tr), "audio_root": str(tr.parent)})


def test_aishell2_test_set_layout(tmp_path):
    d = tmp_path / "AISHELL-DEV-TEST-SET" / "iOS" / "test"
    d.mkdir(parents=True)
    (d / "trans.txt").write_text("IT0011W0001\t换一首歌\nIT0011W0002\t几点了\n", encoding="utf-8")
    for i in ("IT0011W0001", "IT0011W0002"):
        _touch(d / "wav" / "T0011" / f"{i}.wav")
    res = _read("aishell2", {"items": str(d / "trans.txt"), "audio_root": str(d)})
    assert [(it["id"], it["references"][0], it["meta"]["speaker"]) for it in res.items] == \
        [("IT0011W0001", "换一首歌", "T0011"), ("IT0011W0002", "几点了", "T0011")]


CV_HEADER = "client_id\tpath\tsentence\tup_votes\tdown_votes\tage\tgender\taccents\tvariant\tlocale\tsegment\n"


def common_voice(root: Path, locale: str, rows: list[tuple[str, str]]) -> Path:
    d = root / "cv-corpus-15.0-2023-09-08" / locale
    d.mkdir(parents=True)
    (d / "test.tsv").write_text(CV_HEADER + "".join(f"abc{i}\t{p}\t{s}\t2\t0\t\t\t\t\t{locale}\t\n"
                                                    for i, (p, s) in enumerate(rows)), encoding="utf-8")
    for p, _ in rows:
        _touch(d / "clips" / p)
    return d


def test_common_voice_tsv_keeps_quotes_as_text(tmp_path):
    d = common_voice(tmp_path, "en", [("common_voice_en_1.mp3", '"Hello," she said, "it\'s late."'),
                                      ("common_voice_en_2.mp3", "A plain sentence.")])
    res = _read("common_voice", {"items": str(d / "test.tsv"), "audio_root": str(d)})
    assert [it["references"][0] for it in res.items] == ['"Hello," she said, "it\'s late."', "A plain sentence."]
    assert res.items[0]["meta"]["locale"] == "en" and res.items[0]["id"] == "common_voice_en_1.mp3"
    folder = _read("common_voice", {"items": str(d), "audio_root": str(d)})
    assert len(folder.items) == 2


def test_common_voice_wrong_table_names_the_file_and_the_columns(tmp_path):
    d = tmp_path / "cv" / "fr"
    d.mkdir(parents=True)
    (d / "test.tsv").write_text("file\ttext\nx.mp3\tbonjour\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test\.tsv: no column\(s\) \['path', 'sentence'\]; expected cv-corpus"):
        _read("common_voice", {"items": str(d / "test.tsv"), "audio_root": str(d)})


def fleurs(root: Path) -> Path:
    d = root / "fleurs" / "data" / "cmn_hans_cn"
    rows = [("1843", "10004088536354799741.wav", "这是一个测试。", "这是一个测试", "这 是 一 个 测 试 |", "97920", "MALE"),
            ("1843", "1000503424526446416.wav", '他说"好"。', "他说好", "他 说 好 |", "66240", "FEMALE")]
    d.mkdir(parents=True)
    (d / "test.tsv").write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    for r in rows:
        _touch(d / "audio" / "test" / r[1])
    return d


def test_fleurs_header_less_tsv_and_language_from_the_folder(tmp_path):
    d = fleurs(tmp_path)
    res = _read("fleurs", {"items": str(d / "test.tsv"), "audio_root": str(d)})
    assert [it["references"][0] for it in res.items] == ["这是一个测试。", '他说"好"。']
    assert res.items[1]["meta"]["language"] == "cmn_hans_cn" and res.items[1]["meta"]["gender"] == "FEMALE"
    assert res.items[0]["audio_path"].endswith("audio/test/10004088536354799741.wav")


def test_fleurs_line_with_the_wrong_field_count_is_named(tmp_path):
    d = fleurs(tmp_path)
    with (d / "test.tsv").open("a", encoding="utf-8") as f:
        f.write("1844\tonly.wav\tthree fields\n")
    with pytest.raises(InputError, match=r"test\.tsv: line 3 has 3 fields, expected 7 \(fleurs_id, file_name"):
        _read("fleurs", {"items": str(d / "test.tsv"), "audio_root": str(d)})


def test_covost2_reads_the_test_rows_over_common_voice_clips(tmp_path):
    cv = tmp_path / "cv" / "en"
    tsv = tmp_path / "covost" / "covost_v2.en_de.tsv"
    tsv.parent.mkdir(parents=True)
    rows = [("common_voice_en_1.mp3", 'He said "no".', 'Er sagte "nein".', "c1", "test"),
            ("common_voice_en_2.mp3", "Train row.", "Zugzeile.", "c2", "train"),
            ("common_voice_en_3.mp3", "Good morning.", "Guten Morgen.", "c3", "test")]
    tsv.write_text("path\tsentence\ttranslation\tclient_id\tsplit\n" + "".join("\t".join(r) + "\n" for r in rows),
                   encoding="utf-8")
    for r in rows:
        _touch(cv / "clips" / r[0])
    res = _read("covost2", {"items": str(tsv), "audio_root": str(cv)})
    assert [it["references"][0] for it in res.items] == ['Er sagte "nein".', "Guten Morgen."]
    m = res.items[0]["meta"]
    assert (m["source_lang"], m["target_lang"], m["sentence"]) == ("en", "de", 'He said "no".')
    assert res.stats["notes"] == {"rows:outside_split=test": 1}
    bad = tmp_path / "covost" / "covost_v2.en_ja.tsv"
    bad.write_text("path\tsentence\ttranslation\nx.mp3\ta\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"covost_v2\.en_ja\.tsv: no column\(s\) \['split'\]; expected covost_v2"):
        _read("covost2", {"items": str(bad), "audio_root": str(cv)})


def test_qwen2_audio_converted_files(tmp_path):
    audio = tmp_path / "data"
    lines = [{"audio": "librispeech/test-clean/1089-134686-0000.flac", "prompt": "<|startoftranscription|><|en|>",
              "source": "librispeech_test_clean", "gt": "he hoped there would be stew for dinner"},
             {"audio": "librispeech/test-other/1688-142285-0000.flac", "prompt": "<|startoftranscription|><|en|>",
              "source": "librispeech_test_other", "gt": "there's iron they say"}]
    for ln in lines:
        _touch(audio / ln["audio"])
    f = tmp_path / "asr" / "librispeech_eval.jsonl"
    f.parent.mkdir()
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    res = _read("qwen2_audio_asr", {"items": str(f), "audio_root": str(audio)})
    assert [(it["meta"]["source"], it["meta"]["eval_set"], it["references"][0]) for it in res.items] == \
        [("librispeech_test_clean", "librispeech", lines[0]["gt"]), ("librispeech_test_other", "librispeech", lines[1]["gt"])]
    st = tmp_path / "st" / "covost2_eval.jsonl"
    st.parent.mkdir()
    st.write_text(json.dumps({"audio": lines[0]["audio"], "prompt": "<|en|>", "source": "covost2_en_de_test",
                              "gt": "Er hoffte"}) + "\n", encoding="utf-8")
    assert _read("qwen2_audio_st", {"items": str(st), "audio_root": str(audio)}).items[0]["references"] == ["Er hoffte"]
    wrong = tmp_path / "asr" / "aishell2_eval.jsonl"
    wrong.write_text(json.dumps({"wav": "a.wav", "text": "你好"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"aishell2_eval\.jsonl: no column\(s\) \['audio', 'source', 'gt'\]; "
                                         r"expected <set>_eval\.jsonl lines"):
        _read("qwen2_audio_asr", {"items": str(wrong), "audio_root": str(audio)})


def test_speech_presets_in_a_config_get_their_report_rule_with_its_settings():
    """A config naming the presets: each ASR/ST task is open and scored by its scoring block, and the
    dataset's official rule is the preset's, settings (language, the field it is read from) included."""
    from lalmbench.workflow.config import validate_config
    from tests.workflow import ROOT

    cfg = {"seed": 0,
           "datasets": {"ls": {"adapter": "librispeech", "params": {"items": "x", "audio_root": "x",
                                                                    "subset": "test-clean"}},
                        "cv": {"adapter": "common_voice", "params": {"items": "x/test.tsv", "audio_root": "x"}},
                        "st": {"adapter": "covost2", "params": {"items": "x/covost_v2.en_de.tsv", "audio_root": "x"}}},
           "tasks": {"ls": {"dataset": "ls", "family": "import", "scoring": {"kind": "asr"}},
                     "cv": {"dataset": "cv", "family": "import", "scoring": {"kind": "asr"}},
                     "st": {"dataset": "st", "family": "import", "scoring": {"kind": "translation",
                                                                             "target_lang": "de"}}},
           "models": {"qwen": {"backend": "hf", "model_id": "Qwen/Qwen2-Audio-7B-Instruct", "family": "qwen2_audio"}},
           "conditions": ["audio"], "prompts": ["caption"]}
    out = validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)
    assert out["datasets"]["ls"]["official"] == [{"scorer": "qwen2_audio_wer", "language": "en",
                                                  "breakdown": ["subset", "speaker"]}]
    assert out["datasets"]["cv"]["official"][0]["language_field"] == "locale"
    assert out["datasets"]["st"]["official"] == [{"scorer": "qwen2_audio_bleu", "target_field": "target_lang",
                                                  "breakdown": ["target_lang"]}]
    assert {t: c["params"]["kind"] for t, c in out["tasks"].items()} == {"ls": "open", "cv": "open", "st": "open"}



def test_a_speech_presets_official_also_rule_named_in_the_config_gets_the_presets_settings():
    """``official_also`` is one key for classification and speech presets: naming Kimi-Audio's WER rule
    on LibriSpeech fills in the language the preset gives it, beneath what the user wrote."""
    from lalmbench.workflow.config import expand_import_tasks

    cfg = {"datasets": {"ls": {"adapter": "librispeech", "official": "kimi_audio_wer",
                               "params": {"items": "x", "audio_root": "x", "subset": "test-clean"}},
                        "fl": {"adapter": "fleurs", "params": {"items": "x/test.tsv", "audio_root": "x"},
                               "official": [{"scorer": "kimi_audio_wer", "breakdown": ["gender"]}]}},
           "tasks": {"ls": {"dataset": "ls", "family": "import", "scoring": {"kind": "asr"}},
                     "fl": {"dataset": "fl", "family": "import", "scoring": {"kind": "asr"}}}}
    expand_import_tasks(cfg)
    assert cfg["datasets"]["ls"]["official"] == {"scorer": "kimi_audio_wer", "language": "en"}
    fl = cfg["datasets"]["fl"]["official"][0]
    assert fl["language_field"] == "language" and fl["breakdown"] == ["gender"]

def test_kimi_audio_converted_files_wenetspeech_subsets(tmp_path):
    """Kimi-Audio-Evalkit's WenetSpeech.jsonl: absolute audio paths inside the download folder, the
    test_net and test_meeting subsets; a Qwen2-Audio-format file is refused naming the columns."""
    rows = []
    for i, (subset, name) in enumerate((("test_net", "TEST_NET_Y0000000009_26OUqTzrzv0_S00624.wav"),
                                        ("test_meeting", "TEST_MEETING_T0000000001_S00000.wav"))):
        a = tmp_path / "wenetspeech" / "audios" / "data" / f"cuts_{subset.upper()}.00000000" / name[:3] / name
        _touch(a)
        rows.append({"index": i, "audio_path": str(a), "question": "请把这段语音转录成文本。", "answer": f"第{i}句",
                     "subset": subset, "task_type": "understanding"})
    f = tmp_path / "WenetSpeech.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    res = _read("kimi_audio_asr", {"items": str(f), "audio_root": str(tmp_path)})
    assert [(it["id"], it["meta"]["subset"], it["meta"]["eval_set"], it["references"][0]) for it in res.items] == \
        [("0", "test_net", "WenetSpeech", "第0句"), ("1", "test_meeting", "WenetSpeech", "第1句")]
    qwen = tmp_path / "Fleurs-zh.jsonl"
    qwen.write_text(json.dumps({"audio": "a.wav", "prompt": "", "source": "fleurs", "gt": "你好"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"Fleurs-zh\.jsonl: no column\(s\) \['audio_path', 'answer', 'subset'\]; "
                                         r"expected <DATASET_NAME>\.jsonl lines"):
        _read("kimi_audio_asr", {"items": str(qwen), "audio_root": str(tmp_path)})


@pytest.mark.parametrize("name", ["librispeech", "aishell1", "aishell2", "common_voice", "fleurs", "covost2",
                                  "qwen2_audio_asr", "qwen2_audio_st", "kimi_audio_asr"])
def test_each_speech_preset_names_known_rules_a_family_and_its_layout(name):
    from lalmbench.data.adapters.benchmarks import preset
    from lalmbench.scoring.official import SCORERS, official_spec

    spec = preset(name, {"subset": "test-clean"} if name == "librispeech" else {})
    rules = [official_spec(r) for r in [spec["official"], *(spec.get("official_also") or [])]]
    assert all(SCORERS[r["scorer"]].kind == "open" for r in rules)
    assert spec["task_family"] in ("asr", "translation") and spec["layout"] and spec["kinds"] == ["open"]
