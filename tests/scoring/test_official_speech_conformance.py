"""The report WER and BLEU rules agree with the reports' own scripts on every case of their
conformance corpora (tests/data/official/speech/<script>.jsonl).

A corpus holds records in the converted-file format the script reads (Qwen2-Audio's
``<set>_eval.jsonl`` lines ``{audio, prompt, source, gt}``), a model output for each in one of many
styles, and what the script, run unmodified, printed for each ``source``: its WER or BLEU (and for a
one-pair source the units it compared), or that it stopped. The header names the script's repository,
path and commit and the command. Here the records go through the real reader (the preset the header
names) and the preset's official rule scores each source's items, in order.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lalmbench.data.adapters import adapt
from lalmbench.data.adapters.benchmarks import preset
from lalmbench.scoring.official import official_spec, score_official

CORPORA = Path(__file__).resolve().parents[1] / "data" / "official" / "speech"
FILES = sorted(CORPORA.glob("*.jsonl"))


def _load(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[0]["corpus"], lines[1:]


def _rule(header: dict) -> dict:
    """The official rule the corpus checks, as the preset names it (its default or an alternative)."""
    spec = preset(header["preset"])
    rules = [spec["official"], *(spec.get("official_also") or [])]
    found = [official_spec(r) for r in rules if official_spec(r)["scorer"] == header["scorer"]]
    assert found, f"preset {header['preset']!r} names no rule {header['scorer']!r}"
    return found[0]


def _items(header: dict, cases: list[dict], tmp_path: Path) -> dict[str, dict]:
    """Every case's item, read through the preset from files named as the script's converted files."""
    by_file: dict[str, list[dict]] = {}
    for c in cases:
        by_file.setdefault(c.get("eval_set") or header["file"], []).append(c["record"])
    out = {}
    for name, recs in by_file.items():
        src = tmp_path / f"{name}_eval.jsonl"
        src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
        res = adapt(header["preset"], {"items": str(src), "audio_root": str(tmp_path), "check_audio": False},
                    dataset=name)
        out.update({it["clip_id"]: it for it in res.items})
    return {c["case"]: out[c["record"]["audio"]] for c in cases if c["record"]["audio"] in out}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_report_rule_agrees_with_the_script_on_every_source(path, tmp_path):
    header, cases = _load(path)
    rule = _rule(header)
    by_case = _items(header, cases, tmp_path)
    groups: dict[str, list[dict]] = {}
    for c in cases:
        groups.setdefault(c["group"], []).append(c)
    disagree = []
    for name, group in groups.items():
        verdict = group[0].get("verdict") or group[0]["group_verdict"]
        read = [c for c in group if c["case"] in by_case]
        value = math.nan
        per = None
        if read:
            per, summary = score_official(rule, [by_case[c["case"]] for c in read], [c["output"] for c in read])
            value = summary["value_official"]
        if "stops" in verdict:
            # the script stops on this source (no reference units to divide by, or none left): the
            # reader left the record out, or the rule has no value for it
            if not math.isnan(value):
                disagree.append((name, "script stops", verdict["stops"], value))
            continue
        if len(read) != len(group):
            disagree.append((name, "reader left out", [c["case"] for c in group if c["case"] not in by_case]))
            continue
        if not math.isclose(value, verdict[header["metric"]], rel_tol=1e-9, abs_tol=1e-9):
            disagree.append((name, [c["style"] for c in group][:3], verdict[header["metric"]], value))
        if "pred_items" in verdict and len(group) == 1:
            ours = per["official_pred"].iloc[0].split()
            if ours != verdict["pred_items"]:
                disagree.append((name, group[0]["style"], verdict["pred_items"], ours))
    n = len(groups)
    assert not disagree, f"{len(disagree)} of {n} sources disagree with {header['script']}: {disagree[:6]}"
