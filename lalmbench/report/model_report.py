"""A model report's audio table beside what was scored here: ``results/tables/report_<name>.tsv``.

The report ledger ``lalmbench/data/reports/<name>.yaml`` (schema ``report_ledger_schema.yaml``)
holds every row of one report's audio table as printed, with its source (paper table/row or a
repository file at a commit) and the settings the source states. Each row names the dataset (and
task) key a report config gives that benchmark (``config/examples/report-<name>.yaml``). The table
sets each printed number beside the all.tsv row of the config's report model on that dataset:
``value_official`` (the report's own scoring rule) and ``value`` (lalm-bench's), in the report's
unit (WER and accuracy in percent, BLEU as sacreBLEU prints it).

The interval is ``value_official``'s: Wilson 95% for an accuracy; for a corpus WER or BLEU a seeded
percentile bootstrap over items of the rule's per-item statistics (``official_stats`` in the run's
decisions: edit distance and reference length, or sacreBLEU's counts), re-aggregated the rule's
way. Without the decisions it is ``value``'s interval from all.tsv (``interval_of`` says which). ``flag`` is ``outside`` when the published number lies outside the
interval, ``inside``, or ``not run`` with the reason in ``reason``: the ledger says why the row cannot
run (an internal test set), the preset is not in this installation, the config has no such dataset,
or all.tsv has no row for it. No row of the ledger is ever left out.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd
import yaml

from lalmbench.core.io import InputError
from lalmbench.core.stats import wilson_interval

REPORT_DIR = Path(__file__).resolve().parents[1] / "data" / "reports"
SCHEMA = REPORT_DIR.parent / "report_ledger_schema.yaml"

COLUMNS = ["report", "row", "benchmark", "family", "preset", "dataset", "task", "metric", "ours_metric", "unit",
           "published", "published_alt", "published_alt_where", "value_official", "value", "interval_low",
           "interval_high", "interval_of", "n", "n_official", "difference", "flag", "reason", "source", "where", "settings"]
#: the unit a metric is shown in, and the factor from all.tsv's value to it
UNITS = {"wer": ("percent", 100.0), "cer": ("percent", 100.0), "accuracy": ("percent", 100.0),
         "bleu": ("bleu", 1.0), "score": ("score", 1.0)}
NOT_RUN = "not run"


def report_names() -> list[str]:
    return sorted(p.stem for p in REPORT_DIR.glob("*.yaml"))


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(yaml.safe_load(SCHEMA.read_text()))


def load_report(path_or_name: str | Path) -> dict:
    """A report ledger, validated; rows' ``source`` names resolved to the source they name."""
    path = Path(path_or_name)
    if not path.suffix:
        path = REPORT_DIR / f"{path_or_name}.yaml"
    if not path.exists():
        raise InputError(f"no report ledger {path}; known reports: {', '.join(report_names())}")
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(map(str, e.absolute_path)) or "(top)"
        raise InputError(f"{path}: {where}: {e.message}")
    ids = [r["id"] for r in doc["rows"]]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError(f"{path}: row ids repeat: {dup}")
    for r in doc["rows"]:
        for ref in [r] + list(r.get("also") or []):
            if ref["source"] not in doc["sources"]:
                raise InputError(f"{path}: row {r['id']!r}: source {ref['source']!r} is not among sources "
                                 f"({', '.join(doc['sources'])})")
    return doc


def source_text(source: Mapping) -> str:
    """repo@commit:path, arXiv:<id> or the URL."""
    if source.get("repo"):
        return f"{source['repo']}@{source['commit'][:10]}:{source['path']}"
    if source.get("arxiv"):
        return f"arXiv:{source['arxiv']}"
    return str(source["url"])


def _published(value: float, printed_as: str) -> float:
    return 100.0 * value if printed_as == "fraction" else float(value)


def _settings_text(settings: Mapping) -> str:
    return "; ".join(f"{k}: {' '.join(str(v).split())}" for k, v in settings.items())


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _result(table: pd.DataFrame, model: str, dataset: str, task: str, metric: str) -> pd.Series | None:
    rows = table[(table["model"] == model) & (table["dataset"] == dataset) & (table["task"] == task)
                 & (table["metric"] == metric) & (table["condition"] == "audio")]
    if rows.empty:
        return None
    if len(rows) > 1:
        prompts = sorted(rows["prompt"].astype(str)) if "prompt" in rows else []
        raise InputError(f"all.tsv: model {model!r} has {len(rows)} {metric} rows on {dataset}/{task} (prompts "
                         f"{prompts}); a report row names one run: give the report's tasks one prompt")
    return rows.iloc[0]


def official_bootstrap(stats: Iterable, metric: str, *, clusters: Sequence | None = None, seed: int = 0,
                       n_resamples: int = 2000, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap of a corpus WER (summed distances / summed reference lengths) or BLEU
    (sacreBLEU 1.5.1 on summed counts) from the items' official statistics, drawing items, or whole
    ``clusters`` (one label per item: the speaker) when given; (nan, nan) under 2 items (clusters)."""
    import numpy as np

    from lalmbench.scoring.metrics.asr import ratio_bootstrap_ci, sum_by_cluster
    from lalmbench.scoring.official_speech import bleu_from_stats

    stats = list(stats)
    keep = [i for i, s in enumerate(stats) if s is not None and len(s)]
    x = np.asarray([list(stats[i]) for i in keep], dtype=float)
    groups = None if clusters is None else [str(clusters[i]) for i in keep]
    if metric != "bleu":
        return ratio_bootstrap_ci(x[:, 0] if len(x) else x, x[:, 1] if len(x) else x, clusters=groups, seed=seed,
                                  n_resamples=n_resamples, alpha=alpha)
    if groups is not None and len(x):
        x = sum_by_cluster(x, groups)
    if len(x) < 2:
        return (math.nan, math.nan)
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_resamples, len(x)))
    values = np.array([bleu_from_stats(list(row)) for row in x[idx].sum(axis=1)])
    lo, hi = np.nanpercentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lo), float(hi))


def _official_interval(path: str | None, metric: str, speakers: Mapping[str, str] | None = None
                       ) -> tuple[tuple[float, float], str]:
    """value_official's bootstrap interval from a run's decisions, and what it drew (items or speakers)."""
    if not path or metric not in ("wer", "cer", "bleu"):
        return (math.nan, math.nan), "items"
    dec = pd.read_parquet(path, columns=["id", "official_stats"])
    clusters = [speakers.get(str(i)) for i in dec["id"]] if speakers else None
    if clusters is not None and any(c is None for c in clusters):
        clusters = None
    return official_bootstrap(dec["official_stats"], metric, clusters=clusters), \
        "items" if clusters is None else "speakers"


def _no_official_reason(preset: str) -> str:
    """Why a row that ran has no value_official: its preset's report rules that ask an LLM judge run only
    with one (a config without a judge leaves them out), otherwise the dataset names no rule."""
    from lalmbench.data.adapters.benchmarks import official_protocol
    from lalmbench.scoring.official import SCORERS, preset_rules

    protocol = official_protocol({"adapter": preset})
    rules = preset_rules(protocol["official"], []) + preset_rules(protocol.get("official_also") or [], [])
    judged = sorted({e["scorer"] for e in rules if SCORERS[e["scorer"]].needs == "ask"})
    if judged:
        return (f"no value_official: the report's rule ({', '.join(judged)}) asks an LLM judge and this config "
                f"names none (a top-level judge: block or the dataset's official.judge_model); compared with value")
    if rules:
        named = ", ".join(f"{e['scorer']} scores {SCORERS[e['scorer']].kind} items" for e in rules)
        return f"no value_official: the preset's rule ({named}) does not score this task's items; compared with value"
    return "no value_official: the dataset names no official rule; compared with value"


def report_table(table: pd.DataFrame, report: Mapping, model: str, datasets: Mapping[str, Mapping],
                 presets: Iterable[str], decisions: Mapping[tuple[str, str], str] | None = None,
                 speakers: Mapping[tuple[str, str], Mapping[str, str]] | None = None) -> pd.DataFrame:
    """One row per ledger row (columns :data:`COLUMNS`). ``datasets``: the config's datasets;
    ``presets``: the presets this installation has; ``decisions``: (dataset, task) -> the model's
    decisions file there (audio condition), whose official statistics give a WER/BLEU row its interval;
    ``speakers``: (dataset, task) -> {item id: speaker}, where every item names one: that interval
    then draws speakers."""
    presets = set(presets)
    decisions, speakers = dict(decisions or {}), dict(speakers or {})
    defaults = report.get("settings") or {}
    out = []
    for r in report["rows"]:
        unit, scale = UNITS[r["metric"]]
        task = r.get("task") or r["dataset"]
        src = report["sources"][r["source"]]
        alt = (r.get("also") or [None])[0]
        row = {"report": report["report"], "row": r["id"], "benchmark": r["benchmark"], "family": r["family"],
               "preset": r["preset"], "dataset": r["dataset"], "task": task, "metric": r["metric"],
               "ours_metric": r.get("ours_metric", r["metric"]), "unit": unit,
               "published": _published(r["value"], r.get("printed_as", "as_unit")),
               "published_alt": _published(alt["value"], r.get("printed_as", "as_unit")) if alt else math.nan,
               "published_alt_where": f"{source_text(report['sources'][alt['source']])} {alt['where']}" if alt else "",
               "source": source_text(src), "where": r["where"],
               "settings": _settings_text({**defaults, **(r.get("settings") or {})})}
        reason = r.get("cannot_run")
        if not reason and r["preset"] not in presets:
            reason = (f"preset {r['preset']!r} is not in this installation "
                      f"(lalmbench/data/adapters/presets/{r['preset']}.yaml)")
        if not reason and r["dataset"] not in datasets:
            reason = f"dataset {r['dataset']!r} (preset {r['preset']}) is not in this config"
        if not reason and datasets[r["dataset"]].get("adapter") != r["preset"]:
            reason = (f"dataset {r['dataset']!r} reads preset {datasets[r['dataset']].get('adapter')!r}, the row "
                      f"needs {r['preset']!r}")
        res = None if reason else _result(table, model, r["dataset"], task, r["metric"])
        if not reason and res is None:
            reason = f"no {r['metric']} row in all.tsv for model {model!r} on {r['dataset']}/{task} (condition audio)"
        if reason:
            row.update(flag=NOT_RUN, reason=reason)
            out.append(row)
            continue
        ours = res
        if r.get("ours_metric", r["metric"]) != r["metric"]:
            ours = _result(table, model, r["dataset"], task, r["ours_metric"])
            if ours is None:
                raise InputError(f"all.tsv: no {r['ours_metric']} row beside the {r['metric']} row of model {model!r} "
                                 f"on {r['dataset']}/{task} (report {report['report']!r}, row {r['id']!r})")
        value, vo = scale * _num(ours["value"]), scale * _num(res.get("value_official"))
        n, no = _num(ours.get("n")), _num(res.get("n_official"))
        row.update(value=value, value_official=vo, n=n, n_official=no, reason="")
        if r["metric"] == "accuracy" and math.isfinite(vo) and math.isfinite(no) and no > 0:
            lo, hi = wilson_interval(round(vo / scale * no), int(no))
            row.update(interval_low=scale * lo, interval_high=scale * hi, interval_of="value_official (Wilson 95%)")
        elif math.isfinite(vo) and all(map(math.isfinite, (ci := _official_interval(
                decisions.get((r["dataset"], task)), r["metric"], speakers.get((r["dataset"], task))))[0])):
            row.update(interval_low=scale * ci[0][0], interval_high=scale * ci[0][1],
                       interval_of=f"value_official (bootstrap 95% over {ci[1]})")
        else:
            row.update(interval_low=scale * _num(ours.get("ci_low")), interval_high=scale * _num(ours.get("ci_high")),
                       interval_of=f"value (all.tsv {r.get('ours_metric', r['metric'])} 95%)")
        ref = vo if math.isfinite(vo) else value
        row["difference"] = row["published"] - ref
        lo, hi = row["interval_low"], row["interval_high"]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            row["flag"], row["reason"] = "no interval", "all.tsv gives no interval for this value"
        else:
            row["flag"] = "outside" if (row["published"] < lo or row["published"] > hi) else "inside"
        if not math.isfinite(vo):
            row["reason"] = _no_official_reason(r["preset"])
        out.append(row)
    df = pd.DataFrame(out, columns=COLUMNS)
    num = ["published", "published_alt", "value_official", "value", "interval_low", "interval_high", "difference"]
    df[num] = df[num].astype(float).round(4)
    for c in ("n", "n_official"):
        df[c] = pd.to_numeric(df[c]).astype("Int64")
    return df


def write_report(all_tsv: str, name: str, model: str, datasets: Mapping[str, Mapping], *, tsv: str, png: str,
                 svg: str, decisions: Iterable[str] = (), items: Iterable[str] = ()) -> pd.DataFrame:
    """Rule report_table: all.tsv and the report ledger -> the table and its figure. ``decisions``: the
    model's decisions files, ``results/scores/<model>/<dataset>/<task>/audio/<prompt>/decisions.parquet``;
    ``items``: their task files, ``results/tasks/<dataset>/<task>.jsonl`` (the items' speakers)."""
    from lalmbench.core import io
    from lalmbench.data.adapters.benchmarks import is_preset
    from lalmbench.report.plots.model_report import plot_report
    from lalmbench.report.plots.style import save

    report = load_report(name)
    table = pd.read_csv(all_tsv, sep="\t", keep_default_na=False, na_values=[""], dtype={"task": str})
    presets = [r["preset"] for r in report["rows"] if is_preset(r["preset"])]
    by_run = {(Path(p).parts[-5], Path(p).parts[-4]): p for p in decisions}
    df = report_table(table, report, model, datasets, presets, by_run, _speakers(items))
    io.write_tsv(tsv, df)
    save(plot_report(df), png, svg)
    return df


def _speakers(items: Iterable[str]) -> dict[tuple[str, str], dict[str, str]]:
    """(dataset, task) -> {item id: meta.speaker} for each task file whose every item names a speaker."""
    from lalmbench.core import io
    from lalmbench.scoring.metrics.open import speaker_clusters

    out = {}
    for path in items:
        rows = io.read_jsonl(path)
        found = speaker_clusters(rows)
        if found is not None:
            out[(Path(path).parent.name, Path(path).stem)] = {str(it["id"]): s for it, s in zip(rows, found)}
    return out
