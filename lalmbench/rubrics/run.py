"""One rubric evaluation: a model's answers on one captioning task and condition.

Deterministic mode is one greedy pass (seed recorded, irrelevant to greedy decoding). Stochastic
mode repeats the whole pass (propose, merge, score) ``repeats`` times with seeds ``seed``,
``seed + 1``, ...: each repeat has its own rubric and scores, and the summary gives the mean of
the repeats' mean scores with their spread (sample std, min, max).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from lalmbench.core import io

from .llm import RubricLLM, load_rubric_prompt
from .merge import merge_criteria
from .propose import chunks, read_criteria, render_examples
from .replies import ERROR, UNREADABLE, count_status
from .score import INCOMPLETE, read_verdicts, render_criteria, render_references, weighted_score

Embed = Callable[[Sequence[str]], np.ndarray]
#: the settings of the ``rubrics:`` config block that change a result (and so its rule's params)
RESULT_KEYS = ("mode", "repeats", "seed", "temperature", "top_p", "max_new_tokens", "merge_threshold",
               "max_answers", "answers_per_prompt", "max_criteria", "embedding_model")


def load_answers(items_path: str | Path, predictions_path: str | Path, max_answers: int) -> tuple[list[dict], dict]:
    """The first ``max_answers`` items (in task order) that have references and a non-empty answer,
    and counts of what was left out and why."""
    items = io.read_jsonl(items_path)
    preds = io.read_parquet(predictions_path, columns=["id", "raw_output", "error"])
    by_id = {str(i): (r, e) for i, r, e in zip(preds["id"], preds["raw_output"], preds["error"])}
    answers, counts = [], {"items": len(items), "no_prediction": 0, "failed_or_empty": 0, "beyond_max_answers": 0}
    for row, item in enumerate(items, 1):
        refs = [str(r) for r in (item.get("references") or []) if str(r).strip()]
        if not refs:
            raise io.InputError(f"{items_path}: row {row}: item {item.get('id')!r} has no references; rubric "
                                "evaluation needs reference captions (an open-ended task such as Clotho captioning)")
        pred = by_id.get(str(item["id"]))
        if pred is None:
            counts["no_prediction"] += 1
            continue
        raw, err = pred
        if not pd.isna(err) or pd.isna(raw) or not str(raw).strip():
            counts["failed_or_empty"] += 1
            continue
        if len(answers) >= max_answers:
            counts["beyond_max_answers"] += 1
            continue
        answers.append({"id": str(item["id"]), "references": refs, "answer": " ".join(str(raw).split())})
    counts["used"] = len(answers)
    return answers, counts


def one_pass(answers: Sequence[dict], llm: RubricLLM, embed: Embed, *, seed: int, settings: dict) -> dict:
    """Propose, merge and score once with one seed."""
    propose, merge, score = (load_rubric_prompt(n) for n in ("propose", "merge", "score"))
    groups = chunks(answers, int(settings["answers_per_prompt"]))
    replies = llm.complete(propose, [{"examples": render_examples(g)} for g in groups], seed=seed, stage="propose")
    proposals, candidates = [], []
    for n, (g, rep) in enumerate(zip(groups, replies)):
        crit, status = read_criteria(rep["raw"]) if rep["error"] is None else ([], ERROR)
        proposals.append({"chunk": n, "ids": [a["id"] for a in g], "status": status, "criteria": crit,
                          "raw": rep["raw"], "error": rep["error"], "cached": rep["cached"]})
        candidates += crit
    rubric, merge_log = merge_criteria(
        candidates, embed, lambda recs: llm.complete(merge, recs, seed=seed, stage="merge"),
        threshold=float(settings["merge_threshold"]), max_criteria=int(settings["max_criteria"]))
    scores = []
    if rubric:
        text = render_criteria(rubric)
        recs = [{"references": render_references(a["references"]), "answer": a["answer"], "criteria": text}
                for a in answers]
        for a, rep in zip(answers, llm.complete(score, recs, seed=seed, stage="score")):
            verdicts, status = (read_verdicts(rep["raw"], [c["id"] for c in rubric]) if rep["error"] is None
                                else ({c["id"]: None for c in rubric}, ERROR))
            scores.append({"id": a["id"], "answer": a["answer"], "status": status,
                           "verdicts": {str(k): v for k, v in verdicts.items()},
                           "score": weighted_score(rubric, verdicts), "raw": rep["raw"], "error": rep["error"],
                           "cached": rep["cached"]})
    scored = [s["score"] for s in scores if s["score"] is not None]
    return {"seed": seed, "criteria": rubric, "proposals": proposals, "merge_log": merge_log, "scores": scores,
            "summary": {"mean_score": float(np.mean(scored)) if scored else None, "n_scored": len(scored),
                        "n_unscored": len(answers) - len(scored), "n_criteria": len(rubric),
                        "proposal_status": count_status(proposals),
                        "merge_status": _merge_counts(merge_log),
                        "score_status": {**count_status(scores), INCOMPLETE: sum(s["status"] == INCOMPLETE
                                                                                 for s in scores)}}}


def _merge_counts(log: Sequence[dict]) -> dict[str, int]:
    out = {"merged": 0, "kept_apart": 0, "unreadable": 0, "dropped": 0}
    for e in log:
        d = e["decision"]
        key = ("merged" if d == "merged" else "dropped" if d.startswith("dropped")
               else "unreadable" if e.get("status") in (UNREADABLE, ERROR) else "kept_apart")
        out[key] += 1
    return out


def spread(values: Sequence[float | None]) -> dict:
    """Mean of the repeats' mean scores and their spread; repeats with no scored answer are counted out."""
    v = np.asarray([x for x in values if x is not None], dtype=float)
    return {"mean": float(v.mean()) if v.size else None, "std": float(v.std(ddof=1)) if v.size > 1 else None,
            "min": float(v.min()) if v.size else None, "max": float(v.max()) if v.size else None,
            "n_runs": len(values), "n_runs_scored": int(v.size), "per_run": list(values)}


def evaluate(answers: Sequence[dict], llm: RubricLLM, embed: Embed, settings: dict) -> dict:
    """Every pass the mode asks for, and their summary."""
    seed = int(settings["seed"])
    seeds = [seed] if settings["mode"] == "deterministic" else [seed + r for r in range(int(settings["repeats"]))]
    runs = [one_pass(answers, llm, embed, seed=s, settings=settings) for s in seeds]
    summary = spread([r["summary"]["mean_score"] for r in runs])
    return {"runs": runs, "summary": summary}

