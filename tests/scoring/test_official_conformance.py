"""Each rule-based official scorer agrees with the benchmark's own script on every case of its
conformance corpus (tests/data/official/<benchmark>.jsonl).

A corpus holds benchmark records in the benchmark's own format with a seeded output each, in many
styles, and the verdict the official script gave when it was run, unmodified, on them (its
repository, path and commit are in the corpus header; docs/scoring-official.md says how). Here the
records go through the real reader (lalmbench.read_items with the benchmark's preset), so an item
the reader would drop or change shows up as a disagreement, and the project's official rule scores
each group of records in the order the script read them.
"""
from __future__ import annotations

import json
import math
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

import lalmbench
from lalmbench.scoring.official import score_official

CORPORA = Path(__file__).resolve().parents[1] / "data" / "official"
FILES = sorted(CORPORA.glob("*.jsonl"))
#: the report ASR/ST corpora (tests/scoring/test_official_speech_conformance.py checks their verdicts)
SPEECH = sorted((CORPORA / "speech").glob("*.jsonl"))
#: the question-file format each preset's records are written in for the reader
FORMATS = {"mmar": "jsonl", "mmsu": "jsonl"}


def _load(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[0]["corpus"], lines[1:]


def stand_in_embed(texts: list[str]) -> np.ndarray:
    """The corpus's stand-in for NV-Embed-v2 (its header says so): lower-cased words hashed by
    crc32 into 512 dimensions, counted."""
    out = np.zeros((len(texts), 512), dtype=np.float64)
    for i, t in enumerate(texts):
        for w in re.findall(r"\w+", str(t).lower()):
            out[i, zlib.crc32(w.encode("utf-8")) % 512] += 1.0
    return out


def _items(header: dict, cases: list[dict], tmp_path: Path) -> dict[str, dict]:
    from lalmbench.data.adapters.benchmarks import preset

    fmt = FORMATS.get(header["preset"], "json")
    src = tmp_path / f"{header['preset']}.{fmt}"
    recs = [c["record"] for c in cases]
    names = preset(header["preset"]).get("names")
    if preset(header["preset"]).get("format") == "headerless":   # TUT2017's meta.txt: fields by position
        src.write_text("".join("\t".join(r[n] for n in names if n in r) + "\n" for r in recs), encoding="utf-8")
    elif preset(header["preset"]).get("format") == "folders":    # CochlScene: a record is a file in the tree
        src = tmp_path / header["preset"]
        for r in recs:
            (src / r["path"]).parent.mkdir(parents=True, exist_ok=True)
            (src / r["path"]).touch()
    else:
        src.write_text(json.dumps(recs) if fmt == "json" else "".join(json.dumps(r) + "\n" for r in recs),
                       encoding="utf-8")
    items = lalmbench.read_items(header["preset"], {"items": str(src), "audio_root": str(tmp_path),
                                                    "check_audio": False}, dataset=header["preset"])
    return {it["id"]: it for it in items}


def test_corpora_are_present_and_large_enough():
    names = {p.stem for p in FILES}
    assert {"mmau", "mmar", "mmsu", "mmsu_2026", "air_bench", "mmau_pro_mcq", "mmau_pro_instruction"} <= names
    assert {"qwen2_audio_asr", "kimi_audio_asr", "qwen2_audio_st"} <= {p.stem for p in SPEECH}
    for path in FILES + SPEECH:
        header, cases = _load(path)
        assert {"repo", "path", "commit"} <= set(header["script"]) and len(header["script"]["commit"]) == 40
        assert len(cases) == header["n_cases"] >= 300, path.name
        assert len({c["style"] for c in cases}) >= 25, path.name


def _preset_settings(preset: str, scorer: str) -> dict:
    """The settings the preset gives its official entry for ``scorer`` (Kimi-Audio's judge question)."""
    from lalmbench.data.adapters.benchmarks import official_protocol

    proto = official_protocol({"adapter": preset})
    entries = proto["official"] if isinstance(proto["official"], list) else [proto["official"]]
    for e in entries + proto.get("official_also", []):
        if isinstance(e, dict) and e.get("scorer") == scorer:
            return {k: v for k, v in e.items() if k != "scorer"}
    return {}


def _unfenced(prompt: str) -> str:
    """A rendered judge prompt with the fences around answers taken out (the official scripts send the
    answers bare; docs/scoring-official.md says why ours fences them)."""
    return re.sub(r"\n(`{3,})\n(.*?)\n\1\n", r"\2", prompt, flags=re.S)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_official_rule_agrees_with_the_script_on_every_case(path, tmp_path):
    header, cases = _load(path)
    by_id = _items(header, cases, tmp_path)
    spec = {"scorer": header["scorer"], **_preset_settings(header["preset"], header["scorer"]),
            **header.get("settings", {})}
    kw = {"embed": stand_in_embed} if header["scorer"] == "mmau_pro_nearest_choice" else {}
    sent: dict[str, str] = {}
    if header.get("judge"):     # the judge's replies are part of the corpus; the prompts sent are checked
        replies = {c["case"]: c["reply"] for c in cases}

        def ask(prompts, ids):
            sent.update(zip(ids, prompts))
            return [replies[i] for i in ids]

        kw = {"ask": ask}
    groups: dict[str, list[dict]] = {}
    for c in cases:
        groups.setdefault(c["group"], []).append(c)
    disagree = []
    for group in groups.values():
        # an item the reader leaves out is agreement only where the script left it out too
        dropped = [c["case"] for c in group if c["case"] not in by_id and c["verdict"] is not None]
        assert not dropped, f"the reader left out {dropped[:5]} (the script scores them)"
        group = [c for c in group if c["case"] in by_id]
        if not group:
            continue
        per, _ = score_official(spec, [by_id[c["case"]] for c in group], [c["output"] for c in group], **kw)
        for c, score, reason in zip(group, per["official_score"], per["official_reason"]):
            ours = None if math.isnan(score) else int(score)
            want = c["verdict"]
            if isinstance(want, str):   # the script stopped on this record
                ok = ours == 0 and "script stops" in str(reason)
            else:
                ok = ours == want
            if header.get("judge") and _unfenced(sent[c["case"]]) != c["script_prompt"].strip():
                ok = False
                reason = f"prompt differs: {sent[c['case']][-300:]!r}"
            if not ok:
                disagree.append((c["case"], c["style"], c["output"], want, ours, reason))
    assert not disagree, f"{len(disagree)} of {len(cases)} cases disagree with {header['script']}: {disagree[:8]}"
