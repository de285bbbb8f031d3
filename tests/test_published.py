"""Published numbers beside value_official and value (lalmbench.report.published): the table's
flags and differences on a small all.tsv, the figure, and rule published_table in the workflow."""
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from lalmbench.core.io import InputError
from lalmbench.data.ledger import load_ledger
from lalmbench.report.published import ledger_targets, published_table, write_published

DATA = Path(__file__).parent / "data" / "published"


def table(**kw):
    all_tsv = pd.read_csv(DATA / "all.tsv", sep="\t", keep_default_na=False, na_values=[""])
    return published_table(all_tsv, load_ledger(DATA / "toy.yaml"), ["toy"], **kw).set_index("entry")


def test_the_published_number_is_flagged_when_outside_the_official_interval():
    t = table()
    alpha = t.loc["alpha@authors"]
    # 650 of 1,000 right by the official rule: Wilson 95% [61.99, 67.89] holds the paper's 66.0
    assert alpha["flag"] == "inside"
    assert (alpha["official_ci_low"], alpha["official_ci_high"]) == pytest.approx((61.99, 67.89), abs=0.01)
    assert alpha["difference"] == pytest.approx(1.0)
    assert (alpha["difference_ci_low"], alpha["difference_ci_high"]) == pytest.approx((66.0 - 67.89, 66.0 - 61.99),
                                                                                      abs=0.01)
    assert alpha["published_source"] == "arXiv:2501.00001"
    assert alpha["value"] == pytest.approx(65.2) and alpha["n"] == 1000   # the toy dataset's row, not "other"
    # the official rule reads 4 of 1,000 (letters its string match never credits): 65.6 lies far outside
    beta = t.loc["beta@third-party"]
    assert beta["flag"] == "outside" and beta["value_official"] == pytest.approx(0.4)
    assert beta["difference"] == pytest.approx(65.2)
    assert beta["value"] == pytest.approx(58.7)        # the audio condition's run, not the no-audio one


def test_rows_without_a_comparison_say_why():
    t = table()
    assert t.loc["delta@third-party", "flag"] == "no published number"        # released, no published entry
    assert t.loc["delta@third-party", "value_official"] == pytest.approx(50.0)
    assert t.loc["epsilon@third-party", "flag"] == "not in results"          # its model_key has no run
    gamma = t.loc["gamma@readme"]                                             # a published entry run here
    assert gamma["flag"] == "no official value" and gamma["released_by"] == "run here"
    assert gamma["published"] == 40.0 and gamma["value"] == pytest.approx(42.0)


def test_a_model_with_several_runs_on_the_benchmark_is_an_error():
    all_tsv = pd.read_csv(DATA / "all.tsv", sep="\t", keep_default_na=False, na_values=[""])
    extra = all_tsv[all_tsv["model"] == "alpha-released"].iloc[[0]].assign(prompt="other-prompt")
    with pytest.raises(InputError, match="'alpha-released' has 2 accuracy runs"):
        published_table(pd.concat([all_tsv, extra]), load_ledger(DATA / "toy.yaml"), ["toy"])


def test_a_ledger_applies_to_a_config_with_its_preset_and_one_of_its_models():
    ledgers = {"toy": load_ledger(DATA / "toy.yaml")}
    datasets = {"mini": {"adapter": "mmau"}, "synth": {"adapter": "synth_trivial"}}
    assert ledger_targets(ledgers, datasets, ["beta-released", "random"]) == {"toy": ["mini"]}
    assert ledger_targets(ledgers, datasets, ["random"]) == {}
    assert ledger_targets(ledgers, {"synth": {"adapter": "synth_trivial"}}, ["beta-released"]) == {}


def test_write_published_writes_the_table_and_a_figure(tmp_path):
    out = write_published(str(DATA / "all.tsv"), str(DATA / "toy.yaml"), ["toy"], tsv=str(tmp_path / "t.tsv"),
                          png=str(tmp_path / "f.png"), svg=str(tmp_path / "f.svg"))
    back = pd.read_csv(tmp_path / "t.tsv", sep="\t")
    assert back["flag"].tolist() == out["flag"].tolist()
    assert (tmp_path / "f.png").stat().st_size > 1000
    svg = (tmp_path / "f.svg").read_text()
    assert "Beta (third-party)" in svg and "published" in svg


def test_a_runs_all_tsv_flags_ride_into_the_table_and_its_figure(tmp_path):
    """items_from: predictions with overridden answers: all.tsv flags the run, and so do the published
    table (its ``flags``) and the figure (a numbered note under the row's label)."""
    import html

    flag = ("12 of 24 outputs were made on a different version of the item: answer 12; scored against the "
            "outputs' own items (items_from: predictions)")
    all_tsv = pd.read_csv(DATA / "all.tsv", sep="\t", dtype=str, keep_default_na=False)
    all_tsv.loc[all_tsv["model"] == "beta-released", "flags"] = flag
    all_tsv.to_csv(tmp_path / "all.tsv", sep="\t", index=False)
    write_published(str(tmp_path / "all.tsv"), str(DATA / "toy.yaml"), ["toy"], tsv=str(tmp_path / "t.tsv"),
                    png=str(tmp_path / "f.png"), svg=str(tmp_path / "f.svg"))
    back = pd.read_csv(tmp_path / "t.tsv", sep="\t", keep_default_na=False).set_index("entry")
    assert back.loc["beta@third-party", "flags"] == flag
    assert back.loc["alpha@authors", "flags"] == ""
    # the figure's texts, as the SVG names them (one comment per drawn line: the note is wrapped)
    svg = " ".join(html.unescape(t) for t in re.findall(r"<!-- (.*?) -->", (tmp_path / "f.svg").read_text()))
    assert "Beta (third-party) [1]" in svg and f"[1] {flag}" in svg


@pytest.mark.slow
def test_rule_published_table_reads_the_runs_all_tsv(tmp_path):
    """An imported model scored through the workflow, named by a ledger in the package's ledger folder:
    the rule writes the benchmark's table from that run's all.tsv."""
    from tests.workflow import copy_workflow, snakemake

    wd = copy_workflow(tmp_path)
    config = {"seed": 0, "scale": 1,
              "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
              "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 8}}},
              "models": {"toy-released": {"backend": "imported", "params": {"predictions": "published/out.jsonl"},
                                          "max_error_rate": 0.5}},
              "conditions": ["audio"], "prompts": ["mcq-default"]}
    (wd / "toy.yaml").write_text(yaml.safe_dump(config))
    snakemake(wd, "--configfile=toy.yaml", "results/tasks/synth-trivial/pitch-order.jsonl")
    items = [json.loads(line) for line in open(wd / "results/tasks/synth-trivial/pitch-order.jsonl")]
    gold = [next(o["text"] for o in it["options"] if o["label"] == it["answer_label"]) for it in items]
    (wd / "published").mkdir()
    (wd / "published" / "out.jsonl").write_text(
        "".join(json.dumps({"id": it["id"], "response": g}) + "\n" for it, g in zip(items[:6], gold[:6])))
    ledger = yaml.safe_load((DATA / "toy.yaml").read_text())
    ledger.update(benchmark="Synth", preset="synth_trivial")
    ledger["released"][0]["model_key"] = "toy-released"
    (wd / "lalmbench" / "data" / "published" / "toy.yaml").write_text(yaml.safe_dump(ledger))

    snakemake(wd, "--configfile=toy.yaml", "results/tables/published_toy.tsv")
    t = pd.read_csv(wd / "results" / "tables" / "published_toy.tsv", sep="\t").set_index("entry")
    row = t.loc["alpha@authors"]
    assert row["model_key"] == "toy-released" and row["dataset"] == "synth-trivial"
    # 6 of 8 items have an output, all right: the 2 without one are left out (missing: leave-out) and flagged
    assert row["value"] == pytest.approx(100.0) and row["n"] == 6
    assert "2 of 8 items have no output in" in row["flags"]
    assert row["flag"] == "no official value"                     # synth_trivial names no official rule
    assert (wd / "results" / "figures" / "published_toy.png").exists()
    shutil.rmtree(wd / "results", ignore_errors=True)


#: MMAR items (MMAR-meta.jsonl): m2 has a blank choice (kept), m4's answer was corrected after the outputs
MMAR_ITEMS = [
    {"id": "m1", "question": "Which animal?", "choices": ["dog", "cat", "cow"], "answer": "cat"},
    {"id": "m2", "question": "Did he enter?", "choices": ["Entered", "Did not enter", ""], "answer": "Entered"},
    {"id": "m3", "question": "Which colour?", "choices": ["red", "blue"], "answer": "blue"},
    {"id": "m4", "question": "Who invented it?", "choices": ["Thomas Edison", "Alexander Graham Bell"],
     "answer": "Alexander Graham Bell"},
    {"id": "m5", "question": "How many?", "choices": ["one", "two"], "answer": "two"},
]
#: released outputs carrying the items they were made on (m4 on the old answer); m5 has none
RELEASED = [{**it, "prediction": out} for it, out in zip(MMAR_ITEMS, ["cat", "Entered", "red", "Thomas Edison"])]
RELEASED[3]["answer"] = "Thomas Edison"


@pytest.mark.slow
def test_the_published_config_scores_a_ledgers_released_outputs_end_to_end_with_no_audio(tmp_path):
    """A user's path: a ledger pins a benchmark's item file and released outputs in a repository;
    ``ledger fetch`` copies both; config/examples/published.yaml's MMAR entries, pointed at them, run
    through the workflow with no audio anywhere. The blank-choice item is scored, the output made on
    the old answer is flagged, and the published table sets the paper's number beside both values."""
    import subprocess

    from lalmbench.data.ledger import fetch_items, fetch_released, items_path, released_path, validate_ledger
    from tests.workflow import copy_workflow, snakemake

    src = tmp_path / "src" / "lab" / "mmar"
    src.mkdir(parents=True)
    items_body = "".join(json.dumps({**it, "audio_path": f"./audio/{it['id']}.wav", "modality": "sound",
                                     "category": "Signal Layer", "sub-category": "Counting", "language": None}) + "\n"
                         for it in MMAR_ITEMS).encode()
    (src / "MMAR-meta.jsonl").write_bytes(items_body)
    (src / "outputs.json").write_text(json.dumps(RELEASED))
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "items and outputs"]):
        subprocess.run(git + args, cwd=src, check=True, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, check=True, capture_output=True,
                            text=True).stdout.strip()
    pin = {"repo": "lab/mmar", "commit": commit}
    ledger = validate_ledger({
        "benchmark": "MMAR", "preset": "mmar", "items": {**pin, "path": "MMAR-meta.jsonl"},
        "published": [{"id": "lab@paper", "model": "Lab model", "value": 40.0, "settings": {},
                       "source": {"kind": "paper", "arxiv": "2501.00001", "where": "Table 1"}}],
        "released": [{"id": "lab@release", "model": "Lab model", "released_by": "the model's authors",
                      "compare_with": "lab@paper", "model_key": "pub-mmar-lab", "outputs": [{**pin, "path": "outputs.json"}],
                      "read": {"output": "prediction", "carry": {"question": "question", "choices": "choices",
                                                                 "answer": "answer"}},
                      "labels": "hidden", "settings": {}}]}, "mmar.yaml")
    wd = copy_workflow(tmp_path / "wd")
    template = str(tmp_path / "src" / "{owner}" / "{name}" / ".git")
    fetch_released({"mmar": ledger}, wd / "published", git_dir_template=template)
    fetch_items({"mmar": ledger}, wd / "published", git_dir_template=template)
    (wd / "lalmbench" / "data" / "published" / "mmar.yaml").write_text(yaml.safe_dump(ledger))

    example = yaml.safe_load((wd / "config" / "examples" / "published.yaml").read_text())
    config = {**example, "datasets": {"mmar": example["datasets"]["mmar"]},
              "tasks": {"mmar": {**example["tasks"]["mmar"], "models": ["pub-mmar-lab"]}},
              "models": {"pub-mmar-lab": {"backend": "imported", "params": {
                  "predictions": str(released_path("published", "mmar", "lab@release")), "labels": "hidden"}}}}
    assert config["datasets"]["mmar"]["params"]["items"] == str(items_path("published", "mmar", ledger))
    (wd / "published.yaml").write_text(yaml.safe_dump(config))
    assert not (wd / "published" / "items" / "mmar" / "audio").exists()                  # no audio folder
    snakemake(wd, "--configfile=published.yaml", "results/all.tsv", "results/tables/published_mmar.tsv")

    row = pd.read_csv(wd / "results" / "all.tsv", sep="\t").set_index("model").loc["pub-mmar-lab"]
    # m1, m2 right; m5 has no output: left out of both values, as the benchmark's script never sees it
    assert row["n"] == 4 and row["value"] == pytest.approx(0.5)
    assert row["value_official"] == pytest.approx(0.5) and row["n_official"] == 4
    assert "1 of 4 outputs were made on a different version of the item: answer 1" in row["flags"]
    assert (f"1 of 5 items have no output in {released_path('published', 'mmar', 'lab@release')}: left out of value "
            f"and value_official") in row["flags"]
    pub = pd.read_csv(wd / "results" / "tables" / "published_mmar.tsv", sep="\t").set_index("entry").loc["lab@release"]
    assert (pub["published"], pub["value_official"], pub["value"], pub["flag"]) == (40.0, 50.0, 50.0, "inside")
    shutil.rmtree(wd / "results", ignore_errors=True)


def test_the_example_config_imports_every_released_entry_as_its_ledger_reads_it():
    from lalmbench.data.ledger import items_path, load_all

    cfg = yaml.safe_load((Path(__file__).parents[1] / "config" / "examples" / "published.yaml").read_text())
    ledgers = load_all()
    assert ledger_targets(ledgers, cfg["datasets"], cfg["models"]).keys() == {"mmau", "mmar", "sakura"}
    for bench, ledger in ledgers.items():
        dataset = next(d for d in cfg["datasets"].values() if d["adapter"] == ledger["preset"])
        assert dataset["params"]["items"] == str(items_path("published", bench, ledger))    # where fetch copies them
        for rel in ledger.get("released") or []:
            model = cfg["models"][rel["model_key"]]
            assert model["backend"] == "imported"
            assert model["params"] == {"predictions": f"published/{bench}/{rel['id']}.jsonl", "labels": rel["labels"]}
            task = next(t for t in cfg["tasks"].values() if rel["model_key"] in t.get("models", []))
            assert cfg["datasets"][task["dataset"]]["adapter"] == ledger["preset"]


def test_a_released_row_cites_its_release_only_when_the_scored_file_is_that_release(tmp_path, monkeypatch):
    """Another file configured under a ledger model_key: the table no longer cites the pinned release
    for it, and flags the row; the file `ledger fetch` wrote (checked by its recorded sha256) is cited."""
    from lalmbench.data import ledger as ledger_module
    from lalmbench.data.ledger import fetch_released, released_path

    led = load_ledger(DATA / "toy.yaml")
    monkeypatch.setattr(ledger_module, "released_records",
                        lambda entry, **kw: ([{"id": "q1", "raw_output": "A", "source_id": "q1"}], {}))
    fetch_released({"toy": led}, tmp_path / "published", only=["beta@third-party"])
    fetched = released_path(tmp_path / "published", "toy", "beta@third-party")
    other = tmp_path / "mine.jsonl"
    other.write_text('{"id": "q1", "raw_output": "B"}\n')
    all_tsv = pd.read_csv(DATA / "all.tsv", sep="\t", keep_default_na=False, na_values=[""])
    cited = published_table(all_tsv, led, ["toy"], {"beta-released": str(fetched)}).set_index("entry")
    assert cited.loc["beta@third-party", "outputs"] == table().loc["beta@third-party", "outputs"]
    assert "not the release" not in cited.loc["beta@third-party", "flags"]
    for path, why in ((other, f"{other} was not written by `ledger fetch`"),
                      (fetched, f"{fetched} changed since `ledger fetch` wrote it")):
        if path == fetched:
            fetched.write_text('{"id": "q1", "raw_output": "C"}\n')
        t = published_table(all_tsv, led, ["toy"], {"beta-released": str(path)}).set_index("entry")
        row = t.loc["beta@third-party"]
        assert row["outputs"].startswith(f"{path} (not the release ")
        assert f"scored file is not the release: {why}" in row["flags"]


def test_a_number_published_over_k_samples_sits_beside_our_run_of_the_same_k():
    from lalmbench.data.ledger import validate_ledger

    led = load_ledger(DATA / "toy.yaml")
    sampled = {"id": "zeta@paper", "model": "Zeta", "value": 61.0, "model_key": "zeta-sampled",
               "source": {"kind": "paper", "arxiv": "2501.00009"},
               "settings": {"decoding": "temperature 1.0, mean of 5 runs", "samples": {"k": 5, "aggregate": "mean"}}}
    greedy_only = {**sampled, "id": "eta@paper", "model_key": "eta-greedy",
                   "settings": {"decoding": "pass@8", "samples": {"k": 8, "aggregate": "pass"}}}
    led["published"] += [sampled, greedy_only]
    validate_ledger(led, "toy.yaml + sampled entries")
    all_tsv = pd.read_csv(DATA / "all.tsv", sep="\t", keep_default_na=False, na_values=[""])
    base = all_tsv[all_tsv["model"] == "gamma-run-here"].iloc[0]
    rows = [base.copy().to_dict() | {"model": "zeta-sampled", "metric": m, "value": v, "ci_low": lo, "ci_high": hi}
            for m, v, lo, hi in (("accuracy", 0.70, 0.67, 0.73), ("accuracy@5_mean", 0.60, 0.58, 0.62))]
    rows.append(base.copy().to_dict() | {"model": "eta-greedy"})
    t = published_table(pd.concat([all_tsv, pd.DataFrame(rows)], ignore_index=True), led, ["toy"]).set_index("entry")
    zeta = t.loc["zeta@paper"]
    assert zeta["value"] == pytest.approx(60.0) and zeta["flag"] == "inside"  # beside avg@5, not sample 0's 70
    assert zeta["difference"] == pytest.approx(1.0) and "set beside accuracy@5_mean" in zeta["flags"]
    eta = t.loc["eta@paper"]  # our run is greedy: no pass@8 row to set it beside
    assert eta["flag"] == "not in results" and "run eta-greedy with generation.samples: 8" in eta["flags"]
