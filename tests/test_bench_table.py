"""bench/results -> docs/benchmarks-measured.md's table: the one source of figures, and the writer benches use."""
import json

import pytest

from bench import measured_table
from bench.record import KEYS, meets, read_results, record


def test_measured_page_table_is_the_one_generated_from_bench_results():
    _, table, _ = measured_table.split_page(measured_table.PAGE.read_text(encoding="utf-8"))
    assert table == measured_table.render(), (
        "docs/benchmarks-measured.md: the table differs from bench/results; run "
        "`python -m bench.measured_table --write`")


def test_the_measured_comparison_names_a_real_baseline_or_none():
    """The builder bench compares only with the original TACoBeLAL script, so no figure may name a stand-in."""
    figures = [line["figure"] for line in read_results().get("tacobelal_next", [])]
    assert not [f for f in figures if "predecessor" in f or "reimplementation" in f]


def test_record_appends_one_line_with_exactly_the_shared_keys(tmp_path):
    record("demo", "wall", 17.84, "s", "<= 30", results_dir=tmp_path)
    record("demo", "wall", 12.5, "s", "<= 30", results_dir=tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "demo.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and tuple(sorted(lines[0])) == tuple(sorted(KEYS))
    assert (lines[0]["value"], lines[1]["value"], lines[1]["target"], lines[1]["unit"]) == (17.84, 12.5, "<= 30", "s")
    assert len(lines[1]["loadavg"]) == 3 and lines[1]["cpu_count"] >= 1 and lines[1]["date"].endswith("+00:00")


def test_table_shows_the_latest_line_of_each_figure_and_whether_it_meets_its_target(tmp_path, monkeypatch):
    monkeypatch.setattr(measured_table, "BENCHES", {})
    record("demo", "wall", 41.0, "s", "<= 30", results_dir=tmp_path)
    record("demo", "ratio", 3.912, "x", ">= 3", results_dir=tmp_path)
    record("demo", "wall", 17.84, "s", "<= 30", results_dir=tmp_path)
    record("demo", "rss", 1357.2, "MB", results_dir=tmp_path)
    rows = measured_table.render(tmp_path).splitlines()[2:]
    cells = [[c.strip() for c in r.split("|")[2:6]] for r in rows]
    assert cells == [["wall", "17.8 s", "≤ 30 s", "yes"], ["ratio", "3.91 x", "≥ 3 x", "yes"],
                     ["rss", "1,357 MB", "—", "—"]]
    assert meets(2.9, ">= 3") is False and meets(30.0, "<= 30") is True


def test_a_bench_in_the_suite_without_results_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(measured_table, "BENCHES", {"never": measured_table.BENCHES["scoring"]})
    assert "| not measured yet | — | — | — | run `make bench` |" in measured_table.render(tmp_path)


def test_bad_input_names_the_problem(tmp_path):
    with pytest.raises(ValueError, match=r"target: '< 30' is not '<= N' or '>= N'"):
        record("demo", "wall", 1.0, "s", "< 30", results_dir=tmp_path)
    with pytest.raises(ValueError, match="value: 'wall' is nan, not a finite number"):
        record("demo", "wall", float("nan"), "s", results_dir=tmp_path)
    (tmp_path / "broken.jsonl").write_text('{"bench": "broken"}\n')
    with pytest.raises(ValueError, match=r"broken.jsonl: row 1: missing key\(s\) \['figure'"):
        read_results(tmp_path)
    with pytest.raises(ValueError, match="benchmarks-measured.md: expected the marker line"):
        measured_table.split_page("no table here")
