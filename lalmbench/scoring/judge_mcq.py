"""The LLM-judge fallback of the MCQ parser, and its audit (off unless ``judge:`` is configured).

Why a fallback and not a replacement: the rule parser never guesses, so what it reads is trusted;
a judge is another model whose reading can be wrong. So the judge only reads the outputs the rules
left unparseable, its reading never touches the rule-only columns (``value`` in all.tsv stays the
rule-only accuracy; ``value_with_judge`` adds the judge's reads), and before its extra credits are
trusted it also reads a seeded sample of outputs the rules did read: where it disagrees with those
clean rule reads more often than ``max_disagreement``, the run is flagged ``judge-untrusted:...``.

The judge is :class:`lalmbench.scoring.judge.Judge` (any backend, greedy, cached by a hash of its settings,
the rendered prompt and the item) with a prompt whose verdict is ``option_label``
(``resources/prompts/judge/mcq.yaml``): it must answer with exactly one option label or ``none``;
anything else leaves the item unparseable and is counted (``judge_n_unreadable``).
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.core.provenance import source_hash
from lalmbench.core.stats import wilson_interval
from lalmbench.scoring.judge import has_verdict_marker

#: defaults of the top-level ``judge:`` block (config/schema.yaml documents them)
DEFAULTS = {"prompt": "mcq", "tasks": [], "audit_n": 20, "max_disagreement": 0.05,
            "cache_dir": "results/cache/judge"}
#: the judge's read of one reply: one option (``label``), ``none``, a reply that is neither
#: (``unreadable``), or a failed call (``error``)
READS = ("label", "none", "unreadable", "error")
STAGE = "judge"
JUDGE_COLUMNS = ["judge_role", "judge_read", "judge_label", "judge_raw", "judge_model", "judge_fingerprint",
                 "pred_label_with_judge", "parse_status_with_judge", "correct_with_judge", "outcome_with_judge"]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the judge code (this module and :mod:`lalmbench.scoring.judge`): part of the judged score
    rule's params, so an edit of how the judge is asked or read re-scores the runs it covers."""
    return source_hash("scoring/judge.py", "scoring/judge_mcq.py")


def read_label(reply: str | None, labels: Sequence[str]) -> tuple[str | None, str]:
    """(label, read) of a judge reply: exactly one label (``A``, ``(A)``, ``A.``, ``**A**``; case
    ignored where that is unambiguous) or ``none``; anything else, e.g. ``A or B`` or a sentence,
    is ``unreadable``: the judge is held to the answer format, never parsed leniently."""
    if reply is None:
        return None, "unreadable"
    t = reply.strip().strip("`*\"'").strip().rstrip(".").strip()
    if len(t) > 2 and t[0] == "(" and t[-1] == ")":
        t = t[1:-1].strip()
    if t.lower() == "none":
        return None, "none"
    if t in labels:
        return t, "label"
    folded = [lab for lab in labels if lab.lower() == t.lower()]
    return (folded[0], "label") if len(folded) == 1 else (None, "unreadable")


def _record(item: dict, raw: str) -> dict:
    opts = item["options"]
    return {"id": str(item["id"]), "question": item.get("question") or "",
            "options": "\n".join(f"{o['label']}. {o['text']}" for o in opts),
            "labels": ", ".join(o["label"] for o in opts), "candidate": raw}


def audit_sample(decisions: pd.DataFrame, n: int, seed: int) -> np.ndarray:
    """Row positions of ``n`` items the rules read (seeded, sorted): the judge's audit set."""
    decided = np.flatnonzero((decisions["outcome"] != "unparseable").to_numpy())
    if n <= 0 or not len(decided):
        return decided[:0]
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(decided, size=min(n, len(decided)), replace=False))


def judge_fallback(decisions: pd.DataFrame, items: list[dict], judge, *, audit_n: int = DEFAULTS["audit_n"],
                   max_disagreement: float = DEFAULTS["max_disagreement"], seed: int = 0
                   ) -> tuple[pd.DataFrame, dict]:
    """Ask ``judge`` (a :class:`lalmbench.scoring.judge.Judge` with an ``option_label`` prompt) about the
    unparseable outputs (not generation errors: there is no text to read) and an audit sample of
    the rule-read ones. Returns the decisions with :data:`JUDGE_COLUMNS` added (the rule columns
    untouched) and the ``judge_*`` / ``value_with_judge`` metrics plus ``flags``."""
    if judge.prompt.verdict != "option_label":
        raise ValueError(f"judge prompt {judge.prompt.name!r}: the MCQ fallback needs verdict 'option_label', "
                         f"got {judge.prompt.verdict!r}")
    by_id = {str(it["id"]): it for it in items}
    dec = decisions.reset_index(drop=True).copy()
    # a non-answer ("Could you provide the audio?", a refusal) answered nothing: never credited
    unread = ((dec["outcome"] == "unparseable") & ~dec["parse_status"].isin(["error", "non-answer"])
              & dec["raw_output"].notna())
    fallback = np.flatnonzero(unread.to_numpy())
    audited = audit_sample(dec, audit_n, seed)
    asked = np.concatenate([fallback, audited])
    records = [_record(by_id[str(dec.at[i, "id"])], dec.at[i, "raw_output"]) for i in asked]
    replies = judge.ask(records)

    n = len(dec)
    role = np.full(n, None, dtype=object)
    read = np.full(n, None, dtype=object)
    label = np.full(n, None, dtype=object)
    raw = np.full(n, None, dtype=object)
    role[fallback], role[audited] = "fallback", "audit"
    for i, rec, rep in zip(asked, records, replies):
        raw[i] = rep["judge_raw"] if rep["judge_raw"] is not None else rep["judge_error"]
        if rep["judge_error"]:
            read[i] = "error"
        else:
            label[i], read[i] = read_label(rep["judge_raw"], [o["label"] for o in by_id[rec["id"]]["options"]])
    who = np.where(role != None, judge.name, None)  # noqa: E711 - elementwise
    fp = np.where(role != None, judge.fingerprint, None)  # noqa: E711

    credited = (role == "fallback") & (read == "label")
    pred = np.where(credited, label, dec["pred_label"].to_numpy(dtype=object))
    gold = dec["gold_label"].to_numpy(dtype=object)
    correct = np.where(credited, pred == gold, dec["correct"].to_numpy(dtype=bool)).astype(bool)
    outcome = np.where(credited, np.where(correct, "correct", "wrong"), dec["outcome"].to_numpy(dtype=object))
    for col, values in zip(JUDGE_COLUMNS, (role, read, label, raw, who, fp, pred,
                                          np.where(credited, STAGE, dec["parse_status"].to_numpy(dtype=object)),
                                          correct, outcome)):
        dec[col] = pd.Series(values, dtype=bool if col == "correct_with_judge" else object)

    # the audit: does the judge read what the rules read, on outputs the rules read cleanly?
    aud = dec.iloc[audited]
    agree = int((aud["judge_label"] == aud["pred_label"]).sum())
    n_aud = len(aud)
    trusted = bool(n_aud) and 1 - agree / n_aud <= max_disagreement
    k = int(correct.sum())
    lo, hi = wilson_interval(k, n)
    fb = dec.iloc[fallback]
    reads = fb["judge_read"].value_counts()
    metrics = {
        "value_with_judge": k / n if n else math.nan, "ci_low_with_judge": lo, "ci_high_with_judge": hi,
        "n_correct_with_judge": k, "n_unparseable_with_judge": int((outcome == "unparseable").sum()),
        "judge_fingerprint": judge.fingerprint, **judge.settings,
        "judge_n_fallback": len(fallback), "judge_n_credited": int(credited.sum()),
        **{f"judge_n_{r}": int(reads.get(r, 0)) for r in READS},
        "judge_n_cached": int(sum(rep["cached"] for rep in replies)),
        "judge_n_candidate_markers": sum(has_verdict_marker(rec["candidate"]) for rec in records),
        "judge_audit_n": n_aud, "judge_audit_agree": agree,
        # None, not NaN, where nothing was audited: metrics.json is strict JSON
        "judge_agreement": agree / n_aud if n_aud else None,
        "judge_agreement_ci": list(wilson_interval(agree, n_aud)) if n_aud else None,
        "judge_disagreement_ids": list(aud.loc[aud["judge_label"] != aud["pred_label"], "id"])[:20],
        "judge_max_disagreement": max_disagreement, "judge_trusted": trusted,
        "flags": [] if trusted else [untrusted_flag(n_aud - agree, n_aud, max_disagreement)],
    }
    return dec, metrics


def untrusted_flag(n_disagree: int, n_audit: int, max_disagreement: float) -> str:
    """The all.tsv flag of a run whose judge credits must not be quoted."""
    if not n_audit:
        return "judge-untrusted:not audited (no rule-read items in the audit sample)"
    return (f"judge-untrusted:disagreed with {n_disagree}/{n_audit} rule reads "
            f"({n_disagree / n_audit:.0%} > {max_disagreement:.0%})")
