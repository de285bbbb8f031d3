"""End to end on real speech: espeak-ng speaks a LibriSpeech-format fixture, the cascade's Whisper tiny.en
transcribes it through the real Snakefile (config/examples/asr-cascade.yaml), and results/all.tsv carries the
WER of those transcripts (value, and Qwen2-Audio's rule as value_official) beside Qwen2-Audio's table."""
from __future__ import annotations

import json

import pandas as pd
import yaml
import pytest

from tests.report.spoken import UTTERANCES, spoken_librispeech
from tests.workflow import copy_workflow, snakemake


@pytest.mark.slow
def test_whisper_transcribes_spoken_librispeech_and_the_wer_reaches_all_tsv_and_the_report(tmp_path):
    wd = copy_workflow(tmp_path / "wd")
    spoken_librispeech(wd / "data")
    snakemake(wd, "--configfile=config/examples/asr-cascade.yaml", "results/all.tsv",
              "results/tables/report_qwen2-audio.tsv")

    run = "cascade-asr/librispeech-test-clean/librispeech-test-clean/audio/mcq-default"
    pred = pd.read_parquet(wd / "results" / "predictions" / f"{run}.parquet").set_index("id")
    refs = {f"{spk}-{chap}-{i:04d}": text for spk, chap, lines in UTTERANCES for i, text in enumerate(lines)}
    assert set(pred.index) == set(refs) and pred["error"].isna().all()
    out = pred["raw_output"].to_dict()
    assert not any(o.startswith("Sound events") for o in out.values())      # the transcript alone (open_answer)
    # the model heard the speech: every transcript gets at least half of its reference's words right
    from whisper_normalizer.english import EnglishTextNormalizer
    import jiwer

    norm = EnglishTextNormalizer()
    per = {i: jiwer.process_words(norm(refs[i]), norm(out[i])) for i in refs}
    hits = {i: p.hits / (p.hits + p.substitutions + p.deletions) for i, p in per.items()}
    assert min(hits.values()) >= 0.5, {i: (out[i], h) for i, h in hits.items()}
    errors = sum(p.substitutions + p.deletions + p.insertions for p in per.values())
    words = sum(p.hits + p.substitutions + p.deletions for p in per.values())

    table = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    wer = table[(table["model"] == "cascade-asr") & (table["metric"] == "wer")].iloc[0]
    assert (wer["n"], wer["n_official"]) == (4, 4)
    assert wer["value"] == pytest.approx(errors / words, abs=5e-7)  # corpus WER, to all.tsv's 6 decimals
    assert 0 < wer["value_official"] < 0.5 and wer["ci_low"] <= wer["value"] <= wer["ci_high"]
    metrics = json.loads((wd / "results" / "scores" / run / "metrics.json").read_text())
    assert metrics["official_scorer"] == "qwen2_audio_wer"

    report = pd.read_csv(wd / "results" / "tables" / "report_qwen2-audio.tsv", sep="\t").set_index("row")
    clean = report.loc["librispeech/test-clean"]
    assert clean["value_official"] == pytest.approx(100 * wer["value_official"], abs=1e-4)
    assert clean["value"] == pytest.approx(100 * wer["value"], abs=1e-4) and clean["published"] == 1.6
    assert clean["interval_of"] == "value_official (bootstrap 95% over speakers)"   # 3 speakers
    assert clean["interval_low"] < clean["value_official"] < clean["interval_high"]
    assert clean["flag"] == ("outside" if clean["interval_low"] > 1.6 else "inside")
    assert len(report) == 25 and (report.drop(index="librispeech/test-clean")["flag"] == "not run").all()
    assert report.loc["cv15/en", "reason"] == "dataset 'cv15-en' (preset common_voice) is not in this config"
    assert (wd / "results" / "figures" / "report_qwen2-audio.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2-audio", "qwen25-omni", "kimi-audio"])
def test_each_report_config_plans_its_runs_and_the_report_table(tmp_path, name):
    """The Snakefile reads each report config and plans one scoring job per task it runs, then the table."""
    from tests.workflow import planned_jobs

    wd = copy_workflow(tmp_path / "wd")
    plan = planned_jobs(snakemake(wd, f"--configfile=config/examples/report-{name}.yaml", "-n").stdout)
    tables = [j for j in plan if j["rule"] == "report_table"]
    assert [j["wildcards"] for j in tables] == [{"report": name}]
    cfg = yaml.safe_load((wd / "config" / "examples" / f"report-{name}.yaml").read_text())
    assert sum(j["rule"] in ("score", "score_open") for j in plan) == len(cfg["tasks"])
