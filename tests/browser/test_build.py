"""Browser data built from items + decisions (no browser needed)."""
import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from lalmbench.core import io
from lalmbench.report.browser.build import audio_href, browser_data, write_browser
from lalmbench.core.io import InputError


def _setup(tmp_path):
    audio = tmp_path / "results" / "data" / "clips"
    audio.mkdir(parents=True)
    sf.write(audio / "Santa Motor.wav", np.zeros(1600, dtype=np.float32), 16000)
    items = [{"id": "i1", "task": "t", "dataset": "d", "audio_path": "results/data/clips/Santa Motor.wav",
              "question": "Which?", "options": [{"label": "A", "text": "dog"}, {"label": "B", "text": "cat"}],
              "answer_label": "B", "answer_text": "cat"},
             {"id": "i2", "task": "t", "dataset": "d", "audio_path": None, "question": "Q2",
              "options": [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}], "answer_label": "A"},
             {"id": "i3", "task": "t", "dataset": "d", "audio_path": None, "question": "never answered",
              "options": [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}], "answer_label": "A"}]
    io.write_jsonl(tmp_path / "results" / "tasks" / "d" / "t.jsonl", items)
    dec = pd.DataFrame({"model": ["m", "m", "n"], "dataset": "d", "task": "t", "condition": "audio",
                        "prompt": "p", "id": ["i1", "i2", "i1"], "raw_output": ["B</script>", "x" * 50, None],
                        "pred_label": ["B", None, None], "parse_status": ["exact-label", "unparseable", "error"],
                        "outcome": ["correct", "unparseable", "unparseable"], "correct": [True, False, False]})
    dec.to_parquet(tmp_path / "decisions.parquet")
    return items, dec


def test_data_rows_links_and_truncation(tmp_path):
    items, dec = _setup(tmp_path)
    page = tmp_path / "results" / "browser"
    data = browser_data(items, dec, root=tmp_path, page_dir=page, max_raw_chars=20)
    assert [it["id"] for it in data["items"]] == ["i1", "i2"]  # i3 has no answer: not listed
    assert data["items"][0]["audio"] == "../data/clips/Santa%20Motor.wav"
    assert data["items"][1]["audio"] is None
    assert data["runs"] == [{"model": "m", "condition": "audio", "prompt": "p"},
                            {"model": "n", "condition": "audio", "prompt": "p"}]
    assert data["preds"][0] == [0, 0, "B</script>", "B", "exact-label", "correct", None, None, None, None, None]
    assert data["preds"][1] == [0, 1, None, None, "error", "unparseable", None, None, None, None, None]
    assert data["flags"] == []
    assert data["preds"][2][2] == "x" * 20 + " [... cut: 50 characters in all]"


def test_official_disagreements_and_every_clip_reach_the_page(tmp_path):
    items, dec = _setup(tmp_path)
    items[0]["audio_paths"] = ["results/data/clips/Santa Motor.wav", "results/data/clips/b.wav"]
    dec = dec.assign(official_score=[0.0, 1.0, None], official_disagrees=[True, False, False])
    data = browser_data(items, dec, root=tmp_path, page_dir=tmp_path / "results" / "browser")
    assert data["pred_fields"][6:8] == ["official_score", "official_disagrees"]
    assert data["preds"][0][6:8] == [0.0, True] and data["preds"][2][6:8] == [1.0, False]
    assert data["items"][0]["audios"] == ["../data/clips/Santa%20Motor.wav", "../data/clips/b.wav"]
    assert "official-disagrees" in (Path(__file__).parents[2] / "lalmbench/report/browser/index.html").read_text()


def test_outputs_made_on_another_item_version_and_run_flags_reach_the_page(tmp_path):
    """Imported outputs made on another revision of an item: the row names what differs and the gold it
    was scored against; the runs' flags (results/tables/flags.tsv) come with the page."""
    items, dec = _setup(tmp_path)
    dec = dec.assign(item_version_differs=["choices, answer", None, None], gold_label=["A", "A", "B"])
    flags = pd.DataFrame([{"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": "p",
                           "flags": "1 of 2 outputs were made on a different version of the item: choices 1, answer 1"}])
    data = browser_data(items, dec, root=tmp_path, page_dir=tmp_path, flags=flags)
    f = {name: i for i, name in enumerate(data["pred_fields"])}
    assert [(p[f["item_version_differs"]], p[f["gold_label"]]) for p in data["preds"]] == \
        [("choices, answer", "A"), (None, "B"), (None, "A")]
    assert data["flags"] == flags.to_dict("records")
    page = (Path(__file__).parents[2] / "lalmbench/report/browser/index.html").read_text()
    assert "item-version-differs" in page and "D.flags" in page


def test_unknown_item_is_an_error(tmp_path):
    items, dec = _setup(tmp_path)
    with pytest.raises(InputError, match=r"decision for item 'i9' of task 't' has no task item"):
        browser_data(items, pd.concat([dec, dec.iloc[:1].assign(id="i9")]), root=tmp_path, page_dir=tmp_path)


def test_write_bundles_audio_and_pages_are_readable(tmp_path):
    _setup(tmp_path)
    page = tmp_path / "results" / "browser"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        write_browser([str(tmp_path / "results" / "tasks" / "d" / "t.jsonl")], str(tmp_path / "decisions.parquet"),
                      out_html=str(page / "index.html"), out_data=str(page / "data.js"), bundle_audio=True)
    finally:
        os.chdir(cwd)
    js = (page / "data.js").read_text()
    assert js.startswith("window.LALM_BROWSER = ") and "</script>" not in js
    data = json.loads(js[len("window.LALM_BROWSER = "):].rstrip().rstrip(";"))
    assert data["items"][0]["audio"] == "audio/Santa%20Motor.wav"
    assert (page / "audio" / "Santa Motor.wav").read_bytes() == (tmp_path / "results" / "data" / "clips"
                                                                 / "Santa Motor.wav").read_bytes()
    assert "f-model" in (page / "index.html").read_text()
    assert stat.S_IMODE((page / "data.js").stat().st_mode) & 0o044  # group/other can read when served


def test_audio_href_absolute_and_relative(tmp_path):
    assert audio_href("/data/x y.wav", root=tmp_path, page_dir=Path("/data/browser")) == "../x%20y.wav"
    assert audio_href(None, root=tmp_path, page_dir=tmp_path) is None


def test_open_answers_show_their_reference_and_own_score_beside_the_transcript(tmp_path):
    """A transcript and a translation: the page's data holds each item's reference and, per answer, its
    errors over reference words (ASR) or sentence BLEU (translation); the page puts them in one column."""
    items = [{"id": "1089-134686-0000", "task": "ls", "dataset": "ls", "audio_path": None, "options": [],
              "question": "Transcribe the speech.", "references": ["HE HOPED THERE WOULD BE STEW"]},
             {"id": "cv_en_1.mp3", "task": "st", "dataset": "st", "audio_path": None, "options": [],
              "question": "Translate the speech.", "references": ["Guten Morgen."]}]
    dec = pd.DataFrame({"model": "m", "dataset": ["ls", "st"], "task": ["ls", "st"], "condition": "audio",
                        "prompt": "p", "id": ["1089-134686-0000", "cv_en_1.mp3"],
                        "raw_output": ["he hoped there would be stew", "Guten Tag."], "errors": [2.0, None],
                        "n_ref": [6.0, None], "sentence_bleu": [None, 42.73]})
    data = browser_data(items, dec, root=tmp_path, page_dir=tmp_path)
    f = data["pred_fields"].index("item_score")
    assert data["items"][0]["references"] == ["HE HOPED THERE WOULD BE STEW"]
    assert data["preds"][0][2] == "he hoped there would be stew"
    assert data["preds"][0][f] == "2 errors / 6 reference units (33.3%)"
    assert data["items"][1]["references"] == ["Guten Morgen."] and data["preds"][1][f] == "sentence BLEU 42.7"
    page = (Path(__file__).parents[2] / "lalmbench/report/browser/index.html").read_text()
    assert '"class": "reference" }, it.references.join(" | ")' in page and "p[F.item_score]" in page
