"""Figure tables against hand computation, and what each figure draws (bar heights, error bars,
level lines, cell values, tick labels and titles read back from the matplotlib Figure)."""
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from matplotlib.container import BarContainer
from statsmodels.stats.proportion import proportion_confint

from lalmbench.report.plots.accuracy import floor_table, plot_accuracy
from lalmbench.report.plots.common import collect_decisions, primary_prompt
from lalmbench.report.plots.paired import paired_table, plot_paired
from lalmbench.report.plots.parsing import confusion_table, parse_stage_table, plot_confusion, plot_parse_stages
from lalmbench.report.plots.reliance import ALL_TASKS, plot_reliance, reliance_table
from lalmbench.report.plots.robustness import circular_table, plot_robustness, position_table, spread_table
from lalmbench.report.plots.style import plt, save
from lalmbench.report.plots.temporal import iou_table, plot_temporal, temporal_table
from tests.plots.svg import svg_texts

N = 10
GOLD = list("ABABABABAB")


def _run(model, cond, correct_ids, *, prompt="p1", task="t1", wrong_label=None, unparsed_ids=()):
    rows = []
    for i in range(N):
        gold = GOLD[i]
        if i in unparsed_ids:
            pred, status, outcome = None, "unparseable", "unparseable"
        elif i in correct_ids:
            pred, status, outcome = gold, "exact-label", "correct"
        else:
            pred, status, outcome = wrong_label or ("B" if gold == "A" else "A"), "label-pattern", "wrong"
        rows.append({"model": model, "dataset": "d", "task": task, "condition": cond, "prompt": prompt,
                     "id": f"i{i}", "gold_label": gold, "pred_label": pred, "parse_status": status,
                     "correct": outcome == "correct", "outcome": outcome, "raw_output": pred or "hmm",
                     "n_options": 2, "chance": 0.5, "gold_pos": 0 if gold == "A" else 1,
                     "pred_pos": -1 if pred is None else (0 if pred == "A" else 1),
                     "meta_gap_s": [0.1, 0.3, 0.3, 0.6, 1.5, 1.5, 2.5, 3.0, 0.7, 0.2][i],
                     "meta_overlap": i % 3 == 0})
    return rows


@pytest.fixture
def decisions():
    rows = (_run("m1", "audio", set(range(8)))                      # 8/10
            + _run("m1", "no-audio", set(range(3, 8)))              # 5/10, items 3-7
            + _run("m2", "audio", set(range(6)), unparsed_ids={9})  # 6/10, item 9 unparsed
            + _run("m1", "audio", set(range(2)), prompt="p2"))      # a second prompt, not the primary one
    return pd.DataFrame(rows)


def _wilson(k, n):
    return proportion_confint(k, n, method="wilson")


def test_primary_prompt_follows_the_config_order(decisions):
    assert set(primary_prompt(decisions)["prompt"]) == {"p1"}
    assert set(primary_prompt(decisions, ["p2", "p1"]).query("model == 'm1'")["prompt"]) == {"p2"}


def test_reliance_table_matches_hand_counts(decisions):
    t = reliance_table(decisions).set_index(["model", "task", "condition"])
    a = t.loc[("m1", "t1", "audio")]
    assert (a["k"], a["n"], a["value"]) == (8, 10, 0.8)
    assert a["ci_low"] == pytest.approx(_wilson(8, 10)[0]) and a["ci_high"] == pytest.approx(_wilson(8, 10)[1])
    na = t.loc[("m1", "t1", "no-audio")]
    assert na["value"] == 0.5 and na["n_paired"] == 10
    assert na["delta_vs_audio"] == pytest.approx(-0.3)
    # discordant: audio-only right on items 0,1,2 (3), no-audio-only right on none (0)
    assert na["p_mcnemar"] == pytest.approx(binomtest(0, 3, 0.5).pvalue)
    assert math.isnan(a["p_mcnemar"])
    assert ALL_TASKS not in set(t.reset_index()["task"])  # one task: no pooled row


def test_reliance_pools_tasks(decisions):
    more = pd.DataFrame(_run("m1", "audio", {0}, task="t2") + _run("m1", "no-audio", set(), task="t2"))
    t = reliance_table(pd.concat([decisions, more])).set_index(["model", "task", "condition"])
    pooled = t.loc[("m1", ALL_TASKS, "audio")]
    assert (pooled["k"], pooled["n"]) == (9, 20)


def test_paired_table_is_exact_mcnemar(decisions):
    t = paired_table(decisions)
    assert len(t) == 1  # only 'audio' has two models
    r = t.iloc[0]
    assert (r["condition"], r["system_a"], r["system_b"], r["n"]) == ("audio", "m1", "m2", 10)
    assert (r["a_only"], r["b_only"]) == (2, 0)  # m1 right and m2 wrong on items 6, 7
    assert r["diff"] == pytest.approx(0.2)
    assert r["p_value"] == pytest.approx(binomtest(0, 2, 0.5).pvalue) == pytest.approx(0.5)
    assert not r["significant"]


def test_confusion_and_parse_stage_tables(decisions):
    c = confusion_table(decisions).set_index(["model", "gold_label", "pred_label"])
    # m2 audio: gold A items 0,2,4,6,8 -> right on 0,2,4; wrong (answered B) on 6,8
    assert c.loc[("m2", "A", "A"), "count"] == 3 and c.loc[("m2", "A", "B"), "count"] == 2
    # gold B items 1,3,5,7,9 -> right on 1,3,5; wrong on 7; item 9 unparsed
    assert c.loc[("m2", "B", "unparsed"), "count"] == 1
    assert c.loc[("m2", "B", "B"), "row_share"] == pytest.approx(0.6)
    s = parse_stage_table(decisions).set_index(["model", "condition", "parse_status"])
    assert s.loc[("m2", "audio", "exact-label"), "count"] == 6
    assert s.loc[("m2", "audio", "label-pattern"), "count"] == 3
    assert s.loc[("m2", "audio", "unparseable"), "share"] == pytest.approx(0.1)


def test_temporal_bins_by_hand(decisions):
    t = temporal_table(decisions).query("model == 'm1' and condition == 'audio'").set_index(["feature", "bin"])
    # gap_s of items 0..9: 0.1 0.3 0.3 0.6 1.5 1.5 2.5 3.0 0.7 0.2 ; m1 audio right on 0..7
    assert (t.loc[("gap_s", "[0, 0.25)"), "n"], t.loc[("gap_s", "[0, 0.25)"), "k"]) == (2, 1)  # items 0, 9
    assert (t.loc[("gap_s", "[0.5, 1)"), "n"], t.loc[("gap_s", "[0.5, 1)"), "k"]) == (2, 1)    # items 3, 8
    assert (t.loc[("gap_s", ">= 2"), "n"], t.loc[("gap_s", ">= 2"), "k"]) == (2, 2)            # items 6, 7
    assert (t.loc[("overlap", "True"), "n"], t.loc[("overlap", "True"), "k"]) == (4, 3)        # items 0,3,6,9
    assert t["n"].groupby(level="feature").sum().to_dict() == {"gap_s": 10, "overlap": 10}
    assert iou_table(decisions).empty


def test_iou_table_when_scorer_writes_iou(decisions):
    d = decisions.assign(iou=np.linspace(0, 0.9, len(decisions)))
    t = iou_table(d).set_index(["model", "condition"])
    v = np.linspace(0, 0.9, len(decisions))[:10]
    assert t.loc[("m1", "audio"), "mean"] == pytest.approx(v.mean())
    assert t.loc[("m1", "audio"), "share_iou_ge_0.5"] == pytest.approx((v >= 0.5).mean())


def test_position_table(decisions):
    p = position_table(decisions).query("model == 'm2'").set_index("position")
    # m2: predictions A on 0,2,4,7 (wrong B->A on 7) ; B on 1,3,5,6,8 ; item 9 unparsed
    assert p.loc[0, "n_predicted"] == 4 and p.loc[1, "n_predicted"] == 5 and p.loc[-1, "n_predicted"] == 1
    assert p.loc[0, "gold_share"] == 0.5 and p.loc[0, "pred_share"] == pytest.approx(4 / 9)
    assert (p.loc[0, "k"], p.loc[0, "n"]) == (3, 5)


def test_spread_and_circular_tables():
    tsv = pd.DataFrame({"model": "m", "dataset": "d", "task": "t", "condition": "audio", "metric": "accuracy",
                        "prompt": ["p1", "p2", "p3"], "value": [0.5, 0.7, 0.6]})
    s = spread_table(tsv).iloc[0]
    assert (s["min"], s["max"], s["min_prompt"], s["max_prompt"]) == (0.5, 0.7, "p1", "p2")
    assert s["std"] == pytest.approx(np.std([0.5, 0.7, 0.6], ddof=1))
    assert spread_table(tsv.iloc[:1]).empty  # one prompt: no spread
    circ = pd.DataFrame({"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": "p1",
                         "metric": ["circular_accuracy", "circular_plain_accuracy", "circular_consistency"],
                         "value": [0.4, 0.7, 0.5], "ci_low": [0.2, 0.5, 0.3], "ci_high": [0.6, 0.8, 0.7],
                         "n": [10, 40, 10], "chance": [0.0625, 0.5, None]})
    c = circular_table(circ).iloc[0]
    assert (c["circular_accuracy"], c["plain_accuracy"], c["n"]) == (0.4, 0.7, 10)
    assert circular_table(None).empty


def test_floor_is_best_no_audio_accuracy():
    tsv = pd.DataFrame({"model": ["a", "b", "a"], "task": "t", "condition": ["no-audio", "no-audio", "audio"],
                        "prompt": "p", "metric": "accuracy", "value": [0.4, 0.55, 0.9], "ci_low": 0.1,
                        "ci_high": 0.95, "chance": 0.25, "n": 20})
    f = floor_table(tsv).iloc[0]
    assert (f["floor"], f["floor_model"]) == (0.55, "b")


def _bars(ax) -> dict[str, list[float]]:
    """Bar heights of each labelled bar series on ``ax``, left to right."""
    return {c.get_label(): [p.get_height() for p in c.patches] for c in ax.containers if isinstance(c, BarContainer)}


def _whiskers(ax, label: str) -> list[tuple[float, float]]:
    """(low, high) end of each error bar of the bar series ``label``."""
    c = next(c for c in ax.containers if isinstance(c, BarContainer) and c.get_label() == label)
    return [(seg[0][1], seg[1][1]) for seg in c.errorbar.lines[2][0].get_segments()]


def _ticks(ax, axis: str = "x") -> list[str]:
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels())]


def _panels(fig) -> dict[str, object]:
    return {ax.get_title(): ax for ax in fig.axes if ax.get_title()}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_reliance_figure_draws_each_runs_accuracy_and_interval(decisions):
    panels = _panels(plot_reliance(decisions))
    assert list(panels) == ["m1 (prompt p1)", "m2 (prompt p1)"]
    m1, m2 = panels.values()
    assert _ticks(m1) == ["t1"]
    assert _bars(m1) == {"audio": [0.8], "no-audio": [0.5]} and _bars(m2) == {"audio": [0.6]}
    np.testing.assert_allclose(_whiskers(m1, "audio"), [_wilson(8, 10)])
    np.testing.assert_allclose(_whiskers(m1, "no-audio"), [_wilson(5, 10)])
    assert "*" not in [t.get_text() for t in m1.texts]  # McNemar p = 0.25
    strong = pd.DataFrame(_run("m1", "audio", set(range(N))) + _run("m1", "no-audio", set()))
    [ax] = plot_reliance(strong).axes
    [star] = [t for t in ax.texts if t.get_text() == "*"]  # p = 0.002: starred over the no-audio bar
    [bar] = next(c for c in ax.containers if c.get_label() == "no-audio").patches
    assert star.get_position()[0] == pytest.approx(bar.get_x() + bar.get_width() / 2)


def test_accuracy_figure_draws_bars_intervals_chance_and_floor():
    tsv = pd.DataFrame({"model": ["m1", "m1", "m2", "m2"], "dataset": "d", "task": ["t1", "t1", "t1", "t2"],
                        "condition": ["audio", "no-audio", "audio", "audio"], "prompt": "p1", "metric": "accuracy",
                        "value": [0.8, 0.5, 0.6, 0.7], "ci_low": [0.5, 0.2, 0.3, 0.4],
                        "ci_high": [0.95, 0.8, 0.85, 0.9], "chance": [0.5, 0.5, 0.5, 0.25], "n": 10})
    panels = _panels(plot_accuracy(tsv))
    assert list(panels) == ["condition: audio", "condition: no-audio"]
    audio, no_audio = panels.values()
    assert _ticks(audio) == ["t1", "t2"]
    assert _bars(audio) == {"m1": [0.8], "m2": [0.6, 0.7]} and _bars(no_audio) == {"m1": [0.5]}
    np.testing.assert_allclose(_whiskers(audio, "m2"), [(0.3, 0.85), (0.4, 0.9)])

    def levels(ax, color):  # the y of each dashed/dotted level line, per task
        return [seg[0][1] for c in ax.collections if c.get_linestyle() and c.get_color()[0].tolist() ==
                list(matplotlib.colors.to_rgba(color)) for seg in c.get_segments()]

    assert levels(audio, "0.3") == [0.5, 0.25]  # chance per task
    assert levels(audio, "tab:red") == [0.5]  # the best no-audio accuracy on t1; t2 has no floor
    assert levels(no_audio, "tab:red") == []
    assert {t.get_text() for t in audio.get_legend().get_texts()} == {"m1", "m2", "chance", "no-audio floor (best)"}


def test_paired_figure_shows_row_minus_column_differences(decisions):
    [ax] = [a for a in plot_paired(decisions).axes if a.get_title()]
    assert ax.get_title() == "row minus column accuracy [audio]"
    assert _ticks(ax) == ["m1", "m2"] and _ticks(ax, "y") == ["m1", "m2"]
    np.testing.assert_allclose(np.ma.filled(ax.images[0].get_array(), np.nan), [[np.nan, 0.2], [-0.2, np.nan]])
    assert sorted(t.get_text() for t in ax.texts) == ["+0.20\nn=10", "-0.20\nn=10"]  # p = 0.5: no star


def test_confusion_figure_shows_counts_and_row_shares(decisions):
    panels = _panels(plot_confusion(decisions))
    m1, m2 = panels["m1 [audio]"], panels["m2 [audio]"]
    assert _ticks(m2) == ["A", "B", "unparsed"] and _ticks(m2, "y") == ["A", "B"]
    assert [t.get_text() for t in m2.texts] == ["3", "2", "0", "1", "3", "1"]
    np.testing.assert_allclose(m2.images[0].get_array(), [[0.6, 0.4, 0.0], [0.2, 0.6, 0.2]])
    assert _ticks(m1) == ["A", "B"] and [t.get_text() for t in m1.texts] == ["4", "1", "1", "4"]


def test_parse_stage_figure_stacks_each_runs_shares(decisions):
    [ax] = plot_parse_stages(decisions).axes
    assert _ticks(ax) == ["m1\n[audio]", "m1\n[no-audio]", "m2\n[audio]"]
    bars = _bars(ax)
    assert list(bars) == ["exact-label", "label-pattern", "unparseable"]  # stages no answer used are left out
    assert bars["exact-label"] == pytest.approx([0.8, 0.5, 0.6])
    assert bars["label-pattern"] == pytest.approx([0.2, 0.5, 0.3])
    assert bars["unparseable"] == pytest.approx([0.0, 0.0, 0.1])
    stacked = next(c for c in ax.containers if c.get_label() == "unparseable")
    assert [p.get_y() for p in stacked.patches] == pytest.approx([1.0, 1.0, 0.9])


def test_temporal_figure_plots_accuracy_per_bin(decisions):
    panels = _panels(plot_temporal(decisions))
    assert list(panels) == ["by gap_s (t1)", "by overlap (t1)"]
    gap, overlap = panels.values()
    assert _ticks(gap) == ["[0, 0.25)", "[0.25, 0.5)", "[0.5, 1)", "[1, 2)", ">= 2"]
    series = {c.get_label(): list(c.lines[0].get_ydata()) for c in gap.containers}
    # m1 audio right on items 0-7, no-audio on 3-7; two items per bin (see test_temporal_bins_by_hand)
    assert series["m1 [audio]"] == [0.5, 1.0, 0.5, 1.0, 1.0]
    assert series["m1 [no-audio]"] == [0.0, 0.0, 0.5, 1.0, 1.0]
    assert [t.get_text() for t in gap.texts][:5] == ["n=2"] * 5
    assert _ticks(overlap) == ["False", "True"]
    m1 = next(c for c in overlap.containers if c.get_label() == "m1 [audio]")
    assert list(m1.lines[0].get_ydata()) == pytest.approx([5 / 6, 3 / 4])


def test_robustness_figure_panels(decisions):
    one_prompt = pd.DataFrame({"model": "m1", "dataset": "d", "task": "t1", "condition": "audio", "prompt": "p1",
                               "metric": "accuracy", "value": [0.8]})
    circ_ax, spread_ax, pos_ax = plot_robustness(one_prompt, decisions, None).axes
    assert "no CircularEval sweep" in circ_ax.texts[0].get_text()
    assert "no prompt spread to show" in spread_ax.texts[0].get_text()
    bars = {k.split(" (")[0]: v for k, v in _bars(pos_ax).items()}
    assert list(bars) == ["gold share", "m1 predicted", "m2 predicted"]
    np.testing.assert_allclose(list(bars.values()), [[0.5, 0.5], [0.5, 0.5], [4 / 9, 5 / 9]])
    assert _ticks(pos_ax) == ["A", "B"]

    prompts = pd.DataFrame({"model": "m", "dataset": "d", "task": "t", "condition": "audio", "metric": "accuracy",
                            "prompt": ["p1", "p2", "p3"], "value": [0.5, 0.7, 0.6]})
    circular = pd.DataFrame({"model": "m", "dataset": "d", "task": "t", "condition": "audio", "prompt": "p1",
                             "metric": ["circular_accuracy", "circular_plain_accuracy"], "value": [0.4, 0.7],
                             "ci_low": [0.2, 0.5], "ci_high": [0.6, 0.8], "n": [10, 40], "chance": [0.0625, 0.5]})
    circ_ax, spread_ax, _ = plot_robustness(prompts, decisions, circular).axes
    assert _bars(circ_ax) == {"plain (all shifts)": [0.7], "circular (every shift right)": [0.4]}
    np.testing.assert_allclose(_whiskers(circ_ax, "circular (every shift right)"), [(0.2, 0.6)])
    assert _ticks(circ_ax) == ["m · t/audio"]
    [span] = spread_ax.collections[0].get_segments()
    assert span[:, 1].tolist() == pytest.approx([0.5, 0.7]) and list(spread_ax.lines[0].get_ydata()) == pytest.approx([0.6])


def test_a_saved_figure_carries_its_titles_and_tick_labels(decisions, tmp_path):
    for name, fig in {"reliance": plot_reliance(decisions), "confusion": plot_confusion(decisions),
                      "temporal": plot_temporal(decisions)}.items():
        expected = {ax.get_title() for ax in fig.axes if ax.get_title()} | {
            t for ax in fig.axes for t in _ticks(ax) if t}
        save(fig, str(tmp_path / f"{name}.png"), str(tmp_path / f"{name}.svg"))
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert expected <= svg_texts(tmp_path / f"{name}.svg"), name


def test_figures_without_inputs_say_why():
    empty = pd.DataFrame(columns=["model", "dataset", "task", "condition", "prompt", "id", "correct", "outcome"])
    for fig, why in [(plot_temporal(empty), "no items carry temporal meta"),
                     (plot_paired(empty), "fewer than two models share a condition: nothing to compare"),
                     (plot_reliance(empty), "no scored runs"), (plot_confusion(empty), "no multiple-choice decisions")]:
        [ax] = fig.axes
        assert ax.texts[0].get_text().startswith(why)


def test_collect_decisions_keys_and_mixed_meta(tmp_path):
    for cond, meta in (("audio", [1, 2]), ("noise", ["x", "y"])):
        p = tmp_path / "results" / "scores" / "m" / "d" / "t" / cond / "p"
        p.mkdir(parents=True)
        pd.DataFrame({"id": ["a", "b"], "correct": [True, False], "outcome": ["correct", "wrong"],
                      "meta_k": pd.Series(meta, dtype=object), "meta_gap_s": [0.5, 1.0]}
                     ).to_parquet(p / "decisions.parquet")
    paths = sorted(tmp_path.glob("results/scores/*/*/*/*/*/decisions.parquet"))
    d = collect_decisions(paths)
    assert list(d.columns[:5]) == ["model", "dataset", "task", "condition", "prompt"]
    assert d["condition"].tolist() == ["audio", "audio", "noise", "noise"]
    assert d["meta_k"].tolist() == ["1", "2", "x", "y"]  # mixed kinds -> strings
    assert d["meta_gap_s"].dtype.kind == "f"
    d.to_parquet(tmp_path / "all.parquet")  # one type per column: parquet accepts it


def test_open_answer_runs_are_left_out_not_fatal(decisions, tmp_path):
    p = tmp_path / "results" / "scores" / "m1" / "d" / "captions" / "audio" / "p1"
    p.mkdir(parents=True)
    pd.DataFrame({"id": ["c1", "c2"], "raw_output": ["a dog barks", "rain"]}).to_parquet(p / "decisions.parquet")
    open_answers = collect_decisions([p / "decisions.parquet"])
    mixed = pd.concat([decisions, open_answers], ignore_index=True)
    assert reliance_table(mixed).equals(reliance_table(decisions))
    assert paired_table(mixed).equals(paired_table(decisions))
    assert temporal_table(mixed).equals(temporal_table(decisions))
    assert set(parse_stage_table(mixed)["model"]) == {"m1", "m2"}


def test_svgs_are_byte_stable(decisions, tmp_path):
    for k in (1, 2):
        save(plot_paired(decisions), str(tmp_path / f"p{k}.png"), str(tmp_path / f"p{k}.svg"))
        save(plot_temporal(decisions), str(tmp_path / f"t{k}.png"), str(tmp_path / f"t{k}.svg"))
    assert (tmp_path / "p1.svg").read_bytes() == (tmp_path / "p2.svg").read_bytes()
    assert (tmp_path / "t1.svg").read_bytes() == (tmp_path / "t2.svg").read_bytes()
