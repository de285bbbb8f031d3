"""Backend parity: do two backends running the same model (``hf`` vs ``vllm``) give the same answers?

A version pin, a chat template or a sampling default that differs between the two stacks shows
up as disagreement on items both answered. :func:`answer_agreement` joins two decisions frames
by ``id`` and reports the share of items with the same parsed answer (an unparseable answer
counts as its own answer, so "both unparseable" agrees and "one parsed, one not" disagrees),
with a Wilson interval, plus the paired accuracy comparison (exact McNemar) when both frames
carry ``correct``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from lalmbench.core.io import InputError
from lalmbench.core.stats import mcnemar_exact, wilson_interval

UNPARSED = "<unparsed>"
ERROR = "<error>"


def _prepare(df: pd.DataFrame, name: str) -> pd.DataFrame:
    missing = [c for c in ("id", "pred_label") if c not in df.columns]
    if missing:
        raise InputError(f"parity: decisions of {name!r} lack column(s) {missing} (have {list(df.columns)})")
    dup = df["id"][df["id"].duplicated()]
    if len(dup):
        raise InputError(f"parity: decisions of {name!r} have duplicate ids {dup.head(5).tolist()}")
    ans = df["pred_label"].where(df["pred_label"].notna() & (df["pred_label"].astype(str) != ""), UNPARSED)
    if "error" in df.columns:
        err = df["error"].notna() & (df["error"].astype(str) != "")
        ans = ans.where(~err, ERROR)
    out = pd.DataFrame({"id": df["id"].astype(str), "answer": ans.astype(str)})
    if "correct" in df.columns:
        out["correct"] = df["correct"].astype(bool)
    return out


def answer_agreement(a: pd.DataFrame, b: pd.DataFrame, *, names: tuple[str, str] = ("hf", "vllm"),
                     alpha: float = 0.05, n_examples: int = 5) -> dict[str, Any]:
    """Agreement of parsed answers between two backends on the items both have (joined by ``id``).

    Returns a JSON-ready dict: ``n_a``, ``n_b``, ``n_common`` (the shared subset), ``n_agree``,
    ``agreement`` with ``ci_low``/``ci_high`` (Wilson), ``agreement_parsed`` over items both parsed,
    ``n_errors`` (items where either backend failed: excluded, a crash is not a disagreement about
    the answer), ``disagreements`` (a few ids with both answers) and, when both frames carry
    ``correct``, ``accuracy`` (per backend on the shared subset) and ``mcnemar`` (exact test).
    """
    na, nb = names
    if na == nb:
        raise ValueError("parity: the two backends need different names")
    pa, pb = _prepare(a, na), _prepare(b, nb)
    m = pa.merge(pb, on="id", suffixes=("_a", "_b"), how="inner", validate="one_to_one")
    failed = (m["answer_a"] == ERROR) | (m["answer_b"] == ERROR)
    ok = m[~failed]
    n = int(len(ok))
    agree = ok["answer_a"] == ok["answer_b"]
    k = int(agree.sum())
    lo, hi = wilson_interval(k, n, alpha) if n else (None, None)
    both_parsed = (ok["answer_a"] != UNPARSED) & (ok["answer_b"] != UNPARSED)
    n_p = int(both_parsed.sum())
    k_p = int(agree[both_parsed].sum())
    out: dict[str, Any] = {
        "backends": [na, nb], "n_a": int(len(pa)), "n_b": int(len(pb)), "n_common": int(len(m)),
        "n_errors": int(failed.sum()), "n_compared": n, "n_agree": k,
        "agreement": k / n if n else None, "ci_low": lo, "ci_high": hi, "alpha": alpha,
        "n_both_parsed": n_p, "agreement_parsed": k_p / n_p if n_p else None,
        "disagreements": [{"id": r.id, na: r.answer_a, nb: r.answer_b}
                          for r in ok[~agree].head(n_examples).itertuples()],
    }
    if "correct_a" in ok.columns and "correct_b" in ok.columns and n:
        mc = mcnemar_exact(ok["correct_a"].to_numpy(), ok["correct_b"].to_numpy())
        out["accuracy"] = {na: float(ok["correct_a"].mean()), nb: float(ok["correct_b"].mean())}
        out["mcnemar"] = {"n": mc["n"], f"{na}_only_correct": mc["a_only"], f"{nb}_only_correct": mc["b_only"],
                          "p_value": mc["p_value"]}
    return out


def answer_agreement_files(path_a: str | Path, path_b: str | Path, **kwargs) -> dict[str, Any]:
    """:func:`answer_agreement` over two decisions parquet files (e.g. the same model, task, condition
    and prompt scored once from ``hf`` and once from ``vllm`` predictions)."""
    frames = []
    for p in (path_a, path_b):
        try:
            frames.append(pd.read_parquet(p))
        except FileNotFoundError:
            raise InputError(f"{p}: decisions file for the parity check not found") from None
    out = answer_agreement(frames[0], frames[1], **kwargs)
    out["files"] = [str(path_a), str(path_b)]
    return out
