"""An adapter's user files are inputs of rule adapt_dataset: editing one reruns exactly what depends on it."""
from __future__ import annotations

import importlib
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml

from lalmbench.data.adapters import ADAPTERS, user_files
from tests.workflow import ROOT, copy_workflow, planned_jobs, snakemake

MMAU = ROOT / "tests" / "data" / "datasets" / "mmau" / "mmau-test-mini-sample.json"


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_every_file_an_adapter_requires_is_declared(name):
    module = importlib.import_module(ADAPTERS[name])
    source = open(module.__file__, encoding="utf-8").read()
    required = {k.split(".")[0] for k in re.findall(r'require_file\(.*?\bkey=f?"([A-Za-z_.{}]+)"', source, re.S)}
    assert required and required <= set(module.FILE_PARAMS), (name, required)


def test_a_presets_question_file_is_declared(tmp_path):
    (tmp_path / "q.json").write_text("[]")
    assert user_files("mmau", {"items": str(tmp_path / "q.json"), "audio_root": str(tmp_path)}) == [str(tmp_path / "q.json")]


def test_user_files_are_the_existing_declared_paths(tmp_path):
    (tmp_path / "a.csv").write_text("x")
    (tmp_path / "dev.csv").write_text("x")
    params = {"annotations": str(tmp_path / "a.csv"), "audio_root": str(tmp_path),
              "split_files": {"dev": str(tmp_path / "dev.csv"), "test": str(tmp_path / "missing.csv")}}
    assert user_files("tacobelal", params) == [str(tmp_path / "a.csv"), str(tmp_path / "dev.csv")]
    assert user_files("synth_trivial", {"n": 1}) == []


def _mmau_copy(tmp_path):
    """A workflow copy with the MMAU sample as a real dataset's question file (ext/mmau.json) and its audio."""
    wd = copy_workflow(tmp_path / "wf")
    recs = json.loads(MMAU.read_text())
    for r in recs:
        path = wd / "ext" / "mmau" / r["audio_id"]
        path.parent.mkdir(parents=True, exist_ok=True)
        sf.write(path, np.zeros(1600, np.float32), 16000)
    items = wd / "ext" / "mmau.json"
    items.write_text(json.dumps(recs))
    return wd, recs, items


@pytest.mark.slow
def test_editing_one_gold_answer_reruns_that_dataset_only_and_changes_its_row(tmp_path):
    wd, recs, items = _mmau_copy(tmp_path)
    cfg = {"seed": 0, "scale": 1,
           "datasets": {"mmau-mini": {"adapter": "mmau", "params": {"items": "ext/mmau.json", "audio_root": "ext/mmau"}},
                        "synth-trivial": {"adapter": "synth_trivial"}},
           "tasks": {"mmau-all": {"dataset": "mmau-mini", "family": "import"},
                     "pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 4}}},
           "models": {"random": {"backend": "random", "seed": 0}},
           "conditions": ["audio"], "prompts": ["mcq-default"]}
    (wd / "c.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(wd, "--configfile=c.yaml", "results/all.tsv")
    decisions = "results/scores/random/mmau-mini/mmau-all/audio/mcq-default/decisions.parquet"
    before = pd.read_parquet(wd / decisions).set_index("id")

    edited = recs[0]["id"]
    recs[0]["answer"] = next(c for c in recs[0]["choices"] if c != recs[0]["answer"])
    items.write_text(json.dumps(recs))
    jobs = planned_jobs(snakemake(wd, "--configfile=c.yaml", "-n", "results/all.tsv").stdout)
    assert {j["wildcards"].get("dataset") for j in jobs if "dataset" in j["wildcards"]} == {"mmau-mini"}
    assert {"adapt_dataset", "import_task", "score", "aggregate"} <= {j["rule"] for j in jobs}
    snakemake(wd, "--configfile=c.yaml", "results/all.tsv")

    after = pd.read_parquet(wd / decisions).set_index("id")
    changed = [i for i in before.index if before.loc[i, "gold_label"] != after.loc[i, "gold_label"]]
    assert changed == [edited]
    assert before.drop(edited)["correct"].equals(after.drop(edited)["correct"])
    assert planned_jobs(snakemake(wd, "--configfile=c.yaml", "-n", "results/all.tsv").stdout) == []


def test_a_files_digest_follows_content_not_mtime_and_reads_a_file_once(tmp_path, monkeypatch):
    import os

    from lalmbench.core import digests

    src = tmp_path / "a.json"
    src.write_text('{"answer": "dog"}')
    cache = tmp_path / "cache.json"
    first = digests.files_digest([str(src)], cache)
    st = os.stat(src)
    src.write_text('{"answer": "cat"}')  # same size
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))  # touch -r: the old mtime is back
    assert os.stat(src).st_mtime_ns == st.st_mtime_ns and digests.files_digest([str(src)], cache) != first
    reads = []
    monkeypatch.setattr(digests, "_sha256", lambda p: reads.append(p) or "x")
    digests.files_digest([str(src)], cache)
    assert reads == []  # unchanged since the cache saw it: not read again


@pytest.mark.slow
def test_an_edit_that_keeps_the_old_mtime_reruns_the_dataset(tmp_path):
    """tar -x, rsync -a and touch -r put an old mtime back on an edited file: its content digest reruns it."""
    import os

    wd, recs, items = _mmau_copy(tmp_path)
    cfg = {"datasets": {"mmau-mini": {"adapter": "mmau", "params": {"items": "ext/mmau.json", "audio_root": "ext/mmau"}}},
           "tasks": {"mmau-all": {"dataset": "mmau-mini", "family": "import"}},
           "models": {"random": {"backend": "random", "seed": 0}}, "conditions": ["audio"], "prompts": ["mcq-default"]}
    (wd / "c.yaml").write_text(yaml.safe_dump(cfg))
    target = "results/tasks/mmau-mini/mmau-all.jsonl"
    snakemake(wd, "--configfile=c.yaml", target)
    st = os.stat(items)
    recs[0]["answer"] = next(c for c in recs[0]["choices"] if c != recs[0]["answer"])
    items.write_text(json.dumps(recs))
    os.utime(items, ns=(st.st_atime_ns, st.st_mtime_ns))
    jobs = planned_jobs(snakemake(wd, "--configfile=c.yaml", "-n", target).stdout)
    assert [j["rule"] for j in jobs if j["rule"] == "adapt_dataset"] == ["adapt_dataset"], jobs
    snakemake(wd, "--configfile=c.yaml", target)
    gold = {it["id"]: it["answer_text"] for it in map(json.loads, (wd / target).read_text().splitlines())}
    assert gold[recs[0]["id"]] == recs[0]["answer"]
    assert planned_jobs(snakemake(wd, "--configfile=c.yaml", "-n", target).stdout) == []
