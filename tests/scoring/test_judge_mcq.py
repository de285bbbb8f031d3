"""The LLM-judge fallback of the MCQ parser, with a scripted judge backend registered only here:
it answers each prompt with the reply scripted for the model output it shows (real Judge code
paths: prompt rendering, greedy settings, cache, identity; real scoring and aggregation)."""
import json
import re

import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.report.aggregate import write_all_tsv
from lalmbench.scoring.judge import Judge
from lalmbench.scoring.judge_mcq import read_label
from lalmbench.models.base import Model, ModelOutput, register_backend
from lalmbench.scoring.run import score_run_files

PROMPTS = []


@register_backend("scripted-mcq-judge-test")
class ScriptedJudge(Model):
    """Replies ``params.replies[<model output in the prompt>]``, or ``none``."""

    def generate(self, batch):
        out = []
        for x in batch:
            PROMPTS.append((self.cfg["generation"], x.prompt))
            shown = re.search(r"Model's reply: \n(`{3,})\n(.*?)\n\1\n", x.prompt, re.DOTALL).group(2)
            out.append(ModelOutput(raw_output=self.cfg["params"]["replies"].get(shown, "none")))
        return out


OPTIONS = [{"label": "A", "text": "dog"}, {"label": "B", "text": "cat"}, {"label": "C", "text": "bird"}]
OUTPUTS = ["A", "B", "dog", "Hmm, I'd go with the canine one", "Perhaps the feline, though", "I can't tell",
           "???", None]
ITEMS = [{"id": f"i{k}", "question": "Which animal?", "answer_label": "A", "answer_text": "dog", "meta": {},
          "options": OPTIONS} for k in range(len(OUTPUTS))]
HONEST = {"A": "A", "B": "B", "dog": "A", "Hmm, I'd go with the canine one": "A",
          "Perhaps the feline, though": "(B)", "I can't tell": "None.", "???": "I think A"}


def _score(tmp_path, replies, audit_n=3, max_disagreement=0.05, name="run"):
    io.write_jsonl(tmp_path / "items.jsonl", ITEMS)
    pd.DataFrame({"id": [it["id"] for it in ITEMS], "raw_output": OUTPUTS,
                  "error": [None] * 7 + ["timeout"]}).to_parquet(tmp_path / "p.parquet")
    judge = {"judge_model": "scripted", "judge_model_cfg": {"backend": "scripted-mcq-judge-test",
                                                            "model_id": "test/scripted", "params": {"replies": replies}},
             "audit_n": audit_n, "max_disagreement": max_disagreement, "cache_dir": str(tmp_path / "cache"), "seed": 0}
    out = tmp_path / name
    score_run_files(items_path=str(tmp_path / "items.jsonl"), predictions_path=str(tmp_path / "p.parquet"),
                    parser_cfg={}, config_hash="h", run=["m", "d", "t", "audio", "mcq-default"],
                    decisions_path=str(out / "decisions.parquet"), metrics_path=str(out / "metrics.json"),
                    judge_cfg=judge)
    return pd.read_parquet(out / "decisions.parquet"), json.loads((out / "metrics.json").read_text())


def _col(dec, name):
    return [None if pd.isna(v) else v for v in dec[name]]


def test_only_unparseable_outputs_are_judged_and_rule_columns_stay_rule_only(tmp_path):
    PROMPTS.clear()
    dec, m = _score(tmp_path, HONEST)
    assert list(dec["outcome"]) == ["correct", "wrong", "correct"] + ["unparseable"] * 5  # rules only
    # no text, or a non-answer ("I can't tell"): never sent
    assert _col(dec, "judge_role") == ["audit"] * 3 + ["fallback"] * 2 + [None, "fallback", None]
    assert _col(dec, "judge_read") == ["label"] * 5 + [None, "unreadable", None]
    assert _col(dec, "pred_label_with_judge") == ["A", "B", "A", "A", "B", None, None, None]
    assert _col(dec, "parse_status_with_judge")[3:] == ["judge", "judge", "non-answer", "unparseable", "error"]
    assert list(dec["outcome_with_judge"]) == ["correct", "wrong", "correct", "correct", "wrong", "unparseable",
                                               "unparseable", "unparseable"]
    assert set(dec["judge_model"].dropna()) == {"scripted"} and dec["judge_fingerprint"].nunique() == 1
    assert dec.loc[6, "judge_raw"] == "I think A"
    assert all(g["temperature"] == 0.0 for g, _ in PROMPTS) and len(PROMPTS) == 6
    assert "Options:\nA. dog\nB. cat\nC. bird" in PROMPTS[0][1] and "one of: A, B, C, none" in PROMPTS[0][1]
    assert "Correct option" not in PROMPTS[0][1]  # the judge reads, it does not grade
    assert (m["value"], m["value_with_judge"]) == (pytest.approx(2 / 8), pytest.approx(3 / 8))
    assert (m["judge_n_fallback"], m["judge_n_credited"], m["judge_n_none"], m["judge_n_unreadable"]) == (3, 2, 0, 1)
    assert (m["judge_audit_n"], m["judge_agreement"], m["judge_trusted"], m["flags"]) == (3, 1.0, True, [])
    assert m["judge_model"] == "scripted" and m["judge_model_id"] == "test/scripted"
    assert m["judge_fingerprint"] == dec.loc[0, "judge_fingerprint"]
    assert (m["parse_stage_counts"]["unparseable"], m["parse_stage_counts"]["non-answer"]) == (3, 1)  # rules only


def test_a_second_scoring_reads_the_cache(tmp_path):
    _score(tmp_path, HONEST)
    PROMPTS.clear()
    _, m = _score(tmp_path, HONEST, name="again")
    assert PROMPTS == [] and m["judge_n_cached"] == 6 and m["value_with_judge"] == pytest.approx(3 / 8)


def test_a_judge_that_disagrees_with_clean_rule_reads_is_flagged_untrusted(tmp_path):
    dec, m = _score(tmp_path, {**HONEST, "dog": "C", "B": "none"})
    assert (m["judge_audit_n"], m["judge_audit_agree"], m["judge_trusted"]) == (3, 1, False)
    assert m["judge_disagreement_ids"] == ["i1", "i2"]
    assert m["flags"] == ["judge-untrusted:disagreed with 2/3 rule reads (67% > 5%)"]
    assert list(dec["outcome"][:3]) == ["correct", "wrong", "correct"]  # audit reads never change a decision
    table = write_all_tsv([str(tmp_path / "run" / "metrics.json")], str(tmp_path / "all.tsv"))
    row = table.iloc[0]
    judged = list(table.columns).index("flags")
    assert list(table.columns[judged:judged + 5]) == ["flags", "value_with_judge", "judge_agreement", "value_official",
                                                      "n_official"]
    assert (row["value"], row["value_with_judge"], row["judge_agreement"]) == (
        pytest.approx(0.25), pytest.approx(0.375), pytest.approx(1 / 3))
    assert row["flags"] == "judge-untrusted:disagreed with 2/3 rule reads (67% > 5%)"


def test_without_a_judge_decisions_and_all_tsv_are_unchanged(tmp_path):
    io.write_jsonl(tmp_path / "items.jsonl", ITEMS[:2])
    pd.DataFrame({"id": ["i0", "i1"], "raw_output": ["A", "maybe"]}).to_parquet(tmp_path / "p.parquet")
    score_run_files(items_path=str(tmp_path / "items.jsonl"), predictions_path=str(tmp_path / "p.parquet"),
                    parser_cfg={}, config_hash="h", run=["m", "d", "t", "audio", "p"],
                    decisions_path=str(tmp_path / "d.parquet"), metrics_path=str(tmp_path / "m.json"))
    assert not any(c.startswith("judge") or c.endswith("_with_judge") for c in pd.read_parquet(tmp_path / "d.parquet"))
    row = write_all_tsv([str(tmp_path / "m.json")], str(tmp_path / "all.tsv")).iloc[0]
    assert pd.isna(row["value_with_judge"]) and pd.isna(row["judge_agreement"]) and row["flags"] == ""


@pytest.mark.parametrize("reply,read", [("B", ("B", "label")), (" (b). ", ("B", "label")), ("**C**", ("C", "label")),
                                        ("none", (None, "none")), ("NONE.", (None, "none")),
                                        ("A or B", (None, "unreadable")), ("The answer is A", (None, "unreadable")),
                                        ("D", (None, "unreadable")), (None, (None, "unreadable"))])
def test_the_judge_must_answer_with_one_label_or_none(reply, read):
    assert read_label(reply, ["A", "B", "C"]) == read


def test_a_yes_no_prompt_cannot_be_the_mcq_fallback():
    from lalmbench.scoring.judge_mcq import judge_fallback

    j = Judge("j", {"backend": "scripted-mcq-judge-test", "params": {"replies": {}}}, "mcq_answer")
    with pytest.raises(ValueError, match="needs verdict 'option_label', got 'yes_no'"):
        judge_fallback(pd.DataFrame(), ITEMS, j)
