"""Generate every missing prediction of one model, loading the model once.

One job serves all slices (tasks x conditions x prompts, sweep variants) of a model: it computes
each item's key, skips what the cache already holds, loads the model only if anything is left,
and appends finished rows to the cache after every batch. So a GPU allocation loads a checkpoint
once, an edit regenerates only the items whose inputs changed, and a killed job resumes where
it stopped. An item whose call failed is retried once alone (a long clip that OOMs in a batch
often fits alone); the job fails only when a slice's share of failed items exceeds
``max_error_rate``, after every other slice has been served.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import soundfile as sf

from lalmbench.core import io

from lalmbench.inference import prompts
from lalmbench.data.audio import item_audio_paths, load_audio
from lalmbench.inference.conditions import apply_condition, clip_seed_id, join_clips
from lalmbench.inference.cache import PredictionCache, record_environment
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.job_cost import job_figures
from lalmbench.inference.sampling import sample_key, sample_seed, samples_of, slice_samples
from lalmbench.inference.slices import PreparedSlice, Slice, hears_audio, prepare, slice_name, sources
from lalmbench.models.base import Model, ModelInput, ModelOutput, load_model
from lalmbench.scoring.parse import parse_answer
from lalmbench.core.progress import ProgressLog
from lalmbench.core.provenance import environment, package_versions

if TYPE_CHECKING:  # the opt-in tracking study hands a tracker in; inference never imports it
    from lalmbench.tracking.base import Tracker

log = logging.getLogger("lalmbench.inference")


def safe_text(value: Any) -> tuple[str | None, str | None]:
    """(text that survives UTF-8 files and parquet, what was repaired or None).

    Models (and servers) can emit lone surrogates or raw bytes; one such output must not crash a
    job: it is stored with the offending code points escaped (``\\ud83d``) and flagged."""
    if value is None:
        return None, None
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value).decode("utf-8", "backslashreplace")
        return text, "raw bytes decoded as UTF-8 (invalid bytes escaped)"
    text = str(value)
    try:
        text.encode("utf-8")
        return text, None
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8"), "unencodable code points escaped"


def _duration(path: str) -> float:
    try:
        return float(sf.info(path).duration)
    except Exception:  # unreadable audio surfaces as an item error, with its path
        return 0.0


#: default silence between clips when a model that takes one audio hears a multi-clip item
MULTI_AUDIO_GAP_S = 1.0


def multi_audio_settings(model: Model) -> tuple[bool, float]:
    """(whether the model renders several audio entries in one turn, the fallback's gap in seconds)."""
    return bool(getattr(model, "multi_audio", False)), float(model.cfg.get("multi_audio_gap_s", MULTI_AUDIO_GAP_S))


def build_input(it: dict, *, condition: str, template: str, sample_rate: int, seed: int,
                audio_source: dict[str, str | list[str]] | None = None, multi_audio: bool = False,
                gap_s: float = MULTI_AUDIO_GAP_S, hears: bool = True, sample_seed: int | None = None) -> ModelInput:
    """The model's input for one item. Several clips go to a ``multi_audio`` model as ``audios``
    (``audio`` = the first); any other model gets them joined with ``gap_s`` of silence. ``hears``
    False (a model that reads no audio: imported outputs): no audio file is opened. ``sample_seed``:
    the seed of this sample when the entry draws several per item."""
    audio = audios = None
    if condition != "no-audio" and hears:
        paths = sources(it, audio_source)
        if not paths:
            raise io.InputError(f"item {it['id']!r}: no audio_path")
        clips = [apply_condition(condition, load_audio(p, sample_rate), seed=seed, item_id=clip_seed_id(it["id"], k))
                 for k, p in enumerate(paths)]
        if len(clips) == 1:
            audio = clips[0]
        elif multi_audio:
            audio, audios = clips[0], clips
        else:
            audio = join_clips(clips, gap_s=gap_s, sample_rate=sample_rate)
    return ModelInput(id=it["id"], prompt=prompts.render(template, it), question=it["question"],
                      options=it.get("options") or [], audio=audio, sample_rate=sample_rate,
                      task=it.get("task", ""), meta=it.get("meta", {}), audios=audios, seed=sample_seed)


def multi_audio_record(it: dict, *, condition: str, multi_audio: bool, gap_s: float,
                       hears: bool = True) -> dict | None:
    """How a multi-clip item reached the model (kept in the prediction row's ``extra``), or None."""
    n = len(item_audio_paths(it))
    if n < 2 or condition == "no-audio" or not hears:
        return None
    return ({"clips": n, "rendering": "separate"} if multi_audio
            else {"clips": n, "rendering": "concatenated", "gap_s": gap_s})


def _run_batch(model: Model, inputs: list[ModelInput]) -> tuple[list[ModelOutput], float]:
    t0 = time.perf_counter()
    try:
        outs = model.generate(inputs)
        if len(outs) != len(inputs):
            raise RuntimeError(f"backend returned {len(outs)} outputs for {len(inputs)} inputs")
    except Exception as exc:  # a whole-batch failure becomes per-item errors, retried alone below
        outs = [ModelOutput(raw_output=None, error=f"{type(exc).__name__}: {exc}") for _ in inputs]
    return outs, time.perf_counter() - t0


def infer_chunk(model: Model, chunk: list[dict], *, condition: str, template: str, sample_rate: int, seed: int,
                audio_source: dict[str, str] | None, hears: bool = True,
                samples: Sequence[int] | None = None) -> list[dict]:
    """One batch -> one row per item (raw output or error, tokens, latency), failures retried alone.
    ``hears`` False: the model reads no audio (imported outputs), so none is loaded. ``samples``: the
    sample index of each entry of ``chunk`` when the model draws several per item (one item may then
    appear several times); each row records its ``sample`` and is drawn with its own seed."""
    inputs: list[ModelInput | None] = []
    errors: dict[int, str] = {}
    multi, gap_s = multi_audio_settings(model)
    for k, it in enumerate(chunk):
        try:
            inputs.append(build_input(it, condition=condition, template=template, sample_rate=sample_rate,
                                      seed=seed, audio_source=audio_source, multi_audio=multi, gap_s=gap_s,
                                      hears=hears,
                                      sample_seed=None if samples is None else sample_seed(seed, it["id"], samples[k])))
        except Exception as exc:  # unreadable audio etc.: an item error, not a crashed job
            errors[k] = f"{type(exc).__name__}: {exc}"
            inputs.append(None)
    ready = [k for k, x in enumerate(inputs) if x is not None]
    outs, elapsed = _run_batch(model, [inputs[k] for k in ready]) if ready else ([], 0.0)
    per_item = elapsed / max(len(ready), 1)
    by_pos = {k: (o, per_item) for k, o in zip(ready, outs)}
    for k in ready:
        o, _ = by_pos[k]
        if o.error is not None and len(ready) > 1:
            (o2,), t2 = _run_batch(model, [inputs[k]])
            by_pos[k] = (o2, t2)
    rows = []
    for k, it in enumerate(chunk):
        o, lat = (ModelOutput(raw_output=None, error=errors[k]), 0.0) if k in errors else by_pos[k]
        raw, raw_fix = safe_text(o.raw_output)
        err, err_fix = safe_text(o.error)
        extra = dict(getattr(o, "extra", None) or {})
        clips = multi_audio_record(it, condition=condition, multi_audio=multi, gap_s=gap_s, hears=hears)
        if clips:
            extra["multi_audio"] = clips
        if raw_fix or err_fix:
            extra["output_repaired"] = raw_fix or err_fix
        rows.append({"id": it["id"], "raw_output": raw, "error": err, "latency_s": round(lat, 6),
                     "input_tokens": o.input_tokens, "output_tokens": o.output_tokens,
                     "extra": io.dumps_json(extra) if extra else None,
                     **({} if samples is None else {"sample": int(samples[k])})})
    return rows


class SliceErrors(RuntimeError):
    """Some slices failed more items than max_error_rate allows (the rest were served)."""


def in_shard(key: str, shard: tuple[int, int]) -> bool:
    """Whether shard ``(i, n)`` (1-based) serves the item with this key: a hash of the key, so every
    shard job computes the same split without talking to the others, and the split of an item never
    depends on which other items are due."""
    i, n = shard
    return n == 1 or int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % n == i - 1


def generate(*, model_name: str, model_cfg: dict, slices: Sequence[Slice], cache_path: str | Path,
             sample_rate: int = 16000, max_error_rate: float = 0.0, model: Model | None = None,
             tracker: Tracker | None = None, shard: tuple[int, int] = (1, 1),
             other_cache_files: Sequence[str | Path] = ()) -> dict:
    """Fill the cache for every slice; return a summary (per slice: items, cached, generated, errors).
    ``shard`` ``(i, n)``: serve only the items of shard i of n (lalmbench.inference.model_job.in_shard);
    ``other_cache_files``: the fingerprint's files other jobs write, whose items count as done.
    ``tracker`` (tracking on) receives live progress every ``tracking.log_every`` items. The summary's
    ``job`` holds its wall time, outputs generated and GPUs requested (lalmbench.inference.job_cost)."""
    t_start = time.perf_counter()
    model_fp = model_fingerprint(model_cfg)
    seed = int(model_cfg.get("seed", 0))
    prepared = [prepare(sl, model_fp=model_fp, seed=seed, sample_rate=sample_rate) for sl in slices]
    for p in prepared:  # this shard's share of each slice
        mine = [j for j, k in enumerate(p.keys) if in_shard(k, shard)]
        p.items, p.keys = [p.items[j] for j in mine], [p.keys[j] for j in mine]
        p.audio_digests, p.prompt_digests = [p.audio_digests[j] for j in mine], [p.prompt_digests[j] for j in mine]
    cache = PredictionCache(cache_path, other_cache_files)
    ks = [slice_samples(p.slice.variant, model_cfg) for p in prepared]
    todo = [[(it, sk, j) for it, k in zip(p.items, p.keys) for j, sk in _sample_keys(k, k_p)
             if not cache.done(sk)] for p, k_p in zip(prepared, ks)]
    n_todo = sum(map(len, todo))
    n_items = sum(len(p.items) * k_p for p, k_p in zip(prepared, ks))
    log.info("%s: %d slices, %d %s, %d in the cache (%s), %d to generate", model_name, len(prepared), n_items,
             "items" if max(ks, default=1) == 1 else f"outputs ({samples_of(model_cfg)} samples per item)",
             n_items - n_todo, cache.path, n_todo)
    summary = {"model": model_name, "model_fingerprint": model_fp, "cache": str(cache.path), "model_loads": 0,
               "shard": f"{shard[0]}/{shard[1]}", "slices": []}
    try:
        if n_todo:
            if model is None:
                log.info("loading model %s (backend %s, %s) once for %d items in %d slices", model_name,
                         model_cfg.get("backend"), model_cfg.get("model_id", model_name), n_todo,
                         sum(bool(t) for t in todo))
                t0 = time.perf_counter()
                model = load_model(model_name, model_cfg)
                log.info("model %s loaded in %.1f s", model_name, time.perf_counter() - t0)
                summary["model_loads"] = 1
            env_digest, env_record = environment(str(model_cfg.get("env", "core")))
            record_environment(cache.path, env_digest, env_record)
            common = {**_provenance(model, seed), "model_fingerprint": model_fp, "environment": env_digest}
            progress = ProgressLog(n_todo, model_name, log, tracker=tracker)
            for p, items_todo in zip(prepared, todo):
                if items_todo:
                    _serve(model, p, items_todo, cache, common, model_cfg, sample_rate, seed, progress)
    finally:
        cache.close()
        if model is not None:
            model.close()
    _check_templates_unchanged(prepared, cache.path)
    failed = []
    for p, items_todo, k_samples in zip(prepared, todo, ks):
        keys = [sk for k in p.keys for _, sk in _sample_keys(k, k_samples)]
        n_err = sum(cache.rows[k].get("error") is not None for k in keys)
        n_new = len(items_todo)
        summary["slices"].append({"out": p.slice.out, "items": len(p.items), "cached": len(keys) - n_new,
                                  "generated": n_new, "errors": n_err,
                                  **({"samples": k_samples} if k_samples > 1 else {})})
        what = "items" if k_samples == 1 else "samples"
        if n_err:
            first = next(cache.rows[k]["error"] for k in keys if cache.rows[k].get("error") is not None)
            log.warning("%s: %d/%d %s failed; first error: %s", slice_name(p.slice), n_err, len(keys), what, first)
        if n_err / max(len(keys), 1) > max_error_rate:
            failed.append(f"{slice_name(p.slice)}: {n_err}/{len(keys)} {what} failed")
    summary["job"] = job_figures(time.perf_counter() - t_start, n_todo,
                                 int((model_cfg.get("resources") or {}).get("gpus") or 0))
    if failed:
        raise SliceErrors(f"max_error_rate={max_error_rate} exceeded in {len(failed)} slice(s): " + "; ".join(failed)
                          + f". Finished items are kept in {cache.path}; only failed ones run next time.")
    return summary


def _sample_keys(key: str, k: int) -> list[tuple[int | None, str]]:
    """(sample index, cache key) of each output an item needs: its one key (index None) when k is 1."""
    return [(None, key)] if k == 1 else [(j, sample_key(key, j)) for j in range(k)]


class InputsChanged(RuntimeError):
    """A prompt template was edited while the job ran: its summary must not be written, or Snakemake
    would take the job as newer than the edit and never run it again for the new text."""


def _check_templates_unchanged(prepared: Sequence[PreparedSlice], cache_path: Path) -> None:
    changed = sorted({p.slice.template for p in prepared
                      if Path(p.slice.template).is_file() and prompts.load_template(p.slice.template) != p.template}
                     | {p.slice.template for p in prepared if not Path(p.slice.template).is_file()})
    if changed:
        raise InputsChanged(f"prompt template(s) {', '.join(changed)} changed while this job ran; the items made "
                            f"with the old text are kept in {cache_path}. Run again: this job reruns and generates "
                            "the items for the new text")


def _provenance(model: Model, seed: int) -> dict:
    info = model.provenance()
    return {"seed": seed, "model_id": model.model_id, "model_revision": model.model_revision,
            "backend": model.backend, "versions": json.dumps(package_versions(), sort_keys=True),
            "backend_info": io.dumps_json(info) if info else None}


def _serve(model: Model, p: PreparedSlice, todo: list[tuple[dict, str, int | None]], cache: PredictionCache,
           common: dict, model_cfg: dict, sample_rate: int, seed: int, progress: ProgressLog) -> None:
    sl = p.slice
    batch_size = int(sl.variant.get("batch_size", model_cfg.get("batch_size", 1)))
    if hears_audio(sl):  # length-sorted batches: less padding, same results per item
        todo = sorted(todo, key=lambda t: (sum(map(_duration, item_audio_paths(t[0]))), t[0]["id"], t[2] or 0))
    log.info("%s: generating %d of %d items (batch size %d)", slice_name(sl), len(todo), len(p.items), batch_size)
    stamp = {**common, "batch_size": batch_size, "condition": sl.condition, "prompt": sl.prompt}
    for start in range(0, len(todo), batch_size):
        chunk = todo[start:start + batch_size]
        sampled = [j for _, _, j in chunk]
        rows = infer_chunk(model, [it for it, _, _ in chunk], condition=sl.condition, template=p.template,
                           sample_rate=sample_rate, seed=seed, audio_source=p.audio_source, hears=sl.audio,
                           samples=None if sampled[0] is None else sampled)
        cache.append({**r, **stamp, "key": k} for r, (_, k, _) in zip(rows, chunk))
        judged, correct = _judge(chunk, rows) if progress.tracker else (0, 0)
        progress.update(len(chunk), latency_s=sum(r["latency_s"] for r in rows), judged=judged, correct=correct)


def _judge(chunk: list[tuple[dict, str, int | None]], rows: list[dict]) -> tuple[int, int]:
    """(MCQ outputs with a gold label, how many the default parser reads as correct): the live
    accuracy of a tracked model job. The scoring job's task-specific parser gives the real number."""
    judged = correct = 0
    for (it, _, _), r in zip(chunk, rows):
        if it.get("options") and it.get("answer_label") is not None:
            judged += 1
            correct += r["error"] is None and parse_answer(r["raw_output"], it["options"],
                                                           question=it.get("question")).label == it["answer_label"]
    return judged, correct
