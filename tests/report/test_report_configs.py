"""Each report config (config/examples/report-<name>.yaml) end to end offline: its datasets pointed at
small copies of the releases (tests/report/release_fixtures.py), its model swapped for the cascade
(Whisper tiny.en's transcript for ASR and translation rows, its sentence-embedding choice for
multiple choice), the real Snakefile run to results/tables/report_<name>.tsv. The table names every
published row: rows that ran carry value (and value_official where the report's rule runs offline),
the others say why.

To see a table: ``.venv/bin/python -m pytest tests/report/test_report_configs.py -k 'runs and qwen2-audio'
--basetemp=/tmp/report-run``, then ``/tmp/report-run/*/wd/results/tables/report_qwen2-audio.tsv``."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from lalmbench.data.adapters import adapt
from lalmbench.data.adapters.benchmarks import is_preset, official_protocol
from lalmbench.report.model_report import load_report
from lalmbench.scoring.official import SCORERS, official_spec
from tests.report.release_fixtures import lay_out, point_at
from tests.workflow import ROOT, copy_workflow, snakemake

REPORTS = ["qwen2-audio", "qwen25-omni", "kimi-audio"]
MODEL = "cascade-asr"


def fixture_config(wd: Path, name: str) -> tuple[Path, dict]:
    """The report config with its /data paths under wd/data (the releases laid out there), the cascade of
    config/examples/asr-cascade.yaml as its report model, one job per model and dataset."""
    cfg = point_at(yaml.safe_load((ROOT / "config" / "examples" / f"report-{name}.yaml").read_text()), wd / "data")
    lay_out(cfg["datasets"])
    cascade = yaml.safe_load((ROOT / "config" / "examples" / "asr-cascade.yaml").read_text())["models"][MODEL]
    cfg.update(models={MODEL: cascade}, reports={name: {"model": MODEL}}, run_jobs="per-dataset")
    path = wd / f"report-{name}-fixtures.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False))
    return path, cfg


def _judge_rule(preset: str) -> str | None:
    """The preset's report rule when it asks an LLM judge (it runs only with a judge: block)."""
    spec = official_spec(official_protocol({"adapter": preset})["official"])
    return spec["scorer"] if spec and SCORERS[spec["scorer"]].needs == "ask" else None


@pytest.mark.parametrize("name", REPORTS)
def test_every_dataset_of_each_report_config_reads_its_release_layout_fixture(tmp_path, name):
    """What the slow run reads: every dataset of the config finds its items where the config points (the
    releases' layouts), none left out."""
    path, cfg = fixture_config(tmp_path, name)
    assert {d["adapter"] for d in cfg["datasets"].values()} >= {"librispeech", "meld", "vocalsound"}
    for key, d in cfg["datasets"].items():
        res = adapt(d["adapter"], d["params"], dataset=key)
        assert len(res.items) >= 2 and not res.stats.get("dropped"), (key, res.stats)


def check_report_table(table: pd.DataFrame, name: str, cfg: dict) -> None:
    """Every ledger row in order; a row that can run here ran (value, value_official unless the report's
    rule cannot score it here, which reason names); every other row says why."""
    ledger = load_report(name)["rows"]
    assert list(table.index) == [r["id"] for r in ledger]
    ran = []
    for r in ledger:
        row = table.loc[r["id"]]
        if r.get("cannot_run"):
            assert (row["flag"], row["reason"]) == ("not run", r["cannot_run"])
        elif not is_preset(r["preset"]):
            assert row["flag"] == "not run" and f"preset {r['preset']!r} is not in this installation" in row["reason"]
        else:
            ran.append(r["id"])
            assert row["flag"] in ("inside", "outside") and row["n"] >= 1 and math.isfinite(row["value"]), row
            d, task = cfg["datasets"][r["dataset"]], cfg["tasks"][r.get("task") or r["dataset"]]
            rule = official_spec(official_protocol(d)["official"])
            kind = (task.get("params") or {}).get("kind")
            if _judge_rule(r["preset"]) or ("official" in d and not d["official"]):
                # Kimi-Audio's classification rule asks a judge, which the config does not have
                assert math.isnan(row["value_official"]) and "kimi_audio_judge" in row["reason"], row
            elif rule and kind and SCORERS[rule["scorer"]].kind != kind:
                # Clotho-AQA's rule scores its open answers; the report config runs the yes/no questions
                assert math.isnan(row["value_official"]) and f"{rule['scorer']} scores" in row["reason"], row
            else:
                assert math.isfinite(row["value_official"]) and row["n_official"] >= 1, row
    assert len(ran) == {"qwen2-audio": 21, "qwen25-omni": 22, "kimi-audio": 19}[name]
    spoken = table[table["preset"] == "librispeech"]
    assert (spoken["value_official"] < 50).all(), spoken[["value_official", "value"]]   # Whisper heard it


@pytest.mark.reports
@pytest.mark.parametrize("name", REPORTS)
def test_each_report_config_runs_offline_and_its_table_names_every_published_row(tmp_path, name):
    wd = copy_workflow(tmp_path / "wd")
    path, cfg = fixture_config(wd, name)
    snakemake(wd, f"--configfile={path.name}", f"results/tables/report_{name}.tsv")
    table = pd.read_csv(wd / "results" / "tables" / f"report_{name}.tsv", sep="\t", keep_default_na=False,
                        na_values=[""]).set_index("row")
    check_report_table(table, name, cfg)
    assert (wd / "results" / "figures" / f"report_{name}.png").stat().st_size > 10_000
