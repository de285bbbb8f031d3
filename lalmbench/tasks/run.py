"""Rule entry for event-based task building: read tables, validate, build, write atomically."""
from __future__ import annotations

import logging

import pandas as pd

from lalmbench.core import io
from lalmbench.core.memory import use_system_pool
from lalmbench.tasks import build_items
from lalmbench.core.items import write_items
from lalmbench.tasks.options import ItemRows, import_in_background

log = logging.getLogger("lalmbench.tasks")


def build_task_files(cfg: dict, *, dataset: str, task: str, clips_path: str, events_path: str,
                     items_path: str, stats_path: str) -> None:
    """``cfg`` = {task, dataset, seed, scale, sample_rate} (the rule's params)."""
    use_system_pool()
    import_in_background("scipy.special")          # for the stats' chi-square p-value, at the end
    from lalmbench.data.annotations import (VALIDATED_KEY, fit_events_to_clips, same_values, validate_clips,
                                       validate_events, validated_stamp)

    clips = io.read_parquet(clips_path)
    # ids and texts as codes into their distinct values (the builders work on codes)
    events = io.read_parquet_with_copy(events_path, "caption", of="label", categories=("clip_id", "label", "caption"))
    if {"label", "caption"} <= set(events.columns) and same_values(events["caption"], events["label"]):
        events["caption"] = events["label"]      # captions that are the labels (TACoBeLAL): one copy, not two
    stamp = io.parquet_metadata(events_path).get(VALIDATED_KEY)
    if stamp is None or stamp != validated_stamp(clips, events):    # not checked by the step that wrote them
        validate_clips(clips, clips_path)
        validate_events(events, events_path, clips["clip_id"])
    rows_read = len(events)
    events, late, cut = fit_events_to_clips(events, clips)
    tcfg = cfg["task"]
    items, stats = build_items(tcfg["family"], events, clips, dict(tcfg["params"]), seed=int(cfg["seed"]),
                               dataset=dataset, task=task)
    # counted with the builder's own reasons: rows_read is the table's, drops include the late events
    stats["rows_read"] = rows_read
    if late:
        stats["dropped"] = dict(sorted({**stats.get("dropped", {}), "event:starts_after_clip_end": late}.items()))
    if cut:
        stats["events_cut_at_clip_end"] = cut
        log.info("%s: %d events end after their clip's duration_s; their offset_s is cut at the clip end", task, cut)
    ids = items.ids if isinstance(items, ItemRows) else [it["id"] for it in items]
    if len(set(ids)) != len(ids):
        dup = sorted(pd.Series(ids)[pd.Series(ids).duplicated()].unique().tolist())
        raise RuntimeError(f"task {task!r}: builder {tcfg['family']!r} produced duplicate item ids {dup[:5]} "
                           "(a builder bug: ids must be unique per task)")
    if not items:
        raise ValueError(f"task {task!r} ({tcfg['family']}) produced no items from {events_path}; "
                         f"drop reasons: {stats.get('dropped')}")
    log.info("%s: %d items; dropped %s", task, len(items), stats.get("dropped"))
    io.write_json(stats_path, stats)
    del events, clips                # the items hold what they need: the tables' memory goes before the write's
    write_items(items_path, items)


def import_task_files(cfg: dict, *, dataset: str, task: str, clips_path: str, source_items: str, items_path: str,
                      stats_path: str, adapt_stats: str | None = None) -> None:
    """``cfg`` = {task, dataset, seed, ...} (the build_task rule's params) for a task of family 'import'."""
    clips = pd.read_parquet(clips_path)
    params = dict(cfg["task"].get("params") or {}, items_path=source_items)
    items, stats = build_items("import", pd.DataFrame(), clips, params, seed=int(cfg["seed"]), dataset=dataset,
                               task=task)
    if not items:
        raise ValueError(f"task {task!r}: no items imported from {source_items}; dropped {stats.get('dropped')}")
    if adapt_stats:
        # what the adapter left out of the whole dataset travels with every task made from it, so that
        # results/all.tsv flags each of their runs (lalmbench.report.aggregate.task_flags)
        src = io.read_json(adapt_stats)
        if src.get("dropped"):
            stats["dropped_at_source"] = dict(src["dropped"])
        if src.get("notes"):
            stats["notes_at_source"] = dict(src["notes"])
    io.write_json(stats_path, stats)
    io.write_jsonl(items_path, items)
