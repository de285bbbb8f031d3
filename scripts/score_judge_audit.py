"""Judge audit for one scored run: how far an LLM judge can be trusted on these items.

Reports swap stability (verdict unchanged when candidate and reference exchange places) and, for
MCQ runs, agreement + Cohen's kappa with the rule parser on items the parser could read.
"""
import argparse
import json
import logging

import _bootstrap  # noqa: F401

import pandas as pd

from lalmbench.core import io
from lalmbench.scoring.judge import Judge, audit
from lalmbench.scoring.metrics.open import _raw, clean_json
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--items", required=True)
p.add_argument("--predictions", required=True)
p.add_argument("--decisions", help="rule-based decisions.parquet of the same run (MCQ: correct/outcome)")
p.add_argument("--judge-json", required=True, help='{"judge_model", "judge_model_cfg", "prompt", "cache_dir"}')
p.add_argument("--run", nargs=5, metavar=("MODEL", "DATASET", "TASK", "CONDITION", "PROMPT"), required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
setup_logging()
cfg = json.loads(a.judge_json)
items = io.read_jsonl(a.items)
raw, _ = _raw(pd.read_parquet(a.predictions), items)
records = []
for it, r in zip(items, raw):
    opts = "\n".join(f"{o['label']}. {o['text']}" for o in it.get("options") or [])
    ref = (f"{it['answer_label']}. {it['answer_text']}" if it.get("answer_label")
           else (it.get("references") or [""])[0])
    records.append({"id": it["id"], "question": it.get("question", ""), "options": opts or "(none)",
                    "reference": ref, "candidate": r if r is not None else ""})
rule = None
if a.decisions:
    dec = pd.read_parquet(a.decisions)
    if "outcome" in dec and "correct" in dec:
        readable = dec[dec["outcome"] != "unparseable"]
        rule = readable.set_index("id")["correct"].astype(bool)
judge = Judge(cfg["judge_model"], cfg["judge_model_cfg"], cfg.get("prompt", "mcq_answer"), cache_dir=cfg.get("cache_dir"))
res = audit(judge, records, rule_correct=rule)
res.update(dict(zip(("model", "dataset", "task", "condition", "prompt"), a.run)))
io.write_json(a.out, clean_json(res))
logging.getLogger("lalmbench.judge_audit").info("%s: swap stability %s, rule agreement %s (kappa %s)",
                                                "/".join(a.run), res["swap_stability"], res.get("rule_agreement"),
                                                res.get("rule_kappa"))
