"""Benchmark presets: each published benchmark as data (``presets/<name>.yaml``), read by the one
declarative reader (:mod:`lalmbench.data.adapters.reader`).

A dataset config ``{adapter: mmau_pro, params: {items: ..., audio_root: ...}}`` is the preset merged
with its params (params win; a preset's ``by_param`` entry, e.g. AIR-Bench's ``split: chat`` or
VoiceBench's ``subset: ifeval``, is merged in between). Besides the reader's keys a preset names
``official`` (the benchmark's own scorer in :mod:`lalmbench.scoring.official`, or a list of them, one
per item kind; an entry may be ``{scorer, <settings>}``), ``official_also`` (the rules of other reports
that score the benchmark differently, picked by naming them in the dataset's ``official:``), ``task_family``
(what the benchmark measures: asr, translation, speech_emotion, vocal_sound, acoustic_scene, music_genre,
...), ``layout`` (its release layout in words, named by errors), ``breakdowns`` (the
meta fields of the paper's table), ``kinds`` (the item kinds it can hold: mcq, open, instruction),
``multi_audio`` (items may carry several clips), and ``source`` / ``how`` / ``size`` for the docs.
"""
from __future__ import annotations

import difflib
from functools import lru_cache
from pathlib import Path

import yaml

from lalmbench.data.adapters import Adapted

PRESET_DIR = Path(__file__).with_name("presets")
#: params that pick a ``by_param`` entry, with their default value
SELECTORS = {"split": "foundation", "subset": None}


#: params naming the user's files a preset reads: a question file given as ``items`` becomes the adapt
#: job's input, so an edit reruns it (a folder of question files, and audio_root, are not tracked here)
FILE_PARAMS = ("items",)


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


@lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return yaml.safe_load((PRESET_DIR / f"{name}.yaml").read_text(encoding="utf-8"))


def preset(name: str, params: dict | None = None, *, selectors_required: bool = True) -> dict:
    """The preset ``name`` resolved for ``params`` (its ``by_param`` choice merged in, then params).
    ``selectors_required=False``: a ``by_param`` key without a value is left unresolved (what a preset
    says about scoring does not depend on which LibriSpeech subset is read) instead of an error."""
    if name not in preset_names():
        close = difflib.get_close_matches(name, preset_names(), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown benchmark preset {name!r}{hint} (known: {', '.join(preset_names())})")
    spec = dict(_load(name), preset=name)
    spec.setdefault("source_name", name)
    params = dict(params or {})
    for key, choices in (spec.pop("by_param", None) or {}).items():
        value = params.get(key, SELECTORS.get(key))
        if value is None and not selectors_required:
            continue
        if value is None:
            raise ValueError(f"preset {name!r} needs params.{key} (one of {', '.join(choices)})")
        if value not in choices:
            close = difflib.get_close_matches(str(value), list(choices), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"preset {name!r}: params.{key} {value!r} unknown{hint} (known: {', '.join(choices)})")
        spec.update(choices[value] or {})
        spec[key] = value
    if "variant" not in params and "hop" in params:      # SAKURA: hop: single | multi | both
        params["variant"] = params.pop("hop")
    spec.update(params)
    spec["source"] = name
    return spec


def is_preset(name: str) -> bool:
    return (PRESET_DIR / f"{name}.yaml").is_file()


def official_protocol(dataset_cfg: dict) -> dict:
    """For a dataset's config: {official: scorer name or None, breakdowns: [meta fields], kinds: [...],
    multi_audio: bool} -- what the scoring rule and the config checks ask of a dataset."""
    name = dataset_cfg.get("adapter")
    if not name or not is_preset(name):
        return {"official": None, "breakdowns": [], "kinds": ["mcq"], "multi_audio": False}
    spec = preset(name, dict(dataset_cfg.get("params") or {}), selectors_required=False)
    out = {"official": spec.get("official"), "breakdowns": list(spec.get("breakdowns") or []),
           "kinds": list(spec.get("kinds") or ["mcq"]), "multi_audio": bool(spec.get("multi_audio"))}
    if spec.get("official_also"):   # another report's rule for the same benchmark, chosen by official:
        out["official_also"] = list(spec["official_also"])
    return out


def adapt(params: dict, *, dataset: str, name: str) -> Adapted:
    from lalmbench.data.adapters.reader import read_questions

    res = read_questions(preset(name, params), dataset=dataset)
    res.stats["preset"] = name
    return res
