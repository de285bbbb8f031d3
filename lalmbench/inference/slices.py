"""A *slice* is one predictions file: one task's items under one condition and prompt.

A generate job serves every slice of one model; rule ``infer`` writes one slice's file from the
cache. Both compute the same item keys here, so what was generated is exactly what is read back.
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lalmbench.core import io

from lalmbench.inference import prompts
from lalmbench.data.audio import item_audio_paths
from lalmbench.inference.conditions import check_condition, clip_derangement
from lalmbench.inference.fingerprint import file_digest, item_key


@dataclass(frozen=True)
class Slice:
    items: str          # task items (JSONL)
    condition: str
    prompt: str         # template name (recorded in every row)
    template: str       # template file
    out: str            # predictions parquet this slice becomes
    manifest: str | None = None  # decoded-audio cache of the task (rule cache_audio)
    variant: dict = field(default_factory=dict)  # e.g. {"batch_size": 8}: a deliberate re-generation
    #: False for a model that never hears audio (imported outputs): no audio file is read, digested or decoded
    audio: bool = True

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Slice":
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PreparedSlice:
    slice: Slice
    items: list[dict]            # audio_path(s) redirected to the decoded cache where there is one
    keys: list[str]              # item key per item, same order
    template: str
    #: shuffled condition: item id -> the audio file it hears (a list for a multi-clip item)
    audio_source: dict[str, str | list[str]] | None
    #: per item, the content digest of its audio (None under no-audio) and of its rendered prompt: the
    #: predictions rows carry them, so two result folders can say which input differed
    audio_digests: list[str | None] = field(default_factory=list)
    prompt_digests: list[str] = field(default_factory=list)


def _check_ids(items: list[dict], path: str) -> None:
    ids = pd.Series([it["id"] for it in items])
    if ids.duplicated().any():
        dup = sorted(ids[ids.duplicated()].unique().tolist())
        raise io.InputError(f"{path}: duplicate item ids {dup[:5]}")


def _digest(path: str, memo: dict[str, str | None]) -> str | None:
    if path not in memo:
        try:
            memo[path] = file_digest(path)
        except OSError:  # unreadable audio becomes an item error at generation time, naming the file
            memo[path] = None
    return memo[path]


def _redirect(it: dict, files: dict[str, str]) -> dict:
    out = {**it, "audio_path": files.get(it.get("audio_path"), it.get("audio_path"))}
    if it.get("audio_paths"):
        out["audio_paths"] = [files.get(p, p) for p in it["audio_paths"]]
    return out


def _shuffled(items: list[dict], seed: int) -> dict[str, str | list[str]]:
    """Each item's clips replaced by other clips (one derangement over every clip of the task); a
    one-clip item maps to one path, as it always did."""
    other = clip_derangement([p for it in items for p in item_audio_paths(it)], seed, len(items))
    return {it["id"]: ([other[p] for p in it["audio_paths"]] if it.get("audio_paths") else other[it["audio_path"]])
            for it in items}


def sources(it: dict, audio_source: dict[str, str | list[str]] | None) -> list[str]:
    """The audio files an item is played under its condition, in order."""
    src = (audio_source or {}).get(it["id"])
    if src is None:
        return item_audio_paths(it)
    return [src] if isinstance(src, str) else list(src)


def _audio_digest(paths: list[str], digests: dict[str, str], memo: dict[str, str | None]) -> str | None:
    """Content of what the model hears: one clip's digest (keys of one-clip items never change),
    every clip's digest in order for a multi-clip item, so editing any clip re-runs it."""
    ds = [digests.get(p) or _digest(p, memo) for p in paths]
    if not ds:
        return None
    return ds[0] if len(ds) == 1 else "+".join(str(d) for d in ds)


def prepare(sl: Slice, *, model_fp: str, seed: int, sample_rate: int) -> PreparedSlice:
    """Read a slice's items and compute their keys (pure apart from reading the inputs)."""
    check_condition(sl.condition)
    items = io.read_jsonl(sl.items)
    _check_ids(items, sl.items)
    digests: dict[str, str] = {}
    if sl.manifest:
        manifest = io.read_json(sl.manifest)
        if int(manifest["sample_rate"]) != sample_rate:
            raise ValueError(f"{sl.manifest}: cached at {manifest['sample_rate']} Hz, run needs {sample_rate} Hz")
        files = manifest["files"]
        digests = {files[p]: d for p, d in manifest.get("sha1", {}).items() if p in files}
        items = [_redirect(it, files) for it in items]
    audio_source = _shuffled(items, seed) if sl.condition == "shuffled" and sl.audio else None
    template = prompts.load_template(sl.template)
    keys, audio, prompt, memo = [], [], [], {}
    for it in items:
        digest = None
        if hears_audio(sl):
            digest = _audio_digest(sources(it, audio_source), digests, memo)
        text = prompts.render(template, it)
        keys.append(item_key(model_fp=model_fp, condition=sl.condition, prompt_text=text,
                             item=it, audio_digest=digest, sample_rate=sample_rate, variant=sl.variant))
        audio.append(digest)
        prompt.append(hashlib.sha1(text.encode()).hexdigest())
    return PreparedSlice(sl, items, keys, template, audio_source, audio, prompt)


def hears_audio(sl: Slice) -> bool:
    """Whether the slice's model gets audio: not under ``no-audio``, never for a model that reads none."""
    return sl.audio and sl.condition != "no-audio"


def slice_name(sl: Slice) -> str:
    return f"{Path(sl.items).stem} | {sl.condition} | {sl.prompt}" + (
        "".join(f" | {k}={v}" for k, v in sorted(sl.variant.items())))
