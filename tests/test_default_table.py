"""README's default-results table: generated from a default run's all.tsv, and checked against one."""
import pandas as pd
import pytest

from bench import default_table
from lalmbench.report.aggregate import COLUMNS

ROOT = default_table.ROOT


def all_tsv(tmp_path, rows):
    """An all.tsv in the aggregate rule's column order; unspecified cells empty, as the workflow writes them."""
    table = pd.DataFrame([{**{c: "" for c in COLUMNS}, "prompt": "mcq-default", "metric": "accuracy", **r}
                          for r in rows], columns=COLUMNS)
    path = tmp_path / "all.tsv"
    table.to_csv(path, sep="\t", index=False)
    return path


ROWS = [
    dict(model="random", dataset="synth", task="beep-count", condition="audio", value=0.3333, n=24, chance=0.25,
         p_vs_chance=0.35),
    dict(model="random", dataset="synth", task="beep-count", condition="no-audio", value=0.25, n=24, chance=0.25,
         p_vs_chance=1.0, flags="not-listening:no-audio"),
    dict(model="random", dataset="synth", task="pitch-order", condition="audio", value=0.5, n=24, chance=0.5,
         p_vs_chance=1.0),
    dict(model="signal", dataset="synth", task="beep-count", condition="audio", value=1.0, n=24, chance=0.25,
         p_vs_chance=3.5e-15),
    dict(model="signal", dataset="synth", task="beep-count", condition="audio", metric="circular_accuracy",
         value=1.0, n=24, chance=0.0625, p_vs_chance=""),
]


def test_the_table_has_a_row_per_task_and_a_column_per_model_and_condition(tmp_path):
    table = default_table.read_all_tsv(all_tsv(tmp_path, ROWS))
    assert default_table.render(table) == (
        "|task|n|chance|random|random no-audio|signal|\n"
        "|---|---|---|---|---|---|\n"
        "| beep-count | 24 | 0.25 | 0.33 | 0.25† | 1.00* |\n"
        "| pitch-order | 24 | 0.50 | 0.50 | — | — |\n"
        "\n"
        "`*` differs from chance (exact two-sided binomial test, p < 0.05).\n"
        "`†` random no-audio: flagged `not-listening:no-audio` in `all.tsv`.\n")


def test_several_prompts_name_the_prompt_and_unequal_n_shows_the_span(tmp_path):
    rows = [dict(model="m", dataset="d", task="t", condition="audio", prompt="p1", value=0.5, n=20, chance=0.5,
                 p_vs_chance=1.0),
            dict(model="m", dataset="d", task="t", condition="silence", prompt="p2", value=0.25, n=18, chance=0.5,
                 p_vs_chance=0.04)]
    lines = default_table.render(default_table.read_all_tsv(all_tsv(tmp_path, rows))).splitlines()
    assert lines[0] == "|task|n|chance|m [p1]|m silence [p2]|"
    assert lines[2] == "| t | 18–20 | 0.50 | 0.50 | 0.25* |"


def test_bad_input_names_the_file_and_what_was_expected(tmp_path):
    bad = tmp_path / "all.tsv"
    bad.write_text("model\tvalue\nrandom\t0.5\n")
    with pytest.raises(ValueError, match=r"all.tsv: missing column\(s\) \['dataset', 'task'"):
        default_table.read_all_tsv(bad)
    only_open = default_table.read_all_tsv(all_tsv(tmp_path, [dict(ROWS[0], metric="cider_d")]))
    with pytest.raises(ValueError, match="x.tsv: no rows with metric 'accuracy'"):
        default_table.render(only_open, "x.tsv")
    with pytest.raises(ValueError, match="README.md: expected the marker line"):
        default_table.split_readme("no table here")


def test_a_run_with_another_config_cannot_feed_the_readme(tmp_path):
    table = default_table.read_all_tsv(all_tsv(tmp_path, ROWS[:1]))
    problem = default_table.default_config_mismatch(table)
    assert problem is not None and "config/config.yaml" in problem


def test_readme_table_agrees_with_the_default_run_in_this_checkout():
    """CI runs `make run` before `make test`, so results/all.tsv is the current commit's default run."""
    tsv = ROOT / "results" / "all.tsv"
    if not tsv.is_file():
        pytest.skip("no results/all.tsv here: run `make run` first (CI does, before the tests)")
    table = default_table.read_all_tsv(tsv)
    problem = default_table.default_config_mismatch(table)
    if problem:
        pytest.skip(f"results/all.tsv is not a run of config/config.yaml ({problem})")
    _, block, _ = default_table.split_readme(default_table.README.read_text(encoding="utf-8"))
    assert block == default_table.render(table, str(tsv)), (
        "README.md: the default-results table differs from results/all.tsv of a default run; if that run is of "
        "this commit, run `python -m bench.default_table --write` (else rerun `make run` first)")
