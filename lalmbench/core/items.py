"""The task item contract (one JSON object per line in ``results/tasks/{dataset}/{task}.jsonl``).

Fields: ``id, task, dataset, clip_id, audio_path, question, options [{label, text, type, meta}],
answer_label, answer_text, references (open-ended), meta``. Helpers here keep every builder
producing the same shape and the same balanced answer positions.
"""
from __future__ import annotations

import string
from collections import Counter
from typing import Any, Sequence

import numpy as np

from lalmbench.core.io import atomic_path, json_default

LABELS = string.ascii_uppercase
#: the ``labels`` reading of outputs made with a prompt this project did not write (imported outputs,
#: the public API): their prompt's letters are unknown, so a bare "B" is not read as option B
#: (lalmbench.models.imported, lalmbench.score_mcq, lalmbench.score_official share it)
OUTSIDE_LABELS = "hidden"


def option_labels(n: int) -> list[str]:
    if not 1 <= n <= len(LABELS):
        raise ValueError(f"number of options must be 1..{len(LABELS)}, got {n}")
    return list(LABELS[:n])


def balanced_positions(n_items: int, n_options: int, rng: np.random.Generator) -> np.ndarray:
    """Gold positions 0..n_options-1, as equal in count as n_items allows, in random order."""
    reps = -(-n_items // n_options)
    pos = np.tile(np.arange(n_options), reps)[:n_items]
    rng.shuffle(pos)
    return pos


def place_answer(correct: dict, distractors: Sequence[dict], gold_pos: int,
                 rng: np.random.Generator) -> list[dict]:
    """Options with the correct one at ``gold_pos`` and distractors shuffled around it, labelled A, B, ..."""
    order = list(distractors)
    perm = rng.permutation(len(order))
    order = [order[i] for i in perm]
    order.insert(int(gold_pos), correct)
    labels = option_labels(len(order))
    return [{"label": lab, "text": o["text"], "type": o.get("type", "event"), "meta": o.get("meta", {})}
            for lab, o in zip(labels, order)]


def make_item(*, id: str, task: str, dataset: str, clip_id: str, audio_path: str, question: str,
              options: list[dict], answer_label: str | None, references: list[str] | None = None,
              meta: dict[str, Any] | None = None) -> dict:
    answer_text = None
    if answer_label is not None:
        texts = {o["label"]: o["text"] for o in options}
        if answer_label not in texts:
            raise ValueError(f"item {id}: answer label {answer_label!r} not among options {list(texts)}")
        answer_text = texts[answer_label]
    return {
        "id": id, "task": task, "dataset": dataset, "clip_id": clip_id, "audio_path": audio_path,
        "question": question, "options": options, "answer_label": answer_label,
        "answer_text": answer_text, "references": list(references or []), "meta": dict(meta or {}),
    }


def position_histogram(items: Sequence[dict]) -> dict[str, int]:
    counts = Counter(it["answer_label"] for it in items if it.get("answer_label"))
    return {k: counts[k] for k in sorted(counts)}


def chi_square_balance(items: Sequence[dict]) -> dict[str, float]:
    """Chi-square test that gold labels are uniform over each item's option count (per n_options group)."""
    from scipy.stats import chisquare

    out: dict[str, float] = {}
    by_n: dict[int, list[int]] = {}
    for it in items:
        if it.get("answer_label") and it.get("options"):
            n = len(it["options"])
            by_n.setdefault(n, [0] * n)[LABELS.index(it["answer_label"])] += 1
    for n, obs in sorted(by_n.items()):
        res = chisquare(obs)
        out[f"n_options={n}"] = {"observed": obs, "chi2": float(res.statistic), "p": float(res.pvalue)}
    return out


def write_items(path, items: Sequence[dict]) -> None:
    """Task items as JSON Lines (atomic): one object per line with sorted keys, UTF-8, compact
    separators. orjson, because a large table gives ~10^5 items and the stdlib encoder is far slower,
    and a family's :class:`~lalmbench.tasks.options.ItemRows` are written from their columns
without making the dicts; any reader sees the same items as from :func:`lalmbench.core.io.write_jsonl`.
    orjson is imported here, not with the module: the model envs (hf, vllm) read item contracts from this
    module but write no items, and do not install orjson."""
    import orjson

    opts = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE
    chunks = items.json_lines() if hasattr(items, "json_lines") else \
        (orjson.dumps(it, option=opts, default=json_default) for it in items)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
