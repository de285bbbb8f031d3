"""Clotho v2.1 captions -> clips + captioning items (open answer, 5 reference captions each).

Inputs (params):
  captions:   ``clotho_captions_{development,validation,evaluation}.csv``
              (file_name, caption_1 .. caption_5)
  audio_root: the matching audio folder (e.g. ``clotho_audio_evaluation/evaluation``)
  split:      name recorded in clips.split (default: taken from the CSV file name)
  question:   default "Describe the audio in one sentence."
  missing_audio: error | skip; check_audio: true
"""
from __future__ import annotations

import re

import numpy as np

from lalmbench.data.adapters import Adapted, empty_events
from lalmbench.data.adapters.common import (audio_checks, clips_frame, read_csv_strict, require_dir, require_file,
                                       resolve_audio)
from lalmbench.core.io import InputError

#: params naming the user's files this adapter reads (a str, or a dict/list of them): they become the
#: adapt job's inputs, so an edit reruns it (audio_root is covered by the audio manifest)
FILE_PARAMS = ("captions",)

HOW = ("Download Clotho v2.1 from https://zenodo.org/records/4783391 (clotho_captions_<split>.csv and "
       "clotho_audio_<split>.7z), extract the audio and set datasets.<name>.params.captions / audio_root.")
CAPTION_COLUMNS = [f"caption_{i}" for i in range(1, 6)]
DEFAULT_QUESTION = "Describe the audio in one sentence."


def adapt(params: dict, *, dataset: str) -> Adapted:
    path = require_file(params.get("captions"), dataset=dataset, key="captions",
                        what="a Clotho captions CSV (file_name, caption_1..caption_5)", how=HOW)
    root = require_dir(params.get("audio_root"), dataset=dataset, key="audio_root",
                       what="the extracted Clotho audio folder for this split", how=HOW)
    df = read_csv_strict(path, required=["file_name", *CAPTION_COLUMNS])
    names = df["file_name"].str.strip()
    if (names == "").any():
        i = int(np.flatnonzero((names == "").to_numpy())[0])
        raise InputError(f"{path}: row {i + 1}: file_name is empty")
    dup = names.duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"{path}: row {i + 1}: duplicate file_name {names.iloc[i]!r}")
    caps = df[CAPTION_COLUMNS].apply(lambda s: s.str.strip())
    empty = (caps == "").to_numpy()
    if empty.any():
        i, j = map(int, np.argwhere(empty)[0])
        raise InputError(f"{path}: row {i + 1}: {CAPTION_COLUMNS[j]} is empty; Clotho has 5 captions per clip")
    m = re.search(r"clotho_captions_(\w+)", path.name)
    split = str(params.get("split") or (m.group(1) if m else ""))
    paths, exists = resolve_audio(root, names.tolist(), source=str(path),
                                  **audio_checks(params))
    clips = clips_frame(names.tolist(), paths, split=split, source="clotho")
    question = str(params.get("question") or DEFAULT_QUESTION)
    refs = caps.to_numpy().tolist()
    items = [{"id": f"{n}", "task": "captioning", "dataset": dataset, "clip_id": n, "audio_path": p,
              "question": question, "options": [], "answer_label": None, "answer_text": None,
              "references": r, "meta": {"source": "clotho", "split": split}}
             for n, p, r, ok in zip(names.tolist(), paths, refs, exists.tolist()) if ok]
    stats = {"rows_read": int(len(df)), "items_read": len(items), "clips": int(exists.sum()),
             "dropped": {"clip:missing_audio": int((~exists).sum())} if not exists.all() else {}}
    return Adapted(clips=clips[exists].reset_index(drop=True), events=empty_events(), items=items, stats=stats)
