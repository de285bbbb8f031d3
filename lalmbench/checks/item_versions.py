"""Were imported outputs made on the items scored here? The file-level revision check of one imported
model on one dataset (rule item_version_check): every output that carries its question, choices or
answer is compared with our item of its id (:mod:`lalmbench.scoring.item_versions`), and outputs whose
id is no item are counted. results/all.tsv carries the result in ``flags`` on the model's rows of the
dataset, so a number scored on a different revision of the benchmark file is never quoted silently."""
from __future__ import annotations

import logging
from typing import Iterable

from lalmbench.core import io
from lalmbench.models.imported import read_file
from lalmbench.scoring import item_versions

log = logging.getLogger(__name__)


def check_item_versions(model_cfg: dict, items_paths: Iterable[str], *, model: str, dataset: str) -> dict:
    """The revision summary of the model's imported file against the dataset's task items it runs
    (an id in several tasks is compared once), with its ``flag`` (None when nothing differs)."""
    f = read_file(model_cfg)
    items = [it for p in items_paths for it in io.read_jsonl(p)]
    summary = item_versions.compare(f.own_items, items, f.outputs)
    items_from = (model_cfg.get("params") or {}).get("items_from", "items")
    summary = {"model": model, "dataset": dataset, "file": str(model_cfg["params"]["predictions"]),
               "item_columns": f.item_columns, "reading": f.reading, "items_from": items_from, **summary}
    summary["flag"] = item_versions.flag(summary, items_from=items_from, answer_is_models=f.answer_is_models)
    log.info("%s on %s: %s", model, dataset, summary["flag"] or
             f"all {summary['compared']:,} outputs that carry their item match ours")
    return summary


def write_item_version_check(model_cfg: dict, items_paths: Iterable[str], out: str, *, model: str,
                             dataset: str) -> dict:
    summary = check_item_versions(model_cfg, items_paths, model=model, dataset=dataset)
    io.write_json(out, summary)
    return summary


def item_version_flags(paths: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """(model, dataset) -> the flag of its check, for results/all.tsv."""
    out = {}
    for p in paths:
        r = io.read_json(p)
        if r.get("flag"):
            out[(r["model"], r["dataset"])] = [r["flag"]]
    return out
