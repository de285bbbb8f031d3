"""Do two result folders agree, and where do they part? ``python -m lalmbench.checks.replicate A B``

Two runs of one config (two machines, two dates, two clusters) should give the same predictions.
For each run (model x dataset x task x condition x prompt) this joins the two folders' items by id
and names, per item, the first stage whose record differs:

``item set`` (the item is in one folder only) -> ``audio`` (the content digest of what the model
heard) -> ``prompt`` (the digest of the rendered prompt) -> ``raw output`` (the model's text or
error) -> ``parse`` (the parsed answer) -> ``score`` (correctness and every other decisions column).

An item whose first difference is its raw output got the same audio and prompt: the model, its
libraries or the machine computed differently. Beside the runs it lists the differences between
the environments the predictions record (every package version, the lock digest, CPU model and
flags, GPU and driver: lalmbench.core.provenance.environment) and the cells of ``all.tsv`` that
differ. Exit status: 0 when the results are identical (environments may differ), 1 when they
differ, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

from lalmbench.core import io
from lalmbench.core.provenance import environment_differences
from lalmbench.core.runs import Run

STAGES = ("item set", "audio", "prompt", "raw output", "parse", "score")
RUN_FIELDS = ("model", "dataset", "task", "condition", "prompt")
#: the columns each stage compares (score: every decisions column not named here)
STAGE_COLUMNS = {"audio": ("audio_digest",), "prompt": ("prompt_digest",), "raw output": ("raw_output", "error"),
                 "parse": ("pred_label", "parse_status", "parse_reason", "pred_pos")}
ALL_TSV_KEYS = ["model", "dataset", "task", "condition", "prompt", "metric"]
ENVIRONMENTS_KEY = "lalmbench.environments"  # lalmbench.inference.materialize writes it
MISSING = "-"
HEADER_MAX_BYTES = 1 << 16
#: a cell a spreadsheet would run as a formula (OWASP's list); written with a leading ``'``
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Folder:
    """One results folder: its predictions and decisions files by run, and its all.tsv."""
    root: Path
    predictions: dict[Run, Path]
    decisions: dict[Run, Path]
    all_tsv: Path | None


def results_folder(path: str | Path) -> Folder:
    """The files of a results folder (``results/``, or the checkout that holds it); a path that is no
    such folder is an InputError naming it."""
    root = Path(path)
    if not root.is_dir():
        raise io.InputError(f"{path}: no such folder")
    if not any((root / n).exists() for n in ("predictions", "scores", "all.tsv")) and (root / "results").is_dir():
        root = root / "results"
    preds = {Run(*p.relative_to(root / "predictions").with_suffix("").parts): p
             for p in sorted((root / "predictions").glob("*/*/*/*/*.parquet"))}
    decs = {Run(*p.parent.relative_to(root / "scores").parts): p
            for p in sorted((root / "scores").glob("*/*/*/*/*/decisions.parquet"))}
    all_tsv = root / "all.tsv"
    for p in [*preds.values(), *decs.values(), *([all_tsv] if all_tsv.exists() else [])]:
        if not p.is_file():  # a FIFO or device would block the read forever
            raise io.InputError(f"{p}: not a regular file")
    if not preds and not decs and not all_tsv.is_file():
        raise io.InputError(f"{path}: not a results folder: no all.tsv, no "
                            "predictions/<model>/<dataset>/<task>/<condition>/<prompt>.parquet and no "
                            "scores/<model>/<dataset>/<task>/<condition>/<prompt>/decisions.parquet in it")
    return Folder(root, preds, decs, all_tsv if all_tsv.is_file() else None)


@dataclass
class ItemDiff:
    id: str
    stage: str                 # the first stage that differs
    stages: list[str]          # every stage that differs, in order
    field: str                 # the first differing column of that stage
    a: Any
    b: Any
    detail: str = ""


@dataclass
class RunDiff:
    run: Run
    status: str                # identical | differs | only in A | only in B
    n_items: int = 0
    items: list[ItemDiff] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def first_stage(self) -> str | None:
        return min((d.stage for d in self.items), key=STAGES.index, default=None)

    @property
    def by_stage(self) -> dict[str, int]:
        return {s: n for s in STAGES if (n := sum(d.stage == s for d in self.items))}


def _cell(v: Any) -> Any:
    """A cell as a comparable plain value: numpy scalars as Python ones, lists and arrays as JSON,
    every kind of missing value as None."""
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True, default=str)
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    return v


def _side(preds: pd.DataFrame | None, decisions: pd.DataFrame | None) -> pd.DataFrame:
    """One folder's record of a run, one row per item id: its decisions, with the predictions'
    digests, raw output and error (the decisions' copies where there are no predictions)."""
    frames = []
    if decisions is not None:
        frames.append(decisions.set_index("id"))
    if preds is not None:
        cols = [c for c in ("audio_digest", "prompt_digest", "raw_output", "error", "extra") if c in preds.columns]
        frames.append(preds.set_index("id")[cols])
    if len(frames) == 2:
        return frames[1].join(frames[0].drop(columns=[c for c in frames[1].columns if c in frames[0].columns]),
                              how="outer")
    return frames[0]


def _read(path: Path | None) -> pd.DataFrame | None:
    if path is None:
        return None
    df = io.read_parquet(path)
    if "id" not in df.columns:
        raise io.InputError(f"{path}: no 'id' column (have {list(df.columns)})")
    if df["id"].duplicated().any():
        raise io.InputError(f"{path}: duplicate item ids {df['id'][df['id'].duplicated()].head(3).tolist()}")
    return df.assign(id=df["id"].astype(str))


def _extra_keys(a: Any, b: Any) -> str:
    """The top-level keys of two ``extra`` JSON cells that differ (a backend's intermediate stages)."""
    try:
        ea, eb = json.loads(a) if a else {}, json.loads(b) if b else {}
    except (TypeError, ValueError):
        return ""
    if not isinstance(ea, dict) or not isinstance(eb, dict):
        return ""
    keys = sorted(k for k in set(ea) | set(eb) if ea.get(k) != eb.get(k))
    return f"extra differs in: {', '.join(keys)}" if keys else ""


def compare_run(run: Run, a: Folder, b: Folder) -> RunDiff:
    """Every item of one run whose record differs between the two folders, at its first stage."""
    pa, pb = _read(a.predictions.get(run)), _read(b.predictions.get(run))
    da, db = _read(a.decisions.get(run)), _read(b.decisions.get(run))
    if pa is None and da is None:
        return RunDiff(run, "only in B")
    if pb is None and db is None:
        return RunDiff(run, "only in A")
    # a file the other folder lacks is a difference when that folder holds such files at all (a copy
    # of the predictions alone is compared on what it has)
    missing = [f"{what} only in {side}" for what, x, y, side, other in
               (("predictions", pa, pb, "A", b.predictions), ("predictions", pb, pa, "B", a.predictions),
                ("decisions", da, db, "A", b.decisions), ("decisions", db, da, "B", a.decisions))
               if x is not None and y is None and other]
    notes = list(missing)
    sa, sb = _side(pa, da), _side(pb, db)
    ids = sa.index.union(sb.index)
    in_a, in_b = ids.isin(sa.index), ids.isin(sb.index)
    sa, sb = sa.reindex(ids), sb.reindex(ids)
    decision_cols = set(da.columns if da is not None else ()) & set(db.columns if db is not None else ())
    named = {c for cols in STAGE_COLUMNS.values() for c in cols} | {"id", "extra"}
    # correctness first: the field an item's score stage names is the first of these that differs
    columns = {**STAGE_COLUMNS, "score": ("correct", "outcome", *sorted(decision_cols - named - {"correct", "outcome"}))}
    compared: dict[str, list[str]] = {}
    for stage, cols in columns.items():
        compared[stage] = [c for c in cols if c in sa.columns and c in sb.columns
                           and (stage not in ("parse", "score") or c in decision_cols)]
        if stage in ("audio", "prompt") and not compared[stage]:
            notes.append(f"{stage} not compared: {cols[0]} not recorded in "
                         + " and ".join(s for s, x in (("A", sa), ("B", sb)) if cols[0] not in x.columns))
    differs = {c: _differs(sa[c], sb[c]) for cols in compared.values() for c in cols}
    by_stage = {s: np.any([differs[c] for c in cols], axis=0) if cols else np.zeros(len(ids), bool)
                for s, cols in compared.items()}
    items = []
    for k in np.flatnonzero(~(in_a & in_b) | np.any(list(by_stage.values()), axis=0)):
        item = ids[k]
        if not (in_a[k] and in_b[k]):
            items.append(ItemDiff(item, "item set", ["item set"], "id", "present" if in_a[k] else MISSING,
                                  "present" if in_b[k] else MISSING))
            continue
        stages = [s for s in compared if by_stage[s][k]]
        col = next(c for c in compared[stages[0]] if differs[c][k])
        detail = _extra_keys(sa["extra"].iloc[k], sb["extra"].iloc[k]) \
            if stages[0] == "raw output" and "extra" in sa.columns and "extra" in sb.columns else ""
        items.append(ItemDiff(item, stages[0], stages, col, _cell(sa[col].iloc[k]), _cell(sb[col].iloc[k]), detail))
    status = "differs" if items or missing else "identical"
    return RunDiff(run, status, len(ids), items, notes)


def _differs(x: pd.Series, y: pd.Series) -> np.ndarray:
    """Per row, whether two cells differ (two missing values are equal; floats compare exactly)."""
    return np.array([_cell(u) != _cell(v) for u, v in zip(x, y)], dtype=bool)


def _environments(path: Path) -> tuple[list[dict], bool]:
    """(the environment records a predictions file carries, whether they are whole): files written
    before environments were recorded give only their ``versions`` column (a few packages)."""
    import pyarrow
    import pyarrow.parquet as pq

    try:
        recorded = json.loads(io.parquet_metadata(path).get(ENVIRONMENTS_KEY) or "{}")
        names = pq.read_schema(path).names
    except (pyarrow.ArrowInvalid, OSError) as exc:
        raise io.InputError(f"{path}: not a readable parquet file ({exc})") from None
    if recorded:
        return list(recorded.values()), True
    if "versions" not in names:
        return [], False
    versions = io.read_parquet(path, columns=["versions"])["versions"].dropna().unique()
    return [{"packages": json.loads(v)} for v in versions], False


def compare_environments(a: Folder, b: Folder) -> tuple[dict[str, list[dict]], list[str]]:
    """Per model present in both folders, the environment fields that differ between the records of
    its predictions in A and in B; plus notes for models with nothing recorded on a side."""
    out, notes = {}, []
    for model in sorted({r.model for r in a.predictions} & {r.model for r in b.predictions}):
        sides = []
        for folder in (a, b):
            records, whole = {}, True
            for run, path in folder.predictions.items():
                if run.model == model:
                    recs, ok = _environments(path)
                    whole &= ok
                    records.update((json.dumps(r, sort_keys=True), r) for r in recs)
            sides.append((list(records.values()), whole))
        (ra, wa), (rb, wb) = sides
        if not ra or not rb:
            notes.append(f"{model}: no environment recorded in " + " and ".join(
                s for s, r in (("A", ra), ("B", rb)) if not r))
            continue
        if not (wa and wb):
            notes.append(f"{model}: environments compared on the versions column only (predictions made before "
                         "environments were recorded)")
        diff = environment_differences(ra, rb, common_only=not (wa and wb))
        if diff:
            out[model] = diff
    return out, notes


def compare_all_tsv(a: Folder, b: Folder) -> list[dict]:
    """The cells of all.tsv that differ, read as text (``0.41`` vs ``0.410`` differs: the file is
    byte-stable for one config); a row or column on one side only is one entry. Nothing when a
    folder has no all.tsv. The measured columns (latency, time to first token) are left out: two
    runs of one config time differently whatever they compute."""
    from lalmbench.report.aggregate import MEASURED_COLUMNS

    if a.all_tsv is None or b.all_tsv is None:  # a folder without one is compared on what it has
        return []
    ta, tb = (_read_tsv(p) for p in (a.all_tsv, b.all_tsv))
    out = [{"column": c, "a": "present" if c in ta.columns else MISSING, "b": "present" if c in tb.columns else MISSING}
           for c in list(dict.fromkeys([*ta.columns, *tb.columns])) if (c in ta.columns) != (c in tb.columns)]
    m = ta.merge(tb, on=ALL_TSV_KEYS, how="outer", suffixes=("\0a", "\0b"), indicator=True)
    common = [c for c in ta.columns if c in tb.columns and c not in ALL_TSV_KEYS and c not in MEASURED_COLUMNS]
    for row in m.to_dict("records"):
        keys = {k: row[k] for k in ALL_TSV_KEYS}
        if row["_merge"] != "both":
            out.append({**keys, "column": "(row)", "a": "present" if row["_merge"] == "left_only" else MISSING,
                        "b": "present" if row["_merge"] == "right_only" else MISSING})
            continue
        out += [{**keys, "column": c, "a": row[f"{c}\0a"], "b": row[f"{c}\0b"]}
                for c in common if row[f"{c}\0a"] != row[f"{c}\0b"]]
    return out


def _read_tsv(path: Path) -> pd.DataFrame:
    try:
        with open(path, "rb") as f:
            header = f.readline(HEADER_MAX_BYTES)
        columns = header.decode("utf-8").rstrip("\r\n").split("\t")
    except UnicodeDecodeError as exc:
        raise io.InputError(f"{path}: not a readable TSV ({exc})") from None
    missing = [k for k in ALL_TSV_KEYS if k not in columns]
    if missing:  # checked on the first line, before a large file that is no all.tsv is read whole
        raise io.InputError(f"{path}: no column(s) {missing}: not a lalmbench all.tsv")
    try:
        df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise io.InputError(f"{path}: not a readable TSV ({exc})") from None
    dup = df.duplicated(ALL_TSV_KEYS)
    if dup.any():
        raise io.InputError(f"{path}: row {int(dup.idxmax()) + 2} repeats the key {df.loc[dup.idxmax(), ALL_TSV_KEYS].tolist()}")
    return df


@dataclass
class Report:
    a: Path
    b: Path
    runs: list[RunDiff]
    environment: dict[str, list[dict]]
    environment_notes: list[str]
    all_tsv: list[dict]
    notes: list[str] = field(default_factory=list)  # what one folder lacks entirely, so was not compared

    @property
    def identical(self) -> bool:
        return not self.all_tsv and all(r.status == "identical" for r in self.runs)


def compare(path_a: str | Path, path_b: str | Path) -> Report:
    a, b = results_folder(path_a), results_folder(path_b)
    runs = sorted(set(a.predictions) | set(a.decisions) | set(b.predictions) | set(b.decisions),
                  key=lambda r: tuple(getattr(r, f) for f in RUN_FIELDS))
    env, env_notes = compare_environments(a, b)
    notes = [f"{what} only in {side}: not compared" for what, x, y, side in
             (("all.tsv", a.all_tsv, b.all_tsv, "A"), ("all.tsv", b.all_tsv, a.all_tsv, "B"),
              ("decisions", a.decisions, b.decisions, "A"), ("decisions", b.decisions, a.decisions, "B"),
              ("predictions", a.predictions, b.predictions, "A"), ("predictions", b.predictions, a.predictions, "B"))
             if x and not y]
    if not a.decisions and not b.decisions:
        notes.append("no decisions in either folder: parse and score not compared")
    return Report(a.root, b.root, [compare_run(r, a, b) for r in runs], env, env_notes, compare_all_tsv(a, b), notes)


def rows(report: Report) -> list[dict]:
    """Every difference as one flat row (the ``--tsv`` file): runs on one side only, items at their
    first differing stage, environment fields per model, all.tsv cells."""
    out = []
    blank = dict.fromkeys([*RUN_FIELDS, "metric", "item"], "")
    for r in report.runs:
        run = {**blank, **{f: getattr(r.run, f) for f in RUN_FIELDS}}
        if r.status.startswith("only in"):
            side = r.status[-1]
            out.append({**run, "stage": "run", "stages": "", "field": "run", "a": "present" if side == "A" else MISSING,
                        "b": "present" if side == "B" else MISSING, "detail": ""})
        out += [{**run, "item": d.id, "stage": d.stage, "stages": ", ".join(d.stages), "field": d.field, "a": d.a,
                 "b": d.b, "detail": d.detail} for d in r.items]
    for model, diff in report.environment.items():
        out += [{**blank, "model": model, "stage": "environment", "stages": "", **d, "detail": ""} for d in diff]
    for d in report.all_tsv:
        out.append({**blank, **{k: d.get(k, "") for k in ALL_TSV_KEYS}, "stage": "all.tsv", "stages": "",
                    "field": d["column"], "a": d["a"], "b": d["b"], "detail": ""})
    return out


def _inert(v: Any) -> Any:
    """A text cell as a spreadsheet shows it without running it: a leading ``'`` before ``=``, ``+``,
    ``-``, ``@``, tab or carriage return; numbers and the missing mark ``-`` stay as they are."""
    if not isinstance(v, str) or not v.startswith(FORMULA_START) or v == MISSING:
        return v
    try:
        float(v)
        return v
    except ValueError:
        return "'" + v


def to_json(report: Report) -> dict:
    return {
        "a": str(report.a), "b": str(report.b), "identical": report.identical,
        "runs": [{**{f: getattr(r.run, f) for f in RUN_FIELDS}, "status": r.status, "n_items": r.n_items,
                  "first_stage": r.first_stage, "by_stage": r.by_stage, "notes": r.notes,
                  "items": [vars(d) for d in r.items]} for r in report.runs],
        "environment": report.environment, "environment_notes": report.environment_notes, "all_tsv": report.all_tsv,
        "notes": report.notes,
    }


def _short(v: Any, width: int = 36, *, quote: bool = True) -> str:
    """A value for the text table: model text quoted (whitespace shows), file cells as they are."""
    text = MISSING if v is None else repr(v) if isinstance(v, str) and (quote or not v) else str(v)
    return text if len(text) <= width else text[:width - 1] + "…"


def _table(header: list[str], body: Iterable[list[str]]) -> list[str]:
    body = [header, *body]
    widths = [max(len(row[i]) for row in body) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in body]


def render(report: Report, *, max_items: int = 5, max_cells: int = 20) -> str:
    """The report as text: a summary line, the runs that differ with their first items, the runs in
    one folder only (by model), notes on what could not be compared, the environment differences per
    model and the all.tsv cells."""
    n = {s: sum(r.status == s for r in report.runs) for s in ("identical", "differs", "only in A", "only in B")}
    cols = pd.Series([d["column"] for d in report.all_tsv], dtype=object).value_counts()
    lines = [f"A: {report.a}", f"B: {report.b}",
             f"{len(report.runs)} runs: {n['identical']} identical, {n['differs']} differ, {n['only in A']} only in A, "
             f"{n['only in B']} only in B; all.tsv: {len(report.all_tsv)} cells differ"
             + (f" ({', '.join(f'{c} {k}' for c, k in cols.items())})" if len(cols) else ""), ""]
    bad = [r for r in report.runs if r.status == "differs"]
    if bad:
        lines += ["Runs whose results differ (first stage: the earliest stage any item differs at)"]
        lines += _table(["model", "dataset", "task", "condition", "prompt", "first stage", "items", "items by first stage"],
                        [[*(getattr(r.run, f) for f in RUN_FIELDS), r.first_stage or "-",
                          f"{len(r.items)}/{r.n_items}", ", ".join(f"{s} {k}" for s, k in r.by_stage.items())]
                         for r in bad])
        for r in bad:
            lines += ["", f"{r.run.key}: " + ("; ".join(x for x in r.notes if x.endswith(("only in A", "only in B")))
                                              or f"{len(r.items)} of {r.n_items} items differ")]
            shown = sorted(r.items, key=lambda d: (STAGES.index(d.stage), d.id))[:max_items]
            if shown:
                lines += ["  " + x for x in _table(["item", "first stage", "field", "A", "B", "also differs"],
                                                   [[d.id, d.stage, d.field, _short(d.a), _short(d.b),
                                                     ", ".join(d.stages[1:]) + (f" ({d.detail})" if d.detail else "")]
                                                    for d in shown])]
            if len(r.items) > len(shown):
                lines.append(f"  … {len(r.items) - len(shown)} more items (--tsv/--json list every one)")
    elif n["identical"]:
        lines += ["Every run in both folders has identical results."]
    else:
        lines += ["No run is in both folders."]
    for side in ("A", "B"):
        only = pd.Series([r.run.model for r in report.runs if r.status == f"only in {side}"], dtype=object)
        if len(only):
            lines += ["", f"Runs only in {side}: " + ", ".join(f"{m} ({k})" for m, k in only.value_counts(sort=False).items())]
    notes = pd.Series([x for r in report.runs for x in r.notes if not x.endswith(("only in A", "only in B"))],
                      dtype=object).value_counts(sort=False)
    lines += [""] + [f"note: {x}" for x in report.notes] + [f"note ({k} runs): {x}" for x, k in notes.items()]
    lines += [""] if len(notes) or report.notes else []
    lines += _environment_lines(report)
    if report.all_tsv:
        shown = report.all_tsv[:max_cells]
        lines += ["", "all.tsv cells that differ"]
        lines += _table([*ALL_TSV_KEYS, "column", "A", "B"],
                        [[str(d.get(k, "")) for k in ALL_TSV_KEYS] + [d["column"], _short(d["a"], 24, quote=False),
                                                                  _short(d["b"], 24, quote=False)]
                         for d in shown])
        if len(report.all_tsv) > len(shown):
            lines.append(f"… {len(report.all_tsv) - len(shown)} more cells (--tsv/--json list every one)")
    return "\n".join(lines).rstrip() + "\n"


def _environment_lines(report: Report) -> list[str]:
    """Environment differences, once per group of models with the same differences (one machine
    per folder usually ran them all)."""
    if not report.environment:
        return ["Environments: no difference recorded"] + [f"  note: {x}" for x in report.environment_notes]
    groups: dict[str, list[str]] = {}
    for model, diff in report.environment.items():
        groups.setdefault(json.dumps(diff), []).append(model)
    lines = ["Environment differences (context: they explain a difference, they are not one)"]
    for blob, models in groups.items():
        diff = json.loads(blob)
        lines += [f"  models {', '.join(models)}: {len(diff)} fields"]
        lines += ["    " + x for x in _table(["field", "A", "B"], [[d["field"], _short(d["a"], 48, quote=False),
                                                                    _short(d["b"], 48, quote=False)]
                                                                   for d in diff])]
    return lines + [f"  note: {x}" for x in report.environment_notes]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lalmbench.checks.replicate", description=__doc__.split("\n")[0])
    ap.add_argument("results_a", metavar="RESULTS_A", help="a results folder (or the checkout holding results/)")
    ap.add_argument("results_b", metavar="RESULTS_B", help="the results folder to compare it with")
    ap.add_argument("--tsv", help="write every difference, one row each, to this TSV")
    ap.add_argument("--json", help="write the whole report to this JSON file")
    ap.add_argument("--items", type=int, default=5, help="items shown per run on stdout (default 5)")
    args = ap.parse_args(argv)
    try:
        report = compare(args.results_a, args.results_b)
    except io.InputError as exc:
        print(f"replicate: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(report, max_items=args.items))
    if args.tsv:
        io.write_tsv(args.tsv, pd.DataFrame([{k: _inert(v) for k, v in r.items()} for r in rows(report)], columns=[*RUN_FIELDS, "metric", "item", "stage", "stages",
                                                                   "field", "a", "b", "detail"]))
    if args.json:
        io.write_json(args.json, to_json(report))
    return 0 if report.identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
