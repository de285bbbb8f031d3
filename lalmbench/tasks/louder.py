"""LOUDER family: "Which of these sounds is louder?" over events that carry a level (mixtures).

Needs a ``level_db`` column in events (written by :mod:`lalmbench.data.mixing`: each source's gain
relative to the first source, after RMS normalisation). Only events of kind ``event_kind``
(default "source", when a ``kind`` column exists) are used; others are counted as
``event:other_kind``. A candidate whose loudest and runner-up differ by less than
``min_level_diff_db`` is rejected (``candidate:level_diff_below_min``).

Params (defaults): n_options 2, min_level_diff_db 3.0, max_items_per_clip 1, candidates_per_clip 10,
event_kind "source", ask "louder"|"quieter", question, sample_seed 0.
"""
from __future__ import annotations

import numpy as np

from lalmbench.core.io import InputError
from lalmbench.tasks import register_family
from lalmbench.tasks.options import arrange_rows, build_stats, emit_events, gc_paused
from lalmbench.tasks.order import tuple_features
from lalmbench.tasks.prep import (cap_per_clip, check_params, choice, param, prepare_events, r4,
                                  sample_tuples)

DEFAULT_QUESTION = "Which of these sounds is {ask}?"
ASK_WORD = {("louder", 2): "louder", ("quieter", 2): "quieter", ("louder", 0): "loudest", ("quieter", 0): "quietest"}


PARAMS = frozenset(['ask', 'candidates_per_clip', 'event_kind', 'min_level_diff_db', 'n_options'])


@register_family("louder")
@gc_paused
def build(events, clips, params, *, seed: int, dataset: str, task: str):
    params = check_params(params, PARAMS, family='louder', task=task)
    if "level_db" not in events.columns:
        raise InputError(f"task {task}: family 'louder' needs a level_db column in events (mixture datasets from "
                         f"lalmbench.data.mixing have it); columns are {list(events.columns)}")
    k = int(param(params, "n_options", 2))
    ask = choice(params, "ask", ("louder", "quieter"), task=task)
    min_diff = float(param(params, "min_level_diff_db", 3.0))
    n_max = int(param(params, "max_items_per_clip", 1))
    trials = int(param(params, "candidates_per_clip", 10))
    kind = param(params, "event_kind", "source")
    question = str(param(params, "question", DEFAULT_QUESTION)).format(ask=ASK_WORD[(ask, 2 if k == 2 else 0)])
    sel_rng = np.random.default_rng(int(param(params, "sample_seed", 0)))
    pos_rng = np.random.default_rng(seed)

    rows_read = len(events)
    other = 0
    if "kind" in events.columns and kind:
        mask = (events["kind"].astype("string") == str(kind)).fillna(False).to_numpy(bool)
        other = int((~mask).sum())
        events = events[mask].reset_index(drop=True)
    level_all = events["level_db"].to_numpy(float)
    prep = prepare_events(events, clips, params, repeats="drop", min_events=k)
    prep.rows_read = rows_read
    prep.drop("event:other_kind", other)
    tup = sample_tuples(prep, k, trials, sel_rng)
    lev = level_all[prep.ev["row"]][tup] if len(tup) else np.zeros((0, k))
    ls = np.sort(lev, axis=1)
    diff = (ls[:, -1] - ls[:, -2]) if ask == "louder" else (ls[:, 1] - ls[:, 0])
    gold_member = np.argmax(lev, axis=1) if ask == "louder" else np.argmin(lev, axis=1)
    bad = ~(diff >= min_diff)
    prep.drop("candidate:level_diff_below_min", int(bad.sum()))
    ok = np.flatnonzero(~bad)
    clip_of = prep.ev["clip"][tup[:, 0]] if len(tup) else np.zeros(0, np.int64)
    keep = cap_per_clip(prep, ok, clip_of[ok], n_max, sel_rng)
    tup, gold_member, diff, lev = tup[keep], gold_member[keep], diff[keep], lev[keep]
    f = tuple_features(prep, tup)
    clip_codes = clip_of[keep]
    perm, gold_pos, disp = arrange_rows(tup, gold_member, pos_rng)
    items = emit_events(
        prep, clip_codes, disp, task=task, dataset=dataset, questions=question, gold_pos=gold_pos,
        opt_meta={"level_db": r4(np.take_along_axis(lev, perm, axis=1), 2)},
        meta={"family": "louder", "ask": ask, "n_options": k, "level_diff_db": r4(diff, 2),
              "gap_s": r4(f["min_gap"]), "overlap": f["overlap_s"] > 0, "overlap_s": r4(np.maximum(f["overlap_s"], 0)),
              "min_level_diff_db": min_diff},
    )
    return items, build_stats(rows_read=prep.rows_read, dropped=prep.dropped, items=items, params=params,
                              gold_pos=gold_pos, n_options=k, extra={"candidates": int(len(bad))})
