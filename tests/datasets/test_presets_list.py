"""python -m lalmbench.data.presets list: one row per preset file, with its family and rules."""
from lalmbench.data.adapters.benchmarks import preset_names
from lalmbench.data.presets import COLUMNS, main


def test_list_prints_every_preset_with_its_rules(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == list(COLUMNS)
    rows = {line.split("\t")[0]: line.split("\t") for line in lines[1:]}
    assert sorted(rows) == preset_names()
    assert rows["meld"][1:5] == ["speech_emotion", "mcq", "qwen2_audio_exact", "kimi_audio_judge"]
    assert rows["tut2017"][3] == "kimi_audio_judge" and rows["esc50"][2] == "open"
    assert rows["mmau_pro"][3] == "mmau_pro_nearest_choice, mmau_pro_instruction"


def test_anything_but_list_is_a_usage_error(capsys):
    assert main([]) == 2 and "usage" in capsys.readouterr().err
