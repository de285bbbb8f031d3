"""Write one slice's predictions file from the cache (rule ``infer``: CPU only, no model)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pandas as pd

from lalmbench.core import io
from lalmbench.inference.cache import merge_rows, read_environments
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.sampling import run_fingerprint, sample_key, slice_samples
from lalmbench.inference.plan import INPUTS_KEY, file_is_current, input_digests
from lalmbench.inference.slices import Slice, prepare

FINGERPRINT_KEY = "lalmbench.model_fingerprint"
#: metadata key: the environment records (lalmbench.core.provenance.environment) the rows' digests name
ENVIRONMENTS_KEY = "lalmbench.environments"
PREDICTION_COLUMNS = ["id", "raw_output", "error", "latency_s", "input_tokens", "output_tokens", "batch_size",
                      "seed", "model_id", "model_revision", "backend", "condition", "prompt", "versions", "backend_info",
                      "extra", "key", "model_fingerprint", "audio_digest", "prompt_digest", "environment"]
#: what each of an item's k samples keeps in the ``samples`` column (JSON list, sample order), present
#: only when the entry draws k > 1 samples (lalmbench.inference.sampling)
SAMPLE_FIELDS = ("raw_output", "error", "input_tokens", "output_tokens", "latency_s", "extra")


def slice_frame(sl: Slice, *, model_cfg: dict, cache_path: str | Path | Sequence[str | Path],
                sample_rate: int) -> pd.DataFrame:
    """The slice's rows in item order, from the cache file(s) of the model fingerprint (every
    dataset's and shard's); a key missing from them is an error, never a dropped row."""
    p = prepare(sl, model_fp=model_fingerprint(model_cfg), seed=int(model_cfg.get("seed", 0)),
                sample_rate=sample_rate)
    paths = [cache_path] if isinstance(cache_path, (str, Path)) else list(cache_path)
    k_samples = slice_samples(sl.variant, model_cfg)
    per_item = [[sample_key(k, j) for j in range(k_samples)] for k in p.keys]
    rows = merge_rows(paths, {sk for keys in per_item for sk in keys}, live=False)
    missing = [it["id"] for it, keys in zip(p.items, per_item) if any(sk not in rows for sk in keys)]
    if missing:
        where = ", ".join(map(str, paths)) or "the prediction cache (no file)"
        raise io.InputError(f"{where}: no prediction for {len(missing)} of {len(p.items)} items of {sl.items} "
                            f"({sl.condition}, {sl.prompt}), first {missing[:3]}: the model's generate job has not "
                            f"made them (was the cache deleted or moved, or a prompt template edited while it ran?); "
                            f"delete the model's results/predictions/<model>/generate/ summaries so those jobs run "
                            f"again and generate them")
    # the cache is shared by slices with identical inputs: this slice's names go in its file
    out = [{**rows[k], "id": it["id"], "condition": sl.condition, "prompt": sl.prompt, "audio_digest": audio,
            "prompt_digest": prompt} for it, k, audio, prompt in zip(p.items, p.keys, p.audio_digests, p.prompt_digests)]
    if k_samples == 1:
        return pd.DataFrame(out).reindex(columns=PREDICTION_COLUMNS)
    for row, keys in zip(out, per_item):  # the row itself is sample 0; every sample (0 too) under samples
        row["samples"] = json.dumps([{c: rows[sk].get(c) for c in SAMPLE_FIELDS} for sk in keys], sort_keys=True)
    return pd.DataFrame(out).reindex(columns=PREDICTION_COLUMNS + ["samples"])


def materialize(sl: Slice, *, model_cfg: dict, cache_path: str | Path | Sequence[str | Path], sample_rate: int = 16000) -> pd.DataFrame:
    """Write the slice's file, with the digests of the inputs it was made from in its metadata (so a
    touched but unchanged input is recognised: lalmbench.inference.plan.file_is_current) and the
    environment records its rows were generated in."""
    df = slice_frame(sl, model_cfg=model_cfg, cache_path=cache_path, sample_rate=sample_rate)
    paths = [cache_path] if isinstance(cache_path, (str, Path)) else list(cache_path)
    known = read_environments(paths)
    envs = {d: known[d] for d in sorted(set(df["environment"].dropna())) if d in known}
    io.write_parquet(sl.out, df, metadata={INPUTS_KEY: json.dumps(input_digests(sl), sort_keys=True),
                                           FINGERPRINT_KEY: run_fingerprint(model_fingerprint(model_cfg), model_cfg),
                                           ENVIRONMENTS_KEY: json.dumps(envs, sort_keys=True)})
    return df


def is_current(sl: Slice, model_fp: str) -> bool:
    """The slice's file exists, its inputs are unchanged (lalmbench.inference.plan.file_is_current)
    and it was made with this model fingerprint (:func:`lalmbench.inference.sampling.run_fingerprint`:
    with k when k > 1): writing it again would give the same rows."""
    return file_is_current(sl) and io.parquet_metadata(sl.out).get(FINGERPRINT_KEY) == model_fp
