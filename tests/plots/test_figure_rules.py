"""The figure rules on a tiny workflow run: each figure shows this run's models, tasks and conditions,
tables agree with results/all.tsv and the decisions, the report lists every figure by category."""
import re

import pandas as pd
import pytest

from tests.plots.svg import svg_texts
from tests.plots.tiny_run import tiny_results

FIGURES = ["reliance", "robustness", "temporal", "confusion", "parse_stages", "paired", "accuracy"]


@pytest.fixture(scope="module")
def wd():
    return tiny_results()


# text each figure of the tiny run must show (titles, panel names, tick labels): its models, tasks, conditions
FIGURE_TEXTS = {
    "accuracy": {"condition: audio", "condition: no-audio", "condition: noise", "pitch-order", "scene-order"},
    "reliance": {"random (prompt mcq-default)", "text-prior (prompt mcq-default)", "pitch-order", "scene-order",
                 "(all tasks)", "audio", "no-audio", "noise"},
    "confusion": {"random [audio]", "text-prior [no-audio]", "predicted", "gold"},
    "parse_stages": {"parse stage that produced each answer", "random", "text-prior", "[audio]", "[no-audio]"},
    "paired": {"row minus column accuracy [no-audio]", "random", "text-prior"},
    "temporal": {"by gap_s (scene-order)", "random [audio]", "random [noise]", "text-prior [no-audio]"},
    "robustness": {"option order (CircularEval)", "prompt-variant spread", "answer-position bias",
                   "pitch-order/audio", "scene-order/noise"},
}


@pytest.mark.slow
def test_every_figure_shows_this_runs_models_tasks_and_conditions(wd):
    assert set(FIGURE_TEXTS) == set(FIGURES)
    for name, expected in FIGURE_TEXTS.items():
        png = wd / "results" / "figures" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000, name
        missing = expected - svg_texts(wd / "results" / "figures" / f"{name}.svg")
        assert not missing, (name, missing)


@pytest.mark.slow
def test_reliance_table_agrees_with_all_tsv(wd):
    all_tsv = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    acc = all_tsv[(all_tsv.metric == "accuracy") & (all_tsv.prompt == "mcq-default")]
    rel = pd.read_csv(wd / "results" / "tables" / "reliance.tsv", sep="\t")
    rel = rel[rel.task != "(all tasks)"]
    merged = rel.merge(acc, on=["model", "task", "condition", "prompt"], suffixes=("", "_all"))
    assert len(merged) == len(rel) == 2 * 3 + 2  # random: 2 tasks x 3 conditions; text-prior: 2 tasks x no-audio
    assert (merged["value"] - merged["value_all"]).abs().max() < 1e-6
    assert (merged["ci_low"] - merged["ci_low_all"]).abs().max() < 1e-5
    assert (merged["n"] == merged["n_all"]).all()


@pytest.mark.slow
def test_tables_recompute_from_decisions(wd):
    d = pd.read_parquet(wd / "results" / "tables" / "decisions.parquet")
    assert set(d.model) == {"random", "text-prior"} and set(d.condition) == {"audio", "no-audio", "noise"}
    conf = pd.read_csv(wd / "results" / "tables" / "confusion.tsv", sep="\t", keep_default_na=False)
    r = d[(d.model == "random") & (d.condition == "audio") & (d.prompt == "mcq-default")]
    hand = ((r.gold_label == "A") & (r.pred_label == "B")).sum()
    row = conf[(conf.model == "random") & (conf.gold_label == "A") & (conf.pred_label == "B")]
    assert int(row["count"].iloc[0]) == hand
    temporal = pd.read_csv(wd / "results" / "tables" / "temporal.tsv", sep="\t")
    gap = temporal[(temporal.model == "random") & (temporal.condition == "audio") & (temporal.feature == "gap_s")]
    scene = r[r.task == "scene-order"]
    assert gap["n"].sum() == scene["meta_gap_s"].notna().sum() > 0
    assert gap["k"].sum() == scene.loc[scene["meta_gap_s"].notna(), "correct"].sum()
    paired = pd.read_csv(wd / "results" / "tables" / "paired.tsv", sep="\t")
    assert paired[["condition", "system_a", "system_b"]].values.tolist() == [["no-audio", "random", "text-prior"]]
    spread = pd.read_csv(wd / "results" / "tables" / "prompt_spread.tsv", sep="\t")
    assert set(spread.n_prompts) == {2}  # text-prior ran one prompt: not in the spread table


@pytest.mark.slow
def test_report_has_categories_and_captions(wd):
    html = (wd / "results" / "report.html").read_text(errors="replace")
    for cat in ("Audio reliance", "Robustness", "Temporal", "Parsing", "Model comparisons", "Accuracy"):
        assert cat in html, cat
    for name in FIGURES:
        assert f"{name}.png" in html, name
    assert "exact McNemar" in html  # a caption's text made it in
    # the flags table, its caption rendered with this run's listening-check minimum
    assert "flags.tsv" in html and "Checks" in html and "here 20)" in html
    assert re.search(r"prompt_spread\.tsv", html)


@pytest.mark.slow
def test_similarity_analysis_runs_offline(wd):
    import json

    s = json.loads((wd / "results" / "analysis" / "similarity" / "random" / "synth-trivial" / "pitch-order"
                    / "mcq-default" / "noise-vs-audio.json").read_text())
    assert s["a"] == "noise" and s["b"] == "audio" and s["overall"]["n"] == 8
    d = pd.read_parquet(wd / "results" / "tables" / "decisions.parquet")
    x = d[(d.model == "random") & (d.task == "pitch-order") & (d.prompt == "mcq-default")]
    same = (x[x.condition == "noise"].set_index("id").raw_output == x[x.condition == "audio"].set_index("id").raw_output)
    # identical outputs embed identically: similarity 1 exactly where the raw outputs agree
    sims = {r["id"]: r["similarity"] for r in s["detailed"]}
    for i, eq in same.items():
        assert (abs(sims[i] - 1.0) < 1e-5) == bool(eq), i
    table = pd.read_csv(wd / "results" / "analysis" / "similarity.tsv", sep="\t")
    assert table.iloc[0]["category"] == "(all)" and table.iloc[0]["n"] == 8
