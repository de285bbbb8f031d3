"""Released ASR transcripts scored without audio: a report's official WER/CER rules and lalm-bench's.

Why: a file of (reference, hypothesis) pairs that someone published is the only way to check a
report's WER/CER number without the model and the audio. The references travel in the file, so no
item set is needed; each rule sees exactly the pairs the file holds. The rules are the ones the
report presets name (``qwen2_audio_wer``, ``kimi_audio_wer``; docs/scoring-official.md) and
lalm-bench's ``wer`` (Whisper's basic normaliser, characters for Chinese), so a difference between
them can be traced to the items where their tokenisations disagree (docs/published.md,
"Released outputs on report benchmarks").
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from lalmbench.core.io import InputError
from lalmbench.scoring.metrics.asr import wer
from lalmbench.scoring.official import SCORERS

#: every official WER/CER rule of the registry, so a report rule added there is scored here too
OFFICIAL_RULES = {name: sc for name, sc in SCORERS.items() if sc.metric == "wer"}


def read_pairs(lines: Iterable[str], *, id_field: str, ref_field: str, hyp_field: str) -> list[dict]:
    """One ``{id, reference, hypothesis}`` per JSON line; a missing field is an error naming the line,
    never a silently dropped item (a dropped item would change the corpus rate)."""
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        missing = [f for f in (id_field, ref_field, hyp_field) if f not in rec]
        if missing:
            raise InputError(f"released transcripts, line {n}: no field(s) {missing} (has {sorted(rec)})")
        out.append({"id": str(rec[id_field]), "reference": str(rec[ref_field]),
                    "hypothesis": None if rec[hyp_field] is None else str(rec[hyp_field])})
    return out


def read_pairs_file(path: str | Path, **fields: str) -> list[dict]:
    """:func:`read_pairs` over a JSONL file."""
    with open(path, encoding="utf-8") as f:
        return read_pairs(f, **fields)


def score_released_asr(pairs: list[dict], *, language: str, ours_unit: str = "char",
                       ours_normalizer: str = "whisper_basic") -> dict:
    """Corpus rates in percent of every official rule and of lalm-bench's ``wer``, with the
    per-item error counts (``per_item``: id -> {rule: errors}) and the ids where the rules disagree."""
    items = [{"id": p["id"], "references": [p["reference"]]} for p in pairs]
    raw = [p["hypothesis"] for p in pairs]
    out: dict = {"n": len(pairs), "rules": {}, "per_item": {p["id"]: {} for p in pairs}}
    for name, scorer in OFFICIAL_RULES.items():
        scored = scorer.fn(items, raw, {"language": language})
        stats = [s.stats for s in scored if s.stats is not None]
        out["rules"][name] = {"value": 100 * scorer.aggregate(stats, {}), "errors": int(sum(s[0] for s in stats)),
                              "ref_units": int(sum(s[1] for s in stats)), "n_scored": len(stats)}
        for p, s in zip(pairs, scored):
            out["per_item"][p["id"]][name] = None if s.stats is None else int(s.stats[0])
    ours = wer([p["reference"] for p in pairs], raw, normalizer=ours_normalizer, unit=ours_unit)
    out["ours"] = {"value": 100 * ours["value"], "ci_low": 100 * ours["ci_low"], "ci_high": 100 * ours["ci_high"],
                   "errors": int(sum(q["errors"] for q in ours["per_item"])), "ref_units": ours["n_ref_units"],
                   "metric": ours["metric"], "normalizer": ours_normalizer}
    for p, q in zip(pairs, ours["per_item"]):
        out["per_item"][p["id"]]["ours"] = int(q["errors"])
    out["disagree"] = [i for i, e in out["per_item"].items() if len(set(e.values())) > 1]
    return out
