"""What a run's outputs cost: tokens in and out and seconds per output, from the predictions rows.

Every row carries ``input_tokens``, ``output_tokens`` (where the backend reports them: the processor's
count for hf, the engine's for vllm, the server's ``usage`` for openai), ``latency_s`` (the runner's
clock around the backend call, a batch's time split evenly over its items) and in ``extra``: the
audio placeholders' share of the input (``input_audio_tokens``, hf and vllm where the processor names
its audio token), the tokens of a thinking span (``reasoning_tokens``: up to ``</think>`` where the
tokenizer has it; openai: the server's ``completion_tokens_details``) and the time to the first
streamed chunk (``ttft_s``: openai with ``params.stream``, vllm where its RequestOutput has metrics).

The summary goes into ``metrics.json`` (``cost``), ``results/tables/cost.tsv`` and the cost columns
at the end of ``results/all.tsv`` (:func:`all_tsv_cells`). A language-model backend fills them; the
others (baselines, cascade, imported) leave them empty and ``cost_note`` says why, so the default
study's all.tsv still reproduces to the byte. Latency and time to first token are measured, never
byte-stable between two fresh runs (``MEASURED``); a rerun from the cache keeps them, since each
cached output keeps the timing of the job that generated it.
"""
from __future__ import annotations

import json
import pandas as pd

#: backends without token counts, and why (the runner still times them: cost.tsv has their latency)
NO_TOKENS: dict[str, str] = {
    "random": "a baseline that picks an option: no tokens",
    "text-overlap": "a baseline that compares words: no tokens",
    "signal": "measured signal features, no language model: no tokens",
    "cascade": "tagger, ASR and sentence similarity: no single token count",
    "imported": "another harness's outputs: no tokens, and latency is reading the file, not the model",
}
#: why an all.tsv row of such a backend has no latency either: it is measured, and these rows must reproduce
_LATENCY_ELSEWHERE = ("; its latency (seconds per output on this machine) is in results/tables/cost.tsv, "
                      "not here: all.tsv of a run without a language model reproduces to the byte")
#: the per-output means a language-model backend fills, from the row or its ``extra``
MEANS = {"input_tokens_mean": "input_tokens", "input_audio_tokens_mean": "input_audio_tokens",
         "output_tokens_mean": "output_tokens", "reasoning_tokens_mean": "reasoning_tokens",
         "latency_s_mean": "latency_s", "ttft_s_mean": "ttft_s"}
#: the summary's measured means: they differ between two fresh runs of the same config
MEASURED = ("latency_s_mean", "ttft_s_mean")
#: hf and vllm count a thinking span where the tokenizer holds </think>; outputs cached before the count carry none
_NO_THINK = "no reasoning tokens: the tokenizer has no </think> token (or the outputs predate the count)"
#: why a language-model backend leaves a mean empty (it fills the others)
UNREPORTED: dict[str, dict[str, str]] = {
    "input_audio_tokens_mean": {
        "hf": "no audio token count: the processor names no audio token",
        "vllm": "no audio token count: the processor names no audio token (or chat mode, rendered by vLLM)",
        "openai": "no audio token count: the server's usage does not split audio from text"},
    "reasoning_tokens_mean": {
        "hf": _NO_THINK,
        "vllm": _NO_THINK,
        "openai": "no reasoning tokens: the server's usage gives no completion_tokens_details.reasoning_tokens"},
    "ttft_s_mean": {
        "hf": "no time to first token: hf generates each batch whole, without streaming",
        "vllm": "no time to first token: this vLLM's RequestOutput carries no first-token time",
        "openai": "no time to first token: the answers were not streamed (params.stream: true measures it)"},
}
#: the all.tsv cost columns, in order (lalmbench.report.aggregate appends them after every other column)
ALL_TSV_COLUMNS = [*MEANS, "cost_note"]
#: cost.tsv columns after the run keys; the job's columns come from lalmbench.inference.job_cost
COLUMNS = ["backend", "n_outputs", "input_tokens_mean", "input_audio_tokens_mean", "output_tokens_mean",
           "reasoning_tokens_mean", "latency_s_mean", "ttft_s_mean", "outputs_per_s", "cost_note"]


def _mean(values: list) -> float | None:
    """Mean of the numbers among ``values``; None (a JSON null in metrics.json) when there are none."""
    x = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").dropna()
    return float(x.mean()) if len(x) else None


def _extra(output: dict) -> dict:
    """A row's ``extra`` (JSON text in the predictions files) as a dict; {} when there is none."""
    value = output.get("extra")
    if isinstance(value, str) and value:
        parsed = json.loads(value)
        return parsed if isinstance(parsed, dict) else {}
    return value if isinstance(value, dict) else {}


def _value(output: dict, field: str):
    """``field`` of one output: a predictions column, else its ``extra``."""
    return output[field] if output.get(field) is not None else _extra(output).get(field)


def cost_summary(preds: pd.DataFrame) -> dict:
    """Means over every output of the run (all k samples of a sampled run): tokens in and out, the
    thinking span's tokens, latency, time to first token, and outputs per second of model time
    (outputs over their summed latency). ``cost_note`` says why a mean is empty."""
    if "samples" in preds.columns:
        outs = [s for cell in preds["samples"] for s in json.loads(cell)]
    else:
        outs = preds.reindex(columns=["input_tokens", "output_tokens", "latency_s", "extra"]).to_dict("records")
    backend = str(preds["backend"].dropna().iloc[0]) if "backend" in preds and preds["backend"].notna().any() else ""
    latency = pd.to_numeric(pd.Series([o.get("latency_s") for o in outs], dtype=object), errors="coerce").dropna()
    total = float(latency.sum())
    means = {col: _mean([_value(o, field) for o in outs]) for col, field in MEANS.items()}
    note = NO_TOKENS.get(backend, "")
    if note:  # the baselines fill placeholder counts (0 in, 1 out, or words): no language model's tokens
        means = {col: (v if col == "latency_s_mean" else None) for col, v in means.items()}
    elif means["output_tokens_mean"] is None:
        note = f"backend {backend or '?'} reported no token counts for these outputs"
    else:
        note = "; ".join(why[backend] for col, why in UNREPORTED.items() if means[col] is None and backend in why)
    return {"backend": backend, "n_outputs": len(outs), **means,
            "outputs_per_s": len(latency) / total if total > 0 else None, "cost_note": note}


def all_tsv_cells(cost: dict | None) -> dict:
    """A run's cost columns in all.tsv: a language-model backend's means as measured; a backend without
    tokens (NO_TOKENS) none at all, not even its latency, with why in ``cost_note``."""
    if not isinstance(cost, dict):
        return {**dict.fromkeys(MEANS), "cost_note": "no cost summary in this run's metrics.json"}
    backend = cost.get("backend") or ""
    if backend in NO_TOKENS:
        suffix = "" if backend == "imported" else _LATENCY_ELSEWHERE
        return {**dict.fromkeys(MEANS), "cost_note": NO_TOKENS[backend] + suffix}
    return {**{col: cost.get(col) for col in MEANS}, "cost_note": cost.get("cost_note") or ""}


def cost_table(metrics: list[dict], jobs: dict[tuple, dict] | None = None) -> pd.DataFrame:
    """results/tables/cost.tsv: one row per run whose metrics carry a ``cost`` summary, sorted by run;
    ``jobs``: run key -> the figures of the generate jobs that made its outputs
    (lalmbench.inference.job_cost.run_job_figures), repeated on each of their runs."""
    from lalmbench.inference.job_cost import JOB_COLUMNS, no_job_figures
    from lalmbench.report.aggregate import RUN_KEYS

    rows = []
    for m in metrics:
        if not isinstance(m.get("cost"), dict):
            continue
        key = tuple(m.get(k) for k in RUN_KEYS)
        job = (jobs or {}).get(key) or no_job_figures(jobs is not None)
        rows.append({**dict(zip(RUN_KEYS, key)), **{k: m["cost"].get(k) for k in COLUMNS}, **job})
    df = pd.DataFrame(rows, columns=RUN_KEYS + COLUMNS + JOB_COLUMNS)
    return df.sort_values(RUN_KEYS, kind="mergesort").reset_index(drop=True)
