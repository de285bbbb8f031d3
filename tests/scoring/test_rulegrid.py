"""Grid helpers behind rules/sweeps.smk and rules/open_metrics.smk."""
import json

from lalmbench.workflow.config import Run
from lalmbench.scoring.judge_mcq import code_fingerprint
from lalmbench.workflow.rulegrid import (batched_runs, determinism_predictions, judge_resource, mcq_judge_json, mcq_runs,
                                mcq_tasks_scored_in, open_scoring_json, open_tasks, paired_groups, per_task, scoring_env,
                                sweep_grid, sweep_hash)

CFG = {"seed": 0, "scale": 1, "sample_rate": 16000, "datasets": {"d": {"adapter": "x"}},
       "tasks": {"mcq": {"dataset": "d", "family": "f"},
                 "cap": {"dataset": "d", "family": "g", "scoring": {"kind": "captioning"}},
                 "sf": {"dataset": "d", "family": "g", "scoring": {"kind": "judge", "judge_model": "j"}}},
       "models": {"m1": {"batch_size": 8, "env": "core"}, "m2": {"env": "core"}, "j": {"env": "hf", "resources": {}}}}
RUNS = [Run(m, "d", t, c, "p") for m in ("m1", "m2") for t in ("mcq", "cap") for c in ("audio", "no-audio")]


def test_sweep_grid_filters_and_off_when_empty():
    assert sweep_grid(RUNS, {}) == [] and sweep_grid(RUNS, None) == []
    sel = sweep_grid(RUNS, {"models": ["m1"], "conditions": ["audio"], "tasks": []})
    assert [(r.model, r.task, r.condition) for r in sel] == [("m1", "mcq", "audio"), ("m1", "cap", "audio")]
    assert {r.model for r in sweep_grid(RUNS, {"tasks": ["mcq"]}, skip_models={"m1"})} == {"m2"}


def test_open_tasks_and_mcq_runs():
    assert open_tasks(CFG) == ["cap", "sf"]
    assert {r.task for r in mcq_runs(CFG, RUNS)} == {"mcq"}
    assert set(paired_groups(mcq_runs(CFG, RUNS))) == {("d", "mcq", "audio", "p"), ("d", "mcq", "no-audio", "p")}
    assert paired_groups(mcq_runs(CFG, RUNS))[("d", "mcq", "audio", "p")] == ["m1", "m2"]


def test_scoring_json_and_env():
    j = json.loads(open_scoring_json(CFG, "sf"))
    assert j["judge_model_cfg"] == CFG["models"]["j"] and j["cache_dir"] == "results/cache/judge" and j["seed"] == 0
    assert scoring_env(CFG, "sf") == "hf" and scoring_env(CFG, "cap") == "core"


def test_determinism_always_regenerates_at_its_own_batch_size():
    # the main run's file may come from the prediction cache at another batch size: never reused
    kw = dict(model="m1", dataset="d", task="mcq", condition="audio", prompt="p")
    assert determinism_predictions(CFG, **kw, batch_size=8).endswith("/m1/d/mcq/audio/p/bs8.parquet")
    assert determinism_predictions(CFG, **kw, batch_size=1).endswith("/m1/d/mcq/audio/p/bs1.parquet")


def test_sweep_hash_changes_with_what_changes_the_result():
    kw = dict(dataset="d", task="mcq", model="m1", condition="audio", prompt_text="{question}")
    assert sweep_hash(CFG, **kw, circular_k=4) == sweep_hash(CFG, **kw, circular_k=4)
    assert sweep_hash(CFG, **kw, circular_k=4) != sweep_hash(CFG, **kw, circular_k=3)
    assert sweep_hash(CFG, **kw) != sweep_hash(CFG, **{**kw, "prompt_text": "other"})


def test_the_mcq_judge_block_moves_only_the_tasks_it_covers_into_the_judge_env():
    assert json.loads(mcq_judge_json(CFG, "mcq")) == {} and mcq_tasks_scored_in(CFG, "core") == ["mcq"]
    cfg = {**CFG, "tasks": {**CFG["tasks"], "mcq2": {"dataset": "d", "family": "f"}},
           "models": {**CFG["models"], "j": {"env": "hf", "resources": {"gpus": 1}}},
           "judge": {"judge_model": "j", "tasks": ["mcq"], "audit_n": 5}}
    j = json.loads(mcq_judge_json(cfg, "mcq"))
    assert j == {"judge_model": "j", "judge_model_cfg": cfg["models"]["j"], "audit_n": 5, "seed": 0,
                 "code": code_fingerprint()}  # an edit of the judge code re-scores the judged runs
    assert mcq_judge_json(cfg, "mcq2") == "{}" and mcq_judge_json(cfg, "sf") == "{}"
    assert mcq_tasks_scored_in(cfg, "hf") == ["mcq"] and mcq_tasks_scored_in(cfg, "core") == ["mcq2"]
    assert judge_resource(cfg, "mcq", "gpus", 0) == 1 and judge_resource(cfg, "mcq2", "gpus", 0) == 0


def test_per_task_is_a_constant_when_every_task_agrees_else_a_lookup():
    from types import SimpleNamespace

    assert per_task(["a", "b"], lambda t: "{}") == "{}"
    assert per_task(["a", "b"], lambda t: []) == []
    by_task = per_task(["a", "b"], lambda t: 4000 if t == "b" else 2000)
    assert by_task(SimpleNamespace(task="a")) == 2000 and by_task(SimpleNamespace(task="b")) == 4000


def test_batched_runs_one_rule_per_dataset_and_run_set_models_with_the_same_runs_share_it():
    runs = [Run(m, "ds", t, c, "p") for m in ("a", "b") for t in ("t1", "t2") for c in ("audio", "no-audio")]
    runs += [Run("tp", "ds", t, "no-audio", "p") for t in ("t1", "t2")]
    runs += [Run("a", "ds2", "open", "audio", "p")]  # a task that is not batched (open) stays with its own rules
    assert batched_runs(runs, ["t1", "t2"]) == [
        ("ds", ("a", "b"), (("t1", "audio", "p"), ("t1", "no-audio", "p"), ("t2", "audio", "p"), ("t2", "no-audio", "p"))),
        ("ds", ("tp",), (("t1", "no-audio", "p"), ("t2", "no-audio", "p"))),
    ]
