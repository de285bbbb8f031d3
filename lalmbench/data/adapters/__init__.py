"""Dataset adapters: a real dataset on local disk -> the pipeline's tables (and ready items).

Every adapter is a pure-ish function ``adapt(params, *, dataset) -> Adapted`` that reads the files
named in its config params, checks them strictly (errors name the file, row and what was
expected) and returns the clips / events tables of the data contract, plus ready-made items for
datasets that ship their own questions (TACoBeLAL MCQ, MMAU, Clotho captions). Adapters never
touch the network; :mod:`lalmbench.data.adapters.download` has the optional fetch code.

Registry (lazy, like the task families): ``ADAPTERS`` maps the config's ``adapter:`` name to
its module; ``DERIVED_ADAPTERS`` holds the names whose data the workflow builds itself rather than
reading the user's files. Together they are every name the config schema's ``adapter`` enum may hold
(tests/test_registries.py checks it), and rules/adapters.smk routes datasets by them. Every
benchmark preset (``presets/<name>.yaml``: mmau, mmau_pro, mmar, mmsu, air_bench, sakura,
clotho_aqa, audiocaps, voicebench, questions) is a file-reading adapter name too, read by the
declarative reader.
"""
from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd

ADAPTERS: dict[str, str] = {
    "audioset_strong": "lalmbench.data.adapters.audioset_strong",
    "tacobelal": "lalmbench.data.adapters.tacobelal",
    "clotho": "lalmbench.data.adapters.clotho",
    "generic": "lalmbench.data.adapters.generic",
}

# adapter name -> how its dataset is made, so that the rules need no list of their own:
# "synthetic" renders audio (lalmbench.data.synth), "mix" mixes another dataset's clips (lalmbench.data.mixing).
DERIVED_ADAPTERS: dict[str, str] = {
    "synth_trivial": "synthetic",
    "synth_scenes": "synthetic",
    "mix": "mix",
}


def reads_files(name: str) -> bool:
    """True for adapters that read the user's files (rule adapt_dataset), False for derived datasets."""
    from lalmbench.data.adapters.benchmarks import is_preset, preset_names

    if name not in ADAPTERS and name not in DERIVED_ADAPTERS and not is_preset(name):
        known = ", ".join(sorted({*ADAPTERS, *DERIVED_ADAPTERS, *preset_names()}))
        raise ValueError(f"unknown dataset adapter {name!r} (known: {known})")
    return name not in DERIVED_ADAPTERS

CLIP_COLUMNS = ["clip_id", "audio_path", "duration_s", "sample_rate", "split", "source"]
EVENT_COLUMNS = ["clip_id", "onset_s", "offset_s", "label", "caption", "source"]


@dataclass
class Adapted:
    """An adapter's tables. ``events_file`` / ``clips_file`` name the user's file a table was read
    from, and that table's ``source_row`` column holds each row's 1-based data row there, so that
    validation errors name the file and row the user can open (not the derived table)."""

    clips: pd.DataFrame
    events: pd.DataFrame
    items: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    events_file: str | None = None
    clips_file: str | None = None


def empty_events() -> pd.DataFrame:
    return pd.DataFrame({"clip_id": pd.Series([], dtype="string"), "onset_s": pd.Series([], dtype=float),
                         "offset_s": pd.Series([], dtype=float), "label": pd.Series([], dtype="string"),
                         "caption": pd.Series([], dtype="string"), "source": pd.Series([], dtype="string")})


def adapter_names() -> list[str]:
    from lalmbench.data.adapters.benchmarks import preset_names

    return sorted(set(ADAPTERS) | set(preset_names()))


def get_adapter(name: str) -> Callable[..., Adapted]:
    from lalmbench.data.adapters import benchmarks

    if benchmarks.is_preset(name):
        return functools.partial(benchmarks.adapt, name=name)
    if name not in ADAPTERS:
        raise ValueError(f"unknown dataset adapter {name!r} (known: {', '.join(adapter_names())})")
    return importlib.import_module(ADAPTERS[name]).adapt


def user_files(name: str, params: dict | None) -> list[str]:
    """The user's files a dataset's adapter reads: the values of the adapter's ``FILE_PARAMS`` (a path,
    or a dict/list of paths such as ``split_files``) that exist as files. Rule adapt_dataset takes
    them as inputs, so editing one (a fixed gold answer) reruns that dataset and what depends on it.
    A missing file is left to the adapter, whose error names the config key and how to get it."""
    from lalmbench.data.adapters import benchmarks

    module = benchmarks if benchmarks.is_preset(name) else (
        importlib.import_module(ADAPTERS[name]) if name in ADAPTERS else None)
    names = getattr(module, "FILE_PARAMS", ())
    found: list[str] = []
    for key in names:
        value = (params or {}).get(key)
        values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
        found += [str(v) for v in values if isinstance(v, str) and v and os.path.isfile(v)]
    return sorted(set(found))


def adapt(name: str, params: dict, *, dataset: str) -> Adapted:
    return get_adapter(name)(dict(params or {}), dataset=dataset)
