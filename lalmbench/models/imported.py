"""``backend: imported`` -- another harness's published outputs, served as if a model had answered.

Published outputs (a leaderboard's JSONL, another benchmark's ``raw_model_outputs.jsonl``) enter the
pipeline as a model, so scoring, all.tsv, figures, the browser and paired comparisons with models run
here treat them like any other run. Settings (model entry ``params``):

  predictions:  the file (jsonl | json | csv | tsv | parquet, read by lalmbench.data.adapters.tables)
  columns:      {id: ..., raw_output: ...}; default id ``id`` and the first of raw_output, output,
                response, prediction, pred present in the file
  id_template:  a ``{column}`` template that builds our item id from a record (``{task}_{id}``), for
                files whose ids are spelled differently from the items'
  id_pattern:   a regular expression applied to that id; its first group is the item id (a path such as
                ``.../000000_87594.mp3__safety_presence.mp3`` -> ``87594.mp3__safety_presence``);
                records it does not match are left out, counted and logged
  labels:       hidden (default) | shown -- whether the prompt that produced the outputs showed option
                labels; it decides how the parser reads them (:func:`parser_cfg`)
  columns.question / choices / answer: the item each output was made on, which released files usually
                carry (default: the first of ``question``; ``choices``, ``options``; ``answer``,
                ``gt_answer``, ``answer_gt`` present). Each output's own item rides in its prediction
                row's ``extra`` (``own_item``), where scoring compares it with ours
                (:mod:`lalmbench.scoring.item_versions`)
  items_from:   items (default) | predictions -- score against today's items, or against the items the
                outputs were made on (their own question, choices and answer)

An item the file has no output for is an item error naming the id and the file (counted against
``max_error_rate``); outputs whose id no item asked for are counted and logged when the job ends.
The file's content digest is part of the model fingerprint (:func:`content_key`), so editing the
file in place regenerates its predictions.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from lalmbench.core.io import InputError
from lalmbench.data.adapters.tables import load_records
from lalmbench.inference.prompts import shows_labels
from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend

log = logging.getLogger(__name__)

BACKEND = "imported"
#: output columns tried in order when ``columns.raw_output`` is not set
OUTPUT_COLUMNS = ("raw_output", "output", "response", "prediction", "pred")
#: the outputs were written with another benchmark's prompt, which (unless told) showed no letters
DEFAULT_LABELS = "hidden"
#: columns tried in order for the item each output was made on, when ``columns.<field>`` is not set
ITEM_COLUMNS = {"question": ("question",), "choices": ("choices", "options"),
                "answer": ("answer", "gt_answer", "answer_gt")}


def needs_audio(model_cfg: Mapping[str, Any]) -> bool:
    """False for imported outputs: their answers were made elsewhere, so no job of theirs reads,
    decodes or waits for an audio file (lalmbench.inference.plan.slice_from_spec)."""
    return model_cfg.get("backend") != BACKEND


def predictions_path(model_cfg: Mapping[str, Any]) -> Path:
    """The imported file of a model entry; an error naming the entry's key when it is not set."""
    path = (model_cfg.get("params") or {}).get("predictions")
    if not path:
        raise InputError("backend imported: params.predictions (the file of imported outputs) is required")
    return Path(path)


def content_key(model_cfg: Mapping[str, Any]) -> dict[str, str]:
    """What the fingerprint adds for an imported model: the sha1 of its file's bytes."""
    from lalmbench.inference.fingerprint import file_digest

    path = predictions_path(model_cfg)
    if not path.is_file():
        raise InputError(f"backend imported: params.predictions: file not found: {path}")
    return {"predictions_sha1": file_digest(path)}


def read_file(model_cfg: Mapping[str, Any]) -> ImportedFile:
    """The imported file of a model entry, read with the entry's settings."""
    p = dict(model_cfg.get("params") or {})
    return read_imported(predictions_path(model_cfg), columns=p.get("columns"), id_template=p.get("id_template"),
                         id_pattern=p.get("id_pattern"))


def parser_cfg(task_parser: Mapping[str, Any] | None, model_cfg: Mapping[str, Any], template: str) -> dict:
    """A run's parser settings with ``labels`` resolved.

    Own models: ``auto`` follows the run's prompt template (no ``{options}``/``{labels}``: hidden).
    Imported models: our template never reached them, so the model entry's ``labels`` decides; when it
    is unset an explicit task ``parser.labels`` wins, and otherwise they are ``hidden``."""
    cfg = dict(task_parser or {})
    task_labels = cfg.get("labels", "auto")
    if model_cfg.get("backend") == BACKEND:
        own = (model_cfg.get("params") or {}).get("labels")
        cfg["labels"] = own or (task_labels if task_labels != "auto" else DEFAULT_LABELS)
    elif task_labels == "auto":
        cfg["labels"] = "shown" if shows_labels(template) else "hidden"
    return cfg


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


@dataclass
class ImportedFile:
    """An imported file read: its outputs, the item each was made on (where the file says), and the
    records ``id_pattern`` left out."""

    outputs: dict[str, Any]
    own_items: dict[str, dict] = field(default_factory=dict)
    unread: int = 0
    #: the fields the file carries (question, choices, answer) and the column each comes from
    item_columns: dict[str, str] = field(default_factory=dict)


def _item_columns(present: set[str], columns: Mapping[str, str], out_col: str) -> dict[str, str]:
    found = {}
    for name, tried in ITEM_COLUMNS.items():
        col = columns.get(name) or next((c for c in tried if c in present and c != out_col), None)
        if col:
            found[name] = col
    return found


def _own_item(rec: Mapping[str, Any], item_columns: Mapping[str, str]) -> dict:
    """The question, choices and answer a record says its output was made on (blank fields left out)."""
    from lalmbench.data.adapters.reader import as_list

    own: dict[str, Any] = {}
    for name, col in item_columns.items():
        v = rec.get(col)
        if name == "choices":
            v = [str(c) for c in as_list(v)]
            if v:
                own[name] = v
        elif not _blank(v) and str(v).strip():
            own[name] = str(v)
    return own


def read_outputs(path: Path, *, columns: Mapping[str, str] | None = None, id_template: str | None = None,
                 id_pattern: str | None = None) -> tuple[dict[str, str], int]:
    """(item id -> raw output, records whose id ``id_pattern`` did not match) of an imported file."""
    f = read_imported(path, columns=columns, id_template=id_template, id_pattern=id_pattern)
    return f.outputs, f.unread


def read_imported(path: Path, *, columns: Mapping[str, str] | None = None, id_template: str | None = None,
                  id_pattern: str | None = None) -> ImportedFile:
    """An imported file's outputs by item id, and the item each was made on. A record without an id
    or output column, or two records with one id, is an error naming the file and the record."""
    recs = load_records(path)
    pattern = re.compile(id_pattern) if id_pattern else None
    unread = 0
    cols = dict(columns or {})
    id_col = cols.get("id", "id")
    out_col = cols.get("raw_output")
    present = set().union(*(r.keys() for r in recs[:100])) if recs else set()
    if out_col is None:
        out_col = next((c for c in OUTPUT_COLUMNS if c in present), None)
        if out_col is None:
            raise InputError(f"{path}: no output column (tried {', '.join(OUTPUT_COLUMNS)}; have "
                             f"{sorted(present)}); set params.columns.raw_output")
    item_cols = _item_columns(present, cols, out_col)
    outputs: dict[str, str] = {}
    own_items: dict[str, dict] = {}
    for n, rec in enumerate(recs, 1):
        try:
            key = id_template.format(**rec) if id_template else rec[id_col]
        except KeyError as exc:
            raise InputError(f"{path}: record {n}: no column {exc.args[0]!r} for the id "
                             f"({'id_template ' + repr(id_template) if id_template else 'columns.id'}); "
                             f"have {sorted(rec)}") from None
        if out_col not in rec:
            raise InputError(f"{path}: record {n}: no output column {out_col!r}; have {sorted(rec)}")
        key = str(key)
        if pattern is not None:
            m = pattern.search(key)
            if m is None:
                unread += 1
                continue
            key = m.group(1) if m.groups() else m.group(0)
        if key in outputs:
            raise InputError(f"{path}: record {n}: id {key!r} appears twice")
        outputs[key] = rec[out_col]
        if item_cols and (own := _own_item(rec, item_cols)):
            own_items[key] = own
    if unread:
        log.warning("%s: %d of %d records left out: id_pattern %r does not match their id", path, unread, len(recs),
                    id_pattern)
    return ImportedFile(outputs, own_items, unread, item_cols)


@register_backend(BACKEND)
class ImportedOutputs(Model):
    """Answers each item with the imported file's output for its id; never looks at audio or prompt."""

    def __init__(self, name: str, cfg: dict[str, Any]):
        super().__init__(name, cfg)
        p = dict(cfg.get("params") or {})
        self.path = predictions_path(cfg)
        self.file = read_file(cfg)
        self.outputs, self.unread = self.file.outputs, self.file.unread
        self.items_from = p.get("items_from", "items")
        self.asked: set[str] = set()
        log.info("%s: %d imported outputs from %s", name, len(self.outputs), self.path)

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        out = []
        for x in batch:
            self.asked.add(x.id)
            raw = self.outputs.get(x.id)
            if x.id not in self.outputs or _blank(raw):
                out.append(ModelOutput(raw_output=None, error=f"no imported output for item {x.id!r} in {self.path}"))
            else:
                own = self.file.own_items.get(x.id)
                out.append(ModelOutput(raw_output=str(raw), extra={"own_item": own} if own else None))
        return out

    def unmatched(self) -> list[str]:
        """Ids in the file that no item asked for in this job (items served from the cache never ask)."""
        return sorted(set(self.outputs) - self.asked)

    def provenance(self) -> dict[str, Any]:
        return {"imported_from": str(self.path), "imported_outputs": len(self.outputs),
                "records_unread": self.unread, "item_columns": self.file.item_columns, "items_from": self.items_from}

    def close(self) -> None:
        if extra := self.unmatched():
            log.warning("%s: %d of %d outputs in %s matched no item asked for in this job (e.g. %s); check the ids "
                        "or params.id_template", self.name, len(extra), len(self.outputs), self.path,
                        ", ".join(map(repr, extra[:3])))
