"""backend: imported -- another harness's published outputs served as a model, scored by our parser."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from lalmbench.core.io import InputError, read_jsonl
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.model_job import infer_chunk
from lalmbench.models.base import load_model
from lalmbench.models.imported import parser_cfg, read_outputs
from lalmbench.scoring.mcq import score_mcq

DATA = Path(__file__).resolve().parents[1] / "data" / "imported"
ITEMS = DATA / "tacobelal_safety_items.jsonl"
QWEN = DATA / "qwen2_audio_raw_model_outputs.jsonl"
OPTS = [{"label": "A", "text": "True"}, {"label": "B", "text": "False"}]


def _entry(path, **params) -> dict:
    return {"backend": "imported", "params": {"predictions": str(path), **params}}


def _item(i: str) -> dict:
    return {"id": i, "task": "t", "question": "Is it there?", "options": OPTS, "answer_label": "A"}


def _serve(entry: dict, items: list[dict]) -> list[dict]:
    """The predictions rows the generate job stores, through the real per-batch code."""
    model = load_model("imp", entry)
    try:
        return infer_chunk(model, items, condition="no-audio", template="{question}", sample_rate=16000, seed=0,
                           audio_source=None)
    finally:
        model.close()


def test_tacobelal_outputs_score_as_tacobelal_scored_them():
    """Qwen2-Audio's published presence-check outputs (TACoBeLAL; prompt showed 'A. True / B. False')."""
    items = read_jsonl(ITEMS)
    preds = pd.DataFrame(_serve(_entry(QWEN), items))
    ref = json.loads((DATA / "qwen2_audio_metrics.json").read_text())
    dec, met = score_mcq(items, preds, parser_cfg(None, _entry(QWEN, labels="shown"), "{question}"))
    assert (met["n"], met["n_correct"], met["n_unparseable"]) == (ref["examples"], ref["correct"], ref["parse_invalid"])
    assert met["value"] == ref["accuracy"] == 0.75
    assert dec["parse_status"].value_counts().to_dict() == {"exact-label": 93, "exact-text": 4, "label-pattern": 3}
    # left at the default (hidden), a bare letter is not read as a choice: only the 4 'False' outputs are
    _, hidden = score_mcq(items, preds, parser_cfg(None, _entry(QWEN), "{question}"))
    assert (hidden["n_correct"], hidden["n_unparseable"], hidden["parser_labels"]) == (4, 96, "hidden")


@pytest.mark.parametrize("task_parser, model_labels, template, expected", [
    (None, None, "{question}\n{options}", "hidden"),          # imported: our template never reached the model
    ({"labels": "auto"}, None, "{question}\n{options}", "hidden"),
    ({"labels": "shown"}, None, "{question}", "shown"),       # an explicit task setting wins over the default
    ({"labels": "shown"}, "hidden", "{question}", "hidden"),  # the model entry's own setting wins over both
    (None, "shown", "{question}", "shown"),
])
def test_imported_models_parse_with_hidden_labels_unless_set(task_parser, model_labels, template, expected):
    entry = _entry(QWEN, **({"labels": model_labels} if model_labels else {}))
    assert parser_cfg(task_parser, entry, template)["labels"] == expected


def test_own_models_still_follow_the_prompt_template():
    hf = {"backend": "hf", "params": {"labels": "hidden"}}
    assert parser_cfg({"stages": ["label"]}, hf, "{question}\n{options}") == {"stages": ["label"], "labels": "shown"}
    assert parser_cfg(None, hf, "{question}")["labels"] == "hidden"


def test_an_item_without_an_imported_output_is_no_failed_generation(tmp_path, caplog):
    """No rerun can make an output the file lacks: the row has no output and no error (so it never counts
    against max_error_rate), marked with the file it is missing from; the log counts such items."""
    f = tmp_path / "out.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in [{"id": "a", "response": "B"}, {"id": "c", "response": None},
                                                         {"id": "zz", "response": "A"}]))
    with caplog.at_level(logging.WARNING):
        preds = _serve(_entry(f), [_item("a"), _item("b"), _item("c")])
    assert [(r["raw_output"], r["error"], r["extra"]) for r in preds] == [
        ("B", None, None), (None, None, json.dumps({"no_output": str(f)})), (None, None, json.dumps({"no_output": str(f)}))]
    assert f"2 of 3 items asked for in this job have no output in {f} (e.g. 'b', 'c')" in caplog.text
    assert f"1 of 3 outputs in {f} matched no item asked for in this job (e.g. 'zz')" in caplog.text


def test_generate_never_stops_on_items_the_file_lacks(tmp_path):
    """The model job with max_error_rate 0: half the items have no output in the file, and the job
    finishes (before, it stopped with 'max_error_rate=0.0 exceeded ... only failed ones run next time')."""
    from lalmbench.core import io
    from lalmbench.inference.model_job import generate
    from lalmbench.inference.slices import Slice

    f = tmp_path / "out.jsonl"
    f.write_text(json.dumps({"id": "a", "pred": "True"}) + "\n")
    items = tmp_path / "items.jsonl"
    io.write_jsonl(items, [_item("a"), _item("b")])
    template = tmp_path / "p.txt"
    template.write_text("{question}")
    sl = Slice(items=str(items), template=str(template), condition="no-audio", prompt="p", out=str(tmp_path / "o.parquet"), audio=False)
    summary = generate(model_name="imp", model_cfg=_entry(f), slices=[sl], cache_path=tmp_path / "cache",
                       max_error_rate=0.0)
    assert summary["slices"][0]["errors"] == 0 and summary["slices"][0]["items"] == 2


def test_columns_id_template_and_id_pattern_map_the_files_ids(tmp_path):
    f = tmp_path / "out.jsonl"
    f.write_text('{"qid": 7, "set": "s", "answer": "A"}\n{"qid": 8, "set": "s", "answer": "B"}\n')
    outputs, unread = read_outputs(f, columns={"raw_output": "answer"}, id_template="{set}-{qid}")
    assert (outputs, unread) == ({"s-7": "A", "s-8": "B"}, 0)
    paths = tmp_path / "paths.jsonl"
    paths.write_text('{"id": "/x/000000_87594.mp3__presence.mp3", "pred": "A"}\n{"id": "odd", "pred": "B"}\n')
    assert read_outputs(paths, id_pattern=r"\d{6}_(.*)\.mp3$") == ({"87594.mp3__presence": "A"}, 1)


@pytest.mark.parametrize("text, message", [
    ('{"id": "a", "text": "A"}\n', r"no output column \(tried raw_output, output, response, prediction, pred; "
                                   r"have \['id', 'text'\]\); set params.columns.raw_output"),
    ('{"id": "a", "pred": "A"}\n{"id": "a", "pred": "B"}\n', r"record 2: id 'a' appears twice"),
    ('{"key": "b", "pred": "B"}\n', r"no record can be read as an output: no column 'id' for the id \(columns.id\) "
                                    r"\(.*out.jsonl:1\)"),
])
def test_unusable_files_are_errors_naming_file_and_record(tmp_path, text, message):
    f = tmp_path / "out.jsonl"
    f.write_text(text)
    with pytest.raises(InputError, match=f"{f}: " + message):
        read_outputs(f)


def test_the_files_content_is_part_of_the_fingerprint_and_labels_are_not(tmp_path):
    f = tmp_path / "out.jsonl"
    f.write_text('{"id": "a", "pred": "A"}\n')
    before = model_fingerprint(_entry(f))
    assert model_fingerprint(_entry(f, labels="shown")) == before   # re-scores, never regenerates
    f.write_text('{"id": "a", "pred": "B"}\n')                      # edited in place, same path
    assert model_fingerprint(_entry(f)) != before
    with pytest.raises(InputError, match=r"params.predictions: file not found: .*missing.jsonl"):
        model_fingerprint(_entry(tmp_path / "missing.jsonl"))


def test_imported_slices_read_no_audio_even_when_every_file_is_missing(tmp_path, monkeypatch):
    """An imported model's generate job serves items whose audio files do not exist, under the audio
    condition, and its slice names no decoded-audio manifest (no job of it waits for cache_audio)."""
    from lalmbench.inference.model_job import generate
    from lalmbench.inference.plan import slice_from_spec

    monkeypatch.chdir(tmp_path)
    Path("results/tasks/d").mkdir(parents=True)
    Path("results/tasks/d/t.jsonl").write_text("".join(
        json.dumps(dict(_item(i), audio_path=f"absent/{i}.wav")) + "\n" for i in ("a", "b")))
    Path("resources/prompts").mkdir(parents=True)
    Path("resources/prompts/mcq-default.txt").write_text("{question}\n{options}")
    Path("out.jsonl").write_text('{"id": "a", "pred": "True"}\n{"id": "b", "pred": "False"}\n')
    spec = ("main", "d", "t", "audio", "mcq-default", None)
    assert slice_from_spec("m", spec).manifest == "results/audio/d/t.manifest.json"
    sl = slice_from_spec("m", spec, audio=False)
    assert sl.manifest is None and not sl.audio
    summary = generate(model_name="m", model_cfg=_entry("out.jsonl"), slices=[sl], cache_path="cache.jsonl")
    assert (summary["slices"][0]["generated"], summary["slices"][0]["errors"]) == (2, 0)


def test_the_item_each_output_was_made_on_rides_with_it(tmp_path):
    """MMAU's released layout carries question, choices and answer; TACoBeLAL's the question and a gold
    letter (gt_answer): each output's own item goes into its prediction row's extra."""
    f = tmp_path / "mmau.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "Which?", "choices": ["dog", "cat"], "answer": "cat",
                             "model_prediction": "cat"}) + "\n")
    entry = _entry(f, columns={"raw_output": "model_prediction"})
    (row,) = _serve(entry, [_item("a")])
    assert json.loads(row["extra"]) == {"own_item": {"question": "Which?", "choices": ["dog", "cat"], "answer": "cat"}}
    (row,) = _serve(_entry(QWEN), [_item("87594.mp3__safety_presence")])
    assert json.loads(row["extra"])["own_item"] == {
        "question": 'Is this event in the audio: "An energetic round of applause by the audience."?', "answer": "A"}
    plain = tmp_path / "plain.csv"
    pd.DataFrame({"id": ["a"], "answer": ["cat"]}).to_csv(plain, index=False)   # 'answer' is the output here
    (row,) = _serve(_entry(plain, columns={"raw_output": "answer"}), [_item("a")])
    assert row["extra"] is None


def test_a_lone_answer_column_beside_the_output_is_the_models_answer_and_no_drift_is_flagged(tmp_path):
    """An agentic submission: its reasoning in ``output`` and its final answer in ``answer``, no question or
    choices. ``answer`` is not the gold, so no output is said to be made on another version of its item
    (before, 'answer' was read as the gold and every output whose answer was wrong was 'drift')."""
    from lalmbench.models.imported import read_imported
    from lalmbench.scoring.item_versions import compare, flag

    f = tmp_path / "agent.jsonl"
    f.write_text("".join(json.dumps({"id": i, "output": f"Tool says... The answer is {a}.", "answer": a}) + "\n"
                         for i, a in [("a", "True"), ("b", "False")]))
    got = read_imported(f)
    assert (got.output_column, got.item_columns, got.own_items, got.answer_is_models) == ("output", {}, {}, True)
    assert got.reading == (f"{f}: outputs from column 'output' (found); no item fields: the item version the outputs "
                           f"were made on is not checked; column 'answer' read as the model's answer, not the item's "
                           f"gold (the file does not carry the full item, question and choices; set params.columns.answer to read it "
                           f"as the gold)")
    summary = compare(got.own_items, [_item("a"), _item("b")], got.outputs)
    assert summary["differ"] == 0
    assert flag(summary, answer_is_models=True) == (
        "imported outputs carry no question or choices (its answer column read as the model's answer, not the "
        "gold): the item version they were made on is not checked")
    # mapped, it is the gold: the user said so
    mapped = read_imported(f, columns={"answer": "answer"})
    assert mapped.item_columns == {"answer": "answer"} and not mapped.answer_is_models
    assert "answer 'answer' (mapped)" in mapped.reading


def test_answer_is_the_gold_only_beside_the_full_item_and_the_output_when_alone(tmp_path):
    from lalmbench.models.imported import read_imported

    full = tmp_path / "full.jsonl"
    full.write_text(json.dumps({"id": "a", "question": "Is it there?", "choices": ["True", "False"], "answer": "True",
                                "pred": "False"}) + "\n")
    got = read_imported(full)
    assert got.item_columns == {"question": "question", "choices": "choices", "answer": "answer"}
    assert got.own_items["a"]["answer"] == "True" and not got.answer_is_models
    alone = tmp_path / "alone.jsonl"
    alone.write_text(json.dumps({"id": "a", "answer": "B"}) + "\n")
    got = read_imported(alone)
    assert (got.output_column, got.outputs, got.item_columns) == ("answer", {"a": "B"}, {})
    assert "column 'answer' read as the model's answer, not the item's gold (it is the output column" in got.reading


def test_unreadable_records_are_left_out_counted_and_named_by_line(tmp_path, caplog):
    """One line nested 1e5 deep, one without the output column (a CUDA OOM), one without an id: each
    is left out and named file:line with its reason; the other outputs are read."""
    f = tmp_path / "out.jsonl"
    f.write_text('{"id": "a", "pred": "A"}\n\n'
                 + '{"id": "deep", "pred": ' + "[" * 100_000 + "]" * 100_000 + '}\n'
                 + '{"id": "oom", "error": "CUDA OOM"}\n'
                 + '{"pred": "C"}\n'
                 + '{"id": "b", "pred": "B"}\n')
    caplog.set_level(logging.WARNING)
    model = load_model("imp", _entry(f))
    try:
        assert model.outputs == {"a": "A", "b": "B"}
        assert model.file.left_out == {"values nested too deep to read": [f"{f}:3"],
                                       "no output column 'pred'": [f"{f}:4"],
                                       "no column 'id' for the id (columns.id)": [f"{f}:5"]}
        assert model.provenance()["records_left_out"] == {"values nested too deep to read": 1,
                                                          "no output column 'pred'": 1,
                                                          "no column 'id' for the id (columns.id)": 1}
    finally:
        model.close()
    assert f"1 of 5 records left out: no output column 'pred' ({f}:4)" in caplog.text
    assert f"1 of 5 records left out: values nested too deep to read ({f}:3)" in caplog.text
