"""Results browser data: task items + per-run decisions -> one compact JSON object for the static page.

The page (``index.html`` beside this module) is static and reads ``data.js`` (``window.LALM_BROWSER
= {...}``) with a plain <script> tag, so it works from ``file://`` (no fetch, no server) and when
served. Audio is linked by a path relative to the page, so the page must stay inside the results
tree it was built in (or set ``copy_audio`` to bundle the files).
"""
from __future__ import annotations

import math
import os
import shutil
from pathlib import Path
from typing import Iterable, Sequence
from urllib.parse import quote

import pandas as pd

from lalmbench.core import io
from lalmbench.core.io import InputError

DATA_VERSION = 1
#: official_score / official_disagrees: the benchmark's own rule on the same output
#: (lalmbench.scoring.official) and whether it disagrees with our verdict; null without one.
#: item_version_differs: for imported outputs made on another version of the item, the fields that
#: differ; gold_label: the gold the run was scored against (the outputs' own with items_from: predictions)
#: item_score: an open answer's own score beside its reference (edit errors over reference words for a
#: transcript, sentence BLEU for a translation), so a reader sees which items make a corpus WER or BLEU
PRED_FIELDS = ["item", "run", "raw_output", "pred_label", "parse_status", "outcome", "official_score",
               "official_disagrees", "item_version_differs", "gold_label", "item_score"]


def _clean(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    return v


def audio_href(audio_path: str | None, *, root: Path, page_dir: Path) -> str | None:
    """URL of an item's audio relative to the page (percent-encoded per segment: Clotho names have spaces)."""
    if not audio_path:
        return None
    p = Path(audio_path)
    absolute = p if p.is_absolute() else (root / p)
    rel = os.path.relpath(absolute.resolve(), page_dir.resolve())
    return "/".join(quote(part) for part in Path(rel).as_posix().split("/"))


def item_score(errors, n_ref, sentence_bleu) -> str | None:
    """A transcript's errors over its reference's words, or a translation's sentence BLEU; None for others."""
    errors, n_ref, sentence_bleu = _clean(errors), _clean(n_ref), _clean(sentence_bleu)
    if errors is not None and n_ref is not None:
        rate = f" ({100 * errors / n_ref:.1f}%)" if n_ref else ""
        return f"{errors:g} errors / {n_ref:g} reference units{rate}"
    if sentence_bleu is not None:
        return f"sentence BLEU {sentence_bleu:.1f}"
    return None


def browser_data(items: Sequence[dict], decisions: pd.DataFrame, *, root: Path, page_dir: Path,
                 max_raw_chars: int = 4000, audio_map: dict[str, str] | None = None,
                 flags: pd.DataFrame | None = None) -> dict:
    """The page's data: items that some run answered, the runs (model, condition, prompt) and one
    prediction row per (item, run). ``raw_output`` longer than ``max_raw_chars`` is cut with a marker
    that gives the full length (the full text stays in the predictions parquet). ``flags``
    (results/tables/flags.tsv) go with the page, shown for the runs a selection covers."""
    for col in ("model", "dataset", "task", "condition", "prompt", "id"):
        if col not in decisions.columns:
            raise InputError(f"browser: decisions table lacks column {col!r} (have {list(decisions.columns)})")
    index = {}
    out_items = []
    for it in items:
        key = (str(it.get("dataset")), str(it.get("task")), str(it.get("id")))
        if key in index:
            raise InputError(f"browser: item {key[2]!r} of task {key[1]!r} appears twice in the task files")
        index[key] = None
        out_items.append(it)
    d = decisions.copy()
    keys = list(zip(d["dataset"].astype(str), d["task"].astype(str), d["id"].astype(str)))
    unknown = [k for k in keys if k not in index]
    if unknown:
        raise InputError(f"browser: decision for item {unknown[0][2]!r} of task {unknown[0][1]!r} has no task item "
                         f"({len(unknown)} such rows); were the task files rebuilt after scoring?")
    answered = set(keys)
    kept = [it for it in out_items if (str(it.get("dataset")), str(it.get("task")), str(it.get("id"))) in answered]
    item_pos = {(str(it["dataset"]), str(it["task"]), str(it["id"])): i for i, it in enumerate(kept)}

    runs = sorted(set(zip(d["model"].astype(str), d["condition"].astype(str), d["prompt"].astype(str))))
    run_pos = {r: i for i, r in enumerate(runs)}

    def col(name):
        return d[name].tolist() if name in d.columns else [None] * len(d)

    raws, preds, stats, outs = col("raw_output"), col("pred_label"), col("parse_status"), col("outcome")
    official, disagrees = col("official_score"), col("official_disagrees")
    versions, golds = col("item_version_differs"), col("gold_label")
    scores = [item_score(e, n, b) for e, n, b in zip(col("errors"), col("n_ref"), col("sentence_bleu"))]
    rows = []
    for i, (k, m, c, p) in enumerate(zip(keys, d["model"].astype(str), d["condition"].astype(str),
                                         d["prompt"].astype(str))):
        raw = _clean(raws[i])
        if isinstance(raw, str) and len(raw) > max_raw_chars:
            raw = raw[:max_raw_chars] + f" [... cut: {len(raw)} characters in all]"
        dis = _clean(disagrees[i])
        rows.append([item_pos[k], run_pos[(m, c, p)], raw, _clean(preds[i]), _clean(stats[i]), _clean(outs[i]),
                     _clean(official[i]), None if dis is None else bool(dis), _clean(versions[i]) or None,
                     _clean(golds[i]), scores[i]])
    rows.sort(key=lambda r: (r[0], r[1]))

    def item_record(it):
        opts = [[str(o.get("label", "")), str(o.get("text") or "")] for o in (it.get("options") or [])]
        def href_of(ap):
            return (audio_map or {}).get(ap) if audio_map is not None else audio_href(ap, root=root, page_dir=page_dir)

        href = href_of(it.get("audio_path"))
        refs = it.get("references") or []
        extra = {"audios": [href_of(p) for p in it["audio_paths"]]} if it.get("audio_paths") else {}
        return {"dataset": it.get("dataset"), "task": it.get("task"), "id": str(it.get("id")),
                "question": it.get("question") or "", "options": opts, "gold": it.get("answer_label"),
                "gold_text": it.get("answer_text"), "references": [str(r) for r in refs][:10],
                "audio": href, "clip_id": it.get("clip_id"), **extra}

    return {
        "version": DATA_VERSION,
        "tasks": sorted({str(it["task"]) for it in kept}),
        "models": sorted({r[0] for r in runs}),
        "conditions": sorted({r[1] for r in runs}),
        "prompts": sorted({r[2] for r in runs}),
        "runs": [{"model": m, "condition": c, "prompt": p} for m, c, p in runs],
        "items": [item_record(it) for it in kept],
        "pred_fields": PRED_FIELDS,
        "preds": rows,
        "flags": [] if flags is None else [{k: str(r[k]) for k in ("model", "dataset", "task", "condition", "prompt",
                                                                  "flags")} for r in flags.to_dict("records")],
    }


def copy_audio(items: Iterable[dict], *, root: Path, page_dir: Path) -> dict[str, str]:
    """Copy each distinct audio file into ``page_dir/audio/`` (self-contained bundle); returns path -> href."""
    out, used = {}, set()
    for it, ap in ((it, ap) for it in items for ap in (it.get("audio_paths") or [it.get("audio_path")])):
        if not ap or ap in out:
            continue
        src = Path(ap) if Path(ap).is_absolute() else root / ap
        if not src.is_file():
            raise InputError(f"browser: audio file {src} of item {it.get('id')!r} does not exist")
        name = src.name
        stem, n = src.stem, 1
        while name in used:
            name = f"{stem}-{n}{src.suffix}"
            n += 1
        used.add(name)
        dest = page_dir / "audio" / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        _readable(str(dest))
        out[ap] = "audio/" + quote(name)
    return out


TEMPLATE = Path(__file__).with_name("index.html")


def write_browser(task_files: Sequence[str], decisions_path: str, *, out_html: str, out_data: str,
                  root: str | Path = ".", max_raw_chars: int = 4000, bundle_audio: bool = False,
                  flags_path: str | None = None) -> dict:
    """Read the task items, the stacked decisions and the flagged runs, write ``index.html`` + ``data.js``
    atomically."""
    items = [it for f in task_files for it in io.read_jsonl(f)]
    decisions = io.read_parquet(decisions_path)
    flags = pd.read_csv(flags_path, sep="\t", dtype=str, keep_default_na=False) if flags_path else None
    page_dir = Path(out_html).parent
    root = Path(root)
    amap = copy_audio(items, root=root, page_dir=page_dir) if bundle_audio else None
    data = browser_data(items, decisions, root=root, page_dir=page_dir, max_raw_chars=max_raw_chars, audio_map=amap,
                        flags=flags)
    # "<\/" is "</" to JS; escaping keeps the payload safe even if someone inlines it in a <script>
    payload = io.dumps_json(data).replace("</", "<\\/")
    io.write_text(out_data, f"window.LALM_BROWSER = {payload};\n")
    io.write_text(out_html, TEMPLATE.read_text(encoding="utf-8"))
    _readable(out_data, out_html)
    return data


def _readable(*paths: str) -> None:
    """Atomic writes come from mkstemp (mode 0600); a page served by another user needs the usual mode."""
    umask = os.umask(0)
    os.umask(umask)
    for p in paths:
        os.chmod(p, 0o666 & ~umask)
