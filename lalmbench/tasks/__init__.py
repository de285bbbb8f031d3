"""Task builders: events/clips tables (or a generator) -> MCQ / open items in the item contract.

Each family lives in its own module and registers a builder with :func:`register_family`.
A builder is a pure function::

    build(events: pd.DataFrame, clips: pd.DataFrame, params: dict, *, seed: int,
          dataset: str, task: str) -> tuple[list[dict], dict]

returning the items (see :mod:`lalmbench.core.items`) and a stats dict (rows read, dropped with
reasons, items written, answer-position histogram). Same inputs + seed -> identical items.
"""
from __future__ import annotations

import importlib
from typing import Callable

import pandas as pd

Builder = Callable[..., tuple[list[dict], dict]]

# family -> module that registers it (lazy, so one family's deps never load for another)
FAMILY_MODULES: dict[str, str] = {
    "order": "lalmbench.tasks.order",
    "next": "lalmbench.tasks.next",
    "duration": "lalmbench.tasks.duration",
    "count": "lalmbench.tasks.count",
    "presence": "lalmbench.tasks.presence",
    "grounding": "lalmbench.tasks.grounding",
    "louder": "lalmbench.tasks.louder",
    "import": "lalmbench.tasks.imported",
}

_FAMILIES: dict[str, Builder] = {}


def register_family(name: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        _FAMILIES[name] = fn
        return fn

    return deco


def get_builder(family: str) -> Builder:
    if family not in _FAMILIES:
        if family not in FAMILY_MODULES:
            known = ", ".join(sorted(FAMILY_MODULES))
            raise ValueError(f"unknown task family {family!r} (known: {known})")
        importlib.import_module(FAMILY_MODULES[family])
    return _FAMILIES[family]


def family_params(family: str) -> frozenset[str]:
    """The param names a builder family accepts (its module's ``PARAMS`` plus the shared ones), so that
    config validation rejects a typo before any job runs; the builder checks them again at run time."""
    from lalmbench.tasks.prep import COMMON_PARAMS

    if family not in FAMILY_MODULES:
        raise ValueError(f"unknown task family {family!r} (known: {', '.join(sorted(FAMILY_MODULES))})")
    return frozenset(importlib.import_module(FAMILY_MODULES[family]).PARAMS) | COMMON_PARAMS


def build_items(family: str, events: pd.DataFrame, clips: pd.DataFrame, params: dict, *,
                seed: int, dataset: str, task: str) -> tuple[list[dict], dict]:
    return get_builder(family)(events, clips, params, seed=seed, dataset=dataset, task=task)
