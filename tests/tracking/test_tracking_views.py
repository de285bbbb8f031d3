"""The analysis views and live progress points a tracked run gets, computed from real scoring."""
import logging

import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.core.progress import ProgressLog
from lalmbench.scoring.mcq import score_mcq
from lalmbench.tracking.views import UNPARSEABLE, analysis_tables, numeric_summary, progress_points


@pytest.fixture
def scored(mini_run):
    items = io.read_jsonl(mini_run["items"])
    preds = io.read_parquet(mini_run["predictions"])
    decisions, metrics = score_mcq(items, preds)
    return items, preds, decisions, metrics


def test_label_distribution_counts_gold_and_predicted_with_unparseable_last(scored):
    items, _, decisions, _ = scored
    dist = analysis_tables(decisions, items)["label_distribution"]
    assert dist.to_dict("list") == {"label": ["A", "B", "C", UNPARSEABLE], "gold": [3, 2, 1, 0],
                                    "predicted": [2, 2, 1, 1]}


def test_accuracy_by_gold_label_options_and_answer_type(scored):
    items, _, decisions, _ = scored
    t = analysis_tables(decisions, items)
    assert t["accuracy_by_gold_label"].to_dict("list") == {"gold_label": ["A", "B", "C"], "n": [3, 2, 1],
                                                           "correct": [1, 1, 1], "accuracy": [1 / 3, 0.5, 1.0]}
    assert t["accuracy_by_n_options"].to_dict("list") == {"n_options": [2, 3], "n": [4, 2], "correct": [2, 1],
                                                          "accuracy": [0.5, 0.5]}
    # the gold option's type, since these items carry no meta.answer_type
    assert t["accuracy_by_answer_type"].to_dict("list") == {"answer_type": ["event", "none"], "n": [5, 1],
                                                            "correct": [3, 0], "accuracy": [0.6, 0.0]}


def test_answer_type_prefers_the_items_meta_answer_type(scored):
    items, _, decisions, _ = scored
    decisions = decisions.assign(meta_answer_type=["event", "event", "none", "none", "none", "event"])
    t = analysis_tables(decisions, items)["accuracy_by_answer_type"]
    assert t.to_dict("list") == {"answer_type": ["event", "none"], "n": [3, 3], "correct": [2, 1],
                                 "accuracy": [2 / 3, 1 / 3]}


def test_confusion_matrix_lists_every_gold_by_predicted_pair(scored):
    items, _, decisions, _ = scored
    cm = analysis_tables(decisions, items)["confusion_matrix"]
    assert len(cm) == 3 * 4  # gold A, B, C x predicted A, B, C, unparseable (zeros included)
    nonzero = {(g, p): n for g, p, n in cm.itertuples(index=False) if n}
    assert nonzero == {("A", "A"): 1, ("A", "B"): 1, ("A", UNPARSEABLE): 1, ("B", "A"): 1, ("B", "B"): 1,
                       ("C", "C"): 1}
    assert cm["n"].sum() == len(decisions)


def test_open_ended_decisions_get_no_mcq_views():
    assert analysis_tables(pd.DataFrame({"id": ["a"], "hypothesis": ["x"]}), []) == {}


def test_progress_points_every_n_items_and_at_the_last(scored):
    _, preds, decisions, _ = scored
    points = list(progress_points(decisions, preds["latency_s"], every=4))
    assert [s for s, _ in points] == [4, 6]
    assert points[0][1] == {"items_done": 4, "fraction": 4 / 6, "accuracy_so_far": 0.5,
                            "latency_per_item_s": pytest.approx(0.25)}
    assert points[1][1]["accuracy_so_far"] == 0.5 and points[1][1]["fraction"] == 1.0


def test_numeric_summary_names_the_headline_metric_and_drops_provenance(scored):
    _, _, _, metrics = scored
    s = numeric_summary({**metrics, "seed": 0, "batch_size": 6, "versions": {"numpy": "2"}})
    assert s["accuracy"] == s["value"] == 0.5
    assert s["n"] == 6 and s["n_unparseable"] == 1 and s["parse_stage_counts.exact-label"] == 4
    assert s["parse_stage_counts.label-pattern"] == 1  # "(C)"
    assert not {"seed", "batch_size", "boot_seed", "versions.numpy"} & set(s)


class Recorder:
    """A tracker that keeps what it is sent (the ProgressLog side of the interface)."""
    enabled = True
    log_every = 4

    def __init__(self):
        self.points = []

    def progress(self, step, metrics):
        self.points.append((step, metrics))


def test_progress_log_sends_live_points_every_log_every_items():
    rec = Recorder()
    p = ProgressLog(10, "m", logging.getLogger("test"), tracker=rec)
    for _ in range(5):  # batches of 2: points when 4, 8 and the total (10) are reached
        p.update(2, latency_s=0.5, judged=2, correct=1)
    assert [s for s, _ in rec.points] == [4, 8, 10]
    last = rec.points[-1][1]
    assert last["items_done"] == 10 and last["fraction"] == 1.0
    assert last["accuracy_so_far"] == 0.5 and last["latency_per_item_s"] == pytest.approx(0.25)


def test_progress_log_without_tracker_sends_nothing_and_has_no_accuracy_when_unjudged():
    p = ProgressLog(2, "m", logging.getLogger("test"))
    p.update(2, latency_s=1.0)
    assert p.tracker is None and "accuracy_so_far" not in p.point(p.start + 1)
