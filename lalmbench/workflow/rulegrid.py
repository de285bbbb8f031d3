"""Pure helpers for rules/sweeps.smk and rules/open_metrics.smk: which runs a sweep covers, which
tasks are open-ended, what each scoring job gets. Kept out of the .smk files so those hold rules
only (snakemake --lint) and so the grid logic is unit-testable."""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Sequence

from lalmbench.core.provenance import config_hash


def sweep_grid(runs: Iterable, spec: dict | None, skip_models: Iterable[str] = ()) -> list:
    """The runs a sweep spec selects: ``models``/``tasks``/``conditions``/``prompts`` lists, where an
    absent or empty list means every value; ``None``/``{}`` spec means the sweep is off.
    ``skip_models`` never enter (imported outputs: re-asking with options reordered or another
    batch size cannot change a published answer, so those sweeps would measure nothing)."""
    if not spec:
        return []
    skip = set(skip_models)
    out = []
    for r in runs:
        if r.model in skip:
            continue
        if spec.get("models") and r.model not in spec["models"]:
            continue
        if spec.get("tasks") and r.task not in spec["tasks"]:
            continue
        if spec.get("conditions") and r.condition not in spec["conditions"]:
            continue
        if spec.get("prompts") and r.prompt not in spec["prompts"]:
            continue
        out.append(r)
    return out


def sweep_hash(config: dict, *, dataset: str, task: str, model: str, condition: str, prompt_text: str,
               **extra) -> str:
    """Hash of everything that determines one sweep job's result (recorded as config_hash)."""
    from lalmbench.inference.fingerprint import model_fingerprint

    return config_hash({
        "seed": config["seed"], "scale": config.get("scale"), "sample_rate": config.get("sample_rate"),
        "dataset": config["datasets"][dataset], "task": config["tasks"][task], "model": model_fingerprint(config["models"][model]),
        "condition": condition, "prompt": prompt_text, **extra,
    })


def scoring_kind(config: dict, task: str) -> str | None:
    return (config["tasks"][task].get("scoring") or {}).get("kind")


def open_tasks(config: dict) -> list[str]:
    """Tasks scored by rule score_open (a ``scoring.kind``), the rest are MCQ."""
    return sorted(t for t in config["tasks"] if scoring_kind(config, t))


def mcq_runs(config: dict, runs: Iterable) -> list:
    return [r for r in runs if not scoring_kind(config, r.task)]


def open_scoring_json(config: dict, task: str) -> str:
    """The scoring config one score_open job receives (canonical JSON: a change reruns the job)."""
    cfg = dict(config["tasks"][task]["scoring"])
    cfg.setdefault("seed", config["seed"])
    if cfg["kind"] == "judge":
        cfg["judge_model_cfg"] = config["models"][cfg["judge_model"]]
        cfg.setdefault("cache_dir", "results/cache/judge")
    return json.dumps(cfg, sort_keys=True, separators=(",", ":"))


def official_json(config: dict, task: str) -> str:
    """The official scoring rule one score job receives (canonical JSON, ``{}`` when the task's
    dataset names none in ``official:``): the rule for the task's kind, with the judge entry filled in
    for a judge-based rule (its own ``judge_model``, else the top-level ``judge:`` block's)."""
    from lalmbench.scoring.official import SCORERS, spec_for_task

    ds = config["datasets"][config["tasks"][task]["dataset"]]
    spec = spec_for_task(ds.get("official"), scoring_kind(config, task) or "mcq")
    if spec is None:
        return "{}"
    if SCORERS[spec["scorer"]].needs == "ask":
        judge = spec.get("judge_model") or (config.get("judge") or {}).get("judge_model")
        if not judge or judge not in config["models"]:
            raise ValueError(f"task {task}: official scorer {spec['scorer']!r} needs a judge model: set "
                             f"datasets.{config['tasks'][task]['dataset']}.official.judge_model or judge.judge_model "
                             f"to a models: entry (got {judge!r})")
        spec.update(judge_model=judge, judge_model_cfg=config["models"][judge])
        spec.setdefault("cache_dir", "results/cache/judge")
    from lalmbench.core.provenance import source_hash

    # an edit of the official rules re-scores the runs they cover, and only those
    spec["code"] = source_hash("scoring/official.py", "scoring/official_judge.py", "scoring/metrics/instruction.py",
                               "scoring/official_speech.py", "scoring/cn_numbers.py")
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def judge_model_of(config: dict, task: str) -> str | None:
    """The models entry that judges this task's runs: an open task's ``scoring.judge_model``, or for
    an MCQ task the top-level ``judge:`` block's (its LLM-judge fallback), else the judge of the
    dataset's official rule (SAKURA, AIR-Bench Chat), else None."""
    s = config["tasks"][task].get("scoring") or {}
    if s and s.get("kind") == "judge":
        return s["judge_model"]
    own = None if s else (mcq_judge(config, task) or {}).get("judge_model")
    if own:
        return own
    official = json.loads(official_json(config, task))
    return official.get("judge_model")


def scoring_env(config: dict, task: str) -> str:
    """Env whose python runs the scoring job: a judge runs its backend in-process."""
    judge = judge_model_of(config, task)
    return config["models"][judge]["env"] if judge else "core"


def mcq_judge(config: dict, task: str) -> dict | None:
    """The top-level ``judge:`` block if it covers this MCQ task (its ``tasks``; empty: all)."""
    j = config.get("judge")
    if not j or scoring_kind(config, task) or (j.get("tasks") and task not in j["tasks"]):
        return None
    return j


def mcq_judge_json(config: dict, task: str) -> str:
    """The judge settings one MCQ score job receives (canonical JSON, ``{}`` when off: a change
    re-scores the runs it covers, and only those)."""
    j = mcq_judge(config, task)
    if not j:
        return "{}"
    cfg = {k: v for k, v in j.items() if k != "tasks"}
    from lalmbench.scoring.judge_mcq import code_fingerprint

    cfg.update(judge_model_cfg=config["models"][j["judge_model"]], seed=config["seed"], code=code_fingerprint())
    return json.dumps(cfg, sort_keys=True, separators=(",", ":"))


def mcq_tasks_scored_in(config: dict, env: str) -> list[str]:
    """MCQ tasks whose score job runs in ``env`` (the LLM-judge fallback runs in its model's env)."""
    return [t for t in sorted(config["tasks"]) if not scoring_kind(config, t) and scoring_env(config, t) == env]


def open_tasks_scored_in(config: dict, env: str) -> list[str]:
    """Open tasks whose scoring job runs in ``env`` (a judge runs its model in-process, in its env)."""
    return [t for t in open_tasks(config) if scoring_env(config, t) == env]


def per_task(tasks: Iterable[str], value: Callable[[str], Any]) -> Any:
    """A rule input, param or resource that depends on the job's task only, computed once per task:
    the value itself when every task has the same one (Snakemake then calls no function per job),
    else a function of the job's wildcards that looks its task up."""
    table = {t: value(t) for t in tasks}
    if len({json.dumps(v, sort_keys=True) for v in table.values()}) == 1:
        return next(iter(table.values()))
    return lambda wildcards: table[wildcards.task]


def judge_resource(config: dict, task: str, key: str, default):
    judge = judge_model_of(config, task)
    if not judge:
        return default
    return config["models"][judge].get("resources", {}).get(key, default)


def paired_groups(runs: Sequence) -> dict[tuple[str, str, str, str], list[str]]:
    """(dataset, task, condition, prompt) -> models, where at least two models ran the same items."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for r in runs:
        groups.setdefault((r.dataset, r.task, r.condition, r.prompt), []).append(r.model)
    return {k: sorted(v) for k, v in sorted(groups.items()) if len(v) > 1}


def determinism_predictions(config: dict, *, model: str, dataset: str, task: str, condition: str, prompt: str,
                            batch_size: int) -> str:
    """A determinism sweep file: regenerated at exactly ``batch_size`` (never the main run's file, which
    may come from the prediction cache at another batch size)."""
    from lalmbench.workflow.config import Run
    from lalmbench.inference.plan import determinism_predictions_path

    return determinism_predictions_path(Run(model, dataset, task, condition, prompt), int(batch_size))


class Untracked:
    """A rule param Snakemake does not compare between runs (its serialiser skips non-builtin values).

    For settings that must reach a job but never rerun it: a model entry's batch size and resources
    change how predictions are made, not what they are (the tracked fingerprint says that)."""

    def __init__(self, text: str):
        self.text = text

    def __str__(self) -> str:
        return self.text


def batched_runs(runs: Iterable, tasks: Iterable[str]) -> list[tuple[str, tuple[str, ...], tuple[tuple[str, str, str], ...]]]:
    """``run_jobs: per-dataset``: the rules ``runs_<i>``, one per dataset and set of runs, as
    (dataset, models, ((task, condition, prompt), ...)). Models with the same runs on a dataset share
    a rule (its ``{model}`` wildcard); each model still gets its own job."""
    tasks = set(tasks)
    by_model: dict[tuple[str, str], list] = {}
    for r in runs:
        if r.task in tasks:
            by_model.setdefault((r.model, r.dataset), []).append((r.task, r.condition, r.prompt))
    rules: dict[tuple, list[str]] = {}
    for (model, dataset), rs in by_model.items():
        rules.setdefault((dataset, tuple(sorted(rs))), []).append(model)
    return [(d, tuple(sorted(ms)), rs) for (d, rs), ms in sorted(rules.items())]
