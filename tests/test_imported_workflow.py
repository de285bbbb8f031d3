"""Imported outputs through the real Snakefile: scored like a model, labels hidden by default, an item
the file has no output for left out and flagged (never a failed run), and an edited file regenerating
its predictions. docs/models.md's MMAU example runs as written on an older revision's file, and gives
the values lalmbench.score_mcq / score_official give on the same file."""
import json
import os
import random
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.workflow import copy_workflow, planned_jobs, snakemake

CONFIG = {
    "seed": 0, "scale": 1,
    "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
    "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 8}}},
    "models": {"published": {"backend": "imported", "params": {"predictions": "imported/outputs.jsonl"}}},
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
    # item 7: no output (left out: no max_error_rate is set, and the run goes on); one output for an id that is no item
    rows = [{"id": items[0]["id"], "response": gold[0]["label"]}]
    rows += [{"id": it["id"], "response": g["text"]} for it, g in zip(items[1:7], gold[1:7])]
    rows.append({"id": "not-an-item", "response": "A"})
    out = wd / "imported" / "outputs.jsonl"
    out.parent.mkdir()
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))

    snakemake(wd, "--configfile=imported.yaml", "results/all.tsv")
    acc = pd.read_csv(wd / "results" / "all.tsv", sep="\t").query("metric == 'accuracy'")
    assert acc[["model", "n", "value", "parse_failure_rate"]].values.tolist() == [["published", 7, round(6 / 7, 6), round(1 / 7, 6)]]
    assert acc["flags"].tolist() == ["1 of 8 items have no output in imported/outputs.jsonl: left out of value and "
                                     "value_official; imported outputs carry no question, choices or answer: the item "
                                     "version they were made on is not checked; 1 ids not in the items"]
    log = (wd / "results" / "logs" / "generate" / "published" / "synth-trivial.log").read_text()
    assert f"1 of 8 items asked for in this job have no output in imported/outputs.jsonl (e.g. {items[7]['id']!r})" in log
    assert "1 of 8 outputs in imported/outputs.jsonl matched no item" in log
    assert "only failed ones run next time" not in log

    # the strict reading: the item without an output counts as wrong; a scoring setting, so nothing regenerates
    # (the one-job-per-dataset path reads it too)
    entry = CONFIG["models"]["published"]
    strict = {**CONFIG, "models": {"published": {**entry, "params": {**entry["params"], "missing": "wrong"}}}}
    (wd / "strict.yaml").write_text(yaml.safe_dump(strict))
    jobs = {j["rule"] for j in planned_jobs(snakemake(wd, "--configfile=strict.yaml", "-n", "results/all.tsv").stdout)}
    assert "score" in jobs and not any(r.startswith("generate") for r in jobs)
    for cfg in (strict, {**strict, "run_jobs": "per-dataset"}):
        (wd / "strict.yaml").write_text(yaml.safe_dump(cfg))
        snakemake(wd, "--configfile=strict.yaml", "results/all.tsv")
        acc = pd.read_csv(wd / "results" / "all.tsv", sep="\t").query("metric == 'accuracy'")
        assert acc[["n", "value", "parse_failure_rate"]].values.tolist() == [[8, 6 / 8, 2 / 8]]
        assert acc["flags"].iloc[0].startswith("1 of 8 items have no output in imported/outputs.jsonl: counted as "
                                               "wrong (missing: wrong)")

    # replaced with its old mtime kept (cp + touch -r): every rule that reads it reruns, on its content digest
    snakemake(wd, "--configfile=imported.yaml", "results/all.tsv")
    jobs = planned_jobs(snakemake(wd, "--configfile=imported.yaml", "-n", "results/all.tsv").stdout)
    assert not jobs
    rows[1]["response"] = gold[1]["label"]
    before = out.stat()
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(out, ns=(before.st_atime_ns, before.st_mtime_ns))
    jobs = planned_jobs(snakemake(wd, "--configfile=imported.yaml", "-n", "results/all.tsv").stdout)
    assert {"generate_core", "infer", "score", "item_version_check"} <= {j["rule"] for j in jobs}


ROOT_DATA = Path(__file__).resolve().parent / "data" / "imported"


def _drifted_items(released: list[dict]) -> tuple[list[dict], dict[str, str], list[str]]:
    """Today's file made from the revision the outputs were made on: a seeded few questions reworded,
    wrong choices renamed and answers moved to another choice, some ids dropped. Returns (items,
    id -> the field changed, dropped ids)."""
    rng = random.Random(29)
    order = rng.sample(range(len(released)), len(released))
    dropped = [released[i]["id"] for i in order[:4]]
    edits = {released[i]["id"]: f for i, f in zip(order[4:11], ["question"] * 2 + ["choices"] * 3 + ["answer"] * 2)}
    today = []
    for rec in released:
        if rec["id"] in dropped:
            continue
        rec = json.loads(json.dumps(rec))
        field = edits.get(rec["id"])
        if field == "question":
            rec["question"] += " Listen closely."
        elif field == "choices":  # a wrong choice renamed: the answer stays among them
            k = next(k for k, c in enumerate(rec["choices"]) if c != rec["answer"])
            rec["choices"][k] += " (revised)"
        elif field == "answer":
            rec["answer"] = next(c for c in rec["choices"] if c != rec["answer"])
        today.append(rec)
    return today, edits, dropped


@pytest.mark.slow
def test_released_outputs_score_without_audio_and_their_revision_drift_is_flagged(tmp_path):
    """MMAU test-mini outputs released with their question/choices/answer, scored with no audio folder
    at all: today's file differs from theirs (seeded drift), which all.tsv, flags.tsv, the browser and
    the run's decisions say with exact counts; items_from: predictions scores them on their own items."""
    released = json.loads((ROOT_DATA / "mmau_test_mini_24.json").read_text())
    today, edits, dropped = _drifted_items(released)
    wd = copy_workflow(tmp_path)
    (wd / "data").mkdir()
    (wd / "data" / "mmau-test-mini.json").write_text(json.dumps(today))
    # MMAU's released layout: the item fields plus the model's free-text answer; one answer is wrong
    wrong = next(r for r in released if r["id"] not in edits and r["id"] not in dropped)
    outputs = [dict(r, model_prediction=r["answer"] if r is not wrong else r["choices"][r["choices"].index(r["answer"]) - 1])
               for r in released]
    (wd / "data" / "released.jsonl").write_text("".join(json.dumps(r) + "\n" for r in outputs))
    entry = {"backend": "imported", "max_error_rate": 0.0,
             "params": {"predictions": "data/released.jsonl", "columns": {"raw_output": "model_prediction"}}}
    config = {"seed": 0, "scale": 1, "run_jobs": "per-dataset",
              "datasets": {"mmau": {"adapter": "mmau", "params": {"items": "data/mmau-test-mini.json"}}},
              "tasks": {"mmau": {"dataset": "mmau", "family": "import"}},
              "models": {"released": entry,
                         "released-own": {**entry, "params": {**entry["params"], "items_from": "predictions"}}},
              "conditions": ["audio", "silence"], "prompts": ["mcq-default"]}
    (wd / "released.yaml").write_text(yaml.safe_dump(config))

    plan = snakemake(wd, "--configfile=released.yaml", "-n", "results/all.tsv", "results/browser/data.js")
    rules = {j["rule"] for j in planned_jobs(plan.stdout)}
    assert "cache_audio" not in rules and "item_version_check" in rules
    skipped = ("imported outputs: not run (each needs new outputs made on this run's audio or options): "
               "condition silence, the listening check")
    assert f"model released: {skipped}" in plan.stderr
    snakemake(wd, "--configfile=released.yaml", "results/all.tsv", "results/browser/data.js")
    assert not (wd / "results" / "audio").exists()
    stats = json.loads((wd / "results" / "data" / "mmau" / "adapt.stats.json").read_text())
    assert stats["audio"].startswith("not read: only imported outputs") and not stats["dropped"]

    drift = "7 of 24 outputs were made on a different version of the item: question 2, choices 3, answer 2; " \
            "4 ids not in the items"
    table = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    acc = table.query("metric == 'accuracy'").set_index("model")
    assert acc["condition"].tolist() == ["audio", "audio"] and acc["n"].tolist() == [20, 20]
    assert acc.loc["released", "flags"] == f"{drift}; {skipped}"
    assert acc.loc["released-own", "flags"] == (f"{drift}; scored against the outputs' own items "
                                                f"(items_from: predictions); {skipped}")
    # against today's items the two moved answers are wrong too; against their own, only the wrong output
    assert acc.loc["released", ["value", "value_official"]].tolist() == [17 / 20, 17 / 20]
    assert acc.loc["released-own", ["value", "value_official"]].tolist() == [19 / 20, 19 / 20]
    flags = pd.read_csv(wd / "results" / "tables" / "flags.tsv", sep="\t")
    assert set(flags["model"]) == {"released", "released-own"} and flags["flags"].str.startswith(drift).all()

    dec = pd.read_parquet(wd / "results" / "scores" / "released" / "mmau" / "mmau" / "audio" / "mcq-default"
                          / "decisions.parquet").set_index("id")
    assert dec["item_version_differs"].dropna().to_dict() == edits
    browser = json.loads((wd / "results" / "browser" / "data.js").read_text()
                         .removeprefix("window.LALM_BROWSER = ").rstrip().rstrip(";"))
    col = browser["pred_fields"].index("item_version_differs")
    assert sum(p[col] is not None for p in browser["preds"]) == 2 * 7
    assert {f["model"]: f["flags"] for f in browser["flags"]}["released"] == f"{drift}; {skipped}"


FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def docs_block(page: str, holding: str) -> str:
    """The fenced block of a docs page that holds ``holding``, as a user copies it."""
    text = (Path(__file__).resolve().parents[1] / "docs" / page).read_text()
    (body,) = [b for _, b in FENCE.findall(text) if holding in b]
    return body


@pytest.mark.slow
def test_the_docs_mmau_example_scores_an_older_revisions_file_as_its_script_and_the_api_do(tmp_path):
    """docs/models.md's MMAU import, as written (no max_error_rate), on released outputs made on an older
    revision whose file lacks 3 of today's ids: the run finishes, all.tsv, flags.tsv and the browser say
    how many items had no output, value_official is what MMAU's script scores on the file (its records),
    and lalmbench.score_mcq / score_official give the same values on the same file (labels hidden for both:
    a bare letter that names the gold is not credited). An agentic file beside it, whose 'answer' column
    is the model's own answer, raises no drift flag, and the plan says how its columns were read."""
    import lalmbench
    from lalmbench.scoring.official import string_match

    config = yaml.safe_load(docs_block("models.md", "qwen2-audio-released"))
    today = json.loads((ROOT_DATA / "mmau_test_mini_24.json").read_text())
    gone = {r["id"] for r in today[:3]}                  # ids the older revision did not have
    released = []
    for k, rec in enumerate(r for r in today if r["id"] not in gone):
        wrong = next(c for c in rec["choices"] if c != rec["answer"])
        out = wrong if k in (2, 3) else rec["answer"]
        released.append(dict(rec, model_prediction=out))
    letter = next(r for r in released[4:] if r["choices"].index(r["answer"]) == 1)
    letter["model_prediction"] = "B"                     # the gold's letter: credited only if letters were shown
    agent = [{"id": r["id"], "output": f"Tool: cannot hear the clip. Reasoning... The answer is {r['model_prediction']}.",
              "answer": r["model_prediction"]} for r in released]
    wd = copy_workflow(tmp_path)
    for path, body in ((config["datasets"]["mmau-mini"]["params"]["items"], json.dumps(today)),
                       (config["models"]["qwen2-audio-released"]["params"]["predictions"], json.dumps(released)),
                       ("released/agent.jsonl", "".join(json.dumps(r) + "\n" for r in agent))):
        (wd / path).parent.mkdir(parents=True, exist_ok=True)
        (wd / path).write_text(body)
    config["models"]["agent"] = {"backend": "imported", "conditions": ["audio"],
                                 "params": {"predictions": "released/agent.jsonl"}}
    assert "max_error_rate" not in yaml.safe_dump(config)
    (wd / "docs-example.yaml").write_text(yaml.safe_dump(config))

    plan = snakemake(wd, "--configfile=docs-example.yaml", "-n", "results/all.tsv")
    assert ("model agent: released/agent.jsonl: outputs from column 'output' (found); no item fields: the item "
            "version the outputs were made on is not checked; column 'answer' read as the model's answer, not the "
            "item's gold (the file does not carry the full item, question and choices; set params.columns.answer to read it as the "
            "gold)") in plan.stderr
    assert ("model qwen2-audio-released: released/qwen2_audio_test_mini.json: outputs from column 'model_prediction' "
            "(mapped); the item each was made on from question 'question', choices 'choices', answer 'answer'") \
        in plan.stderr
    snakemake(wd, "--configfile=docs-example.yaml", "results/all.tsv", "results/browser/data.js")

    no_output = ("3 of 24 items have no output in released/qwen2_audio_test_mini.json: left out of value and "
                 "value_official")
    acc = pd.read_csv(wd / "results" / "all.tsv", sep="\t").query("metric == 'accuracy'").set_index("model")
    row = acc.loc["qwen2-audio-released"]
    assert (row["n"], row["n_official"]) == (21, 21) and row["flags"].startswith(no_output)
    assert "different version" not in row["flags"]
    script = [string_match(r["answer"], r["model_prediction"], r["choices"]) for r in released]
    assert row["value_official"] == pytest.approx(sum(script) / len(script)) == pytest.approx(18 / 21)
    assert row["value"] == pytest.approx(18 / 21)        # the two wrong choices and the bare letter
    flags = pd.read_csv(wd / "results" / "tables" / "flags.tsv", sep="\t").set_index("model")
    assert flags.loc["qwen2-audio-released", "flags"].startswith(no_output)
    browser = json.loads((wd / "results" / "browser" / "data.js").read_text()
                         .removeprefix("window.LALM_BROWSER = ").rstrip().rstrip(";"))
    assert {f["model"]: f["flags"] for f in browser["flags"]}["qwen2-audio-released"].startswith(no_output)
    agent_flags = acc.loc["agent", "flags"]
    assert "different version" not in agent_flags and "answer column read as the model's answer" in agent_flags
    assert acc.loc["agent", "n"] == 21

    # the same file through the Python API, as docs/api.md shows it
    items = lalmbench.read_items("mmau", {"items": str(wd / "MMAU" / "mmau-test-mini.json")}, dataset="mmau",
                                 audio_needed=False)
    outputs = {r["id"]: r["model_prediction"] for r in released}
    preds = [{"id": i, "raw_output": o} for i, o in outputs.items()]
    items = [it for it in items if it["id"] in outputs]
    _, metrics = lalmbench.score_mcq(items, preds)
    _, summary = lalmbench.score_official("mmau", items, preds)
    run = json.loads((wd / "results" / "scores" / "qwen2-audio-released" / "mmau-mini" / "mmau" / "audio" / "mcq-default"
                      / "metrics.json").read_text())
    assert (metrics["value"], summary["value"], summary["value_official"], summary["n_official"]) == (
        run["value"], run["value"], run["value_official"], run["n_official"])
    assert (round(metrics["value"], 6), round(summary["value_official"], 6)) == (row["value"], row["value_official"])
