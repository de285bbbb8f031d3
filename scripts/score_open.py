"""Rule score_open: open-ended answers -> decisions.parquet + metrics.json (all.tsv format).

Kinds (task config ``scoring.kind``):
  captioning   BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, SBERT-sim, SPICE/SPIDEr/FENSE via the captioning env
  asr          WER (+ CER) with the Whisper English normaliser (``normalizer``)
  pi_asr       permutation-invariant WER; references = one transcript per speaker
  translation  sacreBLEU with the per-language tokenizer (``target_lang``, ``convention`` or ``tokenize``)
  grounding    mean IoU, recall at IoU 0.3/0.5/0.7, onset/offset errors; gold from meta onset_s/offset_s
  judge        LLM-as-judge accuracy (``judge_model`` = a models: entry, ``prompt``, ``fields``)
  instruction  instruction-following rate (each item's meta.instruction: task_identifier + kwargs)
"""
import argparse
import json
import logging

import _bootstrap  # noqa: F401

import pandas as pd

from lalmbench.core import io
from lalmbench.scoring.metrics.open import KINDS, clean_json, score_open
from lalmbench.core.progress import setup_logging
from lalmbench.tracking.jobs import track_score

log = logging.getLogger("lalmbench.score_open")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", required=True)
    p.add_argument("--predictions", required=True)
    p.add_argument("--scoring-json", required=True, help="the task's scoring: config (kind + options)")
    p.add_argument("--official-json", default="{}", help="the dataset's official rule for this task ({} = none)")
    p.add_argument("--config-hash", default="")
    p.add_argument("--run", nargs=5, metavar=("MODEL", "DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
    p.add_argument("--decisions", required=True)
    p.add_argument("--metrics", required=True)
    p.add_argument("--captioning-result", default=None, help="captioning worker output (rule caption_metrics)")
    p.add_argument("--tracking-json", default="", help="tracking settings (config tracking: + group); empty: off")
    a = p.parse_args()
    setup_logging()
    cfg = json.loads(a.scoring_json)
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise SystemExit(f"scoring.kind must be one of {KINDS}, got {kind!r}")
    items = io.read_jsonl(a.items)
    preds = io.read_parquet(a.predictions)
    caption = io.read_json(a.captioning_result) if a.captioning_result else None
    dec, metrics, extra = score_open(kind, items, preds, cfg, captioning_result=caption)
    from lalmbench.scoring.sampled import open_samples_flag

    if (flag := open_samples_flag(preds)) is not None:
        metrics = {**metrics, "flags": [*metrics.get("flags", []), flag]}
    official_cfg = json.loads(a.official_json)
    if official_cfg:
        from lalmbench.scoring.official import run_official

        dec, official = run_official(official_cfg, items, dec)
        metrics = {**metrics, **official}
    from lalmbench.scoring.parse import PARSER_VERSION

    first = preds.iloc[0] if len(preds) else {}
    prov = {k: (None if not len(preds) or pd.isna(first.get(k)) else first.get(k))
            for k in ("model_id", "model_revision", "backend")}
    out = {**dict(zip(("model", "dataset", "task", "condition", "prompt"), a.run)), **metrics, **prov,
           "chance": None, "p_vs_chance": None, "parser_version": PARSER_VERSION, "config_hash": a.config_hash,
           "scoring": {k: v for k, v in cfg.items() if k != "judge_model_cfg"}, "extra_metrics": extra}
    io.write_parquet(a.decisions, dec)
    io.write_json(a.metrics, clean_json(out))
    log.info("%s: %s = %s (n=%s)", "/".join(a.run), out["metric"], out["value"], out["n"])
    track_score(a.tracking_json, items_path=a.items, predictions_path=a.predictions, decisions_path=a.decisions,
                metrics_path=a.metrics)


if __name__ == "__main__":
    main()
