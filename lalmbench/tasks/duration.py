"""DURATION family: "Which of these sounds lasts longest?" over k events of one clip.

Only asked when the longest event is clearly longer than the runner-up: a candidate whose ratio
longest / second-longest is below ``min_ratio`` is rejected (``candidate:duration_ratio_below_min``).
A sound occurring more than once is left out (``repeats: drop``), since "how long X lasts" is then
ambiguous. Overlap is allowed by default (comparing durations does not need separation); set
``allow_overlap: false`` to require it. Events touching the clip's end are cut by it, so their
audible duration may not be the sound's: ``exclude_truncated`` (default false: the question is
about what is audible) rejects candidates with an event ending within ``edge_tolerance_s`` of
the clip duration (``candidate:truncated_by_clip_end``).

Params (defaults): n_options 2, min_ratio 1.5, allow_overlap true,
max_items_per_clip 2, min_event_s 0.0, candidates_per_clip 10, exclude_truncated false,
edge_tolerance_s 0.05, ask "longest"|"shortest", question, sample_seed 0.
"""
from __future__ import annotations

import numpy as np

from lalmbench.tasks import register_family
from lalmbench.tasks.options import arrange_rows, build_stats, emit_events, gc_paused
from lalmbench.tasks.order import tuple_features
from lalmbench.tasks.prep import (cap_per_clip, check_params, choice, n_options, param, prepare_events, r4,
                                  sample_tuples)

DEFAULT_QUESTION = "Which of these sounds lasts {ask}?"
ASK_WORD = {("longest", 2): "longer", ("shortest", 2): "shorter"}


PARAMS = frozenset([
    'allow_overlap', 'ask', 'candidates_per_clip', 'edge_tolerance_s', 'exclude_truncated',
    'min_ratio', 'n_options',
])


@register_family("duration")
@gc_paused
def build(events, clips, params, *, seed: int, dataset: str, task: str):
    params = check_params(params, PARAMS, family='duration', task=task)
    k = n_options(params, family="duration", task=task, default=2)
    ask = choice(params, "ask", ("longest", "shortest"), task=task)
    min_ratio = float(param(params, "min_ratio", 1.5))
    allow_overlap = bool(param(params, "allow_overlap", True))
    n_max = int(param(params, "max_items_per_clip", 2))
    trials = int(param(params, "candidates_per_clip", 10))
    excl_trunc = bool(param(params, "exclude_truncated", False))
    edge_s = float(param(params, "edge_tolerance_s", 0.05))
    word = ASK_WORD.get((ask, k), ask)
    question = str(param(params, "question", DEFAULT_QUESTION)).format(ask=word)
    sel_rng = np.random.default_rng(int(param(params, "sample_seed", 0)))
    pos_rng = np.random.default_rng(seed)

    prep = prepare_events(events, clips, params, repeats="drop", min_events=k)
    tup = sample_tuples(prep, k, trials, sel_rng)
    f = tuple_features(prep, tup)
    dur = f["dur"]
    ds = np.sort(dur, axis=1)
    if ask == "longest":
        ratio = ds[:, -1] / np.maximum(ds[:, -2], 1e-9) if len(tup) else np.zeros(0)
        gold_member = np.argmax(dur, axis=1) if len(tup) else np.zeros(0, np.int64)
    else:
        ratio = ds[:, 1] / np.maximum(ds[:, 0], 1e-9) if len(tup) else np.zeros(0)
        gold_member = np.argmin(dur, axis=1) if len(tup) else np.zeros(0, np.int64)
    clip_of = prep.ev["clip"][tup[:, 0]] if len(tup) else np.zeros(0, np.int64)
    clip_dur = prep.clip_durations[clip_of]
    truncated = np.isfinite(clip_dur) & (f["off"].max(axis=1, initial=-np.inf) >= clip_dur - edge_s)
    code = np.zeros(len(tup), np.int8)
    for c, bad in ((4, f["dup_text"]), (3, excl_trunc & truncated),
                   (2, (~np.bool_(allow_overlap)) & (f["overlap_s"] > 0)), (1, ratio < min_ratio)):
        code[bad] = c
    reasons = {1: "candidate:duration_ratio_below_min", 2: "candidate:overlap",
               3: "candidate:truncated_by_clip_end", 4: "candidate:duplicate_text"}
    ok = prep.drop_coded(code, reasons)
    keep = cap_per_clip(prep, ok, clip_of[ok], n_max, sel_rng)
    tup, gold_member, ratio = tup[keep], gold_member[keep], ratio[keep]
    f = {name: v[keep] for name, v in f.items()}
    clip_codes = clip_of[keep]

    perm, gold_pos, disp = arrange_rows(tup, gold_member, pos_rng)
    items = emit_events(
        prep, clip_codes, disp, task=task, dataset=dataset, questions=question, gold_pos=gold_pos,
        opt_meta={"duration_s": r4(prep.ev["dur"][disp], 6)},
        meta={"family": "duration", "ask": ask, "n_options": k, "duration_ratio": r4(ratio),
              "gap_s": r4(f["min_gap"]), "overlap": f["overlap_s"] > 0,
              "overlap_s": r4(np.maximum(f["overlap_s"], 0.0)), "min_ratio": min_ratio,
              "allow_overlap": allow_overlap},
    )
    return items, build_stats(rows_read=prep.rows_read, dropped=prep.dropped, items=items, params=params,
                              gold_pos=gold_pos, n_options=k,
                              extra={"candidates": int(len(code))})
