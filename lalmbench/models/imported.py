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
                carry. Unmapped, a column is read only when its name is unambiguous: ``question``;
                ``choices``, ``options``; ``gt_answer``, ``answer_gt``. A plain ``answer`` column is the
                gold only when the file carries the full item (a question and choices column); otherwise
                it is the model's answer (the output, when the file has no other output column), since
                agentic submissions write their final answer there. Each output's own item rides in its
                prediction row's ``extra`` (``own_item``), where scoring compares it with ours
                (:mod:`lalmbench.scoring.item_versions`); :attr:`ImportedFile.reading` says which
                reading was taken
  items_from:   items (default) | predictions -- score against today's items, or against the items the
                outputs were made on (their own question, choices and answer)
  missing:      leave-out (default) | wrong -- an item the file has no output for is left out of
                ``value`` and ``value_official`` (counted in all.tsv ``flags``), or counted as wrong

An item the file has no output for is not a failed generation (rerunning cannot make one): its
prediction row has no output and no error, marked in ``extra`` (:data:`NO_OUTPUT_KEY`), and scoring
applies ``missing`` (lalmbench.scoring.run). Outputs whose id no item asked for are counted and
logged when the job ends.
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
from lalmbench.data.adapters.tables import UNREADABLE, load_records
from lalmbench.inference.prompts import shows_labels
from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend
from lalmbench.core.items import OUTSIDE_LABELS

log = logging.getLogger(__name__)

BACKEND = "imported"
#: output columns tried in order when ``columns.raw_output`` is not set
OUTPUT_COLUMNS = ("raw_output", "output", "response", "prediction", "pred")
#: the outputs were written with another benchmark's prompt, which (unless told) showed no letters; the
#: public API's default too, so a file scores the same in Python and in the workflow
DEFAULT_LABELS = OUTSIDE_LABELS
#: columns tried in order for the item each output was made on, when ``columns.<field>`` is not set;
#: each name says it holds the item, never the model's answer
ITEM_COLUMNS = {"question": ("question",), "choices": ("choices", "options"), "answer": ("gt_answer", "answer_gt")}
#: a column that is the gold answer in a file carrying the full item, and the model's answer elsewhere
AMBIGUOUS_ANSWER = "answer"
#: ``extra`` key of a prediction row whose item the file has no output for (value: the file)
NO_OUTPUT_KEY = "no_output"
#: what scoring does with such an item: left out of value and value_official, or counted as wrong
MISSING_MODES = ("leave-out", "wrong")
DEFAULT_MISSING = "leave-out"


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


def missing_mode(model_cfg: Mapping[str, Any]) -> str:
    """What scoring does with an item the model's file has no output for (``params.missing``); empty
    for any other backend, whose predictions never lack an output that way."""
    if model_cfg.get("backend") != BACKEND:
        return ""
    return str((model_cfg.get("params") or {}).get("missing", DEFAULT_MISSING))


def reading_note(model_cfg: Mapping[str, Any]) -> str | None:
    """How the entry's file is read (:attr:`ImportedFile.reading`), for the workflow to print when it
    plans; None while the file does not exist yet (the plan then says nothing about it)."""
    if not predictions_path(model_cfg).is_file():
        return None
    return read_file(model_cfg).reading


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
    #: the column the outputs come from
    output_column: str = ""
    #: the file has an ``answer`` column read as the model's answer (the output, or beside it), not the gold
    answer_is_models: bool = False
    #: how the file's columns were read, in words (printed when the workflow plans, kept in the
    #: item-version check): the output column, the item fields and why an ``answer`` column is not the gold
    reading: str = ""
    #: records that cannot be read as an output, by reason: where each is (``file:line``, or
    #: ``file: record n`` outside JSON Lines); the rest of the file is read
    left_out: dict[str, list[str]] = field(default_factory=dict)


def _item_columns(present: set[str], columns: Mapping[str, str], out_col: str) -> dict[str, str]:
    """The item fields a file carries and their columns: the mapped ones, and the unmapped ones whose
    name is unambiguous; ``answer`` only when the file carries the full item (question and choices)."""
    found = {}
    for name, tried in ITEM_COLUMNS.items():
        col = columns.get(name) or next((c for c in tried if c in present and c != out_col), None)
        if col:
            found[name] = col
    if ("answer" not in found and AMBIGUOUS_ANSWER in present and AMBIGUOUS_ANSWER != out_col
            and "question" in found and "choices" in found):
        found["answer"] = AMBIGUOUS_ANSWER
    return found


def _reading(path: Path, columns: Mapping[str, str], out_col: str, item_cols: Mapping[str, str],
             answer_is_models: bool) -> str:
    """The sentence that says how a file's columns were read (see :attr:`ImportedFile.reading`)."""
    how = "mapped" if "raw_output" in columns else "found"
    parts = [f"{path}: outputs from column {out_col!r} ({how})"]
    if item_cols:
        parts.append("the item each was made on from " + ", ".join(
            f"{name} {col!r}" + (" (mapped)" if columns.get(name) == col else "") for name, col in item_cols.items()))
    else:
        parts.append("no item fields: the item version the outputs were made on is not checked")
    if answer_is_models:
        why = ("it is the output column" if out_col == AMBIGUOUS_ANSWER
               else "the file does not carry the full item, question and choices")
        parts.append(f"column {AMBIGUOUS_ANSWER!r} read as the model's answer, not the item's gold ({why}; "
                     f"set params.columns.answer to read it as the gold)")
    return "; ".join(parts)


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
    or output column, or nested too deep to read, is left out, counted and named by line
    (:attr:`ImportedFile.left_out`); a file with no readable record, or two records with one id, is
    an error naming the file and the record."""
    recs = load_records(path)
    pattern = re.compile(id_pattern) if id_pattern else None
    unread = 0
    cols = dict(columns or {})
    id_col = cols.get("id", "id")
    out_col = cols.get("raw_output")
    present = set().union(*(r.keys() for r in recs[:100])) if recs else set()
    if out_col is None:
        out_col = next((c for c in OUTPUT_COLUMNS if c in present), None)
        full_item = bool(cols.get("question") or "question" in present) and bool(
            cols.get("choices") or {"choices", "options"} & present)
        if out_col is None and AMBIGUOUS_ANSWER in present and "answer" not in cols and not full_item:
            out_col = AMBIGUOUS_ANSWER  # a lone answer column beside an id: the model's answer
        if out_col is None:
            raise InputError(f"{path}: no output column (tried {', '.join(OUTPUT_COLUMNS)}; have "
                             f"{sorted(present)}); set params.columns.raw_output")
    item_cols = _item_columns(present, cols, out_col)
    outputs: dict[str, str] = {}
    own_items: dict[str, dict] = {}
    left_out: dict[str, list[str]] = {}
    lines = _record_lines(path)
    for n, rec in enumerate(recs, 1):
        where = f"{path}:{lines[n - 1]}" if lines and len(lines) == len(recs) else f"{path}: record {n}"
        if UNREADABLE in rec:
            left_out.setdefault("values nested too deep to read", []).append(where)
            continue
        try:
            key = id_template.format(**rec) if id_template else rec[id_col]
        except KeyError as exc:
            left_out.setdefault(f"no column {exc.args[0]!r} for the id ("
                                f"{'id_template ' + repr(id_template) if id_template else 'columns.id'})",
                                []).append(where)
            continue
        if out_col not in rec:
            left_out.setdefault(f"no output column {out_col!r}", []).append(where)
            continue
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
    for reason, where in left_out.items():
        log.warning("%d of %d records left out: %s (%s)", len(where), len(recs), reason,
                    ", ".join(where[:5]) + (", ..." if len(where) > 5 else ""))
    if recs and not outputs and left_out:
        raise InputError(f"{path}: no record can be read as an output: " + "; ".join(
            f"{reason} ({where[0]}{', ...' if len(where) > 1 else ''})" for reason, where in left_out.items()))
    models_answer = AMBIGUOUS_ANSWER in present and item_cols.get("answer") != AMBIGUOUS_ANSWER
    return ImportedFile(outputs, own_items, unread, item_cols, out_col, models_answer,
                        _reading(path, cols, out_col, item_cols, models_answer), left_out)


def _record_lines(path: Path) -> list[int] | None:
    """The line number of each record of a JSON Lines file (blank lines hold none); None for other formats."""
    if not Path(path).is_file() or not str(path).lower().endswith(".jsonl"):
        return None
    with open(path, "rb") as fh:
        return [n for n, line in enumerate(fh, 1) if line.strip()]


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
        self.without_output: list[str] = []
        log.info("%s: %d imported outputs from %s", name, len(self.outputs), self.path)

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        out = []
        for x in batch:
            self.asked.add(x.id)
            raw = self.outputs.get(x.id)
            if x.id not in self.outputs or _blank(raw):
                self.without_output.append(x.id)
                out.append(ModelOutput(raw_output=None, extra={NO_OUTPUT_KEY: str(self.path)}))
            else:
                own = self.file.own_items.get(x.id)
                out.append(ModelOutput(raw_output=str(raw), extra={"own_item": own} if own else None))
        return out

    def unmatched(self) -> list[str]:
        """Ids in the file that no item asked for in this job (items served from the cache never ask)."""
        return sorted(set(self.outputs) - self.asked)

    def provenance(self) -> dict[str, Any]:
        return {"imported_from": str(self.path), "imported_outputs": len(self.outputs),
                "records_unread": self.unread, "records_left_out": {r: len(w) for r, w in self.file.left_out.items()},
                "item_columns": self.file.item_columns, "items_from": self.items_from}

    def close(self) -> None:
        if self.without_output:
            log.warning("%s: %d of %d items asked for in this job have no output in %s (e.g. %s): scoring leaves "
                        "them out, or counts them wrong with params.missing: wrong", self.name,
                        len(self.without_output), len(self.asked), self.path,
                        ", ".join(map(repr, self.without_output[:3])))
        if extra := self.unmatched():
            log.warning("%s: %d of %d outputs in %s matched no item asked for in this job (e.g. %s); check the ids "
                        "or params.id_template", self.name, len(extra), len(self.outputs), self.path,
                        ", ".join(map(repr, extra[:3])))
