"""ORDER family: "Which of these sounds happens first?" over k events of one clip.

Candidates are random k-subsets of a clip's usable events (first occurrence of each distinct
text, so "first" is defined even when a sound repeats). A candidate is rejected, with its reason
counted, when two onsets are within ``tie_tolerance_s`` (ambiguous order), when the smallest
onset gap is below ``min_gap_s`` (difficulty control), when events overlap and
``allow_overlap`` is false, or when two options share a normalised text. Up to
``max_items_per_clip`` accepted candidates per clip become items.

Params (defaults): n_options 2, min_gap_s 0.5, tie_tolerance_s 0.1, allow_overlap false,
overlap_tolerance_s 0.0 (overlaps up to this long count as touching, e.g. annotation jitter),
max_items_per_clip 2, min_event_s 0.0, candidates_per_clip 10, ask "first"|"last",
repeats "first"|"drop" (default "first" for ask first, "drop" for ask last), question (template,
``{ask}`` filled), sample_seed 0 (which candidates
are kept; ``seed`` only moves answer positions, so a new seed reorders options and nothing else).
"""
from __future__ import annotations

import numpy as np

from lalmbench.tasks import register_family
from lalmbench.tasks.options import arrange_rows, build_stats, emit_events, gc_paused
from lalmbench.tasks.prep import (cap_per_clip, check_params, choice, n_options, param, prepare_events, r4,
                                  sample_tuples)

DEFAULT_QUESTION = "Which of these sounds happens {ask}?"


def tuple_features(prep, tup: np.ndarray) -> dict[str, np.ndarray]:
    """Timing features of onset-sorted event tuples [m, k]: gaps, overlaps, duration ratio."""
    ev = prep.ev
    on = ev["onset"][tup]
    off = ev["offset"][tup]
    dur = off - on
    k = tup.shape[1]
    gaps = np.diff(on, axis=1)
    min_gap = gaps.min(axis=1) if k > 1 else np.full(len(tup), np.inf)
    max_ov = np.zeros(len(tup))
    for a in range(k):
        for b in range(a + 1, k):
            ov = np.minimum(off[:, a], off[:, b]) - np.maximum(on[:, a], on[:, b])
            max_ov = np.maximum(max_ov, ov)
    dmin = dur.min(axis=1)
    ratio = np.where(dmin > 0, dur.max(axis=1) / np.where(dmin > 0, dmin, 1.0), np.inf)
    norm = ev["norm"][tup]
    s = np.sort(norm, axis=1)
    dup = (s[:, 1:] == s[:, :-1]).any(axis=1) if k > 1 else np.zeros(len(tup), bool)
    return {"on": on, "off": off, "dur": dur, "min_gap": min_gap, "overlap_s": max_ov,
            "ratio": ratio, "dup_text": dup, "span": off.max(axis=1) - on.min(axis=1)}


def reject_reasons(f: dict[str, np.ndarray], *, tie_s: float, min_gap_s: float,
                   allow_overlap: bool, overlap_tol_s: float = 0.0) -> np.ndarray:
    """Per-candidate reason code (0 = accepted) with a fixed priority; names in REASONS."""
    code = np.zeros(len(f["min_gap"]), np.int8)
    for c, bad in ((4, f["dup_text"]), (3, (~np.bool_(allow_overlap)) & (f["overlap_s"] > overlap_tol_s)),
                   (2, f["min_gap"] < min_gap_s), (1, f["min_gap"] < tie_s)):
        code[bad] = c                                          # later assignments win: priority 1 > 2 > 3 > 4
    return code


REASONS = {1: "candidate:onset_tie", 2: "candidate:gap_below_min", 3: "candidate:overlap",
           4: "candidate:duplicate_text"}


PARAMS = frozenset([
    'allow_overlap', 'ask', 'candidates_per_clip', 'min_gap_s', 'n_options', 'overlap_tolerance_s',
    'repeats', 'tie_tolerance_s',
])


@register_family("order")
@gc_paused
def build(events, clips, params, *, seed: int, dataset: str, task: str):
    params = check_params(params, PARAMS, family='order', task=task)
    k = n_options(params, family="order", task=task, default=2)
    ask = choice(params, "ask", ("first", "last"), task=task)
    min_gap_s = float(param(params, "min_gap_s", 0.5))
    tie_s = float(param(params, "tie_tolerance_s", 0.1))
    allow_overlap = bool(param(params, "allow_overlap", False))
    n_max = int(param(params, "max_items_per_clip", 2))
    trials = int(param(params, "candidates_per_clip", 10))
    # "first" keeps each sound's first occurrence: right for "which happens first", wrong for "last"
    # (a sound that also occurs later would be placed by its first onset), so "last" drops repeats.
    repeats = str(param(params, "repeats", "first" if ask == "first" else "drop"))
    if ask == "last" and repeats == "first":
        raise ValueError(f"task {task}: ask 'last' with repeats 'first' would answer by first occurrences; "
                         f"use repeats 'drop'")
    question = str(param(params, "question", DEFAULT_QUESTION)).format(ask=ask)
    sel_rng = np.random.default_rng(int(param(params, "sample_seed", 0)))
    pos_rng = np.random.default_rng(seed)

    prep = prepare_events(events, clips, params, repeats=repeats, min_events=k)
    tup = sample_tuples(prep, k, trials, sel_rng)
    f = tuple_features(prep, tup)
    code = reject_reasons(f, tie_s=tie_s, min_gap_s=min_gap_s, allow_overlap=allow_overlap,
                          overlap_tol_s=float(param(params, "overlap_tolerance_s", 0.0)))
    ok = prep.drop_coded(code, REASONS)
    clip_of = prep.ev["clip"][tup[ok, 0]] if len(ok) else np.zeros(0, np.int64)
    keep = cap_per_clip(prep, ok, clip_of, n_max, sel_rng)
    tup = tup[keep]
    f = {name: v[keep] for name, v in f.items()}
    clip_codes = prep.ev["clip"][tup[:, 0]] if len(tup) else np.zeros(0, np.int64)

    gold_member = 0 if ask == "first" else k - 1
    perm, gold_pos, disp = arrange_rows(tup, gold_member, pos_rng)
    ev = prep.ev
    n_usable = np.bincount(ev["clip"], minlength=len(prep.clip_ids))
    items = emit_events(
        prep, clip_codes, disp, task=task, dataset=dataset, questions=question, gold_pos=gold_pos,
        opt_meta={"n_occurrences": ev["n_occ"][disp]},
        meta={"family": "order", "ask": ask, "n_options": k, "gap_s": r4(f["min_gap"]),
              "overlap": f["overlap_s"] > 0, "overlap_s": r4(np.maximum(f["overlap_s"], 0.0)),
              "duration_ratio": r4(np.minimum(f["ratio"], 1e6)), "span_s": r4(f["span"]),
              "repeats_in_clip": (ev["n_occ"][tup] > 1).any(axis=1),
              "clip_usable_events": n_usable[clip_codes],
              "min_gap_s": min_gap_s, "allow_overlap": allow_overlap},
    )
    return items, build_stats(rows_read=prep.rows_read, dropped=prep.dropped, items=items, params=params,
                              gold_pos=gold_pos, n_options=k,
                              extra={"candidates": int(len(code))})
