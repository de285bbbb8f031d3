"""COUNT family: 'How many times does "X" occur in this clip?' with numeric options.

The true count is the number of annotated occurrences of the sound (same normalised text) in the
clip. It is only asked when the occurrences are separable: any two of them overlapping or
separated by less than ``min_separation_s`` (offset to next onset) make the count ambiguous
(``candidate:occurrences_too_close``); counts above ``max_count`` are rejected
(``candidate:count_above_max``). Events shorter than ``min_event_s`` are dropped before counting
(``event:shorter_than_min_event_s``); a sound with such an occurrence is rejected
(``candidate:has_unusable_occurrence``) since the listener would hear it anyway.

Distractor counts are drawn uniformly from the window [c-(k-1), c+(k-1)] (not below
``min_option``, default 0) so the answer is not always the smallest or middle value.

Params (defaults): n_options 4, min_separation_s 0.1, max_count 10, min_option 0,
max_items_per_clip 2, min_event_s 0.0, question, sample_seed 0.
"""
from __future__ import annotations

import numpy as np

from lalmbench.tasks import register_family
from lalmbench.tasks.options import arrange, build_stats, emit, gc_paused
from lalmbench.tasks.prep import (cap_per_clip, check_params, draw_positions, item_ids, n_options, param,
                                  prepare_events, r4, run_rank)

DEFAULT_QUESTION = 'How many times does "{text}" occur in this clip?'


def occurrence_groups(clip: np.ndarray, norm: np.ndarray, onset: np.ndarray, offset: np.ndarray):
    """Group rows by (clip, text) in onset order and measure how separable the occurrences are.

    Returns (order, group start positions in order, min separation per group), where separation is
    each occurrence's onset minus the latest offset of the earlier occurrences of its group
    (negative = overlap; +inf for a single occurrence)."""
    # rows arrive sorted by (clip, onset): one stable sort on an int key gives (clip, text, onset)
    key = clip.astype(np.int64) * np.int64(int(norm.max(initial=0)) + 2) + norm + 1
    o = np.argsort(key, kind="stable")
    if len(o) == 0:
        return o, np.zeros(0, np.int64), np.zeros(0)
    c, nm, on, off = clip[o], norm[o], onset[o], offset[o]
    new = np.r_[True, (c[1:] != c[:-1]) | (nm[1:] != nm[:-1])]
    gid = np.cumsum(new) - 1
    big = float(off.max()) + 1.0
    cummax = np.maximum.accumulate(off + gid * big) - gid * big   # running max of offset within group
    sep = np.where(new, np.inf, on - np.r_[-np.inf, cummax[:-1]])
    gmin = np.full(int(gid[-1]) + 1, np.inf)
    np.minimum.at(gmin, gid, sep)
    return o, np.flatnonzero(new), gmin


PARAMS = frozenset(['max_count', 'min_option', 'min_separation_s', 'n_options'])


@register_family("count")
@gc_paused
def build(events, clips, params, *, seed: int, dataset: str, task: str):
    params = check_params(params, PARAMS, family='count', task=task)
    k = n_options(params, family="count", task=task, default=4)
    min_sep = float(param(params, "min_separation_s", 0.1))
    max_count = int(param(params, "max_count", 10))
    min_option = int(param(params, "min_option", 0))
    n_max = int(param(params, "max_items_per_clip", 2))
    question = str(param(params, "question", DEFAULT_QUESTION))
    sel_rng = np.random.default_rng(int(param(params, "sample_seed", 0)))
    pos_rng = np.random.default_rng(seed)

    prep = prepare_events(events, clips, params, repeats="keep", min_events=1)
    ev = prep.ev
    clip, norm = ev["clip"], ev["norm"]
    on, off = ev["onset"], ev["offset"]
    o, gstart, gmin = occurrence_groups(clip, norm, on, off)
    base = o[gstart]                                   # first occurrence row of each (clip, sound)
    cnt = ev["n_occ"][base]
    # occurrences removed by min_event_s still sound in the clip: count raw rows per (clip, text)
    raw_n = raw_counts(prep, clip[base], norm[base])
    code = np.zeros(len(base), np.int8)
    for c, bad in ((3, raw_n != cnt), (2, cnt > max_count), (1, gmin < min_sep)):
        code[bad] = c
    reasons = {1: "candidate:occurrences_too_close", 2: "candidate:count_above_max",
               3: "candidate:has_unusable_occurrence"}
    ok = prep.drop_coded(code, reasons)
    # select_per_clip wants rows grouped by clip: base rows are in (clip, text) order, so they are
    keep = cap_per_clip(prep, ok, clip[base[ok]], n_max, sel_rng)
    base, cnt, sep = base[keep], cnt[keep], gmin[keep]
    base_order = np.lexsort((on[base], clip[base]))      # items in (clip, onset) order
    base, cnt, sep = base[base_order], cnt[base_order], sep[base_order]
    n = len(base)

    lo = np.maximum(min_option, cnt - (k - 1))
    hi = np.maximum(cnt + (k - 1), lo + k - 1)
    width = hi - lo + 1
    dis = draw_positions(width, k - 1, sel_rng, (cnt - lo)[:, None]) + lo[:, None] if n else np.zeros((0, k - 1), np.int64)
    values = np.concatenate([cnt[:, None], dis], axis=1) if n else np.zeros((0, k), np.int64)
    perm, gold_pos = arrange(n, k, 0, pos_rng)
    disp = np.take_along_axis(values, perm, axis=1)
    rank = (disp < cnt[:, None]).sum(axis=1)
    texts = prep.texts[ev["tcode"][base]].tolist()
    clip_codes = clip[base]
    items = emit(
        ids=item_ids(prep, clip_codes, task), task=task, dataset=dataset,
        clip_ids=prep.clip_ids[clip_codes].tolist(), audio_paths=prep.audio_paths[clip_codes].tolist(),
        questions=[question.format(text=t) for t in texts], opt_text=_num_text(disp),
        opt_type="number", gold_pos=gold_pos, opt_meta={"value": disp},
        meta={"family": "count", "n_options": k, "count": cnt, "text": texts,
              "label": prep.labels[ev["lcode"][base]],
              "min_separation_s": np.where(np.isfinite(sep), r4(np.where(np.isfinite(sep), sep, 0)), None),
              "answer_rank_among_options": rank},
    )
    hist = np.bincount(cnt, minlength=1)
    return items, build_stats(rows_read=prep.rows_read, dropped=prep.dropped, items=items, params=params,
                              gold_pos=gold_pos, n_options=k,
                              extra={"candidates": int(len(code)),
                                     "answer_value_histogram": {str(i): int(v) for i, v in enumerate(hist) if v}})


def _num_text(values: np.ndarray) -> np.ndarray:
    """Integers -> their decimal strings through a lookup table (no per-element str())."""
    if values.size == 0:
        return values.astype(object)
    table = np.array([str(i) for i in range(int(values.max()) + 1)], dtype=object)
    return table[values]


def raw_counts(prep, clip_codes: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Occurrences of each (clip, text) among all input rows, before any filtering."""
    ok = prep.raw_norm >= 0
    w = np.int64(int(prep.raw_norm.max(initial=0)) + 2)
    key_all = prep.raw_clip[ok].astype(np.int64) * w + prep.raw_norm[ok] + 1
    key = clip_codes.astype(np.int64) * w + norms + 1
    u, c = np.unique(key_all, return_counts=True)
    if len(u) == 0:
        return np.zeros(len(key), np.int64)
    idx = np.minimum(np.searchsorted(u, key), len(u) - 1)
    return np.where(u[idx] == key, c[idx], 0)
