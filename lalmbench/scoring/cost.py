"""What a run's outputs cost: tokens in and out and seconds per output, from the predictions rows.

Every row carries ``input_tokens``, ``output_tokens`` (where the backend reports them: the processor's
count for hf, the engine's for vllm, the server's ``usage`` for openai; hf adds the audio placeholders'
share, ``extra.input_audio_tokens``, where the processor names its audio token) and ``latency_s`` (the
runner's clock around the backend call, a batch's time split evenly over its items). Latency varies
from machine to machine and run to run, so the summary goes to ``results/tables/cost.tsv``, never
into ``results/all.tsv``, whose bytes a rerun reproduces. A backend that counts no tokens gets its
reason in ``cost_note``.
"""
from __future__ import annotations

import json
import pandas as pd

#: backends without token counts, and why (the runner still times them)
NO_TOKENS: dict[str, str] = {
    "random": "a baseline that picks an option: no tokens",
    "text-overlap": "a baseline that compares words: no tokens",
    "signal": "measured signal features, no language model: no tokens",
    "cascade": "tagger, ASR and sentence similarity: no single token count",
    "imported": "another harness's outputs: no tokens, and latency is reading the file, not the model",
}
#: cost.tsv columns after the run keys
COLUMNS = ["backend", "n_outputs", "input_tokens_mean", "input_audio_tokens_mean", "output_tokens_mean",
           "latency_s_mean", "outputs_per_s", "cost_note"]


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


def cost_summary(preds: pd.DataFrame) -> dict:
    """Means over every output of the run (all k samples of a sampled run): tokens in and out, latency,
    and outputs per second of model time (outputs over their summed latency)."""
    if "samples" in preds.columns:
        outs = [s for cell in preds["samples"] for s in json.loads(cell)]
    else:
        outs = preds.reindex(columns=["input_tokens", "output_tokens", "latency_s", "extra"]).to_dict("records")
    backend = str(preds["backend"].dropna().iloc[0]) if "backend" in preds and preds["backend"].notna().any() else ""
    latency = pd.to_numeric(pd.Series([o.get("latency_s") for o in outs], dtype=object), errors="coerce").dropna()
    total = float(latency.sum())
    note = NO_TOKENS.get(backend, "")
    # the baselines fill placeholder counts (0 in, 1 out, or words): no language model's tokens
    inp = None if note else _mean([o.get("input_tokens") for o in outs])
    audio = None if note else _mean([_extra(o).get("input_audio_tokens") for o in outs])
    out = None if note else _mean([o.get("output_tokens") for o in outs])
    if not note and out is None:
        note = f"backend {backend or '?'} reported no token counts for these outputs"
    return {"backend": backend, "n_outputs": len(outs), "input_tokens_mean": inp, "input_audio_tokens_mean": audio,
            "output_tokens_mean": out, "latency_s_mean": _mean(list(latency)),
            "outputs_per_s": len(latency) / total if total > 0 else None, "cost_note": note}


def cost_table(metrics: list[dict]) -> pd.DataFrame:
    """results/tables/cost.tsv: one row per run whose metrics carry a ``cost`` summary, sorted by run."""
    from lalmbench.report.aggregate import RUN_KEYS

    rows = [{**{k: m.get(k) for k in RUN_KEYS}, **{k: m["cost"].get(k) for k in COLUMNS}}
            for m in metrics if isinstance(m.get("cost"), dict)]
    df = pd.DataFrame(rows, columns=RUN_KEYS + COLUMNS)
    return df.sort_values(RUN_KEYS, kind="mergesort").reset_index(drop=True)
