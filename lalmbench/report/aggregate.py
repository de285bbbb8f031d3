"""All metrics.json -> results/all.tsv: one row per run x metric, sorted, byte-stable."""
from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd

from lalmbench.core import io
from lalmbench.scoring.cost import ALL_TSV_COLUMNS, MEASURED, all_tsv_cells

KEYS = ["model", "dataset", "task", "condition", "prompt", "metric"]
VALUES = ["value", "ci_low", "ci_high", "n", "chance", "p_vs_chance", "parse_failure_rate"]
PROVENANCE = ["model_id", "model_revision", "backend", "parser_version", "config_hash"]
#: after ``flags`` so the columns before it never move: the rule+judge accuracy of an MCQ run with
#: the LLM-judge fallback on (``value`` stays rule-only) and the judge's agreement with the rules
JUDGED = ["value_with_judge", "judge_agreement"]
#: after JUDGED, for the same reason: the benchmark's own scoring rule applied to the same outputs
#: (lalmbench.scoring.official; empty where the dataset names none) and the items it kept
OFFICIAL = ["value_official", "n_official"]
#: after OFFICIAL, for the same reason: how many clips the items ask about, the design effect that
#: widened ``ci_low``/``ci_high`` where a clip carries several items (``ci_method`` says which), the
#: item-level Wilson interval, and the share of outputs that were non-answers (``parse_failure_rate``
#: counts them too)
CLUSTERED = ["n_clips", "design_effect", "ci_method", "wilson_ci_low", "wilson_ci_high", "non_answer_rate"]
#: last, for the same reason: a run's mean tokens in (and the audio's share), out (and a thinking span's
#: share), latency and time to first token, for a language-model backend; empty, with why in
#: ``cost_note``, for the others (lalmbench.scoring.cost.all_tsv_cells)
COST = list(ALL_TSV_COLUMNS)
COLUMNS = KEYS + VALUES + PROVENANCE + ["flags"] + JUDGED + OFFICIAL + CLUSTERED + COST
#: measured on the machine, so they differ between two fresh runs of a language-model backend (a rerun
#: from the prediction cache keeps them): compare two such all.tsv files without them
MEASURED_COLUMNS: tuple[str, ...] = MEASURED


RUN_KEYS = KEYS[:-1]
FLAG_SEP = "; "
#: a text cell never holds a line break or a tab: all.tsv stays one line per row for line tools
#: (grep, cut, awk) whatever a model id, revision or flag holds
_ONE_LINE = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def metrics_rows(metrics: dict) -> list[dict]:
    """A metrics.json holds one headline metric, plus optional extra ones under ``metrics`` (list of dicts).
    Its ``flags`` (e.g. a captioning headline that fell back to another metric) go on every row."""
    base = {k: metrics.get(k) for k in RUN_KEYS + PROVENANCE}
    base["flags"] = list(metrics.get("flags") or [])
    base.update(all_tsv_cells(metrics.get("cost")))
    rows = [{**base, **{k: metrics.get(k) for k in ["metric"] + VALUES + JUDGED + OFFICIAL + CLUSTERED}}]
    for extra in metrics.get("extra_metrics", []):
        rows.append({**base, **{k: extra.get(k, metrics.get(k) if k in ("n", "chance") else None)
                                for k in ["metric"] + VALUES},
                     # a sampled run's rows (scoring.sampled) say how their samples widened the interval
                     **{k: extra[k] for k in CLUSTERED if k in extra}})
    return rows


def model_flags(check_paths: Iterable[str]) -> dict[str, list[str]]:
    """model -> flags from its listening-check result (flagged, or too few items to tell)."""
    from lalmbench.checks.listening import check_flags

    flags = {}
    for p in check_paths:
        r = io.read_json(p)
        if check_flags(r):
            flags[r["model"]] = check_flags(r)
    return flags


def task_flags(stats_paths: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """(dataset, task) -> flags from its ``{task}.stats.json``: the items its dataset's adapter left
    out (answer not among the choices, missing audio...), so a number is never quoted as if it
    covered the whole benchmark. The path is ``results/tasks/{dataset}/{task}.stats.json``."""
    from pathlib import Path

    out = {}
    for p in stats_paths:
        st = io.read_json(p)
        left = st.get("dropped_at_source") or {}
        if left:
            path = Path(p)
            key = (path.parent.name, path.name[: -len(".stats.json")])
            out[key] = [f"items left out at source: {sum(left.values())} ("
                        + ", ".join(f"{k.removeprefix('item:')}={v}" for k, v in sorted(left.items())) + ")"]
    return out


def read_metrics(paths: Iterable[str]) -> list[dict]:
    """Each metrics file, checked for the keys an all.tsv row needs (the error names the file)."""
    out = []
    for p in paths:
        m = io.read_json(p)
        missing = [k for k in ("model", "dataset", "task", "condition", "prompt", "metric", "value") if k not in m]
        if missing:
            raise io.InputError(f"{p}: metrics file lacks {missing}")
        out.append(m)
    return out


def build_table(paths: Iterable[str], checks: Iterable[str] = (), task_stats: Iterable[str] = (),
                item_versions: Iterable[str] = (), model_notes: Mapping[str, str] | None = None) -> pd.DataFrame:
    """all.tsv from metrics files; ``flags`` gathers each run's own, its task's (items left out at
    source), its model's (listening check; ``model_notes``: what was not run for it) and, for imported
    outputs, its (model, dataset)'s item-version check."""
    return table_of(read_metrics(paths), checks, task_stats, item_versions, model_notes)


def table_of(metrics: Iterable[dict], checks: Iterable[str] = (), task_stats: Iterable[str] = (),
             item_versions: Iterable[str] = (), model_notes: Mapping[str, str] | None = None) -> pd.DataFrame:
    """:func:`build_table` from metrics already read."""
    from lalmbench.checks.item_versions import item_version_flags

    rows = [row for m in metrics for row in metrics_rows(m)]
    by_model = model_flags(checks)
    by_task = task_flags(task_stats)
    by_version = item_version_flags(item_versions)
    notes = {m: [n] for m, n in (model_notes or {}).items()}
    for r in rows:
        r["flags"] = FLAG_SEP.join(r["flags"] + by_task.get((r["dataset"], r["task"]), [])
                                   + by_version.get((r["model"], r["dataset"]), [])
                                   + by_model.get(r["model"], []) + notes.get(r["model"], []))
    df = pd.DataFrame(rows, columns=COLUMNS)
    dup = df.duplicated(KEYS, keep=False)
    if dup.any():
        raise ValueError(f"duplicate result rows for {df.loc[dup, KEYS].head(3).to_dict('records')}")
    for col in df.columns:
        if pd.api.types.is_object_dtype(df[col]) or pd.api.types.is_string_dtype(df[col]):
            df[col] = df[col].map(lambda v: v.translate(_ONE_LINE) if isinstance(v, str) else v)
    df["n"] = df["n"].astype("Int64")
    df["n_official"] = df["n_official"].astype("Int64")
    df["n_clips"] = pd.to_numeric(df["n_clips"]).astype("Int64")
    return df.sort_values(KEYS, kind="mergesort").reset_index(drop=True)


def flags_table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per run with flags (results/tables/flags.tsv, shown in the report): what a reader of
    results/all.tsv must know before quoting a number."""
    flagged = table.loc[table["flags"] != "", RUN_KEYS + ["flags"]]
    return flagged.drop_duplicates().reset_index(drop=True)


def write_all_tsv(paths: Iterable[str], out: str, checks: Iterable[str] = (),
                  flags_out: str | None = None, task_stats: Iterable[str] = (), item_versions: Iterable[str] = (),
                  model_notes: Mapping[str, str] | None = None, cost_out: str | None = None,
                  jobs: Iterable[str] | None = None) -> pd.DataFrame:
    """all.tsv (and the flagged runs); ``cost_out``: the runs' tokens and latency (lalmbench.scoring.cost)
    with the throughput of the generate jobs whose summaries ``jobs`` lists (lalmbench.inference.job_cost)."""
    metrics = read_metrics(paths)
    df = table_of(metrics, checks, task_stats, item_versions, model_notes)
    io.write_tsv(out, df)
    if flags_out:
        io.write_tsv(flags_out, flags_table(df))
    if cost_out:
        from lalmbench.inference.job_cost import run_job_figures
        from lalmbench.scoring.cost import cost_table

        figures = None if jobs is None else run_job_figures(io.read_json(p) for p in jobs)
        io.write_tsv(cost_out, cost_table(metrics, figures))
    return df
