"""NEXT family: "What happens immediately after this sound first appears: "X"?" (as TACoBeLAL).

The base is the first occurrence of a distinct sound; the answer is the event with the next onset
in the clip (repeats included, since a repeat really is what comes next), or the "none, it is
the last" option when nothing follows. Distractors are other distinct sounds of the same clip;
the "none" option is always offered (``none_option``), so options = gold + distractors (+ none).

Rejected candidates (counted): ``onset_tie`` (the base and the next, or the next and the one after
it, start within ``tie_tolerance_s``: "immediately after" is ambiguous), ``onset_tie_before_base``
(another event starts within ``tie_tolerance_s`` at or before the base: with equal onsets the gold
would depend on how the captions sort, and a sound starting a few milliseconds earlier is heard as
simultaneous; since every event inside the base's tie window is then rejected on one side or the
other, no option, distractors included, starts within the window of the base). Equal onsets are a
tie whatever ``tie_tolerance_s`` is. ``gap_below_min`` (next
starts less than ``min_gap_s`` after the base), ``overlap`` (next starts before the base ends and
``allow_overlap`` is false), ``next_is_same_sound`` (the base sound repeats immediately),
``too_few_distractors`` (the clip lacks n_options-1 other distinct sounds).

Params (defaults): n_options 4, none_option true, none_text, min_gap_s 0.0, tie_tolerance_s 0.1,
allow_overlap true, overlap_tolerance_s 0.0, max_items_per_clip 2, min_event_s 0.0, question, sample_seed 0.
"""
from __future__ import annotations

import numpy as np

from lalmbench.tasks import register_family
from lalmbench.tasks.options import Coded, arrange, build_stats, emit, gc_paused
from lalmbench.tasks.prep import (cap_per_clip, check_params, draw_positions, format_texts, item_ids, n_options,
                                  param, prepare_events, r4, with_none)

DEFAULT_QUESTION = 'What happens immediately after this sound first appears: "{text}"?'
NONE_TEXT = "This is the last event, no immediate event after."


def next_rows(clip: np.ndarray, onset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row of the next event in the same clip (-1 if none) and of the one after it (-1 if none)."""
    n = len(clip)
    idx = np.arange(n)
    nxt = np.where((idx + 1 < n) & (np.r_[clip[1:], -1] == clip), idx + 1, -1)
    nxt2 = np.where(nxt >= 0, nxt[np.maximum(nxt, 0)], -1)
    return nxt, nxt2


def is_tie(gap: np.ndarray, tie_s: float) -> np.ndarray:
    """Onsets ``gap`` seconds apart are tied: closer than ``tie_s``, or equal (always ambiguous)."""
    return (gap < tie_s) | (gap <= 0)


PARAMS = frozenset(['allow_overlap', 'min_gap_s', 'n_options', 'none_option', 'none_text',
                    'overlap_tolerance_s', 'tie_tolerance_s'])


@register_family("next")
@gc_paused
def build(events, clips, params, *, seed: int, dataset: str, task: str):
    params = check_params(params, PARAMS, family='next', task=task)
    use_none = bool(param(params, "none_option", True))
    k = n_options(params, family="next", task=task, default=4, minimum=3 if use_none else 2)
    none_text = str(param(params, "none_text", NONE_TEXT))
    min_gap_s = float(param(params, "min_gap_s", 0.0))
    tie_s = float(param(params, "tie_tolerance_s", 0.1))
    allow_overlap = bool(param(params, "allow_overlap", True))
    overlap_tol = float(param(params, "overlap_tolerance_s", 0.0))
    n_max = int(param(params, "max_items_per_clip", 2))
    question = str(param(params, "question", DEFAULT_QUESTION))
    sel_rng = np.random.default_rng(int(param(params, "sample_seed", 0)))
    pos_rng = np.random.default_rng(seed)

    # texts and norms are only looked up and compared by code: no sort of the distinct captions
    prep = prepare_events(events, clips, params, repeats="keep", min_events=2, norm_order=False, text_order=False)
    ev = prep.ev
    clip = ev["clip"]
    on, off = ev["onset"], ev["offset"]
    norm = ev["norm"]
    nxt, nxt2 = next_rows(clip, on)

    base = np.flatnonzero(ev["occ"] == 0)
    b_next, b_next2 = nxt[base], nxt2[base]
    has_next = b_next >= 0
    jn = np.maximum(b_next, 0)
    gap = np.where(has_next, on[jn] - on[base], np.inf)
    tie = has_next & (is_tie(gap, tie_s) | ((b_next2 >= 0) & is_tie(on[np.maximum(b_next2, 0)] - on[jn], tie_s)))
    # rows are sorted by onset, so the previous event of the clip is the latest one at or before the base
    has_prev = (base > 0) & (clip[np.maximum(base - 1, 0)] == clip[base])
    tie_before = has_prev & is_tie(on[base] - on[np.maximum(base - 1, 0)], tie_s)
    code = np.zeros(len(base), np.int8)
    # distinct-sound table F = first occurrences, grouped by clip in onset order
    first = base
    f_clip = clip[first]
    f_start = np.searchsorted(f_clip, f_clip, side="left")
    f_count = np.searchsorted(f_clip, f_clip, side="right") - f_start
    # position of the answer's sound in F: look up (clip, norm) of the next event
    width = np.int64(int(norm.max()) + 2 if len(norm) else 2)
    f_key = f_clip.astype(np.int64) * width + norm[first] + 1
    f_sorted = np.argsort(f_key, kind="stable")
    ans_key = clip[jn].astype(np.int64) * width + norm[jn] + 1
    ans_f = f_sorted[np.searchsorted(f_key[f_sorted], ans_key)]
    base_pos = np.arange(len(base)) - f_start
    ans_pos = np.where(has_next, ans_f - f_start, -1)
    same = has_next & (norm[jn] == norm[base])
    need = np.where(has_next, k - 1 - int(use_none), k - 1)
    avail = f_count - 1 - (has_next & ~same)
    overlap = has_next & ~np.bool_(allow_overlap) & (off[base] - on[jn] > overlap_tol)
    for c, bad in ((7, ~has_next & ~np.bool_(use_none)), (6, avail < need), (5, same), (3, overlap),
                   (2, has_next & (gap < min_gap_s)), (4, tie_before), (1, tie)):
        code[bad] = c
    reasons = {1: "candidate:onset_tie", 2: "candidate:gap_below_min", 3: "candidate:overlap",
               4: "candidate:onset_tie_before_base",
               5: "candidate:next_is_same_sound", 6: "candidate:too_few_distractors",
               7: "candidate:base_is_last_without_none_option"}
    ok = prep.drop_coded(code, reasons)
    keep = cap_per_clip(prep, ok, clip[base[ok]], n_max, sel_rng)

    base, b_next, has_next = base[keep], b_next[keep], has_next[keep]
    base_pos, ans_pos, f_start, f_count = base_pos[keep], ans_pos[keep], f_start[keep], f_count[keep]
    n = len(base)
    # members: col 0 gold (event row or -1 = none), then distractor rows, then none if gold is an event
    n_dis_event = k - 1 - int(use_none)
    members = np.full((n, k), -1, np.int64)        # -1 = the 'none' option
    members[:, 0] = np.where(has_next, b_next, -1)
    ex = np.stack([base_pos, ans_pos], axis=1)
    for rows, m in ((np.flatnonzero(has_next), n_dis_event), (np.flatnonzero(~has_next), k - 1)):
        if len(rows) and m:
            pos = draw_positions(f_count[rows], m, sel_rng, ex[rows]) + f_start[rows, None]
            members[rows, 1:1 + m] = first[pos]
    perm, gold_pos = arrange(n, k, 0, pos_rng)
    disp = np.take_along_axis(members, perm, axis=1)
    is_none = disp < 0
    d0 = np.maximum(disp, 0)
    # texts as codes into the distinct captions (+ the none text), so each is JSON-encoded once
    texts = prep.texts.tolist()
    n_t = len(texts)
    lcode = ev["lcode"][d0]
    if len(prep.labels) == n_t + 1 and np.array_equal(prep.labels[:-1], prep.texts):
        values = texts + [none_text, None]          # the texts are the labels (TACoBeLAL): one list
        lcode = np.where(is_none | (lcode < 0), n_t + 1, lcode)
    else:                                           # labels after the texts; the last label is None
        values = texts + [none_text] + prep.labels.tolist()
        lcode = np.where(is_none | (lcode < 0), len(values) - 1, n_t + 1 + lcode)
    opt_text = Coded(values, np.where(is_none, n_t, ev["tcode"][d0]))
    opt_type = Coded(["event", "none"], is_none)
    base_code = ev["tcode"][base]
    # one question per distinct base text
    q_codes, q_of = np.unique(base_code, return_inverse=True)
    questions = Coded(format_texts(question, [texts[c] for c in q_codes.tolist()]), q_of.reshape(-1))
    jn = np.maximum(b_next, 0)
    clip_codes = clip[base]
    items = emit(
        ids=item_ids(prep, clip_codes, task), task=task, dataset=dataset,
        clip_ids=prep.clip_ids[clip_codes].tolist(), audio_paths=prep.audio_paths[clip_codes].tolist(),
        questions=questions, opt_text=opt_text, opt_type=opt_type,
        gold_pos=gold_pos,
        opt_meta={"onset_s": with_none(r4(on[d0], 6), is_none), "offset_s": with_none(r4(off[d0], 6), is_none),
                  "label": Coded(values, lcode)},
        meta={"family": "next", "n_options": k, "answer_type": Coded(["event", "none"], ~has_next),
              "base_text": Coded(values, base_code), "base_onset_s": r4(on[base], 6),
              "base_offset_s": r4(off[base], 6),
              "gap_s": with_none(r4(on[jn] - on[base]), ~has_next),
              "overlap": has_next & (on[jn] < off[base]),
              "duration_ratio": with_none(r4((off[jn] - on[jn]) / np.maximum(off[base] - on[base], 1e-9)), ~has_next),
              "clip_distinct_sounds": f_count, "min_gap_s": min_gap_s, "allow_overlap": allow_overlap},
    )
    return items, build_stats(rows_read=prep.rows_read, dropped=prep.dropped, items=items, params=params,
                              gold_pos=gold_pos, n_options=k,
                              extra={"candidates": int(len(code)),
                                     "answer_type_counts": {"event": int(has_next.sum()),
                                                            "none": int((~has_next).sum())}})
