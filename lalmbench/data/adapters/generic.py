"""Any strong-label CSV/TSV/parquet -> clips + events, through a column mapping in config.

Inputs (params):
  events:     the annotation file (.csv, .tsv or .parquet)
  columns:    {clip_id: <col>, onset_s: <col>, offset_s: <col>, label: <col>, caption: <col, optional>,
               audio_path: <col, optional>, duration_s: <col, optional>}; defaults are the
              contract names (e.g. DESED: {clip_id: filename, onset_s: onset, offset_s: offset,
              label: event_label})
  time_unit:  s (default) | ms
  audio_root: folder the audio paths are relative to
  audio_pattern: file name when there is no audio_path column, default "{clip_id}"
  clip_duration_s: a fixed clip duration when there is no duration column (default: unknown)
  source:     name recorded in the tables (default: the dataset name)
  missing_audio: error | skip; check_audio: true; symlinks_outside_root: error | allow (every adapter)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from lalmbench.data.adapters import Adapted
from lalmbench.data.adapters.common import (audio_checks, clips_frame, read_csv_strict, require_dir, require_file,
                                       resolve_audio)
from lalmbench.core.io import InputError

#: params naming the user's files this adapter reads (a str, or a dict/list of them): they become the
#: adapt job's inputs, so an edit reruns it (audio_root is covered by the audio manifest)
FILE_PARAMS = ("events",)

HOW = "Point datasets.<name>.params.events at your annotation file and audio_root at its audio folder."
FIELDS = ("clip_id", "onset_s", "offset_s", "label", "caption", "audio_path", "duration_s")
REQUIRED = ("clip_id", "onset_s", "offset_s", "label")


def adapt(params: dict, *, dataset: str) -> Adapted:
    path = require_file(params.get("events"), dataset=dataset, key="events",
                        what="a strong-annotation table (CSV, TSV or parquet)", how=HOW)
    root = require_dir(params.get("audio_root"), dataset=dataset, key="audio_root",
                       what="the folder with the dataset's audio", how=HOW)
    cols = {f: f for f in REQUIRED}
    unknown = set(params.get("columns") or {}) - set(FIELDS)
    if unknown:
        raise InputError(f"dataset {dataset!r}: params.columns has unknown field(s) {sorted(unknown)}; "
                         f"known: {list(FIELDS)}")
    cols.update(params.get("columns") or {})
    if str(path).endswith(".parquet"):
        df = pd.read_parquet(path).astype({c: "string" for c in cols.values() if c})
        missing = [c for c in cols.values() if c not in df.columns]
        if missing:
            raise InputError(f"{path}: missing column(s) {missing}; found {list(df.columns)}")
        df = df.fillna("")
    else:
        df = read_csv_strict(path, required=[c for c in cols.values() if c])
    scale = {"s": 1.0, "ms": 1e-3}.get(str(params.get("time_unit", "s")))
    if scale is None:
        raise InputError(f"dataset {dataset!r}: time_unit must be 's' or 'ms', got {params.get('time_unit')!r}")
    clip = df[cols["clip_id"]].astype("string").str.strip()
    on = pd.to_numeric(df[cols["onset_s"]], errors="coerce").to_numpy(float) * scale
    off = pd.to_numeric(df[cols["offset_s"]], errors="coerce").to_numpy(float) * scale
    for arr, name in ((on, "onset_s"), (off, "offset_s")):
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{path}: row {i + 1}: {cols[name]}={df[cols[name]].iloc[i]!r} is not a number "
                             f"({int(bad.sum())} such rows)")
    label = df[cols["label"]].astype("string").str.strip()
    caption = (df[cols["caption"]].astype("string").str.strip().replace("", pd.NA) if cols.get("caption")
               else pd.array([None] * len(df), dtype="string"))
    source = str(params.get("source") or dataset)
    events = pd.DataFrame({"clip_id": clip.to_numpy(), "onset_s": on, "offset_s": off,
                           "label": label.to_numpy(), "caption": caption, "source": source})
    events = events.astype({"clip_id": "string", "label": "string", "caption": "string", "source": "string"})
    events["source_row"] = np.arange(len(df)) + 1

    codes, uniq = pd.factorize(clip)
    first = np.full(len(uniq), -1)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    if cols.get("audio_path"):
        rel = df[cols["audio_path"]].astype("string").str.strip().to_numpy()[first].tolist()
    else:
        pattern = str(params.get("audio_pattern") or "{clip_id}")
        rel = [pattern.format(clip_id=c) for c in uniq]
    paths, exists = resolve_audio(root, rel, source=str(path), rows=(first + 1).tolist(),
                                  **audio_checks(params))
    if cols.get("duration_s"):
        dur = pd.to_numeric(df[cols["duration_s"]], errors="coerce").to_numpy(float)[first]
    else:
        dur = float(params.get("clip_duration_s")) if params.get("clip_duration_s") else np.nan
    clips = clips_frame(list(uniq), paths, duration_s=dur, sample_rate=params.get("sample_rate"),
                        split=str(params.get("split", "")), source=source)
    clips["source_row"] = first + 1
    stats = {"rows_read": int(len(df)), "clips": int(len(uniq)), "dropped": {}}
    if not exists.all():
        gone = set(np.asarray(uniq, dtype=object)[~exists])
        keep = ~events["clip_id"].isin(gone).to_numpy()
        stats["dropped"] = {"clip:missing_audio": int((~exists).sum()), "event:clip_missing_audio": int((~keep).sum())}
        clips, events = clips[exists].reset_index(drop=True), events[keep].reset_index(drop=True)
    return Adapted(clips=clips, events=events, stats=stats, events_file=str(path), clips_file=str(path))
