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
    problem = default_table.mismatch(block, table, str(tsv))
    assert problem is None, problem


def test_a_difference_on_another_machine_names_the_models_not_a_readme_rewrite(tmp_path):
    readme_rows = [dict(r) for r in ROWS]
    readme_rows[3]["value"] = 0.75  # signal's beep-count cell, as another machine computed it
    generated = (default_table.render(default_table.read_all_tsv(all_tsv(tmp_path, readme_rows)))
                 + "\nGenerated on: x86_64 AMD EPYC (avx2 fma avx512f avx512_vnni), core lock 0123456789ab.\n")
    table = default_table.read_all_tsv(all_tsv(tmp_path, ROWS))
    here = "x86_64 AMD EPYC (avx2 fma; without avx512f avx512_vnni), core lock 0123456789ab"
    problem = default_table.mismatch(generated, table, here=here)
    assert problem.startswith("README.md: the default table was generated on x86_64 AMD EPYC (avx2 fma avx512f "
                              "avx512_vnni), core lock 0123456789ab; this run, on x86_64 AMD EPYC (avx2 fma; "
                              "without avx512f avx512_vnni), core lock 0123456789ab, differs in 1 cells of signal: "
                              "beep-count / signal: README 0.75*, this run 1.00*.")
    assert "lalmbench.checks.replicate" in problem and "do not rewrite the README" in problem
    # the same machine: the README is stale, and the message says how to regenerate it
    same = default_table.mismatch(generated, table, here=generated.rsplit("Generated on: ", 1)[1].strip().rstrip("."))
    assert same.startswith("README.md: the default-results table differs") and "--write" in same
    relocked = default_table.mismatch(generated, table, here=here.replace("0123456789ab", "ba9876543210"))
    assert relocked.startswith("README.md: the default table was generated with the core lock 0123456789ab, this "
                               "checkout's is ba9876543210: other packages, other numbers (1 cells differ")
    assert default_table.mismatch(default_table.generated_block(table), table) is None
