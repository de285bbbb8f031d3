"""Config expansion of benchmark presets: one import task per item kind, and models that cannot
answer a task's items reported when the config is read (snakemake -n), with what to change."""
from __future__ import annotations

import copy

import pytest

from lalmbench.report.aggregate import task_flags
from lalmbench.workflow.config import ConfigError, validate_config
from tests.workflow import ROOT

SCHEMA = ROOT / "config" / "schema.yaml"


def _cfg(models=None, tasks=None):
    return {
        "seed": 0,
        "datasets": {"pro": {"adapter": "mmau_pro", "params": {"items": "x/test.parquet", "audio_root": "x"}},
                     "mini": {"adapter": "mmau", "params": {"items": "x/mmau.json", "audio_root": "x"}}},
        "tasks": tasks or {"mmau-pro": {"dataset": "pro", "family": "import",
                                        "scoring": {"kind": "judge", "judge_model": "qwen"}},
                           "mmau": {"dataset": "mini", "family": "import"}},
        "models": models or {"qwen": {"backend": "hf", "model_id": "Qwen/Qwen2-Audio-7B-Instruct",
                                      "family": "qwen2_audio"}},
        "conditions": ["audio"], "prompts": ["mcq-default"],
    }


def test_mixed_benchmark_import_task_becomes_one_task_per_kind():
    cfg = validate_config(_cfg(), SCHEMA, ROOT)
    kinds = {t: (c["params"].get("kind"), (c.get("scoring") or {}).get("kind")) for t, c in cfg["tasks"].items()}
    assert kinds == {"mmau-pro": ("mcq", None), "mmau-pro-open": ("open", "judge"),
                     "mmau-pro-if": ("instruction", "instruction"), "mmau": ("mcq", None)}
    assert cfg["datasets"]["pro"]["official"] == [{"scorer": "mmau_pro_nearest_choice", "breakdown": ["category"]},
                                                  {"scorer": "mmau_pro_instruction", "breakdown": ["category"]}]


def test_open_items_without_a_scoring_block_say_what_to_add():
    tasks = {"mmau-pro": {"dataset": "pro", "family": "import"}}
    with pytest.raises(ConfigError, match=r"tasks.mmau-pro: its open items \(task 'mmau-pro-open'\) need a scoring "
                                          r"block: set tasks.mmau-pro.scoring, e.g. \{kind: judge"):
        validate_config(_cfg(tasks=tasks), SCHEMA, ROOT)


def test_a_task_that_sets_its_kind_is_kept_as_is():
    tasks = {"pro-open": {"dataset": "pro", "family": "import", "params": {"kind": "open"},
                          "scoring": {"kind": "judge", "judge_model": "qwen"}}}
    cfg = validate_config(_cfg(tasks=tasks), SCHEMA, ROOT)
    assert list(cfg["tasks"]) == ["pro-open"]


def test_option_picking_floor_on_open_items_is_a_config_error_saying_what_to_change():
    models = {"random": {"backend": "random", "seed": 0}, "qwen": _cfg()["models"]["qwen"]}
    with pytest.raises(ConfigError) as err:
        validate_config(_cfg(models=models), SCHEMA, ROOT)
    msg = str(err.value)
    assert "models.random: cannot answer task 'mmau-pro-open', whose items are open (no options)" in msg
    assert "task 'mmau-pro-if'" in msg and "list the tasks it should run in models.random.tasks" in msg
    assert "'mmau'" not in msg.replace("'mmau-pro", "")


def test_floor_restricted_to_mcq_tasks_passes():
    models = {"random": {"backend": "random", "seed": 0, "tasks": ["mmau-pro", "mmau"]},
              "qwen": _cfg()["models"]["qwen"]}
    cfg = validate_config(_cfg(models=models), SCHEMA, ROOT)
    assert "mmau-pro-open" in cfg["tasks"]


def test_task_flags_name_what_the_adapter_left_out(tmp_path):
    from lalmbench.core import io

    p = tmp_path / "results" / "tasks" / "mmar" / "mmar.stats.json"
    io.write_json(p, {"dropped": {}, "dropped_at_source": {"item:answer_not_in_choices": 2,
                                                           "item:missing_audio": 1}})
    io.write_json(tmp_path / "clean.stats.json", {"dropped": {}})
    assert task_flags([str(p), str(tmp_path / "clean.stats.json")]) == {
        ("mmar", "mmar"): ["items left out at source: 3 (answer_not_in_choices=2, missing_audio=1)"]}


def test_audio_root_is_required_only_when_a_model_hears_the_audio():
    """Released outputs are scored with no audio folder; a model that listens needs one, said before any job."""
    released = {"backend": "imported", "params": {"predictions": "released.jsonl"}}
    cfg = _cfg(models={"released": released}, tasks={"mmau": {"dataset": "mini", "family": "import"}})
    del cfg["datasets"]["mini"]["params"]["audio_root"]
    del cfg["datasets"]["pro"]
    validate_config(copy.deepcopy(cfg), SCHEMA, ROOT)
    cfg["models"]["qwen"] = {"backend": "hf", "model_id": "Qwen/Qwen2-Audio-7B-Instruct", "family": "qwen2_audio"}
    with pytest.raises(ConfigError, match=r"datasets.mini.params: 'audio_root' is required: model\(s\) qwen hear its "
                                          r"audio \(only imported outputs, backend: imported, are scored without it\)"):
        validate_config(cfg, SCHEMA, ROOT)


def test_imported_outputs_skip_what_needs_new_outputs_and_say_so():
    from lalmbench.workflow.config import imported_skips, iter_runs

    released = {"backend": "imported", "params": {"predictions": "released.jsonl"}}
    cfg = _cfg(models={"released": released, "own": dict(released, conditions=["audio", "no-audio"]),
                       "qwen": {"backend": "hf", "model_id": "Qwen/Qwen2-Audio-7B-Instruct", "family": "qwen2_audio"}},
               tasks={"mmau": {"dataset": "mini", "family": "import"}})
    cfg.update(conditions=["audio", "silence", "noise"], sweeps={"circular": {"k": 2, "models": ["released"]}})
    validate_config(cfg, SCHEMA, ROOT)
    runs = {(r.model, r.condition) for r in iter_runs(cfg)}
    assert runs == {("released", "audio"), ("own", "audio"), ("own", "no-audio"), ("qwen", "audio"),
                    ("qwen", "silence"), ("qwen", "noise")}
    lead = "imported outputs: not run (each needs new outputs made on this run's audio or options): "
    assert imported_skips(cfg) == {
        "released": lead + "conditions silence and noise, the listening check, the circular sweep",
        "own": lead + "the listening check"}
