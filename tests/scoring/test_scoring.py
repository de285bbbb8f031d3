"""score_mcq: decisions and metrics on real code paths, and the errors a user sees on bad input."""
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from lalmbench.core.io import InputError
from lalmbench.scoring.parse import PARSER_VERSION
from lalmbench.inference.prompts import shows_labels
from lalmbench.scoring.mcq import score_mcq

TEXTS = ["one beep", "two beeps", "three beeps"]


def _items(n=6):
    return [{"id": f"i{j}", "options": [{"label": lab, "text": t} for lab, t in zip("ABC", TEXTS)],
             "answer_label": "ABC"[j % 3], "meta": {"family": "count", "gap": j}} for j in range(n)]


def test_three_outcomes_and_metrics():
    preds = pd.DataFrame({"id": [f"i{j}" for j in range(6)],
                          "raw_output": ["A", "B.", "two beeps", None, "A or B", "C"],
                          "error": [None, None, None, None, None, "CUDA OOM"]})
    dec, m = score_mcq(_items(), preds)
    assert list(dec["outcome"]) == ["correct", "correct", "wrong", "unparseable", "unparseable", "unparseable"]
    assert list(dec["parse_status"]) == ["exact-label", "label-pattern", "exact-text", "empty", "unparseable",
                                         "error"]
    assert dec.loc[5, "error"] == "CUDA OOM" and dec.loc[5, "pred_label"] is None
    assert list(dec["pred_pos"]) == [0, 1, 1, -1, -1, -1]
    assert list(dec["meta_gap"]) == list(range(6))
    assert (m["n"], m["n_correct"], m["n_wrong"], m["n_unparseable"], m["n_error"]) == (6, 2, 1, 3, 1)
    assert m["value"] == pytest.approx(2 / 6)
    assert (m["ci_low"], m["ci_high"]) == pytest.approx(proportion_confint(2, 6, method="wilson"))
    assert m["chance"] == pytest.approx(1 / 3) and m["parse_failure_rate"] == pytest.approx(0.5)
    assert m["parse_stage_counts"]["label-pattern"] == 1 and m["parse_stage_counts"]["error"] == 1
    assert m["parser_version"] == PARSER_VERSION


def test_stage_config_restricts_parsing():
    preds = pd.DataFrame({"id": ["i0", "i1"], "raw_output": ["(A)", "two beeps"]})
    dec, m = score_mcq(_items(2), preds, {"stages": ["exact-label"]})
    assert list(dec["parse_status"]) == ["unparseable", "unparseable"]
    assert m["parser_stages"] == ["exact-label"]
    with pytest.raises(ValueError, match="unknown parser stage"):
        score_mcq(_items(2), preds, {"stages": ["fuzzy"]})
    with pytest.raises(ValueError, match="unknown key"):
        score_mcq(_items(2), preds, {"stagez": []})


def test_hidden_labels_read_letter_texts_as_texts():
    # a note-naming item imported from a benchmark whose prompt listed the notes without letters
    notes = [{"id": "n0", "options": [{"label": lab, "text": t} for lab, t in zip("ABCD", "CDGA")],
              "answer_label": "A"}]
    preds = pd.DataFrame({"id": ["n0"], "raw_output": ["C"]})
    shown, m_shown = score_mcq(notes, preds)
    hidden, m_hidden = score_mcq(notes, preds, {"labels": "hidden"})
    # the same "C": option C when the prompt showed letters, the note C (option A) when it did not
    assert (shown.loc[0, "pred_label"], shown.loc[0, "parse_status"], m_shown["parser_labels"]) == \
        ("C", "exact-label", "shown")
    assert (hidden.loc[0, "pred_label"], hidden.loc[0, "parse_status"]) == ("A", "exact-text")
    assert m_hidden["parser_labels"] == "hidden" and m_hidden["value"] == 1.0
    assert m_hidden["scorer"].startswith(PARSER_VERSION + "+")
    with pytest.raises(ValueError, match=r"parser.labels: expected one of \['auto', 'shown', 'hidden'\], got 'no'"):
        score_mcq(notes, preds, {"labels": "no"})


def test_prompt_templates_that_show_labels():
    assert shows_labels("{question}\n{options}\nAnswer with the letter.")
    assert shows_labels("Reply with one of {labels}.")
    assert not shows_labels("{question}")


@pytest.mark.parametrize("ids,msg", [
    (["i0"], "no prediction for item 'i1'"),
    (["i0", "i1", "i1"], "duplicated id 'i1'"),
    (["i0", "i1", "zz"], "'zz' is not among the task's items"),
])
def test_bad_prediction_ids_are_errors_naming_the_id(ids, msg):
    preds = pd.DataFrame({"id": ids, "raw_output": ["A"] * len(ids)})
    with pytest.raises(InputError, match=msg):
        score_mcq(_items(2), preds)


def test_bad_items_are_errors():
    items = _items(2)
    items[1]["answer_label"] = "E"
    with pytest.raises(InputError, match="item 'i1': answer_label 'E'"):
        score_mcq(items, pd.DataFrame({"id": ["i0", "i1"], "raw_output": ["A", "A"]}))
    with pytest.raises(InputError, match="duplicated id 'i0'"):
        score_mcq(_items(1) * 2, pd.DataFrame({"id": ["i0"], "raw_output": ["A"]}))
    with pytest.raises(InputError, match="missing column 'raw_output'"):
        score_mcq(_items(1), pd.DataFrame({"id": ["i0"]}))


def test_parallel_parsing_gives_identical_decisions(monkeypatch):
    import lalmbench.scoring.mcq as scoring

    monkeypatch.setattr(scoring, "PARALLEL_MIN_PAIRS", 1)
    items = _items(60)
    raws = ["A", "(B)", "two beeps", "The answer is C", "A or B", None, "I cannot tell", "one beep!"] * 8
    preds = pd.DataFrame({"id": [f"i{j}" for j in range(60)], "raw_output": raws[:60]})
    serial, m1 = score_mcq(items, preds)
    parallel, m2 = score_mcq(items, preds, workers=2)
    pd.testing.assert_frame_equal(serial, parallel)
    assert m1 == m2


def test_items_sharing_a_clip_widen_the_interval_and_non_answers_are_counted_apart():
    opts = [{"label": "A", "text": "Dog barking"}, {"label": "B", "text": "Rain falling"}]
    items = [{"id": f"q{i}", "clip_id": f"clip{i // 3}", "options": opts, "answer_label": "A"} for i in range(12)]
    # the three questions about a clip are answered alike: clips 0 and 1 right, clips 2 and 3 wrong
    raw = ["A"] * 6 + ["B"] * 3 + ["Could you please provide the audio?"] + ["B"] * 2
    dec, m = score_mcq(items, pd.DataFrame({"id": [it["id"] for it in items], "raw_output": raw}))
    assert list(dec["clip_id"][:4]) == ["clip0"] * 3 + ["clip1"]
    assert (m["n_clips"], m["ci_method"]) == (4, "wilson-clustered")
    assert m["ci_high"] - m["ci_low"] > m["wilson_ci_high"] - m["wilson_ci_low"]
    assert (m["n_non_answer"], m["n_parse_failure"], m["n_unparseable"]) == (1, 0, 1)
    assert m["non_answer_counts"] == {"asks for input": 1}
    assert m["parse_stage_counts"]["non-answer"] == 1
    # one item per clip: Wilson, as before
    solo = [dict(it, clip_id=it["id"]) for it in items]
    _, m1 = score_mcq(solo, pd.DataFrame({"id": [it["id"] for it in items], "raw_output": raw}))
    assert (m1["ci_method"], m1["design_effect"], m1["n_clips"]) == ("wilson", 1.0, 12)
    assert (m1["ci_low"], m1["ci_high"]) == (m["wilson_ci_low"], m["wilson_ci_high"])
