"""The published-numbers ledger scored here in Python (no audio, no workflow): docs/published.md's table.

    python -m bench.published_ledger --published published --items mmau=mmau-test-mini.json \
        --items mmar=MMAR-meta.jsonl --items sakura=SAKURA/data [--out bench/results/published_ledger.tsv]

``--published`` is what ``python -m lalmbench.data.ledger fetch`` wrote; ``--items`` the benchmark
files the ledgers pin (``items`` of each ledger). Every released entry is scored the way the workflow
scores an imported model (lalmbench.score_mcq with the entry's ``labels``, then the preset's official
rule through lalmbench.scoring.official.run_official) against today's items, and the official rule is
also applied to the items the released file carries (question, choices, answer), which is what the
benchmark's own script reads. The rows go through lalmbench.report.published.published_table, the
function the workflow's published_table rule calls, so this table and the rule's agree.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the config whose dataset keys the rows take, so the all.tsv written here feeds its published_table rule
CONFIG = ROOT / "config" / "examples" / "published.yaml"


def dataset_keys(config: Path = CONFIG) -> dict[str, str]:
    """preset -> the example config's dataset key reading it."""
    import yaml

    cfg = yaml.safe_load(config.read_text())
    return {c["adapter"]: k for k, c in cfg["datasets"].items()}


def official_spec(preset: str) -> dict | None:
    """The preset's rule-based official rule with its breakdown fields (judge rules are skipped)."""
    from lalmbench.data.adapters.benchmarks import official_protocol
    from lalmbench.scoring.official import SCORERS

    proto = official_protocol({"adapter": preset})
    names = proto["official"] if isinstance(proto["official"], list) else [proto["official"]]
    names = [n for n in names if n and SCORERS[n].needs != "ask" and SCORERS[n].kind == "mcq"]
    return {"scorer": names[0], "breakdown": proto["breakdowns"]} if names else None


def file_items(records: list[dict], today: dict[str, dict]) -> list[dict]:
    """Items as the released file states them (question, choices, answer), as the workflow rebuilds
    them with ``items_from: predictions`` (lalmbench.scoring.item_versions.own_item); records that
    carry no choices or answer, whose id is not among today's items, or whose answer is none of their
    choices are left out."""
    from lalmbench.scoring.item_versions import FIELDS, own_item

    out = []
    for r in records:
        if not isinstance(r.get("choices"), list) or r.get("answer") in (None, "") or r["id"] not in today:
            continue
        rebuilt = own_item({f: r[f] for f in FIELDS if f in r}, today[r["id"]])
        if rebuilt is not None:
            out.append(rebuilt)
    return out


def drift(records: list[dict], today: dict[str, dict]) -> dict:
    """How the items a released file carries differ from today's, counted by the workflow's own check
    (lalmbench.scoring.item_versions.compare, rule item_version_check): ids not in today's items, per
    field (question, choices, answer) the records whose value differs, and how many differ at all."""
    from lalmbench.scoring.item_versions import FIELDS, compare

    own = {r["id"]: {f: r[f] for f in FIELDS if f in r} for r in records}
    s = compare({i: o for i, o in own.items() if o}, today.values(), own)
    return {"ids_missing": s["not_in_items"], **{f: s["by_field"].get(f, 0) for f in FIELDS}, "any": s["differ"]}


def headline_breakdown(summary: dict) -> dict[str, float | None]:
    """group -> official value (percent) over the first breakdown field: the paper's main table (MMAU's
    task, MMAR's modality, SAKURA's track x hop)."""
    rows = summary.get("breakdown") or []
    first = rows[0]["field"] if rows else None
    return {r["group"]: None if r.get("value_official") is None else round(100 * r["value_official"], 2)
            for r in rows if r["field"] == first and not r.get("missing")}


def score(items: list[dict], records: list[dict], labels: str, spec: dict | None) -> tuple[dict, dict | None]:
    """(our metrics, the official summary) of one released file on ``items``; an item the file has no
    output for is a failed generation: the strict reading, an imported model's ``missing: wrong``, that
    docs/published.md's table was measured with."""
    from lalmbench import score_mcq
    from lalmbench.scoring.official import run_official

    by_id = {r["id"]: r for r in records}
    preds = pd.DataFrame([{"id": it["id"], "raw_output": (by_id.get(it["id"]) or {}).get("raw_output"),
                           "error": None if by_id.get(it["id"], {}).get("raw_output") is not None
                           else f"no imported output for item {it['id']!r}"} for it in items])
    decisions, metrics = score_mcq(items, preds, parser={"labels": labels})
    if spec is None:
        return metrics, None
    _, summary = run_official(spec, items, decisions)
    return metrics, summary


def run(published: Path, items_paths: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(the published tables of every ledger, stacked; per released entry the extra facts: drift and
    the official value on the file's own items; the all.tsv rows the workflow would write for them)."""
    import lalmbench
    from lalmbench.core import io
    from lalmbench.data.ledger import load_all, released_path
    from lalmbench.report.published import published_table

    import tempfile

    tables, extras, results = [], [], []
    empty = Path(tempfile.mkdtemp(prefix="published-ledger-no-audio-"))  # items are read, their audio never
    keys = dataset_keys()
    for bench, ledger in load_all().items():
        if bench not in items_paths:
            print(f"{bench}: no --items given, skipped", file=sys.stderr)
            continue
        items = lalmbench.read_items(ledger["preset"], {"items": items_paths[bench], "audio_root": str(empty),
                                                        "check_audio": False}, dataset=bench)
        today = {it["id"]: it for it in items}
        spec = official_spec(ledger["preset"])
        rows, dataset = [], keys.get(ledger["preset"], bench)
        for rel in ledger.get("released") or []:
            records = io.read_jsonl(released_path(published, bench, rel["id"]))
            metrics, off = score(items, records, rel["labels"], spec)
            rows.append({"model": rel["model_key"], "dataset": dataset, "task": dataset, "condition": "audio",
                         "prompt": "imported", "metric": "accuracy", "value": metrics["value"],
                         "ci_low": metrics["ci_low"], "ci_high": metrics["ci_high"], "n": metrics["n"],
                         "value_official": off["value_official"] if off else None,
                         "n_official": off["n_official"] if off else None})
            extra = {"benchmark": ledger["benchmark"], "entry": rel["id"], "records": len(records),
                     "items_today": len(items), **{f"drift_{k}": v for k, v in drift(records, today).items()}}
            own = file_items(records, today)
            if spec is not None and own:
                _, off_file = score(own, records, rel["labels"], spec)
                extra.update(items_in_file=len(own), value_official_file_items=100 * off_file["value_official"],
                             n_official_file_items=off_file["n_official"])
                extra["breakdown_file_items"] = headline_breakdown(off_file)
            if off:
                extra["breakdown_today"] = headline_breakdown(off)
            extras.append(extra)
        tables.append(published_table(pd.DataFrame(rows), ledger, [dataset]))
        results += rows
    return pd.concat(tables, ignore_index=True), pd.DataFrame(extras), pd.DataFrame(results)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--published", required=True, help="the folder `python -m lalmbench.data.ledger fetch` wrote")
    p.add_argument("--items", action="append", default=[], metavar="BENCH=PATH")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "published_ledger.tsv"))
    p.add_argument("--all-tsv", help="also write the runs' all.tsv rows here (the input of rule published_table)")
    a = p.parse_args(argv)
    items = dict(kv.split("=", 1) for kv in a.items)
    table, extra, results = run(Path(a.published), items)
    from lalmbench.core import io

    if a.all_tsv:
        io.write_tsv(a.all_tsv, results)
    merged = table.merge(extra.drop(columns=[c for c in extra.columns if c.startswith("breakdown")]),
                         on=["benchmark", "entry"], how="left")
    io.write_tsv(a.out, merged)
    import json

    cols = ["benchmark", "entry"] + [c for c in extra.columns if c.startswith("breakdown")]
    io.write_json(Path(a.out).with_suffix(".breakdowns.json"), json.loads(extra[cols].to_json(orient="records")))
    pd.set_option("display.width", 250)
    print(merged[["benchmark", "entry", "published", "value_official", "official_ci_low", "official_ci_high",
                  "n_official", "value", "flag", "value_official_file_items", "drift_any", "drift_ids_missing"]]
          .to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
