"""Rule entries for real datasets: run an adapter and write its tables; stamp an imported task."""
from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from lalmbench.core import io
from lalmbench.data.annotations import (VALIDATED_KEY, collapse_whitespace_counted, same_values, validate_clips,
                                   validate_events, validated_stamp)
from lalmbench.data.adapters import CLIP_COLUMNS, EVENT_COLUMNS, adapt
from lalmbench.core.memory import use_system_pool

log = logging.getLogger("lalmbench.data.adapters")


def adapt_dataset_files(cfg: dict, *, dataset: str, clips_path: str, events_path: str, items_path: str,
                        stats_path: str) -> dict:
    """``cfg`` = {adapter, params} (the dataset's config), with ``audio_needed: false`` when the workflow
    scores only imported outputs on it (a benchmark preset then reads no audio folder). Writes all four
    outputs atomically."""
    use_system_pool()
    params = dict(cfg.get("params") or {})
    from lalmbench.data.adapters.benchmarks import is_preset

    if is_preset(cfg["adapter"]):       # embedded audio (MMSU, VoiceBench) is written beside the tables
        params.setdefault("embedded_audio_dir", str(Path(clips_path).parent / "audio"))
        if cfg.get("audio_needed") is False:
            params["audio_needed"] = False
    res = adapt(cfg["adapter"], params, dataset=dataset)
    clips = res.clips[CLIP_COLUMNS]
    events, collapsed = _clean_text(res.events[EVENT_COLUMNS])
    clips_src, clip_rows = _origin(res.clips, res.clips_file, f"{dataset} clips (from {cfg['adapter']})")
    events_src, event_rows = _origin(res.events, res.events_file, f"{dataset} events (from {cfg['adapter']})")
    duplicates = str(params.get("duplicate_events", "error"))
    # tables that stay as validated (no consistency step after) carry the stamp that lets the task
    # skip these checks, and are encoded while the checks run
    checked = duplicates == "error" and not params.get("consistency")
    stamp = validated_stamp(clips, events) if checked else None
    with (io.parquet_written_meanwhile(events_path, events, metadata={VALIDATED_KEY: stamp} if stamp else None)
          if checked else contextlib.nullcontext()):
        validate_clips(clips, clips_src, rows=clip_rows)
        validate_events(events, events_src, clips["clip_id"], duplicates=duplicates, rows=event_rows)
        if checked:                 # final clips (no consistency step): written while the events still are
            io.write_parquet(clips_path, clips)
    stats = dict(res.stats, adapter=cfg["adapter"])
    if collapsed:
        stats["text_whitespace_collapsed"] = collapsed
        log.info("%s: %d labels/captions had newlines, tabs or repeated spaces; collapsed to one space", dataset,
                 collapsed)
    items = res.items
    if params.get("consistency"):
        from lalmbench.data.consistency import check_consistency

        clips, events, _, summary = check_consistency(clips, events, params["consistency"], source=dataset)
        stats["consistency"] = summary
        if items and summary.get("dropped"):
            kept = set(clips["clip_id"].astype(str))
            n0 = len(items)
            items = [it for it in items if str(it["clip_id"]) in kept]
            summary["dropped"]["item:clip_inconsistent"] = n0 - len(items)
    stats.update(clips_written=len(clips), events_written=len(events), items_written=len(items))
    log.info("%s: %d clips, %d events, %d items; left out %s%s", dataset, len(clips), len(events), len(items),
             stats.get("dropped") or "nothing", f"; notes {stats['notes']}" if stats.get("notes") else "")
    if not checked:
        io.write_parquet(clips_path, clips)
        io.write_parquet(events_path, events)
    io.write_jsonl(items_path, items)
    io.write_json(stats_path, stats)
    return stats


def _origin(df: pd.DataFrame, file: str | None, fallback: str) -> tuple[str, np.ndarray | None]:
    """(what errors name, data rows) for an adapter's table: the user's file and its rows where the
    adapter recorded them, else a description of the table."""
    if file and "source_row" in df.columns:
        return file, df["source_row"].to_numpy(np.int64)
    return fallback, None


def _clean_text(events: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Labels and captions with whitespace runs collapsed (see annotations); how many cells changed."""
    label, n_label = collapse_whitespace_counted(events["label"])
    if same_values(events["caption"], events["label"]):               # captions that are the labels (TACoBeLAL)
        caption, n_caption = label, n_label
    else:
        caption, n_caption = collapse_whitespace_counted(events["caption"])
    return events.assign(label=label, caption=caption), n_label + n_caption


def mix_dataset_files(cfg: dict, *, dataset: str, source_clips: str, source_events: str, clips_path: str,
                      events_path: str, plan_path: str, audio_dir: str, seed: int) -> None:
    """AIR-Bench-style mixtures of another dataset's clips (``cfg`` = the mix dataset's config)."""
    from lalmbench.data.mixing import mix_dataset

    params = dict(cfg.get("params") or {})
    clips = pd.read_parquet(source_clips)
    events = pd.read_parquet(source_events)
    mclips, mevents, plan = mix_dataset(clips, events, params, seed=seed, audio_dir=audio_dir, dataset=dataset)
    validate_clips(mclips, f"{dataset} mixture clips")
    validate_events(mevents, f"{dataset} mixture events", mclips["clip_id"], duplicates="ignore")
    log.info("%s: %d mixtures of %d sources from %s", dataset, len(mclips), int(params.get("n_sources", 2)),
             source_clips)
    io.write_parquet(plan_path, plan)
    io.write_parquet(events_path, mevents)
    io.write_parquet(clips_path, mclips)
