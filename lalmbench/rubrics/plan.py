"""Which rubric evaluations a config asks for, and each one's settings (the rule's params)."""
from __future__ import annotations

from lalmbench.workflow.config import Run, iter_runs


def rubric_tasks(cfg: dict) -> list[str]:
    """``rubrics.tasks``, or every captioning task when it is empty."""
    r = cfg.get("rubrics")
    if r is None:
        return []
    return list(r.get("tasks") or sorted(t for t, c in cfg["tasks"].items()
                                         if (c.get("scoring") or {}).get("kind") == "captioning"))


def rubric_runs(cfg: dict) -> list[Run]:
    """One run per (task, model, condition): the first prompt the task is run with (the output path
    has no prompt; the JSON records which one)."""
    tasks = set(rubric_tasks(cfg))
    seen: dict[tuple[str, str, str], Run] = {}
    for run in iter_runs(cfg):
        if run.task in tasks:
            seen.setdefault((run.task, run.model, run.condition), run)
    return sorted(seen.values(), key=lambda r: (r.task, r.model, r.condition))


def rubric_nothing_to_do(cfg: dict) -> str:
    """Why a config has no rubric run (empty when it has some)."""
    if cfg.get("rubrics") is None:
        return ("rubrics: the config has no rubrics block; add one (e.g. rubrics: {llm: offline-llm}) and a "
                "captioning task, see docs/rubrics.md")
    if not rubric_tasks(cfg):
        return "rubrics.tasks: the config has no captioning task (scoring.kind: captioning) to evaluate"
    return "rubrics: no model runs the rubric tasks (check the models' tasks and the tasks' models lists)"


def rubric_path(run: Run) -> str:
    return f"results/rubrics/{run.task}/{run.model}/{run.condition}.json"


def rubric_jobs(cfg: dict) -> dict[str, dict]:
    """Per output path: its inputs (task items, predictions) and the run it evaluates (a JSON string)."""
    from lalmbench.workflow.config import canonical

    return {rubric_path(r): {"items": f"results/tasks/{r.dataset}/{r.task}.jsonl",
                             "predictions": f"results/predictions/{r.key}.parquet",
                             "run": canonical({"task": r.task, "model": r.model, "condition": r.condition,
                                               "prompt": r.prompt, "dataset": r.dataset})}
            for r in rubric_runs(cfg)}


def rubric_settings(cfg: dict) -> dict:
    """The block with its defaults filled (a tracked param: a change reruns the rubric jobs)."""
    return dict(cfg["rubrics"])


def llm_fingerprint(cfg: dict) -> str:
    """The rubric LLM entry's prediction fingerprint: its batch size or resources rerun nothing."""
    from lalmbench.inference.fingerprint import model_fingerprint

    return model_fingerprint(cfg["models"][cfg["rubrics"]["llm"]])


def code_fingerprint() -> str:
    """Hash of the rubric code and prompts: editing either reruns the rubric jobs (and only them)."""
    import hashlib

    from lalmbench.core.provenance import source_hash

    from .llm import PROMPT_DIR

    modules = source_hash(*(f"rubrics/{m}.py" for m in ("llm", "merge", "propose", "replies", "run", "score")))
    prompts = b"".join(p.read_bytes() for p in sorted(PROMPT_DIR.glob("*.yaml")))
    return hashlib.sha256(modules.encode() + prompts).hexdigest()[:12]
