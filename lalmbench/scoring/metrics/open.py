"""Open-ended scoring for one run: items + raw predictions -> per-item decisions, the headline
metric and extra metrics in the results/all.tsv format (used by scripts/score_open.py).

Kinds (a task's ``scoring.kind``):
  captioning   BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, SBERT-sim, SPICE/SPIDEr/FENSE via the captioning env
  asr          WER (+ CER) with the Whisper English normaliser (``normalizer``)
  pi_asr       permutation-invariant WER; references = one transcript per speaker
  translation  sacreBLEU with the per-language tokenizer (``target_lang``, ``convention`` or ``tokenize``)
  grounding    mean IoU, recall at IoU 0.3/0.5/0.7, onset/offset errors; gold from meta onset_s/offset_s
  judge        LLM-as-judge accuracy (``judge_model`` + ``judge_model_cfg``, ``prompt``, ``fields``)
  instruction  instruction-following rate: the check named by each item's ``meta.instruction``
               (MMAU-Pro's task_identifier/kwargs, :mod:`lalmbench.scoring.metrics.instruction`)
  label_match  open-answer classification: the reply names the gold label and no other label of the
               task (``labels``; default every reference), :mod:`lalmbench.scoring.metrics.label`
  tempo        MIREX Accuracy1 (within 4%) and Accuracy2 (octave errors forgiven) of the first number in
               the reply against the reference tempo, :mod:`lalmbench.scoring.metrics.tempo`

A prediction missing for an item, a duplicated id or an unknown id is an error naming the id; a
failed generation is scored as no output (empty), never dropped.
"""
from __future__ import annotations

import math
from typing import Callable

import pandas as pd

from lalmbench.core import io


def clean_json(v):
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {k: clean_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [clean_json(x) for x in v]
    return v


def _raw(preds: pd.DataFrame, items: list[dict]) -> tuple[list, list]:
    """Raw outputs in item order (missing prediction rows are an error naming the id); a failed
    generation (non-null error) is scored as no output."""
    if "id" not in preds or "raw_output" not in preds:
        raise io.InputError(f"predictions lack 'id'/'raw_output' (have {list(preds.columns)})")
    pid = preds["id"].astype(str)
    dup = pid[pid.duplicated()]
    if len(dup):
        raise io.InputError(f"predictions: duplicated id {dup.iloc[0]!r}")
    by_id = preds.set_index(pid)
    ids = [str(it["id"]) for it in items]
    extra = sorted(set(by_id.index) - set(ids))
    if extra:
        raise io.InputError(f"predictions: id {extra[0]!r} is not among the task's items")
    missing = [i for i in ids if i not in by_id.index]
    if missing:
        raise io.InputError(f"predictions: no prediction for item {missing[0]!r} ({len(missing)} missing)")
    raw, err = [], []
    for i in ids:
        row = by_id.loc[i]
        e = row.get("error") if "error" in by_id.columns else None
        e = None if e is None or (isinstance(e, float) and math.isnan(e)) or e == "" else str(e)
        r = row["raw_output"]
        raw.append(None if e or r is None or (isinstance(r, float) and math.isnan(r)) else str(r))
        err.append(e)
    return raw, err


def _refs(items, i_min=1):
    out = []
    for it in items:
        refs = it.get("references") or []
        if len(refs) < i_min:
            raise io.InputError(f"item {it['id']!r}: needs >= {i_min} reference(s) for open-ended scoring, got {refs!r}")
        out.append(refs)
    return out


def caption_request(items: list[dict], preds: pd.DataFrame, cfg: dict) -> dict:
    """Input of the captioning worker for one run (a failed generation is scored as an empty caption)."""
    from lalmbench.scoring.metrics.captioning import CAPTION_METRICS, worker_request

    raw, _ = _raw(preds, items)
    return worker_request([r or "" for r in raw], _refs(items), metrics=cfg.get("metrics", CAPTION_METRICS),
                          cache_dir=cfg.get("cache_dir"))


def pick_headline(rows: list[dict], cfg: dict, unavailable: dict[str, str]) -> tuple[dict, dict | None]:
    """(the headline row, what was wanted instead and why or None).

    The configured ``scoring.headline`` (default CIDEr-D) when it was computed; otherwise the first
    available metric, and the fallback is returned so the run says so in results/all.tsv ``flags``
    instead of silently reporting BLEU-1 under the same task name."""
    from lalmbench.scoring.metrics.captioning import CAPTION_METRICS

    wanted = cfg.get("headline", "cider_d")
    if not rows:
        why = "; ".join(f"{m}: {r}" for m, r in unavailable.items())
        raise io.InputError(f"captioning: no metric could be computed ({why})")
    head = next((r for r in rows if r["metric"] == wanted), None)
    if head is not None:
        return head, None
    if wanted in unavailable:
        reason = f"{wanted} unavailable: {unavailable[wanted]}"
    elif wanted not in cfg.get("metrics", CAPTION_METRICS):
        reason = f"{wanted} is not among scoring.metrics"
    else:
        reason = f"{wanted} was not computed"
    return rows[0], {"wanted": wanted, "used": rows[0]["metric"], "reason": reason}


def headline_flag(fallback: dict) -> str:
    """``headline-fallback:cider_d->bleu_1 (cider_d unavailable: <reason>)``, on one line, without ';'
    (results/all.tsv joins a row's flags with '; ')."""
    reason = " ".join(str(fallback["reason"]).split()).replace(";", ",")
    if len(reason) > 200:
        reason = reason[:199] + "…"
    return f"headline-fallback:{fallback['wanted']}->{fallback['used']} ({reason})"


# One scorer per kind: (kind, items, raw outputs, decisions frame, task scoring cfg, captioning result)
# -> (decisions, headline row, extra rows, info). A new open metric is a function here plus one line
# in OPEN_METRICS (and the kind in config/schema.yaml's scoring.kind enum: tests/test_registries.py).
Scored = tuple[pd.DataFrame, dict, list[dict], dict]


def _captioning(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
                captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.metrics.captioning import CAPTION_METRICS, caption_metric_rows, score_captions

    res = captioning_result or score_captions([r or "" for r in raw], _refs(items),
                                              metrics=cfg.get("metrics", CAPTION_METRICS),
                                              cache_dir=cfg.get("cache_dir"))
    rows = caption_metric_rows(res, seed=int(cfg.get("seed", 0)))
    for m, v in res["sentences"].items():
        dec[m] = v
    head, fallback = pick_headline(rows, cfg, res["unavailable"])
    extra = [r for r in rows if r is not head]
    info = {"unavailable": res["unavailable"], "captioning_info": res["info"]}
    if fallback:
        info.update(headline_fallback=fallback, flags=[headline_flag(fallback)])
    return dec, head, extra, info


def _asr(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
         captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.metrics.asr import pi_wer, wer

    norm = cfg.get("normalizer", "whisper_en")
    if kind == "asr":
        refs = [r[0] for r in _refs(items)]
        speakers = speaker_clusters(items)
        head = wer(refs, raw, normalizer=norm, clusters=speakers)
        cer = wer(refs, raw, normalizer=norm, unit="char", clusters=speakers)
        extra = [{k: cer[k] for k in ("metric", "value", "ci_low", "ci_high", "n")}]
    else:
        head = pi_wer(_refs(items), raw, normalizer=norm)
        extra = [{"metric": "speaker_count_match_rate", "value": head["speaker_count_match_rate"], "n": head["n"]}]
    for key in ("errors", "n_ref", "sub", "del", "ins"):
        dec[key] = [p[key] for p in head["per_item"]]
    info = {k: head[k] for k in ("normalizer", "unit", "substitutions", "deletions", "insertions", "n_ref_units",
                                 "ci_method")}
    head = {k: head[k] for k in ("metric", "value", "ci_low", "ci_high", "n")}
    return dec, head, extra, info


def speaker_clusters(items: list[dict]) -> list[str] | None:
    """The items' ``meta.speaker`` (LibriSpeech's and AISHELL's presets read it from the release) when
    every item has one and there are two speakers or more, so corpus WER's interval resamples speakers;
    None otherwise (items resampled: one speaker's draws all give the same corpus)."""
    speakers = [(it.get("meta") or {}).get("speaker") for it in items]
    if not items or any(s in (None, "") for s in speakers) or len(set(map(str, speakers))) < 2:
        return None
    return [str(s) for s in speakers]


def _translation(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
                 captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.metrics.translation import bleu

    langs = {str(cfg.get("target_lang") or (it.get("meta") or {}).get("target_lang") or "") for it in items}
    if len(langs) != 1 or "" in langs:
        raise io.InputError(f"translation scoring needs one target_lang (task scoring.target_lang or item "
                            f"meta.target_lang); found {sorted(langs)}")
    res = bleu(raw, [r if len(r) > 1 else r[0] for r in _refs(items)], target_lang=langs.pop(),
               convention=cfg.get("convention", "qwen2-audio"), tokenize=cfg.get("tokenize"))
    dec["sentence_bleu"] = res["sentence_bleu"]
    head = {k: res[k] for k in ("metric", "value", "ci_low", "ci_high", "n")}
    extra = [{"metric": "chrf", "value": res["chrf"], "n": res["n"]}]
    info = {k: res[k] for k in ("tokenize", "convention", "target_lang", "signature", "n_missing_hypotheses")}
    return dec, head, extra, info


def _grounding(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
               captioning_result: dict | None) -> Scored:
    from lalmbench.core.stats import bootstrap_ci
    from lalmbench.scoring.metrics.grounding import grounding_scores

    on_key, off_key = cfg.get("gold_keys", ["onset_s", "offset_s"])
    gold = []
    for it in items:
        m = it.get("meta") or {}
        if m.get(on_key) is None or m.get(off_key) is None:
            raise io.InputError(f"item {it['id']!r}: grounding needs meta.{on_key} and meta.{off_key}")
        gold.append((m[on_key], m[off_key]))
    res = grounding_scores(gold, raw)
    for key in ("parse_status", "pred_onset_s", "pred_offset_s", "onset_error_s", "offset_error_s", "iou"):
        dec[key] = [p[key] for p in res["per_item"]]
    s = res["summary"]
    lo, hi = bootstrap_ci(dec["iou"].to_numpy(), seed=int(cfg.get("seed", 0)))
    head = {"metric": "mean_iou", "value": s["value"], "ci_low": lo, "ci_high": hi, "n": s["n"],
            "parse_failure_rate": s["parse_failure_rate"]}
    extra = res["recalls"] + [{"metric": m, "value": s[m], "n": s["n"]} for m in
                              ("median_onset_error_s", "median_offset_error_s")]
    info = {"parse_failure_rate": s["parse_failure_rate"]}
    return dec, head, extra, info


def _judge(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
           captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.judge import Judge, judged_accuracy

    fields = cfg.get("fields") or {}
    records = []
    for it, r in zip(items, raw):
        rec = {"id": it["id"], "candidate": r if r is not None else "", "question": it.get("question"),
               "reference": (it.get("references") or [it.get("answer_text")])[0]}
        for name, path in fields.items():  # e.g. slot_type: meta.slot_type
            obj = it
            for part in str(path).split("."):
                obj = (obj or {}).get(part) if isinstance(obj, dict) else None
            rec[name] = obj
        records.append(rec)
    judge = Judge(cfg["judge_model"], cfg["judge_model_cfg"], cfg.get("prompt", "sqqa"),
                  cache_dir=cfg.get("cache_dir"))
    verdicts = judge.judge(records)
    dec = dec.merge(verdicts, on="id", how="left", validate="one_to_one")
    acc = judged_accuracy(verdicts)
    head = {k: acc[k] for k in ("metric", "value", "ci_low", "ci_high", "n")}
    head["parse_failure_rate"] = acc["judge_failure_rate"]
    info = {k: v for k, v in acc.items() if k.startswith("judge_")}
    if acc["judge_n_candidate_markers"]:  # answers that may be steering the judge: worth a look
        info["flags"] = [f"judge:candidate_verdict_markers={acc['judge_n_candidate_markers']}"]
    return dec, head, [], info


def _instruction(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
                 captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.metrics.instruction import score_instructions

    per, res = score_instructions(items, raw)
    dec = dec.merge(per, on="id", how="left", validate="one_to_one")
    head = {k: res[k] for k in ("metric", "value", "ci_low", "ci_high", "n")}
    info = {"n_followed": res["n_followed"], "excluded": res["excluded"]}
    if res["excluded"]:  # a reader must know some items could not be checked
        info["flags"] = [f"{why}={n}" for why, n in res["excluded"].items()]
    return dec, head, [], info


def _label_match(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
                 captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.metrics.label import score_labels

    per, head = score_labels(_refs(items), raw, cfg.get("labels"))
    for key in ("correct", "labels_named", "label_status"):
        dec[key] = [p[key] for p in per]
    info = {"n_labels": head.pop("n_labels")}
    return dec, head, [], info


def _tempo(kind: str, items: list[dict], raw: list, dec: pd.DataFrame, cfg: dict,
           captioning_result: dict | None) -> Scored:
    from lalmbench.scoring.metrics.tempo import score_tempi

    per, rows, info = score_tempi(_refs(items), raw)
    for key in ("bpm", "correct", "accuracy2", "tempo_status"):
        dec[key] = [p[key] for p in per]
    if info["excluded"]:  # items no estimate could match: a reader must know they are not in n
        info["flags"] = [f"{why}={n}" for why, n in info["excluded"].items()]
    return dec, rows[0], rows[1:], info


OPEN_METRICS: dict[str, Callable[..., Scored]] = {
    "captioning": _captioning,
    "asr": _asr,
    "pi_asr": _asr,
    "translation": _translation,
    "grounding": _grounding,
    "judge": _judge,
    "instruction": _instruction,
    "label_match": _label_match,
    "tempo": _tempo,
}
KINDS = tuple(OPEN_METRICS)


def score_open(kind: str, items: list[dict], preds: pd.DataFrame, cfg: dict,
               captioning_result: dict | None = None) -> tuple[pd.DataFrame, dict, list[dict]]:
    """``captioning_result``: the worker's output when the workflow ran it in the captioning env
    (rule caption_metrics); without it the worker is run here as a subprocess."""
    if kind not in OPEN_METRICS:
        raise ValueError(f"unknown scoring kind {kind!r}; known: {KINDS}")
    raw, err = _raw(preds, items)
    ids = [it["id"] for it in items]
    dec = pd.DataFrame({"id": pd.Series(ids, dtype=object), "raw_output": pd.Series(raw, dtype=object),
                        "error": pd.Series(err, dtype=object)})
    dec, head, extra, info = OPEN_METRICS[kind](kind, items, raw, dec, cfg, captioning_result)
    metrics = {**head, "kind": kind, **info}
    metrics.setdefault("parse_failure_rate", None)
    metrics["n_generation_errors"] = sum(e is not None for e in err)
    return dec, metrics, extra


