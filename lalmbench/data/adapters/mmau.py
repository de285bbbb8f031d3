"""MMAU / MMAU-Pro multiple-choice items -> items (+ clips), category fields kept for breakdowns.

Inputs (params):
  items:      MMAU JSON (a list: id, audio_id, question, choices, answer, dataset, task, split,
              category, sub-category, difficulty), or JSONL / parquet with the same fields
              (MMAU-Pro: ``audio_path`` may be a list; items with several audios are skipped and
              counted, since the item contract has one audio per item)
  audio_root: folder the ``audio_id`` / ``audio_path`` entries are relative to
  open_ended: skip (default; counted) | keep -- items without choices become open items whose
              reference is the answer
  duplicate_choices: merge (default) | skip -- 27 of the 1,000 MMAU test-mini items repeat a choice
              (16 of them repeat the answer, which makes a letter answer ambiguous); merge keeps the
              first of each repeated text (counted as item:duplicate_choices_merged)
  missing_audio: error | skip; check_audio: true

Options keep the dataset's choice order, labelled A, B, ...; the answer must be exactly one of
the choices (after stripping spaces), otherwise the item is an error naming it.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from lalmbench.data.adapters import Adapted, empty_events
from lalmbench.data.adapters.common import audio_checks, clips_frame, require_dir, require_file, resolve_audio
from lalmbench.core.io import InputError, read_json, read_jsonl
from lalmbench.tasks.items import option_labels

HOW = ("Download MMAU (https://github.com/Sakshi113/MMAU: mmau-test-mini.json + test-mini-audios) or MMAU-Pro "
       "(Hugging Face dataset gamma-lab-umd/MMAU-Pro: test.parquet + data/), and set datasets.<name>.params.items "
       "/ audio_root.")
META_FIELDS = ("dataset", "task", "split", "category", "sub-category", "sub_category", "difficulty", "modality",
               "task_identifier", "language", "source")


def load_records(path: Path) -> list[dict]:
    p = str(path)
    if p.endswith(".parquet"):
        df = pd.read_parquet(path)
        return json.loads(df.to_json(orient="records"))
    if p.endswith(".jsonl"):
        return read_jsonl(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of items, got {type(data).__name__}")
    return data


def _audio_of(rec: dict) -> list[str]:
    a = rec.get("audio_id", rec.get("audio_path"))
    if a is None:
        return []
    if isinstance(a, str):
        return [a]
    return [str(x) for x in a]


def adapt(params: dict, *, dataset: str) -> Adapted:
    path = require_file(params.get("items"), dataset=dataset, key="items",
                        what="the MMAU / MMAU-Pro item file (JSON, JSONL or parquet)", how=HOW)
    root = require_dir(params.get("audio_root"), dataset=dataset, key="audio_root",
                       what="the folder with the MMAU audio files", how=HOW)
    open_policy = str(params.get("open_ended", "skip"))
    if open_policy not in ("skip", "keep"):
        raise ValueError(f"open_ended must be 'skip' or 'keep', got {open_policy!r}")
    recs = load_records(path)
    dup_policy = str(params.get("duplicate_choices", "merge"))
    if dup_policy not in ("merge", "skip"):
        raise ValueError(f"duplicate_choices must be 'merge' or 'skip', got {dup_policy!r}")
    dropped = {"item:multi_audio": 0, "item:open_ended": 0, "item:duplicate_choices": 0,
               "item:duplicate_choices_merged": 0}
    kept: list[tuple[int, dict, str]] = []
    for n, rec in enumerate(recs, start=1):
        for key in ("id", "question", "answer"):
            if rec.get(key) in (None, ""):
                raise InputError(f"{path}: item {n}: missing {key!r}")
        audios = _audio_of(rec)
        if not audios:
            raise InputError(f"{path}: item {n} (id {rec['id']}): no audio_id / audio_path")
        if len(audios) > 1:
            dropped["item:multi_audio"] += 1
            continue
        choices = rec.get("choices")
        if isinstance(choices, str):
            try:
                choices = json.loads(choices)
            except json.JSONDecodeError:
                raise InputError(f"{path}: item {n} (id {rec['id']}): choices is a string that is not a JSON list") \
                    from None
        if not choices and open_policy == "skip":
            dropped["item:open_ended"] += 1
            continue
        rec = dict(rec, choices=list(choices or []))
        kept.append((n, rec, audios[0]))
    rels = [a for _, _, a in kept]
    paths, exists = resolve_audio(root, rels, source=str(path), rows=[n for n, _, _ in kept],
                                  **audio_checks(params))
    items, ids = [], set()
    for (n, rec, _), p, ok in zip(kept, paths, exists.tolist()):
        if not ok:
            continue
        rid = str(rec["id"])
        if rid in ids:
            raise InputError(f"{path}: item {n}: duplicate id {rid!r}")
        ids.add(rid)
        meta = {k: rec[k] for k in META_FIELDS if k in rec}
        meta["source"] = meta.get("source", "mmau")
        choices = [str(c) for c in rec["choices"]]
        answer = str(rec["answer"]).strip()
        if choices:
            stripped = [c.strip() for c in choices]
            if len(set(stripped)) != len(stripped):
                if dup_policy == "skip":
                    dropped["item:duplicate_choices"] += 1
                    continue
                # keep the first of each repeated choice (same distinct answers, one label each)
                firsts = [i for i, c in enumerate(stripped) if stripped.index(c) == i]
                dropped["item:duplicate_choices_merged"] += 1
                meta["choices_merged_from"] = len(choices)
                choices, stripped = [choices[i] for i in firsts], [stripped[i] for i in firsts]
            if answer not in stripped:
                raise InputError(f"{path}: item {n} (id {rid}): answer {answer!r} is not one of the choices {choices}")
            labels = option_labels(len(choices))
            options = [{"label": lab, "text": c, "type": "choice", "meta": {}} for lab, c in zip(labels, choices)]
            gold = labels[stripped.index(answer)]
            items.append({"id": rid, "task": str(rec.get("task") or "import"), "dataset": dataset, "clip_id": rid,
                          "audio_path": p, "question": rec["question"], "options": options, "answer_label": gold,
                          "answer_text": choices[stripped.index(answer)], "references": [], "meta": meta})
        else:
            items.append({"id": rid, "task": str(rec.get("task") or "import"), "dataset": dataset, "clip_id": rid,
                          "audio_path": p, "question": rec["question"], "options": [], "answer_label": None,
                          "answer_text": None, "references": [answer], "meta": meta})
    if not exists.all():
        dropped["item:missing_audio"] = int((~exists).sum())
    clips = clips_frame([it["clip_id"] for it in items], [it["audio_path"] for it in items], source="mmau",
                        split=[str(it["meta"].get("split", "")) for it in items] if items else "")
    stats = {"rows_read": len(recs), "items_read": len(items), "clips": len(items),
             "dropped": {k: v for k, v in dropped.items() if v}}
    return Adapted(clips=clips, events=empty_events(), items=items, stats=stats)
