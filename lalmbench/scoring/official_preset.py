"""A benchmark preset's official rule applied to items and raw outputs: what the workflow writes as
``value_official``, the per-item official columns and the paper's breakdown, for the Python API
(:func:`lalmbench.score_official`).

The rule is the one the preset names for the items' kind (MMAU-Pro: nearest choice for MCQ items,
the instruction checks for instruction items), with the preset's breakdown fields; our own verdict
sits beside it where the project has one without a model (MCQ: the rule parser; instruction: the
checks), so the breakdown shows ours and the official value per group as ``metrics.json`` does.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from lalmbench.core.io import InputError
from lalmbench.scoring.official import AskFn, EmbedFn, preset_rules, run_official, spec_for_task


def _kind(item: Mapping[str, Any]) -> str:
    kind = (item.get("meta") or {}).get("kind")
    if kind in ("mcq", "open", "instruction"):
        return str(kind)
    return "mcq" if item.get("options") else "open"


#: what the workflow does with the items a released file has no output for, said where the API refuses them
LEAVE_OUT_HINT = ("to score a released file as the workflow does (missing: leave-out), pass only the items it has "
                  "outputs for")


def _outputs(items: list[dict], predictions: pd.DataFrame, known: set[str]) -> pd.DataFrame:
    """``id, raw_output, error`` per item, in the items' order; a missing or duplicated id, or one
    not in ``known`` (every item given, of any kind), is an error naming it."""
    for col in ("id", "raw_output"):
        if col not in predictions.columns:
            raise InputError(f"predictions: no {col!r} column (have {list(predictions.columns)})")
    preds = predictions.assign(id=predictions["id"].astype(str))
    dup = preds["id"][preds["id"].duplicated()]
    if len(dup):
        raise InputError(f"predictions: duplicated id {dup.iloc[0]!r}")
    ids = [str(it["id"]) for it in items]
    unknown = sorted(set(preds["id"]) - known)
    if unknown:
        raise InputError(f"predictions: id {unknown[0]!r} is not among the items ({len(unknown)} unknown)")
    by_id = preds.set_index("id")
    missing = [i for i in ids if i not in by_id.index]
    if missing:
        raise InputError(f"predictions: no row for item {missing[0]!r} ({len(missing)} of {len(ids)} items without "
                         f"one); {LEAVE_OUT_HINT}")
    rows = by_id.loc[ids]
    return pd.DataFrame({"id": ids, "raw_output": rows["raw_output"].to_numpy(dtype=object),
                         "error": (rows["error"] if "error" in rows.columns
                                   else pd.Series(None, index=rows.index)).to_numpy(dtype=object)})


def score_preset(preset: str, items: Sequence[Mapping[str, Any]],
                 predictions: pd.DataFrame | Iterable[Mapping[str, Any]], *, kind: str | None = None,
                 settings: Mapping[str, Any] | None = None, rule: str | None = None,
                 parser: Mapping[str, Any] | None = None,
                 embed: EmbedFn | None = None, ask: AskFn | None = None) -> tuple[pd.DataFrame, dict]:
    """(per-item decisions with ``official_score``, ``official_pred``, ``official_reason``,
    ``official_disagrees`` and ours where we have one; the summary: ``value_official``,
    ``n_official``, ``official_excluded``, ``breakdown``, and our ``value`` for MCQ and instruction
    items). Items are scored in the order given, which is the order the official script reads them
    (MMSU carries a letter from record to record). ``kind`` picks the items of one kind when the
    preset holds several; ``settings`` adds scorer keys (``carry_letter``, ``embedder``, ...); ``rule``
    picks another report's rule the preset names under ``official_also`` (MELD: ``kimi_audio_judge``)."""
    from lalmbench.data.adapters.benchmarks import is_preset, official_protocol

    if not is_preset(preset):
        from lalmbench.data.adapters.benchmarks import preset as resolve

        resolve(preset)  # raises, naming the closest preset
    protocol = official_protocol({"adapter": preset})
    items = [dict(it) for it in items]
    known = {str(it["id"]) for it in items}
    kinds = sorted({_kind(it) for it in items})
    if kind is None:
        if len(kinds) > 1:
            raise InputError(f"{preset}: the items are of several kinds ({', '.join(kinds)}); the official rule "
                             f"differs per kind: pass kind= one of them")
        kind = kinds[0] if kinds else "mcq"
    items = [it for it in items if _kind(it) == kind]
    if not items:
        raise InputError(f"{preset}: no {kind} items among the {len(kinds)} kind(s) given ({', '.join(kinds)})")
    rules = preset_rules(protocol["official"], protocol["breakdowns"])
    if rule is not None:
        also = preset_rules(protocol.get("official_also"), protocol["breakdowns"])
        chosen = [e for e in rules + also if e["scorer"] == rule]
        if not chosen:
            raise InputError(f"{preset}: names no official rule {rule!r} (official: {[r['scorer'] for r in rules]}, "
                             f"official_also: {[a['scorer'] for a in also]})")
        rules = chosen
    spec = spec_for_task(rules, kind)
    if spec is None:
        raise InputError(f"{preset}: no official rule for {kind} items (the preset names "
                         f"{[r['scorer'] for r in rules]})")
    spec.update(settings or {})
    preds = predictions if isinstance(predictions, pd.DataFrame) else pd.DataFrame(list(predictions))
    outputs = _outputs(items, preds[preds["id"].astype(str).isin({str(it["id"]) for it in items})]
                       if "id" in preds.columns else preds, known)
    ours: dict = {}
    if kind == "mcq":
        from lalmbench.scoring.mcq import score_mcq

        decisions, metrics = score_mcq(items, outputs, dict(parser or {}))
        ours = {"value": metrics["value"], "n": metrics["n"]}
    elif kind == "instruction":
        from lalmbench.scoring.metrics.instruction import score_instructions

        failed = outputs["error"].map(lambda e: e is not None and e == e and e != "")
        raw = [None if f else r for f, r in zip(failed, outputs["raw_output"])]
        per, head = score_instructions(items, raw)
        decisions = outputs.merge(per, on="id", how="left")
        ours = {"value": head["value"], "n": head["n"]}
    else:
        decisions = outputs
    out, summary = run_official(spec, items, decisions, embed=embed, ask=ask)
    return out, {**summary, **ours, "kind": kind}
