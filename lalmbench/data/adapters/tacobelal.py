"""TACoBeLAL (TACOS strong captions, Zenodo record 15379789) -> clips + events, and its ready MCQ items.

Inputs (params):
  annotations: ``annotations_strong.csv`` with columns filename, text, onset, offset (one caption
               per event; the caption is both ``label`` and ``caption`` of the event)
  audio_root:  where ``audio.zip`` was extracted (``data/audio``); files are ``<audio_root>/<filename>``
  split_files: optional {split name: CSV with a ``filename`` column} (development_split.csv, test_split.csv)
  mcq_jsonl:   optional ready TACoBeLAL MCQ file (``mcq_event_timeline_strong.jsonl`` or the curated
               51-item file): imported as items with labels, option order, texts and answers unchanged
  invalid_rows: error (default) | drop -- rows with offset < onset or unparsable times
  missing_audio: error | skip; check_audio: true

At least one of annotations / mcq_jsonl must be given.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lalmbench.data.annotations import edges_plain
from lalmbench.data.adapters import Adapted, empty_events
from lalmbench.data.adapters.tables import unreadable_reason
from lalmbench.data.adapters.common import (DatasetMissing, audio_checks, clips_frame, constant_strings, read_csv_strict,
                                       require_dir, require_file, resolve_audio)
from lalmbench.core.io import InputError, read_jsonl

#: params naming the user's files this adapter reads (a str, or a dict/list of them): they become the
#: adapt job's inputs, so an edit reruns it (audio_root is covered by the audio manifest)
FILE_PARAMS = ("annotations", "mcq_jsonl", "split_files")

HOW = ("Download annotations_strong.csv and audio.zip from https://zenodo.org/records/15379789 (TACOS, used by "
       "TACoBeLAL; `python -m lalmbench.data.adapters.download tacobelal --out <dir>` does it where there is a network), "
       "unzip audio.zip into <dir>/audio and set datasets.<name>.params.annotations / audio_root.")
SOURCE = "tacobelal"


STRONG_COLUMNS = ["filename", "text", "onset", "offset"]


def read_strong(path: Path, *, invalid: str = "error") -> tuple[pd.DataFrame, dict]:
    """The events of a strong-label CSV; a clean file takes the pyarrow path, any other goes through
    the strict reader that names the bad row (or drops and counts it)."""
    events = read_clean_strong(path)
    if events is not None:
        return events, {}
    df = read_csv_strict(path, required=STRONG_COLUMNS)
    on = pd.to_numeric(df["onset"].str.strip(), errors="coerce").to_numpy(float)
    off = pd.to_numeric(df["offset"].str.strip(), errors="coerce").to_numpy(float)
    fn = df["filename"].str.strip()
    text = df["text"].str.strip()
    bad_time = ~np.isfinite(on) | ~np.isfinite(off) | (off < on) | (on < 0)
    empty = (fn == "").to_numpy() | (text == "").to_numpy()
    dropped = {}
    if invalid == "error":
        for mask, what in ((bad_time, "onset/offset must be numbers with 0 <= onset <= offset"),
                           (empty, "filename and text must be non-empty")):
            if mask.any():
                i = int(np.flatnonzero(mask)[0])
                raise InputError(f"{path}: row {i + 1}: {what} (filename={fn.iloc[i]!r}, onset={df['onset'].iloc[i]!r}, "
                                 f"offset={df['offset'].iloc[i]!r}); {int(mask.sum())} such rows; "
                                 f"set invalid_rows: drop to leave them out (counted)")
    elif invalid == "drop":
        dropped = {"event:invalid_time": int(bad_time.sum()), "event:empty_text": int((empty & ~bad_time).sum())}
    else:
        raise ValueError(f"invalid_rows must be 'error' or 'drop', got {invalid!r}")
    keep = ~bad_time & ~empty
    text = pd.array(text[keep].to_numpy(), dtype="string")
    return events_frame(pd.array(fn[keep].to_numpy(), dtype="string"), on[keep], off[keep], text,
                        np.flatnonzero(keep) + 1), {k: v for k, v in dropped.items() if v}


def events_frame(clip_id, onset: np.ndarray, offset: np.ndarray, text, source_row: np.ndarray) -> pd.DataFrame:
    """Events of the contract; the caption is both label and caption (one array, not two copies).
    ``source_row`` is each event's 1-based data row in the CSV, so later errors name the user's row."""
    return pd.DataFrame({"clip_id": clip_id, "onset_s": onset, "offset_s": offset, "label": text, "caption": text,
                         "source": constant_strings(SOURCE, len(onset)), "source_row": source_row}, copy=False)


def read_clean_strong(path: Path) -> pd.DataFrame | None:
    """Events of a CSV that needs no repair, parsed by pyarrow (multithreaded C++, strings kept as
    Arrow buffers instead of one Python object per cell); None when any row would need the strict
    reader: a missing column, a value that is not a plain number, a bad interval, an empty field."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv as pacsv

    sep = "\t" if str(path).endswith((".tsv", ".tsv.gz", ".txt")) else ","
    try:
        table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
                               convert_options=pacsv.ConvertOptions(
                                   include_columns=STRONG_COLUMNS, strings_can_be_null=False,
                                   column_types={"filename": pa.string(), "text": pa.string(),
                                                 "onset": pa.float64(), "offset": pa.float64()}))
    except (pa.ArrowException, KeyError):
        return None
    on = table["onset"].to_numpy()
    off = table["offset"].to_numpy()
    fn, text = (table[c] if edges_plain(table[c]) else pc.utf8_trim_whitespace(table[c]) for c in ("filename", "text"))
    if (table["onset"].null_count or table["offset"].null_count or not np.isfinite(on).all()
            or not np.isfinite(off).all() or (off < on).any() or (on < 0).any()
            or pc.any(pc.equal(fn, "")).as_py() or pc.any(pc.equal(text, "")).as_py()):
        return None
    return events_frame(pd.arrays.ArrowStringArray(fn), on, off, pd.arrays.ArrowStringArray(text),
                        np.arange(1, len(on) + 1))


def convert_mcq(rec: dict, *, path: Path, line: int, audio_path: str, dataset: str) -> dict:
    """One TACoBeLAL MCQ record -> an item of our contract, same labels/order/answer."""
    for key in ("id", "question", "options", "answer_label"):
        if key not in rec:
            raise InputError(f"{path}:{line}: TACoBeLAL item lacks {key!r}")
    if not rec.get("audio_filename"):
        raise InputError(f"{path}:{line}: TACoBeLAL item lacks 'audio_filename'")
    if unreadable_reason(rec):
        raise InputError(f"{path}:{line}: text that is not Unicode (a lone surrogate such as \\ud800 in a JSON escape)")
    options = []
    for j, o in enumerate(rec["options"]):
        if "label" not in o or "text" not in o:
            raise InputError(f"{path}:{line}: option {j + 1} lacks 'label' or 'text'")
        meta = {k: v for k, v in o.items() if k not in ("label", "text", "type")}
        options.append({"label": o["label"], "text": o["text"], "type": o.get("type", "event"), "meta": meta})
    labels = [o["label"] for o in options]
    if len(set(labels)) != len(labels):
        raise InputError(f"{path}:{line}: duplicate option labels {labels}")
    texts = {o["label"]: o["text"] for o in options}
    ans = rec["answer_label"]
    if ans not in texts:
        raise InputError(f"{path}:{line}: answer_label {ans!r} is not one of the option labels {labels}")
    if rec.get("answer_text") is not None and rec["answer_text"] != texts[ans]:
        raise InputError(f"{path}:{line}: answer_text {rec['answer_text']!r} differs from option {ans} "
                         f"text {texts[ans]!r}")
    meta = {k: v for k, v in rec.items()
            if k not in ("id", "task", "audio_filename", "question", "options", "answer_label", "answer_text")}
    meta["source_task"] = rec.get("task")
    meta["source"] = SOURCE
    return {"id": str(rec["id"]), "task": rec.get("task") or "import", "dataset": dataset,
            "clip_id": rec["audio_filename"], "audio_path": audio_path, "question": rec["question"],
            "options": options, "answer_label": ans, "answer_text": texts[ans], "references": [], "meta": meta}


def adapt(params: dict, *, dataset: str) -> Adapted:
    if not params.get("annotations") and not params.get("mcq_jsonl"):
        raise InputError(f"dataset {dataset!r}: set params.annotations (annotations_strong.csv) and/or "
                         f"params.mcq_jsonl (a TACoBeLAL MCQ JSONL). {HOW}")
    ar = params.get("audio_root")
    if ar and not Path(ar).exists() and (Path(ar).parent / "audio.zip").exists():
        raise DatasetMissing(f"dataset {dataset!r}: {ar} (params.audio_root) does not exist but "
                             f"{Path(ar).parent / 'audio.zip'} does: unzip it there first "
                             f"(python -m zipfile -e {Path(ar).parent / 'audio.zip'} {Path(ar).parent})")
    root = require_dir(ar, dataset=dataset, key="audio_root",
                       what="the folder where TACOS audio.zip was extracted", how=HOW)
    stats: dict = {"dropped": {}}
    events = empty_events()
    filenames: list[str] = []
    if params.get("annotations"):
        ann = require_file(params["annotations"], dataset=dataset, key="annotations",
                           what="TACOS annotations_strong.csv (filename,text,onset,offset)", how=HOW)
        events, dropped = read_strong(ann, invalid=str(params.get("invalid_rows", "error")))
        stats["dropped"].update(dropped)
        stats["rows_read"] = int(len(events) + sum(dropped.values()))
        filenames = events["clip_id"].unique().tolist()              # in order of first appearance
    records: list[tuple[int, dict]] = []
    if params.get("mcq_jsonl"):
        mcq = require_file(params["mcq_jsonl"], dataset=dataset, key="mcq_jsonl",
                           what="a TACoBeLAL MCQ JSONL (e.g. mcq_event_timeline_strong.jsonl)", how=HOW)
        recs = read_jsonl(mcq)
        records = list(enumerate(recs, start=1))
        seen = set(filenames)
        for _, r in records:
            f = r.get("audio_filename")
            if f and f not in seen:
                seen.add(f)
                filenames.append(f)
    paths, exists = resolve_audio(root, filenames, source=str(params.get("annotations") or params.get("mcq_jsonl")),
                                  **audio_checks(params))
    path_of = dict(zip(filenames, paths))
    split_of: dict[str, str] = {}
    for split, sp in (params.get("split_files") or {}).items():
        spath = require_file(sp, dataset=dataset, key=f"split_files.{split}", what="a TACOS split CSV", how=HOW)
        sdf = read_csv_strict(spath, required=["filename"])
        for f in sdf["filename"].str.strip():
            split_of[f] = split
    clips = clips_frame(filenames, paths, split=[split_of.get(f, "") for f in filenames] if filenames else "",
                        source=SOURCE)
    if not exists.all():
        gone = set(np.asarray(filenames, dtype=object)[~exists])
        stats["dropped"]["clip:missing_audio"] = len(gone)
        clips = clips[exists].reset_index(drop=True)
        ev_keep = ~events["clip_id"].isin(gone).to_numpy()
        stats["dropped"]["event:clip_missing_audio"] = int((~ev_keep).sum())
        events = events[ev_keep].reset_index(drop=True)
        records = [(ln, r) for ln, r in records if r.get("audio_filename") not in gone]
        stats["dropped"]["item:clip_missing_audio"] = len(recs) - len(records) if params.get("mcq_jsonl") else 0
    items = []
    if params.get("mcq_jsonl"):
        items = [convert_mcq(r, path=Path(params["mcq_jsonl"]), line=ln, audio_path=path_of.get(r["audio_filename"], ""),
                             dataset=dataset) for ln, r in records]
        ids = [it["id"] for it in items]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(f"{params['mcq_jsonl']}: duplicate item id {dup!r}")
        stats["items_read"] = len(items)
    stats["clips"] = int(len(clips))
    stats["dropped"] = {k: v for k, v in stats["dropped"].items() if v}
    return Adapted(clips=clips, events=events, items=items, stats=stats,
                   events_file=str(params["annotations"]) if params.get("annotations") else None)
