"""How often two model entries give the same answer on the same items (checks.agreement).

Used for backend parity (the same checkpoint under ``hf`` and ``vllm``) and for scoring-mode
agreement (generate-then-parse vs option log-likelihood for one checkpoint): a disagreement
rate is a number a paper should report next to either score. One row per shared run
(dataset, task, condition, prompt) plus a pooled row per pair.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from lalmbench.core import io
from lalmbench.checks.parity import answer_agreement

COLUMNS = ["pair", "a", "b", "dataset", "task", "condition", "prompt", "n_compared", "n_agree", "agreement",
           "ci_low", "ci_high", "agreement_parsed", "accuracy_a", "accuracy_b", "mcnemar_p"]


def _row(pair: str, a: str, b: str, run: Mapping[str, str], res: dict[str, Any]) -> dict[str, Any]:
    acc = res.get("accuracy") or {}
    return {"pair": pair, "a": a, "b": b, **{k: run[k] for k in ("dataset", "task", "condition", "prompt")},
            "n_compared": res["n_compared"], "n_agree": res["n_agree"], "agreement": res["agreement"],
            "ci_low": res["ci_low"], "ci_high": res["ci_high"], "agreement_parsed": res["agreement_parsed"],
            "accuracy_a": acc.get(a), "accuracy_b": acc.get(b), "mcnemar_p": (res.get("mcnemar") or {}).get("p_value")}


def agreement_table(pairs: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """``pairs``: {name: {a, b, runs: [{dataset, task, condition, prompt, file_a, file_b}]}}."""
    rows = []
    for name in sorted(pairs):
        spec = pairs[name]
        a, b = spec["a"], spec["b"]
        pooled_a, pooled_b = [], []
        for run in spec["runs"]:
            da, db = io.read_parquet(run["file_a"]), io.read_parquet(run["file_b"])
            rows.append(_row(name, a, b, run, answer_agreement(da, db, names=(a, b))))
            unit = "/".join(run[k] for k in ("dataset", "task", "condition", "prompt")) + "::"
            pooled_a.append(da.assign(id=unit + da["id"].astype(str)))
            pooled_b.append(db.assign(id=unit + db["id"].astype(str)))
        if len(spec["runs"]) > 1:
            res = answer_agreement(pd.concat(pooled_a), pd.concat(pooled_b), names=(a, b))
            rows.append(_row(name, a, b, {"dataset": "(all)", "task": "(all)", "condition": "(all)",
                                          "prompt": "(all)"}, res))
    return pd.DataFrame(rows, columns=COLUMNS)


def write_agreement_table(pairs: Mapping[str, Mapping[str, Any]], out: str) -> pd.DataFrame:
    df = agreement_table(pairs)
    io.write_tsv(out, df)
    return df


def shared_runs(runs: Sequence[Any], a: str, b: str) -> list[dict[str, str]]:
    """Runs (dataset, task, condition, prompt) that both models have, in a stable order."""
    key = lambda r: (r.dataset, r.task, r.condition, r.prompt)  # noqa: E731
    have_b = {key(r) for r in runs if r.model == b}
    return [{"dataset": r.dataset, "task": r.task, "condition": r.condition, "prompt": r.prompt,
             "file_a": f"results/scores/{r.key}/decisions.parquet",
             "file_b": f"results/scores/{b}/{r.dataset}/{r.task}/{r.condition}/{r.prompt}/decisions.parquet"}
            for r in runs if r.model == a and key(r) in have_b]
