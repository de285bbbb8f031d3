"""Which slices a model's generate job serves, and where each one's inputs and file live.

Pure functions over the validated config and the run grid, called by rules/inference.smk: the
main runs, then the CircularEval and determinism sweep runs of the model, so one job (one model
load, one GPU allocation) produces every prediction the target needs from that model.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Iterable, Sequence

from lalmbench.core.runs import Run
from lalmbench.inference.fingerprint import file_digest
from lalmbench.inference.slices import Slice


def items_path(dataset: str, task: str) -> str:
    return f"results/tasks/{dataset}/{task}.jsonl"


def manifest_path(dataset: str, task: str) -> str:
    return f"results/audio/{dataset}/{task}.manifest.json"


def template_path(prompt: str) -> str:
    return f"resources/prompts/{prompt}.txt"


def predictions_path(run) -> str:
    return f"results/predictions/{run.key}.parquet"


def circular_items_path(dataset: str, task: str, k: int) -> str:
    return f"results/sweeps/circular/tasks/{dataset}/{task}.k{k}.jsonl"


def circular_predictions_path(run, k: int) -> str:
    return f"results/sweeps/circular/predictions/{run.key}/k{k}.parquet"


def determinism_predictions_path(run, batch_size: int) -> str:
    return f"results/sweeps/determinism/predictions/{run.key}/bs{batch_size}.parquet"


def _slice(run, items: str, out: str, variant: dict | None = None, audio: bool = True) -> Slice:
    return Slice(items=items, condition=run.condition, prompt=run.prompt, template=template_path(run.prompt), out=out,
                 manifest=manifest_path(run.dataset, run.task) if audio else None, variant=dict(variant or {}),
                 audio=audio)


#: a slice in one short list (jobs get hundreds: the whole plan must fit one command-line argument)
Spec = tuple  # (kind, dataset, task, condition, prompt, arg): kind main | circular (arg k) | determinism (arg bs)


def model_specs(model: str, runs: Iterable, circular: tuple[Sequence, int | None] = ((), None),
                determinism: tuple[Sequence, Sequence[int]] = ((), ())) -> list[Spec]:
    """Every slice of ``model``: ``runs`` (main grid), ``circular`` = (sweep runs, k),
    ``determinism`` = (sweep runs, batch sizes). Determinism slices always regenerate at their own
    batch size (a variant), so the comparison never reads predictions made at another size."""
    def spec(kind, r, arg=None):
        return (kind, r.dataset, r.task, r.condition, r.prompt, arg)

    c_runs, k = circular
    d_runs, sizes = determinism
    return ([spec("main", r) for r in runs if r.model == model]
            + [spec("circular", r, int(k)) for r in c_runs if r.model == model]
            + [spec("determinism", r, int(bs)) for r in d_runs if r.model == model for bs in sizes])


def slice_from_spec(model: str, spec: Sequence, *, audio: bool = True) -> Slice:
    """The slice of a spec; ``audio=False`` for a model that never hears audio (imported outputs,
    :func:`lalmbench.models.imported.needs_audio`): it then has no decoded-audio manifest, so its
    jobs depend on no audio file."""
    kind, dataset, task, condition, prompt, arg = spec
    run = Run(model, dataset, task, condition, prompt)
    if kind == "main":
        return _slice(run, items_path(dataset, task), predictions_path(run), audio=audio)
    if kind == "circular":
        return _slice(run, circular_items_path(dataset, task, arg), circular_predictions_path(run, arg), audio=audio)
    if kind == "determinism":
        return _slice(run, items_path(dataset, task), determinism_predictions_path(run, arg), {"batch_size": int(arg)},
                      audio=audio)
    raise ValueError(f"unknown slice kind {kind!r} (main, circular, determinism)")


def fingerprint_path(model: str) -> str:
    """The small file that stands for a model's fingerprint (rule model_fingerprint): rewritten
    exactly when the fingerprint changes, so every predictions file of the model reruns then."""
    return f"results/predictions/{model}/fingerprint.json"


def generate_units(specs: Iterable[Spec], shards: int = 1) -> dict[str, tuple[str, int, int]]:
    """The generate jobs of one model: ``unit`` name -> (dataset, shard i, of n).

    One job per dataset (a dataset that fails to build blocks only its own job) and per shard (the
    dataset's due items split over ``shards`` jobs, each loading the model once). The unit is the
    dataset name, with ``.s<i>of<n>`` when sharded."""
    datasets = sorted({s[1] for s in specs})
    if shards == 1:
        return {d: (d, 1, 1) for d in datasets}
    return {f"{d}.s{i}of{shards}": (d, i, shards) for d in datasets for i in range(1, shards + 1)}


def unit_specs(specs: Iterable[Spec], dataset: str) -> list[Spec]:
    """The slices one generate unit serves: every slice of its dataset (a shard takes its share of each)."""
    return [s for s in specs if s[1] == dataset]


def summary_path(model: str, unit: str) -> str:
    """A generate job's summary (rule generate_<env>)."""
    return f"results/predictions/{model}/generate/{unit}.json"


#: key of a predictions file's parquet metadata that records the digests of its inputs
INPUTS_KEY = "lalmbench.inputs"


def slice_input_files(sl: Slice) -> list[str]:
    """The files a predictions file is made from, besides the cache: items, audio manifest, template."""
    return [p for p in (sl.items, sl.manifest, sl.template) if p]


def input_digests(sl: Slice) -> dict[str, str]:
    return {p: file_digest(p) for p in slice_input_files(sl)}


@lru_cache(maxsize=None)
def _digest_at(path: str, mtime_ns: int, size: int) -> str:
    """A file's digest, once per version of it: many predictions files share one items file or
    template, and planning may ask about all of them."""
    return file_digest(path)


def file_is_current(sl: Slice) -> bool:
    """True when the slice's predictions file exists and none of its inputs changed since it was made:
    each input is older than the file, or has the digest the file recorded (a touched but unchanged
    input, as Snakemake's own checksum check treats it).

    Rule infer reads the generate summary as ``ancient`` only then. Snakemake skips the own check
    (params, mtimes) of every job downstream of a job that must rerun, and reaches them only through
    the rerun's outputs; an ancient input stops that. So a file that is current is left alone when its
    model's generate job reruns for other files, and a file that is missing or out of date is reached
    through the summary. A fingerprint change reaches every file of the model through rule
    model_fingerprint instead."""
    try:
        made = os.stat(sl.out).st_mtime_ns
        newer = [(p, st) for p in slice_input_files(sl) if (st := os.stat(p)).st_mtime_ns > made]
    except FileNotFoundError:
        return False
    if not newer:
        return True
    import pyarrow.parquet as pq

    recorded = json.loads((pq.read_schema(sl.out).metadata or {}).get(INPUTS_KEY.encode(), b"{}"))
    return all(recorded.get(p) == _digest_at(p, st.st_mtime_ns, st.st_size) for p, st in newer)


def slice_inputs(slices: Iterable[Slice]) -> dict[str, list[str]]:
    """Input files of a generate job, by kind (Snakemake named inputs)."""
    slices = list(slices)
    return {"task_items": sorted({s.items for s in slices}), "manifests": sorted({s.manifest for s in slices if s.manifest}),
            "templates": sorted({s.template for s in slices})}


def write_fingerprint(path: str, *, model: str, fingerprint: str) -> None:
    """The model's fingerprint file (what its predictions were made with)."""
    from lalmbench.core import io

    io.write_json(path, {"model": model, "model_fingerprint": fingerprint})
