"""Imported outputs through the real Snakefile: scored like a model, labels hidden by default,
a missing output counted as an item error, and an edited file regenerating its predictions."""
import json

import pandas as pd
import pytest
import yaml

from tests.workflow import copy_workflow, planned_jobs, snakemake

CONFIG = {
    "seed": 0, "scale": 1,
    "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
    "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 8}}},
    "models": {"published": {"backend": "imported", "params": {"predictions": "imported/outputs.jsonl"},
                             "max_error_rate": 0.2}},
    "conditions": ["audio"], "prompts": ["mcq-default"],
}


@pytest.mark.slow
def test_imported_outputs_run_through_the_workflow(tmp_path):
    wd = copy_workflow(tmp_path)
    (wd / "imported.yaml").write_text(yaml.safe_dump(CONFIG))
    snakemake(wd, "--configfile=imported.yaml", "results/tasks/synth-trivial/pitch-order.jsonl")
    items = [json.loads(line) for line in open(wd / "results/tasks/synth-trivial/pitch-order.jsonl")]
    gold = [next(o for o in it["options"] if o["label"] == it["answer_label"]) for it in items]
    # item 0: a bare letter (not a choice when no letters were shown); items 1-6: the gold text;
    # item 7: no output (an item error); one output for an id that is no item
    rows = [{"id": items[0]["id"], "response": gold[0]["label"]}]
    rows += [{"id": it["id"], "response": g["text"]} for it, g in zip(items[1:7], gold[1:7])]
    rows.append({"id": "not-an-item", "response": "A"})
    out = wd / "imported" / "outputs.jsonl"
    out.parent.mkdir()
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))

    snakemake(wd, "--configfile=imported.yaml", "results/all.tsv")
    acc = pd.read_csv(wd / "results" / "all.tsv", sep="\t").query("metric == 'accuracy'")
    assert acc[["model", "n", "value", "parse_failure_rate"]].values.tolist() == [["published", 8, 6 / 8, 2 / 8]]
    log = (wd / "results" / "logs" / "generate" / "published" / "synth-trivial.log").read_text()
    assert f"no imported output for item {items[7]['id']!r} in imported/outputs.jsonl" in log
    assert "1 of 8 outputs in imported/outputs.jsonl matched no item" in log

    rows[1]["response"] = gold[1]["label"]  # edited in place: the model's predictions are made again
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    jobs = planned_jobs(snakemake(wd, "--configfile=imported.yaml", "-n", "results/all.tsv").stdout)
    assert {"generate_core", "infer", "score"} <= {j["rule"] for j in jobs}
