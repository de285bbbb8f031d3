"""Backend parity: do two backends running the same model (``hf`` vs ``vllm``) give the same answers?

A version pin, a chat template or a sampling default that differs between the two stacks shows
up as disagreement on items both answered. :func:`answer_agreement` joins two decisions frames
by ``id`` and reports the share of items with the same parsed answer (an unparseable answer
counts as its own answer, so "both unparseable" agrees and "one parsed, one not" disagrees),
with a Wilson interval, plus the paired accuracy comparison (exact McNemar) when both frames
carry ``correct``.

:func:`read_engine_parity` reads what bench/vllm_cpu_parity.py measured engine against engine on the same tiny
weights (prompt ids, greedy tokens, where they first part and by what logit gap, items/s), one row per family:

    python -m lalmbench.checks.parity [bench/results/vllm_cpu_parity.jsonl]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from lalmbench.core.io import InputError, read_jsonl
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


#: bench/vllm_cpu_parity.py's record: one line per figure, labelled "<family>: <what> [<machine>]"
ENGINE_PARITY = Path(__file__).resolve().parents[2] / "bench" / "results" / "vllm_cpu_parity.jsonl"
#: column -> (what, unit); "items" comes first in each family's run and opens a fresh row
ENGINE_FIGURES = {
    "items": ("items compared", "items"),
    "vllm_answered": ("items vLLM answered", "items"),
    "prompt_ids_equal": ("prompt ids hf = vLLM", "items"),
    "greedy_equal": ("greedy tokens hf = vLLM", "items"),
    "first_diff_item": ("first item whose greedy tokens differ (index)", "item"),
    "first_diff_position": ("first differing token position there", "token"),
    "hf_gap": ("hf logit of its token minus of vLLM's, there", "logit"),
    "vllm_gap": ("vLLM logit of its token minus of hf's, there", "logit"),
    "hf_items_per_s": ("hf items/s", "items/s"),
    "vllm_items_per_s": ("vLLM items/s", "items/s"),
}
_LABEL = re.compile(r"^(?P<family>[A-Za-z0-9_]+): (?P<what>.+) \[(?P<machine>[^\]]+)\]$")
_BY_WHAT = {what: key for key, (what, _) in ENGINE_FIGURES.items()}


def engine_parity_label(family: str, key: str, machine: str) -> str:
    """The figure label bench/vllm_cpu_parity.py writes for one column of one family's row."""
    if "[" in machine or "]" in machine:
        raise ValueError(f"parity: machine {machine!r} may not hold brackets")
    return f"{family}: {ENGINE_FIGURES[key][0]} [{machine}]"


def read_engine_parity(path: str | Path = ENGINE_PARITY) -> pd.DataFrame:
    """One row per (family, machine): its latest run's figures (a figure the run did not write, e.g. no first
    difference where every item agreed, is empty), the run's highest 1-minute load average, date and commit.

    A line that is not one of these figures raises InputError naming the file and line."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no engine parity record (run `python bench/vllm_cpu_parity.py`)")
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for n, line in enumerate(read_jsonl(path), 1):
        m = _LABEL.match(str(line.get("figure", "")))
        key = _BY_WHAT.get(m["what"]) if m else None
        if key is None or "value" not in line:
            raise InputError(f"{path}:{n}: {line.get('figure')!r} is not an engine parity figure "
                             f"('<family>: <one of {list(_BY_WHAT)}> [<machine>]')")
        at = (m["family"], m["machine"])
        if key == "items" or at not in rows:
            rows[at] = {"family": at[0], "machine": at[1], "load_1min": None}
        row = rows[at]
        row[key] = line["value"]
        load = (line.get("loadavg") or [None])[0]
        if load is not None:
            row["load_1min"] = max(load, row["load_1min"] or 0.0)
        row["date"], row["commit"] = line.get("date"), line.get("commit")
    cols = ["family", *ENGINE_FIGURES, "load_1min", "machine", "date", "commit"]
    return pd.DataFrame(list(rows.values())).reindex(columns=cols)


def _num(x: Any, fmt: str = "{:.0f}") -> str:
    return "—" if x is None or pd.isna(x) else fmt.format(x)


def engine_parity_markdown(table: pd.DataFrame) -> str:
    """The per-family table as docs/models.md shows it, then the machine(s) and load it was measured under."""
    out = ["| family | vLLM runs | prompt ids hf = vLLM | greedy tokens hf = vLLM | first difference: item, token, "
           "logit gap hf / vLLM | items/s hf / vLLM |", "|---|---|---:|---:|---|---|"]
    for r in table.itertuples(index=False):
        n = _num(r.items)
        runs = "yes" if r.vllm_answered == r.items else f"{_num(r.vllm_answered)}/{n} answered"
        diff = "—" if pd.isna(r.first_diff_item) else (
            f"i{r.first_diff_item:02.0f}, token {_num(r.first_diff_position)}, "
            f"{_num(r.hf_gap, '{:.3g}')} / {_num(r.vllm_gap, '{:.3g}')}")
        out.append(f"| {r.family} | {runs} | {_num(r.prompt_ids_equal)}/{n} | {_num(r.greedy_equal)}/{n} | {diff} | "
                   f"{_num(r.hf_items_per_s, '{:.3g}')} / {_num(r.vllm_items_per_s, '{:.3g}')} |")
    for machine, part in table.groupby("machine", sort=False):
        out.append(f"\nOn {machine}: load average (1 min) up to {part['load_1min'].max():.1f}, "
                   f"{part['date'].min()} to {part['date'].max()}, commit {', '.join(part['commit'].unique())}.")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lalmbench.checks.parity",
                                 description="print the hf-vs-vLLM parity table bench/vllm_cpu_parity.py recorded")
    ap.add_argument("record", nargs="?", default=str(ENGINE_PARITY), help=f"default: {ENGINE_PARITY}")
    args = ap.parse_args(argv)
    try:
        table = read_engine_parity(args.record)
    except InputError as exc:
        print(f"parity: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(engine_parity_markdown(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
