"""value_official end to end: a scored run's metrics.json and decisions, results/all.tsv, and the
rule the workflow hands each task (a preset's `official:` faked by a dataset dict)."""
import json

import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.report.aggregate import COLUMNS, write_all_tsv
from lalmbench.scoring.run import score_run_files
from lalmbench.workflow import rulegrid

OPTS = [{"label": "A", "text": "dog barking"}, {"label": "B", "text": "cat meowing"}]


def test_mcq_run_reports_the_official_rule_beside_ours(tmp_path):
    items = [{"id": f"i{k}", "question": "What is heard?", "options": OPTS, "answer_label": "A",
              "answer_text": "dog barking", "meta": {"category": c}} for k, c in enumerate(["sound", "sound", "music"])]
    io.write_jsonl(tmp_path / "items.jsonl", items)
    # ours reads "A" as right; the string match needs the answer's words. "dog barking, not a cat" is
    # right for ours (text match) but wrong officially (a wrong choice's word).
    pd.DataFrame({"id": ["i0", "i1", "i2"], "raw_output": ["A", "Dog barking.", "dog barking, not a cat"],
                  "error": [None, None, None]}).to_parquet(tmp_path / "p.parquet")
    m = score_run_files(items_path=str(tmp_path / "items.jsonl"), predictions_path=str(tmp_path / "p.parquet"),
                        parser_cfg={}, config_hash="h", run=["m", "d", "t", "audio", "p"],
                        decisions_path=str(tmp_path / "dec.parquet"), metrics_path=str(tmp_path / "metrics.json"),
                        official_cfg={"scorer": "mmau_string_match", "breakdown": ["category"]})
    assert m["value_official"] == pytest.approx(1 / 3) and m["n_official"] == 3
    assert m["official_scorer"] == "mmau_string_match" and m["official_breakdown"] == ["category"]
    dec = io.read_parquet(tmp_path / "dec.parquet").set_index("id")
    assert list(dec["official_score"]) == [0.0, 1.0, 0.0]
    assert list(dec["correct"]) == [True, True, True]  # ours reads all three as A
    assert m["breakdown"] == [
        {"field": "category", "group": "music", "n": 1, "value": 1.0, "n_official": 1, "value_official": 0.0},
        {"field": "category", "group": "sound", "n": 2, "value": 1.0, "n_official": 2, "value_official": 0.5}]
    assert list(dec["official_disagrees"]) == [True, False, True] and m["n_official_disagree"] == 2
    table = write_all_tsv([str(tmp_path / "metrics.json")], str(tmp_path / "all.tsv"))
    after_judged = list(table.columns).index("judge_agreement") + 1
    assert list(table.columns) == COLUMNS
    assert list(table.columns[after_judged:after_judged + 2]) == ["value_official", "n_official"]
    row = pd.read_csv(tmp_path / "all.tsv", sep="\t").iloc[0]
    assert row["value_official"] == pytest.approx(1 / 3) and row["n_official"] == 3


def test_rulegrid_gives_each_task_the_rule_of_its_kind():
    config = {"seed": 0, "models": {"judge": {"backend": "random", "env": "core"}},
              "datasets": {"pro": {"adapter": "mmau_pro", "official": ["mmau_pro_nearest_choice", "mmau_pro_instruction"]},
                           "sak": {"adapter": "sakura", "official": {"scorer": "sakura_judge", "judge_model": "judge"}},
                           "plain": {"adapter": "mmau"}},
              "tasks": {"pro_mcq": {"dataset": "pro", "family": "import"},
                        "pro_if": {"dataset": "pro", "family": "import", "scoring": {"kind": "instruction"}},
                        "pro_open": {"dataset": "pro", "family": "import", "scoring": {"kind": "judge", "judge_model": "judge"}},
                        "sak_mcq": {"dataset": "sak", "family": "import"},
                        "plain_mcq": {"dataset": "plain", "family": "import"}}}
    spec = {t: json.loads(rulegrid.official_json(config, t)) for t in config["tasks"]}
    assert spec["pro_mcq"]["scorer"] == "mmau_pro_nearest_choice" and spec["pro_if"]["scorer"] == "mmau_pro_instruction"
    assert spec["pro_open"] == {} and spec["plain_mcq"] == {}
    assert spec["sak_mcq"]["judge_model_cfg"] == {"backend": "random", "env": "core"} and spec["sak_mcq"]["code"]
    assert rulegrid.judge_model_of(config, "sak_mcq") == "judge"
    config["datasets"]["sak"]["official"] = "sakura_judge"
    with pytest.raises(ValueError, match="needs a judge model"):
        rulegrid.official_json(config, "sak_mcq")


@pytest.mark.slow
def test_value_official_through_the_workflow(tmp_path):
    from tests.workflow import copy_workflow, snakemake

    wd = copy_workflow(tmp_path / "wf")
    (wd / ".test" / "official.yaml").write_text(
        "seed: 0\nscale: 1\n"
        "datasets:\n  synth-trivial: {adapter: synth_trivial, official: {scorer: mmau_string_match}}\n"
        "tasks:\n  pitch-order: {dataset: synth-trivial, family: pitch_order, params: {n_items: 8}}\n"
        "models:\n  text-overlap: {backend: text-overlap}\n"
        "conditions: [audio]\nprompts: [mcq-default]\n")
    snakemake(wd, "--configfile=.test/official.yaml", "results/all.tsv")
    dec = pd.read_parquet(wd / "results/scores/text-overlap/synth-trivial/pitch-order/audio/mcq-default/decisions.parquet")
    assert dec["official_score"].notna().all()
    row = pd.read_csv(wd / "results/all.tsv", sep="\t").iloc[0]
    assert row["value_official"] == pytest.approx(dec["official_score"].mean()) and row["n_official"] == len(dec)
