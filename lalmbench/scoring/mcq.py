"""MCQ scoring: items + raw predictions -> per-item decisions and a metrics dict.

Pure function over records/dataframes (I/O lives in the scripts). Three outcomes per item:
``correct``, ``wrong``, ``unparseable``. Accuracy counts unparseable as wrong (the model did not
give a usable answer; treating it as missing would reward models that refuse when unsure) and the
unparseable rate is reported next to it, so a reader can see how much of a score is the parser.

Fast path: parsing is done once per distinct (raw output, options) pair, which makes a million
predictions cheap (outputs of a model on one task repeat heavily: "A", "B.", "(C)" ...).
"""
from __future__ import annotations

import json
import math
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from lalmbench.core.io import InputError
from lalmbench.scoring.parse import (PARSER_VERSION, STAGES, STATUSES, ParseResult, check_stages, parse_options_key,
                                     scorer_fingerprint, with_question)
from lalmbench.core.stats import bootstrap_proportion_ci, clustered_proportion_summary

PARSER_CFG_KEYS = {"stages", "labels"}
#: ``labels``: whether the prompt showed option labels. ``auto`` is resolved by the workflow from
#: the prompt template (:func:`lalmbench.inference.prompts.shows_labels`); called directly it means shown.
LABEL_MODES = ("auto", "shown", "hidden")
DECISION_COLUMNS = ["id", "gold_label", "pred_label", "parse_status", "parse_reason", "correct", "outcome",
                    "error", "raw_output", "n_options", "chance", "gold_pos", "pred_pos", "clip_id"]


def _options_key(item: dict) -> tuple[tuple[str, str], ...]:
    opts = item.get("options")
    try:
        key = tuple([(o["label"], o.get("text") or "") for o in opts])
    except (KeyError, TypeError, AttributeError):
        raise InputError(f"item {item.get('id')!r}: expected 'options' as a list of {{label, text}} objects, "
                         f"got {opts!r}") from None
    if len(key) < 2:
        raise InputError(f"item {item.get('id')!r}: expected >= 2 options, got {opts!r}")
    return key


_STR_ONLY = {str}


def _check_key(key: tuple, item_id: str) -> dict[str, int]:
    """Validate one distinct option set (types, unique labels); return label -> position."""
    if set(map(type, chain.from_iterable(key))) - _STR_ONLY:
        bad = next(o for o in key if not (type(o[0]) is str and type(o[1]) is str))
        raise InputError(f"item {item_id!r}: option labels and texts must be strings, got {bad!r}")
    pos = dict(zip(next(zip(*key)), range(len(key))))
    if len(pos) != len(key):
        raise InputError(f"item {item_id!r}: duplicated option labels {[lab for lab, _ in key]}")
    return pos


_SCALARS = {str, bool, int, float, type(None)}


def _meta_value(v: Any) -> Any:
    """A meta value as one decisions cell: a one-element list is its element (MMAU stores some categories
    as ``["Reasoning"]``, which must fall in the group ``Reasoning``); anything else nested is JSON, so a
    longer list stays a list that breakdowns group by element (lalmbench.core.stats.explode_lists)."""
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, list) and len(v) == 1 and isinstance(v[0], (str, int, float)) and not isinstance(v[0], bool):
        return str(v[0])
    return json.dumps(v, sort_keys=True, default=str)


def _items_frame(items: list[dict]) -> tuple[pd.DataFrame, np.ndarray, list[tuple], list[dict[str, int]]]:
    """Items as a frame plus the option sets factorised: (frame, key code per item, distinct
    option sets, label -> position per distinct set). Validation runs once per distinct set."""
    if not items:
        raise InputError("score_mcq: no items to score")
    try:
        ids = [it["id"] for it in items]
    except KeyError:
        bad = next(i for i, it in enumerate(items) if "id" not in it)
        raise InputError(f"item #{bad}: missing 'id'") from None
    if set(map(type, ids)) != _STR_ONLY:
        ids = [str(i) for i in ids]
    keys = [_options_key(it) for it in items]
    gold = [it.get("answer_label") for it in items]
    key_codes, key_uniques = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=False)
    _, first_of = np.unique(key_codes, return_index=True)
    key_list = list(key_uniques)
    positions = [_check_key(k, ids[i]) for k, i in zip(key_list, first_of.tolist())]
    gp = [positions[kc].get(g) for kc, g in zip(key_codes.tolist(), gold)]
    if None in gp:
        i = gp.index(None)
        raise InputError(f"item {ids[i]!r}: answer_label {gold[i]!r} is not one of its option labels "
                         f"{list(positions[key_codes[i]])}")
    gold_pos = np.array(gp, dtype=np.int64)
    df = pd.DataFrame({"id": pd.Series(ids, dtype=object), "gold_label": pd.Series(gold, dtype=object)})
    dup = df["id"][df["id"].duplicated()]
    if len(dup):
        raise InputError(f"items: duplicated id {dup.iloc[0]!r} ({len(dup)} duplicates); ids must be unique")
    n_opt_u = np.array([len(k) for k in key_list], dtype=np.int64)
    # the clip an item asks about (its cluster for intervals): clip_id, else its audio, else itself
    df["clip_id"] = pd.Series([str(it.get("clip_id") or it.get("audio_path") or i) for it, i in zip(items, ids)],
                              dtype=object)
    df["n_options"] = n_opt_u[key_codes]
    df["gold_pos"] = gold_pos
    metas = [it.get("meta") or {} for it in items]
    meta_keys = sorted({k for m in metas for k in m})
    for mk in meta_keys:
        col = [m.get(mk) for m in metas]
        if set(map(type, col)) - _SCALARS:
            col = [_meta_value(v) for v in col]
        df[f"meta_{mk}"] = pd.Series(col, dtype=object)
    return df, key_codes, key_list, positions


def _align_predictions(item_ids: pd.Series, predictions: pd.DataFrame) -> np.ndarray:
    """Row index into ``predictions`` for each item; errors name the offending id."""
    for col in ("id", "raw_output"):
        if col not in predictions.columns:
            raise InputError(f"predictions: missing column {col!r} (have {list(predictions.columns)})")
    pid = predictions["id"].astype(str)
    pindex = pd.Index(pid)
    if not pindex.is_unique:
        dup = pid[pid.duplicated()]
        raise InputError(f"predictions: duplicated id {dup.iloc[0]!r} ({len(dup)} duplicates)")
    pos = pindex.get_indexer(item_ids)
    if len(pid) != len(item_ids) or (pos < 0).any():
        # unique ids, every item found and equal counts leave no room for unknown ids: only check here
        unknown = pid[pd.Index(item_ids).get_indexer(pid) < 0]
        if len(unknown):
            raise InputError(f"predictions: id {unknown.iloc[0]!r} is not among the task's items "
                             f"({len(unknown)} unknown ids)")
        missing = item_ids[pos < 0]
        raise InputError(f"predictions: no prediction for item {missing.iloc[0]!r} ({len(missing)} items missing)")
    return pos


def _parser_settings(parser_cfg: dict | None) -> tuple[tuple[str, ...], bool]:
    """(enabled stages, labels shown) from a task's ``parser:`` config; unknown keys are an error."""
    cfg = parser_cfg or {}
    unknown = set(cfg) - PARSER_CFG_KEYS
    if unknown:
        raise ValueError(f"parser config: unknown key(s) {sorted(unknown)}; known: {sorted(PARSER_CFG_KEYS)}")
    labels = cfg.get("labels", "auto")
    if labels not in LABEL_MODES:
        raise ValueError(f"parser.labels: expected one of {list(LABEL_MODES)}, got {labels!r}")
    return check_stages(cfg.get("stages")), labels != "hidden"


_PAIRS: list = []  # set before forking workers, so children read it without pickling it
PARALLEL_MIN_PAIRS = 50_000


def _parse_range(args: tuple[int, int, tuple[str, ...], bool]) -> tuple[list, list, list]:
    """Worker: parse a slice of the shared pairs; plain lists of shared strings pickle fast."""
    lo, hi, stages, shown = args
    res = [parse_options_key(r, k, stages, shown) for r, k in _PAIRS[lo:hi]]
    return [x.label for x in res], [x.status for x in res], [x.reason for x in res]


def _parse_pairs(pairs: list, stages: tuple[str, ...], shown: bool, workers: int) -> tuple[list, list, list]:
    """(labels, statuses, reasons) of distinct (raw, options) pairs, in ``workers`` forked
    processes when there are many."""
    if workers <= 1 or len(pairs) < PARALLEL_MIN_PAIRS:
        res = [parse_options_key(r, k, stages, shown) for r, k in pairs]
        return [x.label for x in res], [x.status for x in res], [x.reason for x in res]
    import multiprocessing as mp

    global _PAIRS
    _PAIRS = pairs
    try:
        bounds = np.linspace(0, len(pairs), workers * 4 + 1).astype(int)
        chunks = [(int(a), int(b), stages, shown) for a, b in zip(bounds[:-1], bounds[1:])]
        with mp.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_parse_range, chunks)
    finally:
        _PAIRS = []
    return tuple([x for part in parts for x in part[j]] for j in range(3))


def score_mcq(items: list[dict], predictions: pd.DataFrame,
              parser_cfg: dict | None = None, *, workers: int = 1) -> tuple[pd.DataFrame, dict]:
    """Parse and score MCQ predictions against the task items.

    ``predictions`` needs ``id`` and ``raw_output``; a non-null, non-empty ``error`` makes the
    item unparseable with ``parse_status == "error"``. A prediction missing for an item, a
    duplicated id or an id not among the items raises :class:`InputError` naming the id.

    ``parser_cfg``: ``stages`` (which parser stages may match) and ``labels`` (``hidden`` when the
    prompt showed no option labels, e.g. predictions imported from another benchmark).

    ``workers`` > 1 parses in that many forked processes once there are many distinct outputs
    (the result is identical; the rule passes its ``threads``).

    Returns ``(decisions, metrics)``: one decision row per item, in item order (columns
    :data:`DECISION_COLUMNS` plus ``meta_<key>`` for every item meta key), and the metrics dict
    (``metric="accuracy"``; unparseable counts as wrong and is reported in ``n_unparseable`` and
    ``parse_failure_rate``; ``chance`` is the mean of 1/n_options; ``p_vs_chance`` two-sided exact
    binomial; Wilson 95% interval in ``ci_low``/``ci_high``, seeded bootstrap in ``boot_ci_*``).
    """
    stages, shown = _parser_settings(parser_cfg)
    df, key_codes, key_list, positions = _items_frame(items)
    pos = _align_predictions(df["id"], predictions)

    raw = predictions["raw_output"].to_numpy(dtype=object)[pos]
    if "error" in predictions.columns:
        err = predictions["error"].to_numpy(dtype=object)[pos]
        has_err = np.fromiter((e is not None and not (isinstance(e, float) and e != e) and str(e) != ""
                               for e in err), dtype=bool, count=len(err))
    else:
        err = np.full(len(df), None, dtype=object)
        has_err = np.zeros(len(df), dtype=bool)

    # parse each distinct (raw output, options) pair once
    raw_series = pd.Series(raw, dtype=object)
    raw_codes, raw_uniques = pd.factorize(raw_series, use_na_sentinel=True)
    combo = (raw_codes.astype(np.int64) + 1) * (len(key_list) + 1) + key_codes.astype(np.int64)
    uniq, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
    raw_arr = np.empty(len(raw_uniques) + 1, dtype=object)
    raw_arr[:-1] = list(raw_uniques)  # code -1 (missing output) indexes the trailing None
    key_arr = np.empty(len(key_list), dtype=object)
    key_arr[:] = key_list
    pairs = list(zip(raw_arr[raw_codes[first]].tolist(), key_arr[key_codes[first]].tolist()))
    lab_l, stat_l, reas_l = _parse_pairs(pairs, stages, shown, workers)
    labels_u = np.array(lab_l + [None], dtype=object)[:-1]
    status_u = np.array(stat_l + [None], dtype=object)[:-1]
    reason_u = np.array(reas_l + [None], dtype=object)[:-1]
    pred = labels_u[inverse]
    status = status_u[inverse]
    reason = reason_u[inverse]
    # an output the options alone leave unread may answer in the question's words
    for i in np.flatnonzero((pred == None) & ~has_err).tolist():  # noqa: E711 (elementwise)
        question = items[i].get("question")
        if question:
            res = with_question(raw[i], key_list[key_codes[i]], question, stages, shown,
                                ParseResult(None, status[i], reason[i]))
            pred[i], status[i], reason[i] = res.label, res.status, res.reason
    pred[has_err] = None
    status[has_err] = "error"
    reason[has_err] = "generation error"

    gold = df["gold_label"].to_numpy(dtype=object)
    correct = (pred == gold) & ~has_err
    parsed = np.fromiter((p is not None for p in pred), dtype=bool, count=len(pred))
    outcome = np.where(correct, "correct", np.where(parsed, "wrong", "unparseable"))

    # prediction position: index of the predicted label among the item's options (-1: none)
    pred_pos = np.full(len(df), -1, dtype=np.int64)
    idx = np.flatnonzero(parsed)
    pred_pos[idx] = [positions[kc][p] for kc, p in zip(key_codes[idx].tolist(), pred[idx].tolist())]

    n_options = df["n_options"].to_numpy()
    decisions = pd.DataFrame({
        "id": df["id"], "gold_label": df["gold_label"], "pred_label": pd.Series(pred, dtype=object),
        "parse_status": pd.Series(status, dtype=object), "parse_reason": pd.Series(reason, dtype=object),
        "correct": correct, "outcome": pd.Series(outcome, dtype=object),
        "error": pd.Series(np.where(has_err, err, None), dtype=object),
        "raw_output": pd.Series(raw, dtype=object), "n_options": n_options,
        "chance": 1.0 / n_options, "gold_pos": df["gold_pos"], "pred_pos": pred_pos, "clip_id": df["clip_id"],
    })
    for col in df.columns:
        if col.startswith("meta_"):
            decisions[col] = df[col].to_numpy()
    return decisions, {**mcq_metrics(decisions, stages), "parser_labels": "shown" if shown else "hidden"}


def mcq_metrics(decisions: pd.DataFrame, stages: tuple[str, ...] = STAGES, *, seed: int = 0) -> dict:
    """The metrics dict of :func:`score_mcq` from a decisions frame (also used for subsets).

    Items sharing a clip (``clip_id``; without the column each item is its own clip) widen
    ``ci_low``/``ci_high`` and ``p_vs_chance`` by the design effect and are resampled together by
    the bootstrap (:func:`lalmbench.core.stats.clustered_proportion_summary`); ``wilson_ci_*`` keep
    the item-level interval. Non-answers (``parse_status == "non-answer"``) count as wrong and as
    unparseable outcomes, and are also counted by class, so ``n_parse_failure`` is what the rules
    failed to read.
    """
    n = int(len(decisions))
    correct = decisions["correct"].to_numpy(dtype=bool)
    k = int(correct.sum())
    n_unparse = int((decisions["outcome"] == "unparseable").sum())
    chance = float(decisions["chance"].mean()) if n else math.nan
    clips = decisions["clip_id"] if "clip_id" in decisions.columns else decisions["id"]
    summary = clustered_proportion_summary(correct, clips, chance)
    if summary["n_clips"] < n:
        ck = pd.Series(correct).groupby(pd.factorize(clips.astype(str))[0]).agg(["sum", "size"])
        blo, bhi = bootstrap_proportion_ci(ck["sum"].to_numpy(), ck["size"].to_numpy(), seed=seed)
    else:
        blo, bhi = bootstrap_proportion_ci(k, n, seed=seed)
    counts = decisions["parse_status"].value_counts()
    stage_counts = {s: int(counts.get(s, 0)) for s in STATUSES}
    non = decisions.loc[decisions["parse_status"] == "non-answer", "parse_reason"].astype(str)
    non_counts = non.str.extract(r"^non-answer: ([^(]+?)\s*(?:\(|$)", expand=False).value_counts()
    return {
        "metric": "accuracy", "value": k / n if n else math.nan, "ci_low": summary["ci_low"],
        "ci_high": summary["ci_high"], "ci_method": summary["ci_method"], "boot_ci_low": blo, "boot_ci_high": bhi,
        "boot_seed": seed, "n": n, "n_correct": k, "n_wrong": n - k - n_unparse, "n_unparseable": n_unparse,
        "n_error": stage_counts["error"], "chance": chance, "p_vs_chance": summary["p_vs_chance"],
        "parse_failure_rate": n_unparse / n if n else math.nan, "parse_stage_counts": stage_counts,
        "parser_version": PARSER_VERSION, "parser_stages": list(stages), "scorer": scorer_fingerprint(),
        # appended: the clip structure, the item-level interval, and non-answers apart from failures
        "n_clips": summary["n_clips"], "design_effect": summary["design_effect"],
        "wilson_ci_low": summary["wilson_ci_low"], "wilson_ci_high": summary["wilson_ci_high"],
        "n_non_answer": stage_counts["non-answer"], "n_parse_failure": stage_counts["unparseable"],
        "non_answer_rate": stage_counts["non-answer"] / n if n else math.nan,
        "non_answer_counts": {str(c): int(v) for c, v in sorted(non_counts.items())},
    }
