"""Which slices a model's generate job serves, and where each one's inputs and file live.

Pure functions over the validated config and the run grid, called by rules/inference.smk: the
main runs, then the CircularEval and determinism sweep runs of the model, so one job (one model
load, one GPU allocation) produces every prediction the target needs from that model.
"""
from __future__ import annotations

from typing import Iterable, Sequence

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


def _slice(run, items: str, out: str, variant: dict | None = None) -> Slice:
    return Slice(items=items, condition=run.condition, prompt=run.prompt, template=template_path(run.prompt), out=out,
                 manifest=manifest_path(run.dataset, run.task), variant=dict(variant or {}))


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


def slice_from_spec(model: str, spec: Sequence) -> Slice:
    from lalmbench.config import Run

    kind, dataset, task, condition, prompt, arg = spec
    run = Run(model, dataset, task, condition, prompt)
    if kind == "main":
        return _slice(run, items_path(dataset, task), predictions_path(run))
    if kind == "circular":
        return _slice(run, circular_items_path(dataset, task, arg), circular_predictions_path(run, arg))
    if kind == "determinism":
        return _slice(run, items_path(dataset, task), determinism_predictions_path(run, arg), {"batch_size": int(arg)})
    raise ValueError(f"unknown slice kind {kind!r} (main, circular, determinism)")


def request_path(sl: Slice) -> str:
    """The small file that stands for one slice's inputs (see rules/inference.smk: request)."""
    return sl.out.removesuffix(".parquet") + ".request.json"


def slice_inputs(slices: Iterable[Slice]) -> dict[str, list[str]]:
    """Input files of a generate job, by kind (Snakemake named inputs)."""
    slices = list(slices)
    return {"requests": [request_path(s) for s in slices], "task_items": sorted({s.items for s in slices}), "manifests": sorted({s.manifest for s in slices if s.manifest}),
            "templates": sorted({s.template for s in slices})}


def write_request(path: str, *, model: str, spec: str, fingerprint: str, log: str | None = None) -> None:
    """A slice's request: rewritten exactly when the slice's inputs or its model's fingerprint change,
    so each predictions file reruns for its own changes only (rule infer depends on it directly,
    on the model's generate job only for ordering)."""
    from lalmbench import io

    import json

    io.write_json(path, {"model": model, "spec": json.loads(spec), "model_fingerprint": fingerprint})
    if log:
        io.write_text(log, f"{path}: {model} {spec} fingerprint {fingerprint}\n")
