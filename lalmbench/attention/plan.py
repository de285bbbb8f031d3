"""Which runs of a model get their attention captured, and with what settings (no torch here).

A model entry turns capture on with an ``attention:`` block (absent = off). Only the ``hf``
backend can capture (it owns the transformers model). Capture uses one prompt per model, the
first it runs, so the figures compare conditions, not templates.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable

HEADS = ("mean", "all")
DEFAULT_MAX_ITEMS = 4
DEFAULT_MAX_BYTES = "512MB"
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
#: path-safe item directory names (item ids may hold any character)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")


def parse_size(value: Any, key: str) -> int:
    """Bytes from an integer or a string such as ``512MB``, ``2GiB`` (MB = 10^6, MiB = 2^20)."""
    if isinstance(value, bool):
        raise ValueError(f"{key}: expected a size such as 512MB or a number of bytes, got {value!r}")
    if isinstance(value, int):
        n = value
    else:
        m = _SIZE.match(str(value))
        if not m or m.group(2).upper() not in _UNITS:
            raise ValueError(f"{key}: expected a size such as 512MB, 2GB or 1GiB, got {value!r}")
        n = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if n <= 0:
        raise ValueError(f"{key}: must be more than 0 bytes, got {value!r}")
    return n


def megabytes(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


@dataclass(frozen=True)
class AttentionSettings:
    layers: tuple[int, ...] | None  # decoder layer indices (negative counts from the end); None = all
    heads: str                      # "mean" (averaged over heads) | "all"
    max_items: int                  # per task and condition: the first items of the task file
    tasks: tuple[str, ...] | None   # None = every task the model runs
    conditions: tuple[str, ...] | None  # None = every condition the model runs
    max_bytes: int                  # largest attn.npy one item may need

    @classmethod
    def from_cfg(cls, model: str, entry: dict) -> "AttentionSettings | None":
        """The entry's ``attention:`` block, validated; None when capture is off."""
        block = entry.get("attention")
        if block is None:
            return None
        key = f"models.{model}.attention"
        if not isinstance(block, dict):
            raise ValueError(f"{key}: expected a mapping such as {{layers: [0, -1], heads: mean}}, got {block!r}")
        if entry.get("backend") != "hf":
            raise ValueError(f"{key}: attention capture needs backend hf (this model's backend is "
                             f"{entry.get('backend')!r})")
        known = {"layers", "heads", "max_items", "tasks", "conditions", "max_bytes"}
        unknown = sorted(set(block) - known)
        if unknown:
            raise ValueError(f"{key}: unknown key(s) {unknown}; known: {sorted(known)}")
        layers = block.get("layers", "all")
        if layers == "all":
            layers = None
        elif not (isinstance(layers, list) and layers and all(isinstance(x, int) and not isinstance(x, bool)
                                                              for x in layers)):
            raise ValueError(f"{key}.layers: expected 'all' or a list of layer indices such as [0, -1], got {layers!r}")
        heads = block.get("heads", "mean")
        if heads not in HEADS:
            raise ValueError(f"{key}.heads: must be one of {list(HEADS)}, got {heads!r}")
        max_items = block.get("max_items", DEFAULT_MAX_ITEMS)
        if not isinstance(max_items, int) or isinstance(max_items, bool) or max_items < 1:
            raise ValueError(f"{key}.max_items: must be an integer >= 1, got {max_items!r}")

        def names(k: str) -> tuple[str, ...] | None:
            v = block.get(k)
            if v is None:
                return None
            if not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                raise ValueError(f"{key}.{k}: expected a list of names, got {v!r}")
            return tuple(v)

        return cls(layers=None if layers is None else tuple(layers), heads=heads, max_items=max_items,
                   tasks=names("tasks"), conditions=names("conditions"),
                   max_bytes=parse_size(block.get("max_bytes", DEFAULT_MAX_BYTES), f"{key}.max_bytes"))

    def to_dict(self) -> dict:
        return asdict(self)


def attention_models(models: dict[str, dict]) -> list[str]:
    """Model names whose entry has an ``attention:`` block."""
    return sorted(m for m, e in models.items() if e.get("attention") is not None)


def capture_specs(model: str, entry: dict, runs: Iterable) -> list[tuple[str, str, str, str]]:
    """(dataset, task, condition, prompt) captured for ``model``: its runs restricted to the block's
    tasks and conditions, with the first prompt the model runs. A task or condition the block names
    that the model never runs is an error (it would silently capture nothing)."""
    s = AttentionSettings.from_cfg(model, entry)
    if s is None:
        return []
    runs = [r for r in runs if r.model == model]
    key = f"models.{model}.attention"
    for k, have in (("tasks", {r.task for r in runs}), ("conditions", {r.condition for r in runs})):
        wanted = getattr(s, k)
        missing = sorted(set(wanted or ()) - have)
        if missing:
            raise ValueError(f"{key}.{k}: {missing} not run by this model (it runs {sorted(have)})")
    if not runs:
        return []
    prompt = runs[0].prompt
    out = []
    for r in runs:
        if r.prompt != prompt or (s.tasks and r.task not in s.tasks) or (s.conditions and r.condition not in s.conditions):
            continue
        spec = (r.dataset, r.task, r.condition, r.prompt)
        if spec not in out:
            out.append(spec)
    return out


def item_dirname(item_id: str) -> str:
    """An item id as one safe path component (the id itself is kept in meta.json)."""
    name = _UNSAFE.sub("_", str(item_id))
    return name if name not in ("", ".", "..") else f"_{name}"


def item_dir(root: str, model: str, dataset: str, task: str, condition: str, item_id: str) -> str:
    return f"{root}/{model}/{dataset}/{task}/{condition}/{item_dirname(item_id)}"


def manifest_path(model: str, root: str = "results/attention") -> str:
    return f"{root}/{model}/capture.json"
