"""AudioSet-strong (Hershey et al. 2021) -> clips + events.

Inputs (params):
  annotations: the strong-label TSV, e.g. ``audioset_eval_strong.tsv`` with header
               ``segment_id  start_time_seconds  end_time_seconds  label`` (label = a MID, /m/...)
  labels:      MID -> display name: ``mid_to_display_name.tsv`` (two columns, no header),
               ``class_labels_indices.csv`` (index,mid,display_name) or ``ontology.json``
  audio_root:  folder with one audio file per segment
  audio_pattern: file name under audio_root, default "{segment_id}.wav"; fields: segment_id,
               ytid, start_ms, start_s, end_s (segment ids are ``<YouTube id>_<start ms>``, e.g.
               ``YxlGt805lTA_30000``); DESED-style mirrors use "Y{ytid}_{start_s:.3f}_{end_s:.3f}.wav"
  clip_duration_s: 10.0; sample_rate: null; split: "eval"; missing_audio: error | skip;
  check_audio: true (false: do not stat 100k files, e.g. on a login node)

An unknown MID is an error naming the TSV row: a silently dropped label would change answers.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from lalmbench.data.adapters import Adapted
from lalmbench.data.adapters.common import (audio_checks, clips_frame, read_csv_strict, require_dir, require_file,
                                       resolve_audio,
                                       to_seconds)
from lalmbench.core.io import InputError

#: params naming the user's files this adapter reads (a str, or a dict/list of them): they become the
#: adapt job's inputs, so an edit reruns it (audio_root is covered by the audio manifest)
FILE_PARAMS = ("annotations", "labels")

HOW = ("Download the AudioSet strong labels (audioset_{train,eval}_strong.tsv and mid_to_display_name.tsv) from "
       "https://research.google.com/audioset/download_strong.html and the clip audio (e.g. with a YouTube "
       "downloader or a mirror), then set datasets.<name>.params.annotations / labels / audio_root.")


def read_label_map(path: Path) -> dict[str, str]:
    """MID -> display name from a 2-column TSV, class_labels_indices.csv or ontology.json."""
    p = str(path)
    if p.endswith(".json"):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, list) or not all(isinstance(d, dict) and "id" in d and "name" in d for d in data):
            raise InputError(f"{path}: expected the AudioSet ontology (a JSON list of objects with 'id' and 'name')")
        return {d["id"]: d["name"] for d in data}
    if p.endswith(".csv"):
        df = read_csv_strict(path, required=["mid", "display_name"])
        return dict(zip(df["mid"].str.strip(), df["display_name"].str.strip()))
    df = read_csv_strict(path, required=["mid", "display_name"], sep="\t", header=False, names=["mid", "display_name"])
    return dict(zip(df["mid"].str.strip(), df["display_name"].str.strip()))


def adapt(params: dict, *, dataset: str) -> Adapted:
    ann = require_file(params.get("annotations"), dataset=dataset, key="annotations",
                       what="the AudioSet strong-label TSV (segment_id, start_time_seconds, end_time_seconds, label)",
                       how=HOW)
    labels_path = require_file(params.get("labels"), dataset=dataset, key="labels",
                               what="the MID -> display-name table (mid_to_display_name.tsv)", how=HOW)
    root = require_dir(params.get("audio_root"), dataset=dataset, key="audio_root",
                       what="the folder holding one audio file per AudioSet segment", how=HOW)
    pattern = str(params.get("audio_pattern") or "{segment_id}.wav")
    df = read_csv_strict(ann, required=["segment_id", "start_time_seconds", "end_time_seconds", "label"], sep="\t")
    names = read_label_map(labels_path)

    on = to_seconds(df, "start_time_seconds", ann)
    off = to_seconds(df, "end_time_seconds", ann)
    mids = df["label"].str.strip()
    codes, uniq = pd.factorize(mids)
    known = np.array([u in names for u in uniq], bool)
    if not known.all():
        bad = np.flatnonzero(~known[codes])
        i = int(bad[0])
        raise InputError(f"{ann}: row {i + 1}: label {mids.iloc[i]!r} is not in {labels_path} "
                         f"({len(bad)} rows with unknown MIDs: {sorted(set(uniq[~known]))[:5]})")
    disp = np.array([names[u] for u in uniq], dtype=object)[codes]
    seg = df["segment_id"].str.strip()
    if (seg == "").any():
        i = int(np.flatnonzero((seg == "").to_numpy())[0])
        raise InputError(f"{ann}: row {i + 1}: segment_id is empty")

    clip_s = float(params.get("clip_duration_s", 10.0))
    seg_codes, seg_uniq = pd.factorize(seg)
    first_row = np.full(len(seg_uniq), -1)
    first_row[seg_codes[::-1]] = np.arange(len(seg_codes))[::-1]
    files = []
    for s in seg_uniq:
        ytid, _, start = s.rpartition("_")
        start_s = int(start) / 1000 if start.isdigit() else 0.0
        fields = {"segment_id": s, "ytid": ytid or s, "start_ms": start, "start_s": start_s,
                  "end_s": start_s + clip_s}
        files.append(pattern.format(**fields))
    paths, exists = resolve_audio(root, files, source=str(ann), rows=(first_row + 1).tolist(),
                                  **audio_checks(params))
    clips = clips_frame(seg_uniq, paths, duration_s=float(params.get("clip_duration_s", 10.0)),
                        sample_rate=params.get("sample_rate"), split=str(params.get("split", "eval")),
                        source="audioset_strong")
    events = pd.DataFrame({"clip_id": pd.array(seg.to_numpy(), dtype="string"), "onset_s": on, "offset_s": off,
                           "label": pd.array(disp, dtype="string"), "caption": pd.array([None] * len(df), dtype="string"),
                           "source": pd.array(["audioset_strong"] * len(df), dtype="string"),
                           "source_row": np.arange(len(df)) + 1})
    clips["source_row"] = first_row + 1
    stats = {"rows_read": int(len(df)), "clips": int(len(seg_uniq)), "labels": int(len(uniq)), "dropped": {}}
    if not exists.all():
        gone = set(np.asarray(seg_uniq)[~exists])
        ev_keep = ~events["clip_id"].isin(gone).to_numpy()
        stats["dropped"] = {"clip:missing_audio": int((~exists).sum()), "event:clip_missing_audio": int((~ev_keep).sum())}
        clips = clips[exists].reset_index(drop=True)
        events = events[ev_keep].reset_index(drop=True)
    return Adapted(clips=clips, events=events, stats=stats, events_file=str(ann), clips_file=str(ann))
