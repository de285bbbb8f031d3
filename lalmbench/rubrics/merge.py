"""Merging near-duplicate criteria: sentence embeddings find candidate groups, the LLM confirms.

Criteria whose cosine similarity reaches the threshold are grouped (connected components of the
similarity graph, computed by scipy). Each group of two or more goes to the LLM, which says whether
they check the same thing and names the merged criterion: a confirmed group becomes one criterion
whose weight is the sum of its members'; a refused or unreadable group keeps its members apart.
Weights are then normalised to sum to 1, keeping the ``max_criteria`` heaviest. Every decision is
in the merge log.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

import numpy as np

from .replies import ERROR, FALLBACK, JSON, UNREADABLE, first_json

# fallback: "Yes: Names the main sound source" / "No, they differ"
_PLAIN = re.compile(r"[\s`*\"']*(yes|no|same|different|true|false)\b[\s.:,!-]*(.*)", re.IGNORECASE | re.DOTALL)
Ask = Callable[[list[dict]], list[dict]]  # records with "criteria" -> replies with "raw"/"error"


def read_merge(raw: str | None) -> tuple[bool | None, str | None, str]:
    """(same, merged criterion text, status) from a merge reply: ``{"same": true, "criterion": ...}``,
    else a reply that starts with yes/no (yes then needs the criterion after a colon or on the next line)."""
    if raw is None:
        return None, None, ERROR
    parsed = first_json(raw)
    if isinstance(parsed, dict) and isinstance(parsed.get("same"), bool):
        name = " ".join(str(parsed.get("criterion") or "").split()).strip(" .\"'")
        if parsed["same"] and not name:
            return None, None, UNREADABLE
        return parsed["same"], (name or None), JSON
    m = _PLAIN.match(raw)
    if m and m.group(1).lower() in ("no", "false", "different"):
        return False, None, FALLBACK
    name = " ".join(m.group(2).strip().splitlines()[0].split()).strip(" .\"'") if m and m.group(2).strip() else ""
    if m and name:
        return True, name, FALLBACK
    return None, None, UNREADABLE


def groups(embeddings: np.ndarray, threshold: float) -> list[list[int]]:
    """Indices grouped by cosine similarity >= threshold (connected components), in first-seen order."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(embeddings)
    if n == 0:
        return []
    e = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True).clip(min=1e-12)
    sim = e @ e.T
    _, labels = connected_components(csr_matrix(sim >= threshold), directed=False)
    out: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        out.setdefault(int(lab), []).append(i)
    return list(out.values())


def merge_criteria(criteria: Sequence[dict], embed: Callable[[Sequence[str]], np.ndarray], ask: Ask, *,
                   threshold: float, max_criteria: int) -> tuple[list[dict], list[dict]]:
    """(rubric ``[{"id", "criterion", "weight", "merged_from"}]`` with weights summing to 1, merge log)."""
    if not criteria:
        return [], []
    texts = [c["criterion"] for c in criteria]
    emb = np.asarray(embed(texts), dtype=np.float32)
    found = groups(emb, threshold)
    multi = [g for g in found if len(g) > 1]
    replies = ask([{"criteria": "\n".join(f"- {texts[i]}" for i in g)} for g in multi]) if multi else []
    reply_of = {tuple(g): r for g, r in zip(multi, replies)}
    e = emb / np.linalg.norm(emb, axis=1, keepdims=True).clip(min=1e-12)
    merged: list[dict] = []
    log: list[dict] = []
    for g in found:
        if len(g) == 1:
            c = criteria[g[0]]
            merged.append({"criterion": c["criterion"], "weight": float(c["weight"]), "merged_from": [c["criterion"]]})
            continue
        rep = reply_of[tuple(g)]
        same, name, status = read_merge(rep.get("raw")) if not rep.get("error") else (None, None, ERROR)
        sims = (e[g] @ e[g].T)[np.triu_indices(len(g), 1)]
        entry = {"members": [texts[i] for i in g], "member_weights": [float(criteria[i]["weight"]) for i in g],
                 "min_similarity": round(float(sims.min()), 4), "max_similarity": round(float(sims.max()), 4),
                 "status": status, "raw": rep.get("raw"), "error": rep.get("error"), "cached": rep.get("cached")}
        if same:
            total = float(sum(criteria[i]["weight"] for i in g))
            merged.append({"criterion": name, "weight": total, "merged_from": entry["members"]})
            log.append({**entry, "decision": "merged", "criterion": name, "weight": total})
        else:
            for i in g:
                merged.append({"criterion": texts[i], "weight": float(criteria[i]["weight"]), "merged_from": [texts[i]]})
            log.append({**entry, "decision": "kept apart" if same is False else "kept apart (reply not read)"})
    return normalise(merged, max_criteria, log)


def normalise(criteria: list[dict], max_criteria: int, log: list[dict]) -> tuple[list[dict], list[dict]]:
    """Keep the ``max_criteria`` heaviest (stable: ties keep proposal order), weights summing to 1."""
    order = sorted(range(len(criteria)), key=lambda i: -criteria[i]["weight"])
    keep = sorted(order[:max_criteria])
    for i in order[max_criteria:]:
        log.append({"decision": "dropped (max_criteria)", "members": criteria[i]["merged_from"],
                    "criterion": criteria[i]["criterion"], "weight": criteria[i]["weight"]})
    total = sum(criteria[i]["weight"] for i in keep)
    out = [{"id": n, "criterion": criteria[i]["criterion"], "weight": criteria[i]["weight"] / total,
            "raw_weight": criteria[i]["weight"], "merged_from": criteria[i]["merged_from"]}
           for n, i in enumerate(keep, 1)]
    return out, log
