"""The rubric outputs: one JSON per (task, model, condition) and the table over all of them.

``results/rubrics/<task>/<model>/<condition>.json`` holds the settings, the LLM's identity and
fingerprint, which answers were used, and per pass (one, or one per seed in stochastic mode) the
criteria with weights, every proposal and merge decision with the raw reply, and every answer's
verdicts and score. ``results/rubrics/rubrics.tsv`` has one row per JSON. Both written atomically.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from lalmbench.core import io

from .llm import RubricLLM, sampling_settings
from .run import RESULT_KEYS, evaluate, load_answers

COLUMNS = ["task", "model", "condition", "prompt", "dataset", "mode", "runs", "n_answers", "n_criteria",
           "score_mean", "score_std", "score_min", "score_max", "n_scored", "n_unscored",
           "proposals_unreadable", "merges_unreadable", "scores_unreadable", "llm", "llm_fingerprint"]


def make_llm(llm_name: str, llm_cfg: dict, settings: dict, *, model: Any = None) -> RubricLLM:
    """The rubric LLM for these settings (``model`` lets a test pass a scripted backend)."""
    gen = sampling_settings(settings["mode"], temperature=settings["temperature"], top_p=settings["top_p"],
                            max_new_tokens=settings["max_new_tokens"])
    return RubricLLM(llm_name, llm_cfg, gen, cache_dir=settings.get("cache_dir"), model=model)


def run_rubric(*, items: str | Path, predictions: str | Path, out: str | Path, run: dict, llm: RubricLLM,
               embed: Callable[[Sequence[str]], Any], embedding_model: str, settings: dict) -> dict:
    """Evaluate one run's answers and write its JSON; returns what was written."""
    answers, counts = load_answers(items, predictions, int(settings["max_answers"]))
    if not answers:
        raise io.InputError(f"{predictions}: no usable answer ({counts}); rubric evaluation needs at least one "
                            f"non-empty model answer")
    calls_before = llm.calls
    result = evaluate(answers, llm, embed, settings)
    doc = {**run, "settings": {k: settings[k] for k in RESULT_KEYS if k in settings}, "llm": llm.describe(),
           "embedding_model": embedding_model, "answers": counts, "llm_calls": llm.calls - calls_before, **result}
    io.write_json(out, doc)
    return doc


def row(doc: dict) -> dict:
    """One table row from a rubric JSON: counts summed over passes, the score's mean and spread."""
    runs = doc["runs"]
    s = doc["summary"]

    def total(section: str, *keys: str) -> int:
        return int(sum(r["summary"][section].get(k, 0) for r in runs for k in keys))

    return {"task": doc["task"], "model": doc["model"], "condition": doc["condition"], "prompt": doc["prompt"],
            "dataset": doc["dataset"], "mode": doc["settings"]["mode"], "runs": len(runs),
            "n_answers": doc["answers"]["used"],
            "n_criteria": sum(r["summary"]["n_criteria"] for r in runs) / len(runs),
            "score_mean": s["mean"], "score_std": s["std"], "score_min": s["min"], "score_max": s["max"],
            "n_scored": sum(r["summary"]["n_scored"] for r in runs),
            "n_unscored": sum(r["summary"]["n_unscored"] for r in runs),
            "proposals_unreadable": total("proposal_status", "unreadable", "error"),
            "merges_unreadable": total("merge_status", "unreadable"),
            "scores_unreadable": total("score_status", "unreadable", "error", "incomplete"),
            "llm": doc["llm"]["llm"], "llm_fingerprint": doc["llm"]["fingerprint"]}


def write_table(paths: Sequence[str | Path], out: str | Path) -> pd.DataFrame:
    df = pd.DataFrame([row(io.read_json(p)) for p in paths], columns=COLUMNS)
    df = df.sort_values(["task", "model", "condition"]).reset_index(drop=True)
    io.write_tsv(out, df)
    return df
