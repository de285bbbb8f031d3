"""Does the model listen? Flag a model whose answers do not change when its audio is taken away.

The failure this guards against is silent: a processor that ignores ``audios=`` (the lmms-eval
bug), a chat template that drops the audio placeholder, an endpoint that strips ``input_audio``.
The model still answers, its accuracy may even beat chance through the language prior, and a
paper would cite a number for a model that never heard a clip. The signature is that its answers
under ``audio`` and under ``silence`` (or ``noise``/``no-audio``) are the same item for item.

:func:`listening_check` compares one model's per-item answers under the reference condition with
each ablation condition on the items both share, and flags the model when the share of identical
answers reaches ``threshold`` on at least ``min_items`` items (with fewer the check is
``insufficient``, which results/all.tsv carries in ``flags`` too: see :func:`check_flags`). A model
that reads no audio by design (the ``random`` and ``text-overlap`` floors) is flagged too,
correctly: don't run the check on those. Inputs are decisions frames (``id``, ``pred_label``) or
predictions frames (``id``, ``raw_output``); answers that failed to parse are compared by their raw text.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import pandas as pd

from lalmbench.core import io
from lalmbench.core.io import InputError
from lalmbench.core.stats import wilson_interval

ABLATIONS = ("silence", "noise", "no-audio", "shuffled")


class NotListeningError(RuntimeError):
    """Raised by :func:`raise_if_flagged`: the model's answers ignore its audio."""


def _answers(df: pd.DataFrame, condition: str) -> pd.Series:
    """One answer per id: the parsed label, or ``raw:<text>`` where it did not parse, or ``error``."""
    if "id" not in df.columns:
        raise InputError(f"listening check, condition {condition!r}: missing column 'id' (have {list(df.columns)})")
    if "pred_label" not in df.columns and "raw_output" not in df.columns:
        raise InputError(f"listening check, condition {condition!r}: need a 'pred_label' (decisions) or "
                         f"'raw_output' (predictions) column, have {list(df.columns)}")
    dup = df["id"][df["id"].duplicated()]
    if len(dup):
        raise InputError(f"listening check, condition {condition!r}: duplicate ids {dup.head(5).tolist()}")
    out = []
    labels = df["pred_label"] if "pred_label" in df.columns else pd.Series([None] * len(df), index=df.index)
    raws = df["raw_output"] if "raw_output" in df.columns else pd.Series([None] * len(df), index=df.index)
    errs = df["error"] if "error" in df.columns else pd.Series([None] * len(df), index=df.index)
    for lab, raw, err in zip(labels, raws, errs):
        if isinstance(err, str) and err:
            out.append(None)  # a failed item says nothing about listening: left out of the comparison
        elif isinstance(lab, str) and lab:
            out.append(f"label:{lab}")
        elif isinstance(raw, str):
            out.append(f"raw:{raw.strip()}")
        else:
            out.append(None)
    return pd.Series(out, index=df["id"].astype(str).to_numpy(), dtype=object)


def compare_answers(reference: pd.DataFrame, ablation: pd.DataFrame, *, condition: str = "ablation",
                    reference_name: str = "audio", threshold: float = 0.98, min_items: int = 20,
                    alpha: float = 0.05) -> dict:
    """Identical-answer rate between two conditions of one model, over the items both answered."""
    a = _answers(reference, reference_name)
    b = _answers(ablation, condition)
    common = a.index.intersection(b.index)
    a, b = a.loc[common], b.loc[common]
    both = a.notna() & b.notna()
    n = int(both.sum())
    k = int((a[both] == b[both]).sum())
    rate = k / n if n else None  # None, not nan: the result goes to JSON (write_json refuses nan)
    lo, hi = wilson_interval(k, n, alpha) if n else (None, None)
    if n < min_items:
        status = "insufficient"
    elif rate >= threshold:
        status = "flagged"
    else:
        status = "ok"
    return {"condition": condition, "n_reference": int(len(reference)), "n_ablation": int(len(ablation)),
            "n_common": int(len(common)), "n_compared": n, "n_identical": k, "identical_rate": rate,
            "ci_low": lo, "ci_high": hi, "status": status}


def listening_check(by_condition: Mapping[str, pd.DataFrame], *, model: str = "", reference: str = "audio",
                    threshold: float = 0.98, min_items: int = 20, alpha: float = 0.05) -> dict:
    """Compare ``by_condition[reference]`` with every ablation condition present in ``by_condition``.

    Returns a JSON-ready dict: ``flagged`` (any ablation flagged), ``status`` (``flagged`` | ``ok`` |
    ``insufficient`` when no ablation had ``min_items`` comparable items), ``message`` (one line for
    logs and reports), ``comparisons`` (per ablation condition: counts, ``identical_rate`` with a
    Wilson interval, status) and the settings used.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    if reference not in by_condition:
        raise InputError(f"listening check{f' for {model}' if model else ''}: no answers under the reference "
                         f"condition {reference!r} (have {sorted(by_condition)})")
    ablations = [c for c in by_condition if c != reference]
    if not ablations:
        raise InputError(f"listening check{f' for {model}' if model else ''}: need answers under at least one "
                         f"ablation condition ({', '.join(ABLATIONS)}) besides {reference!r}")
    comps = {c: compare_answers(by_condition[reference], by_condition[c], condition=c, reference_name=reference,
                                threshold=threshold, min_items=min_items, alpha=alpha) for c in ablations}
    flagged = [c for c, r in comps.items() if r["status"] == "flagged"]
    checked = [c for c, r in comps.items() if r["status"] != "insufficient"]
    who = model or "model"
    if flagged:
        status = "flagged"
        detail = "; ".join(f"{c}: {comps[c]['n_identical']}/{comps[c]['n_compared']} identical "
                           f"({comps[c]['identical_rate']:.1%})" for c in flagged)
        message = (f"NOT LISTENING: {who} gives the same answers with and without its audio ({detail}; threshold "
                   f"{threshold:.0%}). The audio probably never reaches the model (processor ignoring the audio "
                   f"argument, chat template without the audio placeholder, endpoint dropping input_audio): "
                   f"its audio-condition scores must not be reported as listening results.")
    elif checked:
        status = "ok"
        detail = "; ".join(f"{c}: {comps[c]['identical_rate']:.1%} identical" for c in checked)
        message = f"{who} listens: answers change when the audio is removed ({detail}; threshold {threshold:.0%})."
    else:
        status = "insufficient"
        counts = ", ".join(f"{c}: {comps[c]['n_compared']} ({comps[c]['n_identical']} identical)" for c in ablations)
        message = (f"{who}: listening check inconclusive: it needs at least {min_items} comparable items under one "
                   f"ablation (checks.listening.min_items) and has {counts}. Run more items (or lower min_items) "
                   f"before reading its audio-condition scores as listening results.")
    return {"model": model, "reference": reference, "threshold": threshold, "min_items": min_items,
            "flagged": bool(flagged), "flagged_conditions": flagged, "status": status, "message": message,
            "comparisons": comps}


def check_flags(result: dict) -> list[str]:
    """What a check result puts in its model's ``flags`` in results/all.tsv.

    ``not-listening:<conditions>`` when flagged; ``listening-insufficient:<condition>(k/n identical,
    needs n>=<min_items>)`` when no ablation had enough comparable items to judge: 19 of 19 identical
    answers is not a pass, and a model nobody could check must not look checked."""
    if result.get("flagged"):
        return ["not-listening:" + "+".join(result["flagged_conditions"])]
    if result.get("status") == "insufficient":
        parts = [f"{c}({r['n_identical']}/{r['n_compared']} identical, needs n>={result['min_items']})"
                 for c, r in result["comparisons"].items()]
        return ["listening-insufficient:" + "+".join(parts)]
    return []


def pool_units(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One frame from several (e.g. one per task): ids become ``<unit>::<id>`` so they stay unique.

    A model is judged on all its items at once: a single task on which even a listening model
    answers the same with and without audio (a cascade whose description cannot tell a short
    pause from a long one) should not, alone, brand the model as deaf.
    """
    parts = []
    for unit, df in frames.items():
        if "id" not in df.columns:
            raise InputError(f"listening check, {unit!r}: missing column 'id' (have {list(df.columns)})")
        parts.append(df.assign(id=str(unit) + "::" + df["id"].astype(str)))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame({"id": []})


def _read(path: str | Path, cond: str) -> pd.DataFrame:
    try:
        return io.read_parquet(path)
    except FileNotFoundError:
        raise InputError(f"{path}: listening check input for condition {cond!r} not found") from None


def listening_check_files(paths: Mapping[str, str | Path | Mapping[str, str | Path]], **kwargs) -> dict:
    """:func:`listening_check` over parquet files (decisions or predictions).

    ``paths`` maps each condition to one file, or to ``{unit: file}`` (e.g. ``{"synth/pitch-order":
    ".../audio/mcq-default/decisions.parquet", ...}``) to pool several tasks by :func:`pool_units`;
    use the same unit names under every condition.
    """
    frames = {}
    for cond, spec in paths.items():
        if isinstance(spec, Mapping):
            frames[cond] = pool_units({unit: _read(p, cond) for unit, p in spec.items()})
        else:
            frames[cond] = _read(spec, cond)
    return listening_check(frames, **kwargs)


def raise_if_flagged(result: dict) -> dict:
    """Fail loudly (for a rule that must stop the run); returns ``result`` unchanged when not flagged."""
    if result["flagged"]:
        raise NotListeningError(result["message"])
    return result


def write_listening_check(paths: Mapping[str, Mapping[str, str]], out_path: str | Path, *, on_flag: str = "fail",
                          **kwargs) -> dict:
    """Rule entry: run the pooled check, write the result, then fail (``on_flag='fail'``) or let the
    flag travel into results/all.tsv (``'mark'``). The JSON is written either way, so a failed run
    still leaves the evidence next to the log."""
    import logging

    result = listening_check_files(paths, **kwargs)
    io.write_json(out_path, result)
    logging.getLogger("lalmbench.checks").log(logging.WARNING if result["flagged"] else logging.INFO,
                                              result["message"])
    if on_flag == "fail":
        raise_if_flagged(result)
    return result
