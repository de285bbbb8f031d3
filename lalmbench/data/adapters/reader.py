"""The declarative question-file reader: a benchmark's published records -> the pipeline's items.

A *spec* (a benchmark preset, :mod:`lalmbench.data.adapters.benchmarks`, merged with the dataset's
``params``) says where each field lives; no benchmark has its own code path. Spec keys:

  format:   auto | json | jsonl | csv | tsv | parquet | arrow (folders: save_to_disk or shards), or a
            release layout: transcripts | headerless | folders | lines (lalmbench.data.adapters.layouts,
            which also documents the layout keys: quoting, names, path_fields, expect_columns, derive,
            rows_where, audio_join, value_maps)
  pattern:  glob (or list of globs) of the benchmark's own files inside a folder (e.g. ``mmsu/*.parquet``);
            a folder is read only through it, so other tables kept there (a model's outputs) are never
            read as questions; a folder without one is refused, naming the tables it holds
  group_by: [columns] -- several rows are one item (Clotho-AQA's three annotators, AudioCaps' five
            captions); every other column becomes the list of its rows' values
  variants: [{name, question, answer, choices?}] -- one row holds several items (SAKURA's single-
            and multi-hop question); ``variant`` (a param) picks names, default all
  columns:
    id:       column, or a template like ``{uniq_id}`` (default: the row number)
    question: column (``question_default`` when there is none, e.g. captioning)
    choices:  a list column | [several columns] | ``embedded`` (``(a) dog (b) crow`` in the question);
              none, with ``classes: [labels]``: every item's choices are the benchmark's label set
    answer:   column; ``answer_format``: text | letter | index | labelled (``(c) text``) | auto
    audio:    column or [columns, first present]: a path, a list of paths, or embedded
              ``{bytes, path}``; ``audio_template`` formats the path with the record's fields;
              ``audio_basename: true``: a path on the authors' machine, the file is its name under audio_root
    references: column with the reference answers of an open item (default: the answer)
  meta:     all (every column not used above; default) | [columns]
  kind_when: {instruction: {column: value}, open: {...}} -- which records are instruction-following /
            open items; kind_otherwise: the kind of the rest (default: mcq with choices, else open)
  binary_choices: [yes, no] -- an open item whose references are all among these becomes MCQ
  question_default, source, duplicate_choices: merge | skip, open_ended: keep | skip
  audio_needed: false -- set by the workflow when only imported outputs are scored on the dataset:
            audio paths are kept as written (joined to ``audio_root`` when it is set), never checked,
            and ``audio_root`` may be unset

Problems with one item (missing answer, answer not among its choices, duplicate choices under
``skip``, missing audio, duplicate id, no majority answer, a row nested too deep to read, text
that is not Unicode) leave that item out with a counted reason; the dataset fails only when its
file cannot be read or no item is left.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from lalmbench.core.io import InputError
from lalmbench.data.adapters import Adapted, empty_events
from lalmbench.data.adapters.common import audio_checks, clips_frame, require_dir, resolve_audio
from lalmbench.data.adapters.layouts import LAYOUTS, arrange, load
from lalmbench.data.adapters.tables import resolve_items_path, unreadable_reason, write_embedded
from lalmbench.core.items import option_labels

#: adapt stats when no model that hears audio runs the dataset (``audio_needed: false``)
AUDIO_NOT_READ = ("not read: only imported outputs are scored on this dataset; audio paths kept as written, "
                  "not checked")

# "(a) dog (b) crow" / "(A) dog" / "A. dog" style option markers inside a question text
_EMBEDDED = re.compile(r"\(([A-Za-z])\)\s*")
_LABELLED = re.compile(r"^\s*\(?([A-Za-z])[).:]\s*(.*)$", re.S)


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())


def _field(rec: dict, spec: Any) -> Any:
    """A record's value for a column spec: a column, the first present of a list, or a ``{..}`` template."""
    if spec is None:
        return None
    if isinstance(spec, list):
        for s in spec:
            v = _field(rec, s)
            if not _blank(v) and not (isinstance(v, list) and not v):
                return v
        return None
    s = str(spec)
    if "{" in s:
        try:
            return s.format(**{k: ("" if _blank(v) else v) for k, v in rec.items()})
        except (KeyError, IndexError) as exc:
            raise InputError(f"template {s!r} names a field the records do not have: {exc}") from None
    return rec.get(s)


def as_list(v: Any) -> list:
    """A list-valued field as a list: JSON text like ``'["a", "b"]'`` parsed; numpy arrays converted."""
    if v is None:
        return []
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, str):
        t = v.strip()
        if t.startswith("["):
            try:
                parsed = json.loads(t)
            except RecursionError:  # "[[[[..." nested past any real list: kept as the text it is
                return [v]
            except json.JSONDecodeError:
                try:
                    import ast

                    parsed = ast.literal_eval(t)
                except (ValueError, SyntaxError, RecursionError, MemoryError):
                    return [v]
            return list(parsed) if isinstance(parsed, (list, tuple)) else [parsed]
        return [] if not t else [v]
    return [v]


def _plain(v: Any) -> Any:
    """A meta value JSON can hold: numpy scalars/arrays to Python, JSON-list strings kept as they are."""
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items() if not isinstance(x, (bytes, bytearray))}
    if isinstance(v, float) and np.isnan(v):
        return None
    if isinstance(v, (bytes, bytearray)):
        return None
    return v


def split_embedded(question: str) -> tuple[str, list[str]]:
    """``"What animal? (a) dog (b) crow"`` -> ("What animal?", ["dog", "crow"]); labels must run a, b, c..."""
    marks = list(_EMBEDDED.finditer(question))
    start = next((i for i, m in enumerate(marks) if m.group(1).lower() == "a"), None)
    if start is None:
        return question, []
    marks = marks[start:]
    run = []
    for k, m in enumerate(marks):
        if m.group(1).lower() != "abcdefghijklmnopqrstuvwxyz"[k]:
            break
        run.append(m)
    stem = question[:run[0].start()].strip()
    texts = []
    for k, m in enumerate(run):
        end = run[k + 1].start() if k + 1 < len(run) else len(question)
        texts.append(question[m.end():end].strip().rstrip(",;").strip())
    return stem, texts


def _gold_index(answer: Any, choices: list[str], fmt: str) -> tuple[int | None, str]:
    """(index of the answer among the choices or None, why not)."""
    stripped = [c.strip() for c in choices]
    low = [c.lower() for c in stripped]
    a = str(answer).strip()
    if fmt in ("index",):
        try:
            i = int(float(a))
        except ValueError:
            return None, "item:answer_not_in_choices"
        return (i, "") if 0 <= i < len(choices) else (None, "item:answer_not_in_choices")
    if fmt in ("letter", "labelled", "auto"):
        m = _LABELLED.match(a) if fmt != "letter" else None
        letter = a if fmt == "letter" else (m.group(1) if m else None)
        rest = m.group(2).strip() if m else ""
        if fmt == "auto" and a in stripped:
            return stripped.index(a), ""
        if letter and len(letter) == 1 and letter.isalpha():
            i = ord(letter.lower()) - ord("a")
            if 0 <= i < len(choices) and (not rest or rest.lower() == low[i] or fmt == "letter"):
                return i, ""
            if rest and rest.lower() in low:
                return low.index(rest.lower()), ""
            return None, "item:answer_not_in_choices"
        if fmt != "auto":
            return None, "item:answer_not_in_choices"
    if a in stripped:
        return stripped.index(a), ""
    return None, "item:answer_not_in_choices"


def _group(records: list[dict], keys: list[str], path: Path) -> list[dict]:
    """Rows sharing ``keys`` -> one record whose other columns are lists of the rows' values (row order)."""
    missing = [k for k in keys if records and k not in records[0]]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing} to group rows by; found {list(records[0])}")
    groups: dict[tuple, dict] = {}
    for n, r in enumerate(records, start=1):
        key = tuple(str(r.get(k, "")).strip() for k in keys)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {k: r.get(k) for k in keys}
            g["_rows"] = []
            for c in r:
                if c not in keys:
                    g[c] = []
        g["_rows"].append(n)
        for c, v in r.items():
            if c not in keys:
                g.setdefault(c, []).append(v)
    return list(groups.values())


def _variants(records: list[dict], variants: list[dict], pick: Any) -> list[dict]:
    names = [v["name"] for v in variants]
    chosen = names if pick in (None, "both", "all") else as_list(pick)
    bad = [c for c in chosen if c not in names]
    if bad:
        raise ValueError(f"variant {bad} unknown (known: {', '.join(names)}, both)")
    out = []
    for n, r in enumerate(records, start=1):
        for v in variants:
            if v["name"] in chosen:
                base = {k: x for k, x in r.items() if k not in {c for w in variants for c in (w.get("question"),
                                                                                           w.get("answer"))}}
                out.append(dict(base, _variant=v["name"], _question=r.get(v["question"]), _answer=r.get(v["answer"]),
                                _row=n, **{v.get("field", "variant"): v["name"]}))
    return out


def read_questions(spec: dict, *, dataset: str) -> Adapted:
    """Read the question file named by ``spec['items']`` and return its items, clips and stats."""
    path = resolve_items_path(spec.get("items") or _missing(spec, dataset, "items"), dataset=dataset)
    # a folder-tree layout's audio paths are relative to that folder
    tree = spec.get("format") in LAYOUTS and not LAYOUTS[spec["format"]].per_file
    audio_root = spec.get("audio_root") or (spec.get("items") if tree else None)
    cols = dict(spec.get("columns") or {})
    # without it, only items whose audio is embedded are usable (others name the missing key)
    if not audio_root:
        root = None
    elif spec.get("audio_needed", True) is False:   # named, but nothing will read it
        root = Path(audio_root)
    else:
        root = require_dir(audio_root, dataset=dataset, key="audio_root", what="the folder the audio paths are "
                           "relative to", how=spec.get("how", ""))
    pattern = spec.get("pattern")
    if spec.get("subset") and path.is_dir() and not pattern:     # VoiceBench: <subset>/<split>-NNNNN-of-NNNNN.parquet
        pattern = f"{spec['subset']}/{spec['split']}-*.parquet" if spec.get("split") else f"{spec['subset']}/**/*.parquet"
    records = load(path, spec, pattern)
    rows_read = len(records)
    dropped: Counter = Counter()
    unreadable = [unreadable_reason(rec) for rec in records]
    dropped.update(why for why in unreadable if why)
    records = [rec for rec, why in zip(records, unreadable) if not why]
    records, layout_dropped, layout_notes = arrange(records, spec, root)
    dropped.update(layout_dropped)
    if spec.get("group_by"):
        records = _group(records, list(spec["group_by"]), path)
    if spec.get("variants"):
        records = _variants(records, list(spec["variants"]), spec.get("variant"))
        cols = dict(cols, question="_question", answer="_answer")
    dup_policy = str(spec.get("duplicate_choices", "merge"))
    open_policy = str(spec.get("open_ended", "keep"))
    for key, val, allowed in (("duplicate_choices", dup_policy, ("merge", "skip")),
                              ("open_ended", open_policy, ("keep", "skip"))):
        if val not in allowed:
            raise ValueError(f"dataset {dataset!r}: params.{key} must be one of {allowed}, got {val!r}")
    answer_fmt = str(cols.get("answer_format", "text"))
    audio_dir = Path(spec.get("embedded_audio_dir") or Path("results") / "data" / dataset / "audio")
    used = {c for k in ("id", "question", "choices", "answer", "audio", "references") for c in _names(cols.get(k))}
    used |= {"_question", "_answer", "_rows", "_row", "_variant"}
    meta_spec = spec.get("meta", "all")
    notes: Counter = Counter(layout_notes)
    pending: list[dict] = []
    for n, rec in enumerate(records, start=1):
        row = rec.get("_row") or (rec["_rows"][0] if rec.get("_rows") else n)
        where = f"{path}: item {row}"
        rid = _field(rec, cols.get("id")) if cols.get("id") else None
        rid = str(row) if _blank(rid) else str(rid).strip()
        if spec.get("subset") and not cols.get("id"):
            rid = f"{spec['subset']}-{rec.get('_shard', '')}-{row}".replace("--", "-")
        if rec.get("_variant"):
            rid = f"{rid}-{rec['_variant']}"
        question = _field(rec, cols.get("question"))
        if _blank(question):
            question = spec.get("question_default")
        if _blank(question):
            dropped["item:missing_question"] += 1
            continue
        question = str(question)
        # choices
        cspec = cols.get("choices")
        published: list | None = None      # the choices as the file lists them (blank ones included)
        if cspec is None and spec.get("classes"):     # a classification benchmark: its label set
            choices = [str(c) for c in spec["classes"]]
        elif cspec == "embedded":
            question, choices = split_embedded(question)
        elif isinstance(cspec, list):
            choices = [str(rec.get(c)).strip() for c in cspec if not _blank(rec.get(c))]
            published = [_plain(rec.get(c)) for c in cspec]
            while published and _blank(published[-1]):
                published.pop()
        else:
            choices = [str(c) for c in as_list(_field(rec, cspec))]
            published = [_plain(c) for c in as_list(_field(rec, cspec))]
        kind = _kind_of(rec, spec, choices)
        answer = _field(rec, cols.get("answer"))
        refs_raw = _field(rec, cols.get("references")) if cols.get("references") else None
        refs = [str(x).strip() for x in as_list(refs_raw if refs_raw is not None else answer) if not _blank(x)]
        if kind == "open" and spec.get("binary_choices") and refs and \
                all(r.lower() in [b.lower() for b in spec["binary_choices"]] for r in refs):
            kind, choices, published = "mcq", list(spec["binary_choices"]), None
        if spec.get("answer_from") == "majority" and refs:
            top = Counter(r.lower() for r in refs).most_common()
            if len(top) > 1 and top[0][1] == top[1][1]:
                dropped["item:no_majority_answer"] += 1
                continue
            answer = next(r for r in refs if r.lower() == top[0][0])
        if kind == "open" and open_policy == "skip":
            dropped["item:open_ended"] += 1
            continue
        no_answer = _blank(answer) or (isinstance(answer, list) and not answer)
        if no_answer and kind == "mcq" or (no_answer and kind == "open" and not spec.get("allow_no_answer")):
            dropped["item:missing_answer"] += 1
            continue
        meta = _meta(rec, meta_spec, used)
        meta["kind"] = kind
        if spec.get("shard_field") and rec.get("_shard"):
            meta[spec["shard_field"]] = rec["_shard"]
        meta.setdefault("source", spec.get("source", spec.get("preset", "import")))
        item = {"id": rid, "task": "import", "dataset": dataset, "question": question, "meta": meta}
        if kind == "mcq":
            # a blank choice (MMAR's ['Entered', 'Did not enter', '']) is no option to our parser; the
            # official rules still see the list as published (item["published"])
            if sum(c.strip() != "" for c in choices) < 2:
                dropped["item:too_few_choices"] += 1
                continue
            if any(c.strip() == "" for c in choices):
                notes["item:blank_choices_not_options"] += 1
                choices = [c for c in choices if c.strip()]
            stripped = [c.strip() for c in choices]
            if len(set(stripped)) != len(stripped):
                if dup_policy == "skip":
                    dropped["item:duplicate_choices"] += 1
                    continue
                firsts = [i for i, c in enumerate(stripped) if stripped.index(c) == i]
                notes["item:duplicate_choices_merged"] += 1
                meta["choices_merged_from"] = len(choices)
                choices = [choices[i] for i in firsts]
            a = answer[0] if isinstance(answer, list) and answer else answer
            gi, why = _gold_index(a, choices, "auto" if spec.get("binary_choices") else answer_fmt)
            if gi is None:
                dropped[why] += 1
                continue
            labels = option_labels(len(choices))
            item.update(options=[{"label": lab, "text": c.strip(), "type": "choice", "meta": {}}
                                 for lab, c in zip(labels, choices)],
                        answer_label=labels[gi], answer_text=choices[gi].strip(), references=[])
            if spec.get("group_by"):
                item["references"] = refs
            _keep_published(item, published, a if answer_fmt == "text" and published is not None else None)
        elif kind == "open":
            a = answer[0] if isinstance(answer, list) and answer else answer
            a = None if _blank(a) else str(a).strip()
            item.update(options=[], answer_label=None, answer_text=a, references=refs or ([a] if a else []))
        else:
            meta["instruction"] = _instruction(rec, spec)
            item.update(options=[], answer_label=None, answer_text=None if _blank(answer) else str(answer),
                        references=[])
        audio = _field(rec, cols.get("audio"))
        clips = _audio_entries(audio, rec, spec, audio_dir)
        if not clips:
            dropped["item:no_audio_field"] += 1
            continue
        item["_clips"] = clips
        item["_row"] = row
        pending.append(item)
    items, clip_paths = _resolve(pending, root, audio_dir, spec, path, dropped)
    if not items:
        hint = ("; to read the items without their audio (released outputs are scored without it), call "
                "lalmbench.read_items(..., audio_needed=False)" if dropped.get("item:missing_audio") else "")
        raise InputError(f"dataset {dataset!r}: no usable item in {path} ({rows_read} rows read); left out: "
                         f"{dict(dropped) or 'nothing'}{hint}")
    clips = clips_frame(list(clip_paths), list(clip_paths.values()), source=str(spec.get("source", "import")),
                        split=str(spec.get("split_name", "")))
    stats = {"rows_read": rows_read, "records": len(records), "items_read": len(items), "clips": len(clips),
             "kinds": dict(Counter(it["meta"]["kind"] for it in items)),
             "dropped": {k: v for k, v in sorted(dropped.items()) if v}}
    if notes:
        stats["notes"] = dict(notes)
    if spec.get("audio_needed", True) is False:
        stats["audio"] = AUDIO_NOT_READ
    return Adapted(clips=clips, events=empty_events(), items=items, stats=stats)


def _keep_published(item: dict, choices: list | None, answer: Any) -> None:
    """``item["published"] = {choices, answer}`` when the file's choices or answer differ from the
    options and gold text (a blank, duplicate or padded choice, a padded answer): the official
    rules read the record as the benchmark's script does, by position and exact text."""
    texts = [o["text"] for o in item["options"]]
    shown = item["answer_text"] if answer is None else _plain(answer)
    if (choices is not None and choices != texts) or shown != item["answer_text"]:
        item["published"] = {"choices": texts if choices is None else choices, "answer": shown}


def _missing(spec: dict, dataset: str, key: str):
    from lalmbench.data.adapters.common import DatasetMissing

    raise DatasetMissing(f"dataset {dataset!r}: params.{key} is not set. {spec.get('how', '')}")


def _names(spec: Any) -> list[str]:
    if spec is None or spec == "embedded":
        return []
    if isinstance(spec, list):
        return [n for s in spec for n in _names(s)]
    s = str(spec)
    return [] if "{" in s else [s]           # a template's fields stay in meta (e.g. SAKURA's track)


def _kind_of(rec: dict, spec: dict, choices: list[str]) -> str:
    if spec.get("kind") in ("mcq", "open", "instruction"):
        return spec["kind"]
    when = spec.get("kind_when") or {}
    for kind in ("instruction", "open"):
        for col, val in (when.get(kind) or {}).items():
            if str(rec.get(col, "")).strip().lower() in [str(v).lower() for v in as_list(val)]:
                return kind
    if spec.get("kind_otherwise"):
        return str(spec["kind_otherwise"])
    return "mcq" if choices else "open"


def _instruction(rec: dict, spec: dict) -> dict:
    ins = spec.get("instruction") or {"task_identifier": "task_identifier", "kwargs": "kwargs"}
    tid = rec.get(ins["task_identifier"])
    kwargs = rec.get(ins["kwargs"])
    if isinstance(kwargs, str):
        try:
            kwargs = json.loads(kwargs) if kwargs.strip() else {}
        except json.JSONDecodeError:
            raise InputError(f"instruction kwargs {kwargs[:80]!r} is not JSON") from None
    kwargs = _plain(kwargs) if kwargs is not None else {}
    if isinstance(kwargs, dict):       # a parquet struct column gives every row every key; absent ones are null
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
    return {"task_identifier": _plain(tid), "kwargs": kwargs}


def _meta(rec: dict, meta_spec: Any, used: set[str]) -> dict:
    keep = [c for c in rec if c not in used and not c.startswith("_")] if meta_spec == "all" else list(meta_spec)
    out = {}
    for c in keep:
        v = rec.get(c)
        if isinstance(v, dict) and "bytes" in v:
            continue
        v = _plain(v)
        if isinstance(v, str) and v.strip().startswith("[") and v.strip().endswith("]"):
            v = as_list(v)
        out[c] = v
    return out


def _audio_entries(audio: Any, rec: dict, spec: dict, audio_dir: Path) -> list[tuple[str, bool]]:
    """[(relative path or cached file name, embedded?)] for one record."""
    template = spec.get("audio_template")
    vals = audio if isinstance(audio, list) else ([] if _blank(audio) else [audio])
    if isinstance(audio, np.ndarray):
        vals = audio.tolist()
    if isinstance(audio, str) and audio.strip().startswith("["):
        vals = as_list(audio)
    out = []
    for v in vals:
        if isinstance(v, dict) and v.get("bytes"):
            out.append((write_embedded(v, audio_dir), True))
        elif isinstance(v, dict):
            if not _blank(v.get("path")):
                out.append((str(v["path"]), False))
        elif not _blank(v):
            out.append((str(v), False))
    if template:
        fields = {k: ("" if _blank(x) else x) for k, x in rec.items() if not isinstance(x, (dict, list))}
        try:
            out = [(template.format(**dict(fields, path=p)), e) if not e else (p, e) for p, e in out]
        except KeyError as exc:
            raise InputError(f"audio_template {template!r} names a field the records do not have: {exc}") from None
    if spec.get("audio_basename"):      # a path on the authors' machine: the file is <audio_root>/<its name>
        out = [(p.replace("\\", "/").rsplit("/", 1)[-1], e) if not e else (p, e) for p, e in out]
    return [(p[2:] if p.startswith("./") else p, e) for p, e in out]


def _resolve(pending: list[dict], root: Path | None, audio_dir: Path, spec: dict, path: Path,
             dropped: Counter) -> tuple[list[dict], dict[str, str]]:
    """Check every referenced audio file (inside its root, present); items whose audio is missing are
    left out and counted; returns (items, clip_id -> audio path) with clip ids = relative paths."""
    first_row: dict[str, int] = {}
    for it in pending:
        for p, e in it["_clips"]:
            if not e:
                first_row.setdefault(p, it["_row"])
    rels = list(first_row)
    checks = audio_checks(dict(spec, missing_audio=spec.get("missing_audio", "skip")))
    found: dict[str, str] = {}
    if spec.get("audio_needed", True) is False:  # only imported outputs: nothing reads these files
        checks["check_exists"] = False
        if root is None:
            rels, found = [], {r: r for r in rels}
    if rels:
        if root is None:
            from lalmbench.data.adapters.common import DatasetMissing

            raise DatasetMissing(f"{path}: items name audio files ({rels[0]!r}, ...) but params.audio_root is not set; "
                                 f"set it to the folder they are relative to (lalmbench.read_items(..., audio_needed=False) reads the "
                                 f"items without their audio). {spec.get('how', '')}")
        paths, ok = resolve_audio(root, rels, source=str(path), rows=list(first_row.values()), **checks)
        found = {r: p for r, p, k in zip(rels, paths, ok.tolist()) if k}
    items, clip_paths, ids = [], {}, set()
    for it in pending:
        cl = it.pop("_clips")
        it.pop("_row")
        resolved = [(p, str(audio_dir / p)) if e else (p, found.get(p)) for p, e in cl]
        if any(ap is None for _, ap in resolved):
            dropped["item:missing_audio"] += 1
            continue
        if it["id"] in ids:
            dropped["item:duplicate_id"] += 1
            continue
        ids.add(it["id"])
        for cid, ap in resolved:
            clip_paths[cid] = ap
        it["clip_id"], it["audio_path"] = resolved[0]
        if len(resolved) > 1:
            it["clip_ids"] = [c for c, _ in resolved]
            it["audio_paths"] = [a for _, a in resolved]
        items.append(it)
    return items, clip_paths
