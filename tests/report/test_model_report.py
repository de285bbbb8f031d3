"""Model report tables: every printed row of a report's audio table is in results/tables/report_<name>.tsv,
beside value_official and value when the config ran it, or with the reason it was not run."""
from __future__ import annotations

import copy
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from lalmbench.core.io import InputError
from lalmbench.data.adapters.benchmarks import is_preset
from lalmbench.report.model_report import (load_report, official_bootstrap, report_names, report_table,
                                           write_report)
from lalmbench.workflow.config import ConfigError, expand_import_tasks, validate_config

ROOT = Path(__file__).resolve().parents[2]
REPORTS = {"qwen2-audio": "report-qwen2-audio.yaml", "qwen25-omni": "report-qwen25-omni.yaml",
           "kimi-audio": "report-kimi-audio.yaml"}


def _config(name: str) -> dict:
    cfg = yaml.safe_load((ROOT / "config" / "examples" / name).read_text())
    validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)
    return expand_import_tasks(cfg)


def _row(model, dataset, task, metric, value, ci=(math.nan, math.nan), n=100, official=math.nan, n_official=None):
    return {"model": model, "dataset": dataset, "task": task, "condition": "audio", "prompt": "mcq-default",
            "metric": metric, "value": value, "ci_low": ci[0], "ci_high": ci[1], "n": n, "value_official": official,
            "n_official": n if n_official is None else n_official}


def test_the_three_report_ledgers_cite_a_commit_for_every_row():
    assert set(report_names()) >= set(REPORTS)
    counts = {}
    for name in REPORTS:
        rep = load_report(name)
        for r in rep["rows"]:
            src = rep["sources"][r["source"]]
            assert len(src["commit"]) == 40 and src["path"] == "README.md", (name, r["id"])
        counts[name] = len(rep["rows"])
    assert counts == {"qwen2-audio": 25, "qwen25-omni": 38, "kimi-audio": 34}
    q2a = {r["id"]: r for r in load_report("qwen2-audio")["rows"]}
    assert (q2a["librispeech/test-clean"]["value"], q2a["librispeech/test-clean"]["also"][0]["value"]) == (1.6, 1.7)
    assert q2a["covost2/en-zh"]["value"] == 45.2 and q2a["meld"]["value"] == 0.553


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_each_report_config_runs_every_row_it_can_and_the_rest_say_why(name):
    """A row the ledger does not mark unrunnable, of a preset the config reads, names a dataset and task of
    the report's config with the preset the row needs; on an empty all.tsv every row is there, not run,
    with a reason."""
    cfg = _config(REPORTS[name])
    rep = load_report(name)
    read = {d["adapter"] for d in cfg["datasets"].values()}
    runnable = [r for r in rep["rows"] if not r.get("cannot_run") and r["preset"] in read]
    for r in runnable:
        assert cfg["datasets"][r["dataset"]]["adapter"] == r["preset"], r["id"]
        assert (r.get("task") or r["dataset"]) in cfg["tasks"], r["id"]
    assert len(runnable) == {"qwen2-audio": 21, "qwen25-omni": 22, "kimi-audio": 19}[name]
    model = cfg["reports"][name]["model"]
    empty = pd.DataFrame(columns=list(_row("m", "d", "t", "wer", 0.0)))
    df = report_table(empty, rep, model, cfg["datasets"], [r["preset"] for r in rep["rows"] if is_preset(r["preset"])])
    assert df["row"].tolist() == [r["id"] for r in rep["rows"]]
    assert set(df["flag"]) == {"not run"} and df["reason"].str.len().min() > 20


def test_a_run_row_gets_values_interval_and_flag_and_a_missing_one_its_reason(tmp_path):
    rep = load_report("qwen2-audio")
    datasets = {"librispeech-test-clean": {"adapter": "librispeech"}, "librispeech-test-other": {"adapter": "librispeech"},
                "cv15-zh": {"adapter": "common_voice"}, "librispeech-dev-clean": {"adapter": "common_voice"}}
    table = pd.DataFrame([
        _row("m", "librispeech-test-clean", "librispeech-test-clean", "wer", 0.0165, (0.012, 0.021), official=0.0161),
        _row("m", "librispeech-test-other", "librispeech-test-other", "wer", 0.060, (0.05, 0.07), official=0.061),
        _row("m", "cv15-zh", "cv15-zh", "wer", 0.95, (0.9, 0.99), official=0.072),      # words: unsegmented text
        _row("m", "cv15-zh", "cv15-zh", "cer", 0.070, (0.060, 0.080)),
        _row("other", "librispeech-test-clean", "librispeech-test-clean", "wer", 0.5, (0.4, 0.6))])
    presets = ["librispeech", "common_voice", "fleurs", "aishell2", "covost2", "air_bench"]
    df = report_table(table, rep, "m", datasets, presets).set_index("row")
    clean = df.loc["librispeech/test-clean"]
    assert (clean["published"], clean["published_alt"], clean["value_official"], clean["value"]) == (1.6, 1.7, 1.61, 1.65)
    assert (clean["interval_low"], clean["interval_high"], clean["flag"]) == (1.2, 2.1, "inside")
    assert clean["interval_of"] == "value (all.tsv wer 95%)" and clean["source"].startswith("QwenLM/Qwen2-Audio@595360e82b")
    assert df.loc["librispeech/test-other", "flag"] == "outside"                       # 3.6 below [5, 7]
    zh = df.loc["cv15/zh"]
    assert (zh["value_official"], zh["value"], zh["ours_metric"], zh["flag"]) == (7.2, 7.0, "cer", "inside")  # 6.9 in [6, 8]
    assert df.loc["librispeech/dev-clean", "reason"] == ("dataset 'librispeech-dev-clean' reads preset "
                                                         "'common_voice', the row needs 'librispeech'")
    assert df.loc["librispeech/dev-other", "reason"] == ("dataset 'librispeech-dev-other' (preset librispeech) "
                                                         "is not in this config")
    assert df.loc["meld", "reason"] == ("preset 'meld' is not in this installation "
                                        "(lalmbench/data/adapters/presets/meld.yaml)")
    assert df.loc["air-bench-chat/sound", "reason"].startswith("the report's score is a GPT-4 judge's")
    assert df.loc["meld", "published"] == pytest.approx(55.3)                           # printed 0.553


def test_an_accuracy_row_takes_the_wilson_interval_of_value_official(tmp_path):
    rep = copy.deepcopy(load_report("kimi-audio"))
    rep["rows"] = [r for r in rep["rows"] if r["id"] == "mmau/sound"]
    table = pd.DataFrame([_row("k", "mmau-test-mini", "mmau-sound", "accuracy", 0.70, (0.66, 0.74), n=333,
                               official=0.7207, n_official=333)])
    df = report_table(table, rep, "k", {"mmau-test-mini": {"adapter": "mmau"}}, ["mmau"])
    r = df.iloc[0]
    assert r["interval_of"] == "value_official (Wilson 95%)" and r["flag"] == "inside"
    assert (r["interval_low"], r["interval_high"]) == pytest.approx((67.0226, 76.6181), abs=1e-4)  # 240 of 333
    assert r["difference"] == pytest.approx(73.27 - 72.07)


def test_the_official_bootstrap_reaggregates_the_rules_statistics():
    same = [(1.0, 10.0)] * 5                                   # every item 10% WER: every resample too
    assert official_bootstrap(same, "wer") == (0.1, 0.1)
    mixed = [(0.0, 10.0), (5.0, 10.0), (1.0, 20.0), (0.0, 5.0), (3.0, 15.0)]   # corpus WER 9 / 60
    lo, hi = official_bootstrap(mixed, "wer")
    assert 0.0 <= lo < 9 / 60 < hi <= 5 / 10
    assert official_bootstrap(mixed * 4, "wer")[1] - official_bootstrap(mixed * 4, "wer")[0] < hi - lo
    assert math.isnan(official_bootstrap([(1.0, 10.0)], "wer")[0])          # one item: no interval
    from lalmbench.scoring.official_speech import bleu_from_stats

    bleu = [[8, 8, 6, 4, 2, 1, 8, 7, 6, 5], [5, 6, 5, 4, 3, 2, 5, 4, 3, 2], [7, 7, 2, 0, 0, 0, 7, 6, 5, 4]]
    corpus = bleu_from_stats([sum(c) for c in zip(*bleu)])
    lo, hi = official_bootstrap(bleu, "bleu")
    assert lo <= corpus <= hi and hi > lo


def test_the_rule_writes_the_table_and_its_figure(tmp_path):
    table = pd.DataFrame([_row("m", "librispeech-test-clean", "librispeech-test-clean", "wer", 0.1, (0.05, 0.15),
                               official=0.1)])
    table.to_csv(tmp_path / "all.tsv", sep="\t", index=False)
    dec = tmp_path / "results/scores/m/librispeech-test-clean/librispeech-test-clean/audio/mcq-default/decisions.parquet"
    dec.parent.mkdir(parents=True)
    pd.DataFrame({"id": ["a", "b", "c"], "official_stats": [[1.0, 10.0], [2.0, 10.0], [0.0, 10.0]]}).to_parquet(dec)
    out = {k: str(tmp_path / f"report.{k}") for k in ("tsv", "png", "svg")}
    write_report(str(tmp_path / "all.tsv"), "qwen2-audio", "m", {"librispeech-test-clean": {"adapter": "librispeech"}},
                 **out, decisions=[str(dec)])
    df = pd.read_csv(out["tsv"], sep="\t")
    assert len(df) == 25 and df.set_index("row").loc["librispeech/test-clean", "value_official"] == 10.0
    clean = df.set_index("row").loc["librispeech/test-clean"]
    assert clean["interval_of"] == "value_official (bootstrap 95% over items)"
    assert (clean["interval_low"], clean["interval_high"]) == (0.0, 20.0)   # resamples of 0/10, 1/10, 2/10 items
    assert Path(out["png"]).stat().st_size > 10_000 and "<svg" in Path(out["svg"]).read_text()[:500]


def test_a_wer_rows_interval_draws_speakers_when_the_task_file_names_them(tmp_path):
    """Six utterances of two speakers, one speaker's all wrong-ish and the other's all right: drawing
    utterances gives a narrower interval than drawing the two speakers, which the table says it did."""
    from lalmbench.core import io

    table = pd.DataFrame([_row("m", "librispeech-test-clean", "librispeech-test-clean", "wer", 0.25, official=0.25)])
    table.to_csv(tmp_path / "all.tsv", sep="\t", index=False)
    run = "m/librispeech-test-clean/librispeech-test-clean/audio/mcq-default"
    dec = tmp_path / "results" / "scores" / run / "decisions.parquet"
    dec.parent.mkdir(parents=True)
    ids = [f"{spk}-1-{i}" for spk in ("1089", "121") for i in range(3)]
    pd.DataFrame({"id": ids, "official_stats": [[5.0, 10.0]] * 3 + [[0.0, 10.0]] * 3}).to_parquet(dec)
    items = tmp_path / "results" / "tasks" / "librispeech-test-clean" / "librispeech-test-clean.jsonl"
    io.write_jsonl(items, [{"id": i, "meta": {"speaker": i.split("-")[0]}} for i in ids])
    out = {k: str(tmp_path / f"report.{k}") for k in ("tsv", "png", "svg")}
    args = (str(tmp_path / "all.tsv"), "qwen2-audio", "m", {"librispeech-test-clean": {"adapter": "librispeech"}})
    by_speaker = write_report(*args, **out, decisions=[str(dec)], items=[str(items)]).set_index("row")
    by_item = write_report(*args, **out, decisions=[str(dec)]).set_index("row")
    spk, itm = by_speaker.loc["librispeech/test-clean"], by_item.loc["librispeech/test-clean"]
    assert spk["interval_of"] == "value_official (bootstrap 95% over speakers)"
    assert itm["interval_of"] == "value_official (bootstrap 95% over items)"
    assert (spk["interval_low"], spk["interval_high"]) == (0.0, 50.0)     # either speaker alone, or both
    assert spk["interval_high"] - spk["interval_low"] > itm["interval_high"] - itm["interval_low"]


def test_a_bad_ledger_or_report_entry_fails_naming_it(tmp_path):
    rep = yaml.safe_load((ROOT / "lalmbench/data/reports/qwen2-audio.yaml").read_text())
    rep["rows"][2]["source"] = "blog"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(rep))
    with pytest.raises(InputError, match=r"bad\.yaml: row 'librispeech/test-clean': source 'blog' is not among "
                                         r"sources \(issue-135, issue-25, paper, readme\)"):
        load_report(bad)
    del rep["rows"][0]["where"]
    bad.write_text(yaml.safe_dump(rep))
    with pytest.raises(InputError, match=r"bad\.yaml: rows/0: 'where' is a required property"):
        load_report(bad)
    cfg = yaml.safe_load((ROOT / "config/examples/asr-cascade.yaml").read_text())
    cfg["reports"] = {"qwen2audio": {"model": "cascade-asr"}, "kimi-audio": {"model": "nobody"}}
    with pytest.raises(ConfigError, match=r"(?s)reports\.qwen2audio: no report ledger .*qwen2audio\.yaml .*did you mean "
                                          r"'qwen2-audio'.*reports\.kimi-audio\.model: unknown model 'nobody'"):
        validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)


def test_only_the_audio_condition_answers_a_row():
    rep = copy.deepcopy(load_report("qwen2-audio"))
    rep["rows"] = [r for r in rep["rows"] if r["id"] == "librispeech/test-clean"]
    silent = dict(_row("m", "librispeech-test-clean", "librispeech-test-clean", "wer", 1.0, (1.0, 1.0)),
                  condition="silence")
    df = report_table(pd.DataFrame([silent]), rep, "m", {"librispeech-test-clean": {"adapter": "librispeech"}},
                      ["librispeech"])
    assert df["reason"].tolist() == ["no wer row in all.tsv for model 'm' on "
                                     "librispeech-test-clean/librispeech-test-clean (condition audio)"]
