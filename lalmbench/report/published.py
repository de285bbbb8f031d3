"""Published numbers beside this project's scores: ``results/tables/published_<benchmark>.tsv``.

One row per ledger pair (lalmbench/data/published/<benchmark>.yaml): a released entry (its outputs
scored here as the imported model ``model_key``) set beside the published number it names in
``compare_with``, or a published entry whose ``model_key`` names a model run here. From
``results/all.tsv`` each row takes ``value_official`` (the benchmark's own rule on those outputs)
with its Wilson interval over ``n_official`` items, and ``value`` (lalm-bench's rule) with the
interval all.tsv gives. ``difference`` is published minus ``value_official``, with the interval
the official value's gives it, and ``flag`` says ``outside`` when the published number lies outside
that interval: the outputs, scored the way the benchmark says, do not give the published number.
``flags`` carries the run's all.tsv flags (outputs made on another version of their items, scored on
their own items, outputs missing), so a number is never quoted here without them.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping

import pandas as pd

from lalmbench.core.io import InputError
from lalmbench.core.stats import wilson_interval

COLUMNS = ["benchmark", "entry", "model", "model_key", "released_by", "dataset", "published", "published_entry",
           "published_source", "value_official", "official_ci_low", "official_ci_high", "n_official", "value",
           "ci_low", "ci_high", "n", "difference", "difference_ci_low", "difference_ci_high", "flag", "flags", "outputs"]
#: what ``flag`` says, besides inside/outside
NO_OFFICIAL = "no official value"
NO_PUBLISHED = "no published number"
NOT_RUN = "not in results"


def source_text(source: Mapping) -> str:
    """A source as one short citation: the URL, the arXiv id, or repo@commit:path."""
    if source.get("url"):
        return str(source["url"])
    if source.get("arxiv"):
        return f"arXiv:{source['arxiv']}"
    return f"{source['repo']}@{source['commit'][:10]}:{source['path']}"


def ledger_pairs(ledger: Mapping) -> list[dict]:
    """The rows a ledger asks for: every released entry with a ``model_key`` (with the published
    entry it names, if any) and every published entry with a ``model_key``."""
    published = {e["id"]: e for e in ledger.get("published") or []}
    pairs = []
    for rel in ledger.get("released") or []:
        if rel.get("model_key"):
            pub = published.get(rel.get("compare_with") or "")
            pairs.append({"entry": rel["id"], "model": rel["model"], "model_key": rel["model_key"],
                          "released_by": rel["released_by"], "published_entry": pub,
                          "outputs": "; ".join(source_text(s) for s in rel["outputs"])})
    for pub in published.values():
        if pub.get("model_key"):
            pairs.append({"entry": pub["id"], "model": pub["model"], "model_key": pub["model_key"],
                          "released_by": "run here", "published_entry": pub, "outputs": ""})
    return pairs


def _num(v) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _text(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


#: ledger ``settings.samples.aggregate`` -> the all.tsv metric of the same k (lalmbench.scoring.sampled)
SAMPLED_METRICS = {"mean": "accuracy@{k}_mean", "pass": "pass@{k}", "majority": "majority@{k}"}


def published_metric(entry: Mapping | None) -> str:
    """The all.tsv metric a published entry is set beside: accuracy, or the sampled metric of its k."""
    samples = ((entry or {}).get("settings") or {}).get("samples")
    return SAMPLED_METRICS[samples["aggregate"]].format(k=int(samples["k"])) if samples else "accuracy"


def _result_row(table: pd.DataFrame, model_key: str, datasets: Iterable[str],
                metric: str = "accuracy") -> pd.Series | None:
    """The all.tsv row of ``model_key`` on the benchmark's datasets (``metric``, the audio condition);
    None when the model has none; an error when several runs would answer."""
    rows = table[(table["model"] == model_key) & table["dataset"].isin(list(datasets))
                 & (table["metric"] == metric)]
    if len(rows) > 1 and "condition" in rows:
        rows = rows[rows["condition"] == "audio"]
    if rows.empty:
        return None
    if len(rows) > 1:
        runs = rows[[c for c in ("dataset", "task", "condition", "prompt") if c in rows]].to_dict("records")
        raise InputError(f"all.tsv: model {model_key!r} has {len(rows)} accuracy runs on the benchmark ({runs}); "
                         f"a ledger entry names one run: give the imported model one task, condition and prompt")
    return rows.iloc[0]


def published_table(table: pd.DataFrame, ledger: Mapping, datasets: Iterable[str],
                    files: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The published-vs-ours table of one benchmark (columns :data:`COLUMNS`, values in percent).
    ``files``: model_key -> the imported file the config scores for it; a released entry's row cites
    its pinned release only when that file is the release as ``ledger fetch`` wrote it
    (:func:`lalmbench.data.ledger.release_problem`), else ``outputs`` and ``flags`` say what was scored."""
    from lalmbench.data.ledger import release_problem

    datasets = list(datasets)
    files = dict(files or {})
    out = []
    for pair in ledger_pairs(ledger):
        pub = pair["published_entry"]
        outputs, not_release = pair["outputs"], None
        if pair["released_by"] != "run here" and pair["model_key"] in files:
            not_release = release_problem(files[pair["model_key"]], pair["entry"])
            if not_release:
                outputs = f"{files[pair['model_key']]} (not the release {pair['outputs']})"
        row = {"benchmark": ledger["benchmark"], "entry": pair["entry"], "model": pair["model"],
               "model_key": pair["model_key"], "released_by": pair["released_by"], "outputs": outputs,
               "published": pub["value"] if pub else math.nan, "published_entry": pub["id"] if pub else "",
               "published_source": source_text(pub["source"]) if pub else ""}
        metric = published_metric(pub)
        res = _result_row(table, pair["model_key"], datasets, metric)
        vo = no = math.nan
        if res is not None:
            row["dataset"] = res["dataset"]
            row["value"], row["ci_low"], row["ci_high"] = (100 * _num(res[c]) for c in ("value", "ci_low", "ci_high"))
            row["n"] = _num(res["n"])
            vo, no = _num(res.get("value_official")), _num(res.get("n_official"))
            row["flags"] = _text(res.get("flags"))  # all.tsv's flags of the run (revision drift, missing outputs)
        if not_release:
            row["flags"] = "; ".join(f for f in (row.get("flags", ""), f"scored file is not the release: {not_release}")
                                     if f)
        if metric != "accuracy":
            out.append(_sampled_row(row, res, pub, metric))
            continue
        if not math.isnan(vo) and not 0.0 <= vo <= 1.0:
            raise InputError(f"all.tsv: model {pair['model_key']!r}: value_official {vo} is not a proportion; a "
                             f"ledger compares accuracies")
        if not math.isnan(vo) and not math.isnan(no) and no > 0:
            lo, hi = wilson_interval(round(vo * no), int(no))
            row.update(value_official=100 * vo, official_ci_low=100 * lo, official_ci_high=100 * hi, n_official=no)
            if pub:
                p = float(pub["value"])
                row.update(difference=p - 100 * vo, difference_ci_low=p - 100 * hi, difference_ci_high=p - 100 * lo)
                row["flag"] = "outside" if (p < 100 * lo or p > 100 * hi) else "inside"
            else:
                row["flag"] = NO_PUBLISHED
        else:
            row["flag"] = NOT_RUN if res is None else (NO_OFFICIAL if pub else f"{NO_PUBLISHED}; {NO_OFFICIAL}")
        out.append(row)
    df = pd.DataFrame(out, columns=COLUMNS)
    pct = ["published", "value_official", "official_ci_low", "official_ci_high", "value", "ci_low", "ci_high",
           "difference", "difference_ci_low", "difference_ci_high"]
    df[pct] = df[pct].astype(float).round(4)  # percent to 4 decimals: no float residue in a difference of equals
    for c in ("n", "n_official"):
        df[c] = pd.to_numeric(df[c]).astype("Int64")
    return df


def _sampled_row(row: dict, res: pd.Series | None, pub: Mapping, metric: str) -> dict:
    """A published aggregate over k samples beside our ``metric`` of the same k: the benchmark's own rule
    scores one output per item, so the difference is taken against our value and its clustered interval."""
    k = pub["settings"]["samples"]["k"]
    note = f"published over {k} samples ({pub['settings']['samples']['aggregate']}): set beside {metric}"
    if res is None:
        row.update(flag=NOT_RUN, flags=f"{note}; run {row['model_key']} with generation.samples: {k}")
        return row
    p, lo, hi = float(pub["value"]), row["ci_low"], row["ci_high"]
    row.update(difference=p - row["value"], difference_ci_low=p - hi, difference_ci_high=p - lo,
               flag="outside" if (p < lo or p > hi) else "inside",
               flags="; ".join(f for f in (row.get("flags", ""), note) if f))
    return row


def write_published(all_tsv: str, ledger_path: str, datasets: Iterable[str], *, tsv: str, png: str, svg: str,
                    files: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Rule published_table: read all.tsv and the ledger, write the table and its figure."""
    from lalmbench.core import io
    from lalmbench.data.ledger import load_ledger
    from lalmbench.report.plots.published import plot_published
    from lalmbench.report.plots.style import save

    table = pd.read_csv(all_tsv, sep="\t", keep_default_na=False, na_values=[""])
    df = published_table(table, load_ledger(ledger_path), datasets, files)
    io.write_tsv(tsv, df)
    save(plot_published(df), png, svg)
    return df


def ledger_targets(ledgers: Mapping[str, Mapping], datasets: Mapping[str, Mapping], models: Iterable[str]
                   ) -> dict[str, list[str]]:
    """benchmark -> this config's dataset keys a ledger's table covers: those read by the ledger's
    preset, when at least one of its entries names a model of this config (``model_key``)."""
    models = set(models)
    out = {}
    for bench, ledger in ledgers.items():
        keys = {p["model_key"] for p in ledger_pairs(ledger)}
        ds = sorted(d for d, c in datasets.items() if c.get("adapter") == ledger["preset"])
        if ds and keys & models:
            out[bench] = ds
    return out
