"""The replication check: two result folders made by the package's own inference and scoring code,
one seeded difference each (a package version, a prompt, one model output, one audio file)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import soundfile as sf

from lalmbench.checks import replicate
from lalmbench.core import io, provenance
from lalmbench.core.runs import Run
from lalmbench.data.synth.trivial import generate_family
from lalmbench.inference import run_inference
from lalmbench.models.base import ModelOutput
from lalmbench.models.baselines import RandomBaseline
from lalmbench.report.aggregate import write_all_tsv
from lalmbench.scoring.run import score_run_files

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "resources" / "prompts" / "mcq-default.txt"
CFG = {"backend": "random", "seed": 0, "batch_size": 4}
RUNS = [Run("random", "synth", "po", c, "mcq-default") for c in ("audio", "no-audio")]
FLIPPED = "po-00003"


@pytest.fixture(scope="module")
def items(tmp_path_factory) -> list[dict]:
    items, *_ = generate_family("pitch_order", 8, tmp_path_factory.mktemp("audio"), seed=0, dataset="synth", task="po")
    return items


class OneItemDiffers(RandomBaseline):
    """The random baseline, except that one item's answer comes out otherwise: a machine whose
    kernels compute one item differently."""

    def generate(self, batch):
        return [ModelOutput(raw_output="I cannot tell.") if x.id == FLIPPED else o
                for x, o in zip(batch, super().generate(batch))]


def build(root: Path, items: list[dict], *, template: Path = TEMPLATE, model_cls=None) -> Path:
    """A results folder as the workflow lays it out: items, predictions, decisions, all.tsv."""
    res = root / "results"
    items_path = res / "tasks" / "synth" / "po.jsonl"
    io.write_jsonl(items_path, items)
    metrics = []
    for run in RUNS:
        pred = res / "predictions" / f"{run.key}.parquet"
        run_inference(items_path=str(items_path), out_path=str(pred), model_name=run.model, model_cfg=CFG,
                      condition=run.condition, prompt_name=run.prompt, template_path=str(template),
                      model=model_cls(run.model, CFG) if model_cls else None)
        metrics.append(str(res / "scores" / run.key / "metrics.json"))
        score_run_files(items_path=str(items_path), predictions_path=str(pred), parser_cfg={}, config_hash="h",
                        run=[run.model, run.dataset, run.task, run.condition, run.prompt],
                        decisions_path=str(res / "scores" / run.key / "decisions.parquet"), metrics_path=metrics[-1])
    write_all_tsv(metrics, str(res / "all.tsv"))
    return res


@pytest.fixture(scope="module")
def folder_a(tmp_path_factory, items) -> Path:
    return build(tmp_path_factory.mktemp("a"), items)


def check(a: Path, b: Path, tmp_path: Path, capsys) -> tuple[int, str, pd.DataFrame, dict]:
    rc = replicate.main([str(a), str(b), "--tsv", str(tmp_path / "r.tsv"), "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    tsv = pd.read_csv(tmp_path / "r.tsv", sep="\t", dtype=str, keep_default_na=False)
    return rc, out, tsv, json.loads((tmp_path / "r.json").read_text())


def test_predictions_record_what_a_replication_needs(folder_a, items):
    pred = folder_a / "predictions" / f"{RUNS[0].key}.parquet"
    df = pd.read_parquet(pred)
    assert df.audio_digest.notna().all() and df.audio_digest.nunique() == len(items)
    assert df.prompt_digest.nunique() == 1  # pitch-order items share question and options
    (digest,) = set(df.environment)
    env = json.loads(io.parquet_metadata(pred)[replicate.ENVIRONMENTS_KEY])[digest]
    assert env["lock"]["env"] == "core" and env["lock"]["file"].startswith("envs/core/requirements.")
    assert len(env["lock"]["sha256"]) == 64
    assert env["cpu"]["flags"] and env["cpu"]["model"] and isinstance(env["gpu"], list)
    assert env["packages"]["numpy"] == json.loads(df.versions[0])["numpy"]
    no_audio = pd.read_parquet(folder_a / "predictions" / f"{RUNS[1].key}.parquet")
    assert no_audio.audio_digest.isna().all()


def test_two_independent_builds_are_identical(folder_a, items, tmp_path, capsys):
    b = build(tmp_path / "b", items)
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    assert rc == 0, out
    assert "2 runs: 2 identical, 0 differ" in out and "all.tsv: 0 cells differ" in out
    assert tsv.empty and report["identical"] is True


def test_a_changed_package_version_is_named_among_the_environment_differences(folder_a, items, tmp_path, capsys,
                                                                              monkeypatch):
    real = provenance.installed_packages
    monkeypatch.setattr(provenance, "installed_packages", lambda: {**real(), "numpy": "0.0.1"})
    provenance._environment.cache_clear()
    try:
        b = build(tmp_path / "b", items)
    finally:
        provenance._environment.cache_clear()
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    numpy = real()["numpy"]
    assert rc == 0, out  # same results: the environments differ, the replication holds
    assert report["environment"] == {"random": [{"field": "package.numpy", "a": numpy, "b": "0.0.1"}]}
    assert tsv[["model", "stage", "field", "a", "b"]].values.tolist() == [
        ["random", "environment", "package.numpy", numpy, "0.0.1"]]
    assert "package.numpy" in out and "0.0.1" in out


def test_a_changed_prompt_is_the_first_stage(folder_a, items, tmp_path, capsys):
    template = tmp_path / "mcq-default.txt"
    template.write_text("Listen closely. " + TEMPLATE.read_text())
    b = build(tmp_path / "b", items, template=template)
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    assert rc == 1
    run = next(r for r in report["runs"] if r["condition"] == "audio")
    # the random baseline answers from the item id: same outputs, so only the prompt differs
    assert run["first_stage"] == "prompt" and run["by_stage"] == {"prompt": len(items)}
    assert {d["stages"] == ["prompt"] for d in run["items"]} == {True}
    assert set(tsv.stage) == {"prompt"} and set(tsv.field) == {"prompt_digest"} and len(tsv) == 2 * len(items)
    assert "random  synth    po    audio      mcq-default  prompt" in out


def test_a_changed_raw_output_is_the_first_stage_and_its_cells_are_listed(folder_a, items, tmp_path, capsys):
    b = build(tmp_path / "b", items, model_cls=OneItemDiffers)
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    assert rc == 1
    for run in report["runs"]:
        (item,) = run["items"]
        assert item["id"] == FLIPPED and item["stage"] == "raw output" and item["field"] == "raw_output"
        assert item["b"] == "I cannot tell." and item["a"] in ("A", "B")
        assert item["stages"][:2] == ["raw output", "parse"]  # unparseable in B
    cells = {(d["condition"], d["column"]): (d["a"], d["b"]) for d in report["all_tsv"]}
    assert cells[("audio", "parse_failure_rate")] == ("0", "0.125")
    assert f"{FLIPPED}  raw output   raw_output" in out and "all.tsv cells that differ" in out


def test_changed_audio_is_the_first_stage(folder_a, items, tmp_path, capsys):
    audio = tmp_path / "audio.wav"
    x, sr = sf.read(items[0]["audio_path"])
    sf.write(audio, x * 0.5, sr)
    b = build(tmp_path / "b", [{**items[0], "audio_path": str(audio)}, *items[1:]])
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    assert rc == 1
    by_condition = {r["condition"]: r for r in report["runs"]}
    assert [(d["id"], d["stage"]) for d in by_condition["audio"]["items"]] == [(items[0]["id"], "audio")]
    assert by_condition["no-audio"]["status"] == "identical"  # the model heard no audio there


def test_a_run_in_one_folder_only_is_a_difference(folder_a, tmp_path, capsys):
    b = tmp_path / "b" / "results"
    shutil.copytree(folder_a, b)
    shutil.rmtree(b / "scores" / RUNS[1].key)
    (b / "predictions" / f"{RUNS[1].key}.parquet").unlink()
    rc, out, tsv, report = check(folder_a, b.parent, tmp_path, capsys)  # the checkout holding results/ also works
    assert rc == 1
    assert [r["status"] for r in report["runs"]] == ["identical", "only in A"]
    assert "Runs only in A: random (1)" in out
    assert tsv[["condition", "stage", "a", "b"]].values.tolist() == [["no-audio", "run", "present", "-"]]


def test_a_copy_of_the_predictions_alone_is_compared_on_what_it_has(folder_a, tmp_path, capsys):
    b = tmp_path / "b" / "results"
    shutil.copytree(folder_a / "predictions", b / "predictions")
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    assert rc == 0, out
    assert [r["status"] for r in report["runs"]] == ["identical", "identical"]
    assert "note: all.tsv only in A: not compared" in out and "note: decisions only in A: not compared" in out


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nowhere", "no such folder"),
    (lambda p: p, "not a results folder"),
])
def test_bad_input_exits_2_naming_the_folder(folder_a, tmp_path, capsys, make, message):
    bad = make(tmp_path)
    assert replicate.main([str(folder_a), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: {message}" in err


@pytest.mark.parametrize("rel", [f"scores/{RUNS[0].key}/decisions.parquet", f"predictions/{RUNS[0].key}.parquet"])
def test_a_corrupt_file_exits_2_naming_it(folder_a, tmp_path, capsys, rel):
    b = tmp_path / "results"
    shutil.copytree(folder_a, b)
    bad = b / rel
    bad.write_bytes(b"not parquet")
    assert replicate.main([str(folder_a), str(b)]) == 2
    assert f"{bad}: not a readable parquet file" in capsys.readouterr().err


@pytest.mark.parametrize("rel", [f"predictions/{RUNS[0].model}/synth/po/audio/p.parquet", "all.tsv"])
def test_a_fifo_named_like_a_results_file_exits_2_naming_it(folder_a, tmp_path, capsys, rel):
    import os
    b = tmp_path / "results"
    shutil.copytree(folder_a, b)
    fifo = b / rel
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    assert replicate.main([str(folder_a), str(b)]) == 2  # returns: nothing opens the FIFO
    assert f"{fifo}: not a regular file" in capsys.readouterr().err


def test_an_all_tsv_without_key_columns_is_refused_on_its_header(folder_a, tmp_path, capsys, monkeypatch):
    b = tmp_path / "results"
    shutil.copytree(folder_a, b)
    (b / "all.tsv").write_text("x\ty\n" + "1\t2\n" * 1000)
    real = pd.read_csv
    monkeypatch.setattr(pd, "read_csv", lambda path, *a, **k: pytest.fail("the whole file was read")
                        if Path(path).parent == b else real(path, *a, **k))
    assert replicate.main([str(folder_a), str(b)]) == 2
    assert f"{b / 'all.tsv'}: no column(s) {replicate.ALL_TSV_KEYS}: not a lalmbench all.tsv" in capsys.readouterr().err


class FormulaOutput(RandomBaseline):
    def generate(self, batch):
        return [ModelOutput(raw_output="=cmd|' /C calc'!A0") if x.id == FLIPPED else o
                for x, o in zip(batch, super().generate(batch))]


def test_the_tsv_writes_formula_like_cells_inert(folder_a, items, tmp_path, capsys):
    b = build(tmp_path / "b", items, model_cls=FormulaOutput)
    rc, out, tsv, report = check(folder_a, b, tmp_path, capsys)
    assert rc == 1
    raw = tsv[tsv.field == "raw_output"]
    assert set(raw.b) == {"'=cmd|' /C calc'!A0"}
    assert not any(v.startswith(("=", "+", "@")) for v in tsv.values.ravel())
    assert report["runs"][0]["items"][0]["b"] == "=cmd|' /C calc'!A0"  # the JSON keeps the exact text


def test_two_runs_timed_differently_replicate_and_a_token_count_that_differs_does_not(tmp_path):
    from lalmbench.checks.replicate import compare_all_tsv, results_folder

    run = {"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": "p", "metric": "accuracy",
           "value": 0.5, "n": 2}

    def folder(name, latency, ttft, out_tokens):
        cost = {"backend": "openai", "input_tokens_mean": 11, "output_tokens_mean": out_tokens,
                "latency_s_mean": latency, "ttft_s_mean": ttft, "cost_note": ""}
        (tmp_path / f"{name}.json").write_text(json.dumps({**run, "cost": cost}))
        (tmp_path / name).mkdir()
        write_all_tsv([str(tmp_path / f"{name}.json")], str(tmp_path / name / "all.tsv"))
        return results_folder(tmp_path / name)

    a = folder("a", 0.5, 0.1, 3)
    assert compare_all_tsv(a, folder("b", 0.9, 0.3, 3)) == []
    assert [(d["column"], d["a"], d["b"]) for d in compare_all_tsv(a, folder("c", 0.5, 0.1, 4))] == [
        ("output_tokens_mean", "3", "4")]
