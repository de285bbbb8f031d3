"""scripts/sweep_*.py end to end on files (the rule entry points), and the sweep rules in a dry run."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lalmbench.core import io
from tests.workflow import copy_workflow, planned_jobs, snakemake

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["low then high", "high then low"]


def _write_items(path, n=10):
    items = [{"id": f"p{i}", "task": "pitch-order", "dataset": "d", "clip_id": f"c{i}", "audio_path": "x.wav",
              "question": "Which order?", "answer_label": "AB"[i % 2], "answer_text": TEXTS[i % 2], "references": [],
              "meta": {}, "options": [{"label": lab, "text": t, "type": "order", "meta": {}}
                                      for lab, t in zip("AB", TEXTS)]} for i in range(n)]
    io.write_jsonl(path, items)
    return items


def _run(*args):
    res = subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    return res


def test_circular_items_and_score_files(tmp_path):
    _write_items(tmp_path / "items.jsonl")
    shifted_path = tmp_path / "shifted.jsonl"
    _run("scripts/sweep_circular.py", "items", "--items", tmp_path / "items.jsonl", "--k", 4, "--out", shifted_path)
    shifted = io.read_jsonl(shifted_path)
    assert len(shifted) == 20  # k capped at 2 options
    # a model that always answers "A": right on exactly one of the two shifts of every item
    pd.DataFrame({"id": [s["id"] for s in shifted], "raw_output": "A", "model_id": "always-a",
                  "backend": "fake"}).to_parquet(tmp_path / "preds.parquet")
    out = tmp_path / "out"
    _run("scripts/sweep_circular.py", "score", "--items", shifted_path, "--predictions", tmp_path / "preds.parquet",
         "--k", 4, "--run", "m", "d", "pitch-order", "audio", "mcq-default", "--decisions", out / "dec.parquet",
         "--metrics", out / "metrics.json", "--tables", out / "tables.tsv", "--config-hash", "abc")
    m = json.loads((out / "metrics.json").read_text())
    assert (m["metric"], m["value"], m["n"], m["plain_accuracy"]) == ("circular_accuracy", 0.0, 10, 0.5)
    assert m["chance"] == 0.25 and m["position_p"] < 1e-4
    assert [e["metric"] for e in m["extra_metrics"]] == ["circular_plain_accuracy", "circular_consistency"]
    tables = pd.read_csv(out / "tables.tsv", sep="\t")
    assert set(tables["table"]) == {"by_shift", "by_gold_position"}
    assert len(pd.read_parquet(out / "dec.parquet")) == 20


def test_determinism_script(tmp_path):
    _write_items(tmp_path / "items.jsonl", n=4)
    ids = [f"p{i}" for i in range(4)]
    pd.DataFrame({"id": ids, "raw_output": ["A", "B", "A", "B"]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"id": ids, "raw_output": ["A", "B", "A.", "A"]}).to_parquet(tmp_path / "b.parquet")
    _run("scripts/sweep_determinism.py", "--items", tmp_path / "items.jsonl", "--a", tmp_path / "a.parquet",
         "--b", tmp_path / "b.parquet", "--batch-sizes", 1, 8, "--run", "m", "d", "t", "audio", "p",
         "--out", tmp_path / "det.json")
    m = json.loads((tmp_path / "det.json").read_text())
    assert m["metric"] == "batch_determinism_bs1_vs_bs8"
    assert (m["n_identical"], m["value"], m["label_identical_rate"]) == (2, 0.5, 0.75)


def test_prompt_spread_script(tmp_path):
    paths = []
    for prompt, value in [("p1", 0.4), ("p2", 0.6)]:
        p = tmp_path / f"{prompt}.json"
        io.write_json(p, {"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": prompt,
                          "metric": "accuracy", "value": value, "n": 10})
        paths.append(p)
    _run("scripts/sweep_prompt_spread.py", "--out", tmp_path / "spread.tsv", *paths)
    row = pd.read_csv(tmp_path / "spread.tsv", sep="\t").iloc[0]
    assert (row["n_prompts"], row["min_prompt"], row["max_prompt"]) == (2, "p1", "p2")
    assert row["range"] == pytest.approx(0.2)


def test_sweep_rules_dry_run(tmp_path):
    import yaml

    wd = copy_workflow(tmp_path)  # a fresh copy: the working tree's results (make run) must not matter
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    first_task = sorted(cfg["tasks"])[0]
    cfg["sweeps"] = {"circular": {"k": 3, "models": ["random"], "tasks": [first_task], "conditions": ["audio"]},
                     "prompt_spread": True,
                     "determinism": {"batch_sizes": [1, 2], "models": ["random"], "tasks": [first_task],
                                     "conditions": ["audio"]}}
    (wd / "c.yaml").write_text(yaml.safe_dump(cfg))
    jobs = planned_jobs(snakemake(wd, "-n", "--configfile=c.yaml", "sweeps").stdout)
    assert {"sweep_circular_items", "sweep_circular_infer", "sweep_circular_score", "sweep_prompt_spread",
            "sweep_determinism_infer", "sweep_determinism"} <= {j["rule"] for j in jobs}
