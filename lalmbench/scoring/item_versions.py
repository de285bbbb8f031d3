"""Which version of each item imported outputs were made on.

Released outputs are often made on an older revision of the benchmark's file than the one read here:
questions reworded, choices edited or reordered, answers corrected, items removed. Most released files
carry the question, choices and answer each output was made on (the imported model puts them in the
prediction row's ``extra`` as ``own_item``), so they are compared with our items per id:

- :func:`differences`: which of question / choices / answer differ for one item;
- :func:`compare`: the counts over a file (outputs, made on another version, by field, ids that are
  no item), and :func:`flag`, the sentence results/all.tsv ``flags`` and the report carry;
- :func:`for_run`: at scoring, the per-item differences and, with the imported model's
  ``items_from: predictions``, the items rebuilt from the outputs' own fields, so the parser and the
  benchmark's official rule score each output against the item it was made on.

Texts are compared with runs of whitespace collapsed; case and punctuation count (a corrected typo
is another version). A question field that holds the whole prompt the output was made with (Audio
Flamingo 3's TACoBeLAL outputs) matches when our question is inside it. Choices are compared with the
list the benchmark's file holds when the reader kept it (``item["published"]``: MMAR's blank choice,
MMAU's repeated ones), else with the options. An answer matches when it is the item's answer text (as
read or as the file stores it) or its label.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Iterable, Mapping

import pandas as pd

from lalmbench.core.items import option_labels

log = logging.getLogger(__name__)

FIELDS = ("question", "choices", "answer")
OWN_ITEM_KEY = "own_item"


def _norm(text: Any) -> str:
    return " ".join(str(text).split())


def _choices(own: Mapping[str, Any]) -> list[str]:
    """An output's own choices as the reader makes options of a benchmark's: stripped, a blank one left
    out (MMAR's ``['Entered', 'Did not enter', '']``), a repeated one once (MMAU lists some twice;
    lalmbench.data.adapters.reader, ``duplicate_choices: merge``)."""
    out: list[str] = []
    for c in own.get("choices") or []:
        if str(c).strip() and str(c).strip() not in out:
            out.append(str(c).strip())
    return out


def _same_choices(own: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    """Whether an output's own choice list is the item's: the file's list entry by entry when the
    reader kept it (blank and repeated entries are part of what the official rules read), else the
    options."""
    published = (item.get("published") or {}).get("choices")
    if published is None:  # the file's list is the options: a blank or repeated own entry is another list
        published = [o.get("text", "") for o in item.get("options") or []]
    return [_norm(c) for c in own.get("choices") or []] == [_norm(c) for c in published]


def malformed_choices(own: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    """Whether an output's own choice list has a blank or repeated entry that the item's list (as the
    benchmark's file holds it) does not: the official rules would read letters against a list no
    file of ours lists."""
    def odd(choices: list) -> tuple[int, int]:
        texts = [_norm(c) for c in choices]
        return sum(not t for t in texts), len([t for t in texts if t]) - len({t for t in texts if t})
    published = (item.get("published") or {}).get("choices")
    ours = published if published is not None else [o.get("text", "") for o in item.get("options") or []]
    mine = odd(list(own.get("choices") or []))
    return any(mine) and mine != odd(list(ours))


def differences(own: Mapping[str, Any], item: Mapping[str, Any]) -> list[str]:
    """The fields (of :data:`FIELDS`) in which the item an output was made on differs from ``item``;
    a field the output does not carry is not compared."""
    out = []
    ours = _norm(item.get("question") or "")
    if "question" in own and _norm(own["question"]) != ours and not (ours and ours in _norm(own["question"])):
        out.append("question")
    if "choices" in own and not _same_choices(own, item):
        out.append("choices")
    if "answer" in own:
        a = _norm(own["answer"])
        golds = {_norm(item.get("answer_text") or ""), str(item.get("answer_label") or ""),
                 _norm((item.get("published") or {}).get("answer") or "")}
        golds |= {_norm(r) for r in item.get("references") or []}
        if a not in golds - {""}:
            out.append("answer")
    return out


def compare(own_items: Mapping[str, Mapping], items: Iterable[Mapping], output_ids: Iterable[str]) -> dict:
    """The revision summary of one imported file against the items it is scored on.

    ``own_items``: id -> the fields the file carries for that output; ``output_ids``: every output's id.
    Returns ``outputs``, ``carried`` (fields any output carries), ``compared`` (outputs with carried
    fields whose id is an item), ``differ`` (of those, made on another version), ``by_field``,
    ``not_in_items`` (outputs whose id is no item) and a few ids of each as examples."""
    by_id = {}
    for it in items:
        by_id.setdefault(str(it["id"]), it)
    output_ids = [str(i) for i in output_ids]
    gone = [i for i in output_ids if i not in by_id]
    carried = sorted({f for own in own_items.values() for f in own}, key=FIELDS.index)
    by_field = {f: 0 for f in carried}
    differ: dict[str, list[str]] = {}
    compared, malformed = 0, []
    for i, own in own_items.items():
        if i not in by_id:
            continue
        compared += 1
        if malformed_choices(own, by_id[i]):
            malformed.append(i)
        if diff := differences(own, by_id[i]):
            differ[i] = diff
            for f in diff:
                by_field[f] += 1
    return {"outputs": len(output_ids), "carried": carried, "compared": compared, "differ": len(differ),
            "by_field": by_field, "not_in_items": len(gone), "examples": dict(list(differ.items())[:20]),
            "malformed_choices": len(malformed), "malformed_choices_examples": malformed[:20],
            "not_in_items_examples": gone[:20]}


def flag(summary: Mapping, *, items_from: str = "items", answer_is_models: bool = False) -> str | None:
    """The flag of a revision summary, e.g. ``364 of 1,000 outputs were made on a different version
    of the item: question 12, choices 290, answer 62; 106 ids not in the items``; None when every
    output matches its item. Outputs that carry no item fields are said to be unchecked
    (``answer_is_models``: the file's ``answer`` column was read as the model's answer, which it says)."""
    parts = []
    if not summary["carried"]:
        what = ("no question or choices (its answer column read as the model's answer, not the gold)"
                if answer_is_models else "no question, choices or answer")
        parts.append(f"imported outputs carry {what}: the item version they were made on is not checked")
    elif summary["differ"]:
        fields = ", ".join(f"{f} {n:,}" for f, n in summary["by_field"].items() if n)
        parts.append(f"{summary['differ']:,} of {summary['outputs']:,} outputs were made on a different version "
                     f"of the item: {fields}")
    if summary.get("malformed_choices"):
        parts.append(f"{summary['malformed_choices']:,} outputs' own choice lists have a blank or repeated entry "
                     f"(e.g. {summary['malformed_choices_examples'][0]})")
    if summary.get("not_in_items"):
        parts.append(f"{summary['not_in_items']:,} ids not in the items")
    if not parts:
        return None
    if items_from == "predictions" and summary["carried"]:
        parts.append("scored against the outputs' own items (items_from: predictions)")
    return "; ".join(parts)


def own_item(own: Mapping[str, Any], item: Mapping[str, Any]) -> dict | None:
    """``item`` rebuilt from the question, choices and answer its output was made on (the fields the
    output does not carry are kept); None when that answer is not among those choices."""
    choices = _choices(own) or [o["text"] for o in item.get("options") or []]
    if not choices:
        return None
    labels = option_labels(len(choices))
    answer = _norm(own.get("answer", item.get("answer_text") or ""))
    texts = [_norm(c) for c in choices]
    if answer in texts:
        gold = texts.index(answer)
    elif "answer" in own and answer in labels:
        gold = labels.index(answer)
    else:
        return None
    rebuilt = {**item, "question": str(own.get("question", item.get("question"))),
               "options": [{"label": lab, "text": c, "type": "choice", "meta": {}} for lab, c in zip(labels, choices)],
               "answer_label": labels[gold], "answer_text": choices[gold],
               "meta": {**(item.get("meta") or {}), "item_from": "predictions"}}
    rebuilt.pop("published", None)
    if published := _own_published(own, item, choices, choices[gold]):
        rebuilt["published"] = published
    return rebuilt


def _own_published(own: Mapping[str, Any], item: Mapping[str, Any], options: list[str], gold: str) -> dict | None:
    """``published`` of an item rebuilt from its output's own fields: the official rules read the
    choice list and answer as that file stores them (blank and repeated entries in place), as the
    reader keeps them for a benchmark's file; None when they are the options and gold text."""
    if own.get("choices"):
        choices = [str(c) for c in own["choices"]]
    elif (item.get("published") or {}).get("choices") is not None:
        choices = list(item["published"]["choices"])
    else:
        return None
    answer = str(own["answer"]) if "answer" in own and _norm(own["answer"]) == _norm(gold) else gold
    if choices == options and answer == gold:
        return None
    return {"choices": choices, "answer": answer}


def extra_values(preds: pd.DataFrame, key: str) -> dict[str, Any]:
    """id -> the value of ``key`` in the prediction rows' ``extra`` JSON, for the rows that hold a truthy one
    (the imported model's ``own_item`` and ``no_output`` ride there)."""
    if "extra" not in preds.columns:
        return {}
    out = {}
    for i, extra in zip(preds["id"].astype(str), preds["extra"]):
        if isinstance(extra, str) and key in extra:
            value = json.loads(extra).get(key)
            if value:
                out[i] = value
    return out


def _own_items(preds: pd.DataFrame) -> dict[str, dict]:
    return extra_values(preds, OWN_ITEM_KEY)


def items_from(preds: pd.DataFrame) -> str:
    """The imported model's ``items_from`` (recorded in the predictions' ``backend_info``)."""
    if "backend_info" not in preds.columns or not len(preds):
        return "items"
    info = preds["backend_info"].iloc[0]
    return (json.loads(info) if isinstance(info, str) and info else {}).get("items_from", "items")


def for_run(items: list[dict], preds: pd.DataFrame) -> tuple[list[dict], dict[str, str], dict]:
    """(the items to score against, id -> the fields its output's own item differs in (", "-joined),
    metrics fields) for one run. Runs of outputs that carry no item fields pass through unchanged.
    With ``items_from: predictions`` an MCQ item whose output carries its own fields is replaced by
    :func:`own_item`; one whose own answer is not among its own choices keeps ours and is counted."""
    own = _own_items(preds)
    if not own:
        return items, {}, {}
    diffs = {str(it["id"]): ", ".join(d) for it in items
             if str(it["id"]) in own and (d := differences(own[str(it["id"])], it))}
    metrics: dict[str, Any] = {"n_item_version_differs": len(diffs)}
    if items_from(preds) != "predictions":
        return items, diffs, metrics
    out, replaced, unusable = [], 0, 0
    for it in items:
        mine = own.get(str(it["id"]))
        rebuilt = own_item(mine, it) if mine and it.get("options") else None
        if mine and it.get("options") and rebuilt is None:
            unusable += 1
        replaced += rebuilt is not None
        out.append(rebuilt or it)
    if unusable:
        log.warning("items_from: predictions: %d outputs' own answer is not among their own choices; they are "
                    "scored against our item", unusable)
    metrics.update(items_from="predictions", n_own_items=replaced, n_own_item_unusable=unusable)
    return out, diffs, metrics
