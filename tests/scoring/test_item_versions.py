"""Imported outputs made on another revision of the benchmark file: counted per field, flagged in
words, and (items_from: predictions) scored against the item each output was made on."""
import json

import pandas as pd

from lalmbench.scoring.item_versions import compare, differences, flag, for_run, own_item

OPTS = [{"label": "A", "text": "dog"}, {"label": "B", "text": "cat"}, {"label": "C", "text": "cow"}]


def _item(i, question="Which animal?", options=OPTS, answer="B"):
    text = next(o["text"] for o in options if o["label"] == answer)
    return {"id": i, "question": question, "options": options, "answer_label": answer, "answer_text": text,
            "meta": {"category": "sound"}}


def test_each_field_is_compared_as_the_reader_keeps_it():
    item = _item("a")
    assert differences({"question": " Which  animal? ", "choices": ["dog", "cat", "cow"], "answer": "cat"}, item) == []
    assert differences({"answer": "B"}, item) == []                                 # a gold letter (TACoBeLAL)
    assert differences({"choices": ["dog", "cat", "cat", "cow"]}, item) == ["choices"]  # our file lists it once
    assert differences({"question": "Which animal is it?", "choices": ["cat", "dog", "cow"], "answer": "dog"},
                       item) == ["question", "choices", "answer"]
    assert differences({"question": "which animal?"}, item) == ["question"]          # a corrected typo counts


def test_a_list_the_reader_kept_as_published_is_compared_entry_by_entry():
    """MMAR's blank choice and MMAU's repeated ones are no options, but they are the file's list: an
    output made on that same list is the same version (the released MMAR outputs all carry
    ['Entered', 'Did not enter', '']); one made on the list without the blank is not."""
    mmar = {**_item("m", question="Did he enter?", options=OPTS[:2], answer="A"),
            "published": {"choices": ["dog", "cat", ""], "answer": "dog"}}
    assert differences({"question": "Did he enter?", "choices": ["dog", "cat", ""]}, mmar) == []
    assert differences({"choices": ["dog", "cat"]}, mmar) == ["choices"]
    assert differences({"choices": ["dog", "", "cat"]}, mmar) == ["choices"]
    padded = {**_item("p"), "published": {"choices": ["dog", "cat ", "cat", "cow"], "answer": "cat "}}
    assert differences({"choices": ["dog", "cat", "cat", "cow"], "answer": "cat "}, padded) == []
    s = compare({"m": {"choices": ["dog", "cat", ""]}}, [mmar], ["m"])
    assert s["differ"] == 0 and flag(s) is None


def test_an_item_rebuilt_from_its_output_is_read_by_the_official_rule_as_that_file_lists_it():
    """items_from: predictions: the official rule reads the output's own list and answer, not the
    file read today (whose kept list names another answer), and a blank own choice is no option."""
    from lalmbench.scoring.official import mmau_string_match

    today = {**_item("e", options=[{"label": "A", "text": "Thomas Edison"}, {"label": "B", "text": "Nikola Tesla"},
                                   {"label": "C", "text": "Alexander Graham Bell"}], answer="C"),
             "published": {"choices": ["Thomas Edison", "Nikola Tesla", "Alexander Graham Bell "],
                           "answer": "Alexander Graham Bell "}}
    own = {"choices": ["Thomas Edison", "Nikola Tesla", "Alexander Graham Bell"], "answer": "Thomas Edison"}
    rebuilt = own_item(own, today)
    assert rebuilt["answer_label"] == "A" and "published" not in rebuilt
    assert [r.score for r in mmau_string_match([today, rebuilt], ["Thomas Edison"] * 2, {})] == [0.0, 1.0]
    blank = own_item({"choices": ["Entered", "Did not enter", ""], "answer": "Entered"}, _item("b"))
    assert [o["text"] for o in blank["options"]] == ["Entered", "Did not enter"]
    assert blank["published"] == {"choices": ["Entered", "Did not enter", ""], "answer": "Entered"}
    assert mmau_string_match([blank], ["Entered"], {})[0].reason == "choices as published (a blank choice kept)"


def test_drift_is_counted_per_field_and_flagged_in_words():
    items = [_item(f"i{k}") for k in range(6)]
    own = {"i0": {"question": "Which animal?", "choices": ["dog", "cat", "cow"], "answer": "cat"},
           "i1": {"question": "Which animal now?", "choices": ["dog", "cat", "cow"], "answer": "cat"},
           "i2": {"question": "Which animal?", "choices": ["dog", "cat", "horse"], "answer": "cat"},
           "i3": {"question": "Which animal?", "choices": ["dog", "cat", "horse"], "answer": "dog"},
           "gone1": {"question": "?"}, "gone2": {"question": "?"}}
    s = compare(own, items, list(own) + ["gone3"])
    assert (s["outputs"], s["compared"], s["differ"], s["not_in_items"]) == (7, 4, 3, 3)
    assert s["by_field"] == {"question": 1, "choices": 2, "answer": 1}
    assert flag(s) == ("3 of 7 outputs were made on a different version of the item: question 1, choices 2, "
                       "answer 1; 3 ids not in the items")
    assert flag(s, items_from="predictions").endswith("; scored against the outputs' own items (items_from: predictions)")
    same = compare({"i0": own["i0"]}, items, ["i0"])
    assert flag(same) is None
    assert flag(compare({}, items, ["i0"])) == ("imported outputs carry no question, choices or answer: the item "
                                                "version they were made on is not checked")


def test_an_outputs_own_item_replaces_ours_only_when_asked():
    item = _item("a")
    rebuilt = own_item({"question": "Which one?", "choices": ["cow", "cat", "cat"], "answer": "cow"}, item)
    assert rebuilt["question"] == "Which one?" and rebuilt["answer_label"] == "A" and rebuilt["answer_text"] == "cow"
    assert [o["text"] for o in rebuilt["options"]] == ["cow", "cat"]
    assert rebuilt["meta"] == {"category": "sound", "item_from": "predictions"}
    assert own_item({"answer": "C"}, item)["answer_text"] == "cow"                   # a letter, our choices
    assert own_item({"choices": ["dog", "cat"], "answer": "horse"}, item) is None   # answer not among them

    own = {"question": "Which one?", "choices": ["cow", "cat"], "answer": "cow"}
    extra = json.dumps({"own_item": own})
    preds = pd.DataFrame({"id": ["a", "b"], "raw_output": ["cow", "cat"], "extra": [extra, None],
                          "backend_info": [json.dumps({"items_from": "items"})] * 2})
    items = [item, _item("b")]
    kept, diffs, metrics = for_run(items, preds)
    assert kept == items and diffs == {"a": "question, choices, answer"} and metrics == {"n_item_version_differs": 1}
    preds["backend_info"] = json.dumps({"items_from": "predictions"})
    scored, _, metrics = for_run(items, preds)
    assert scored[0]["answer_text"] == "cow" and scored[1] is items[1]
    assert metrics == {"n_item_version_differs": 1, "items_from": "predictions", "n_own_items": 1,
                       "n_own_item_unusable": 0}
    plain = preds.drop(columns="extra")
    assert for_run(items, plain) == (items, {}, {})


def test_real_released_outputs_match_the_items_they_answer():
    """TACoBeLAL's published outputs carry the question and a gold letter: Qwen2-Audio's the question
    itself, Audio Flamingo 3's the whole prompt around it (ids are paths). Both match our items; a
    reworded question is caught."""
    from pathlib import Path

    from lalmbench.core.io import read_jsonl
    from lalmbench.models.imported import read_imported

    data = Path(__file__).resolve().parents[1] / "data" / "imported"
    items = read_jsonl(data / "tacobelal_safety_items.jsonl")
    qwen = read_imported(data / "qwen2_audio_raw_model_outputs.jsonl")
    af3 = read_imported(data / "af3_raw_model_outputs_5.jsonl", id_pattern=r"/\d{6}_([^/]*)\.mp3$")
    assert qwen.item_columns == af3.item_columns == {"question": "question", "answer": "gt_answer"}
    for f, n in ((qwen, 100), (af3, 5)):
        s = compare(f.own_items, items, f.outputs)
        assert (s["outputs"], s["compared"], s["differ"], s["not_in_items"]) == (n, n, 0, 0) and flag(s) is None
    items[0] = dict(items[0], question=items[0]["question"].replace("energetic", "enthusiastic"))
    assert flag(compare(af3.own_items, items, af3.outputs)) == (
        "1 of 5 outputs were made on a different version of the item: question 1")


def test_an_own_choice_list_with_a_repeated_or_blank_entry_is_another_version_and_flagged():
    """The output was made on [cat, dog, dog, bird, cow] (or a list with a blank), our file lists
    cat/dog/bird/cow: the official rules would read its letter against a list no file of ours holds,
    so the item is counted as another version and the flag names the malformed lists."""
    from lalmbench.scoring.official import air_bench_foundation, mmsu_accuracy

    opts = [{"label": lab, "text": t} for lab, t in zip("ABCD", ["cat", "dog", "bird", "cow"])]
    ours = _item("r", options=opts, answer="B")
    repeated = {"choices": ["cat", "dog", "dog", "bird", "cow"], "answer": "dog"}
    blank = {"choices": ["cat", "", "dog", "bird"], "answer": "dog"}
    assert differences(repeated, ours) == ["choices"] and differences(blank, ours) == ["choices"]
    for own, what in ((repeated, "MMSU"), (blank, "AIR-Bench")):
        s = compare({"r": own}, [ours], ["r"])
        assert (s["differ"], s["by_field"]["choices"], s["malformed_choices"]) == (1, 1, 1), what
        assert flag(s, items_from="predictions") == (
            "1 of 1 outputs were made on a different version of the item: choices 1; 1 outputs' own choice lists "
            "have a blank or repeated entry (e.g. r); scored against the outputs' own items (items_from: predictions)")
    preds = pd.DataFrame({"id": ["r"], "raw_output": ["C"], "extra": [json.dumps({"own_item": repeated})],
                          "backend_info": [json.dumps({"items_from": "predictions"})]})
    scored, diffs, _ = for_run([ours], preds)
    assert diffs == {"r": "choices"}
    assert mmsu_accuracy(scored, ["C"], {})[0].reason == "choices as published (a repeated choice kept)"
    preds["extra"] = json.dumps({"own_item": blank})
    scored, diffs, _ = for_run([ours], preds)
    assert diffs == {"r": "choices"}
    assert air_bench_foundation(scored, ["C"], {})[0].reason == "choices as published (a blank choice kept)"
