"""Rules rubric / rubric_table: rubric evaluation of one run's captions, and the table over all runs.

  rubric.py run --items T.jsonl --predictions P.parquet --out R.json --run-json '{...}' --settings-json '{...}'
  rubric.py table --out rubrics.tsv R1.json R2.json ...
"""
import argparse
import json
import logging

import _bootstrap  # noqa: F401

from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
sub = p.add_subparsers(dest="cmd", required=True)
r = sub.add_parser("run")
r.add_argument("--items", required=True)
r.add_argument("--predictions", required=True)
r.add_argument("--out", required=True)
r.add_argument("--run-json", required=True, help="task, model, condition, prompt, dataset")
r.add_argument("--settings-json", required=True, help="the rubrics: block with its defaults")
r.add_argument("--llm-json", required=True, help="the rubric LLM's models entry")
t = sub.add_parser("table")
t.add_argument("--out", required=True)
t.add_argument("jsons", nargs="*")
a = p.parse_args()
setup_logging()
log = logging.getLogger("rubric")

if a.cmd == "table":
    from lalmbench.rubrics.files import write_table

    df = write_table(a.jsons, a.out)
    log.info("wrote %s (%d rows)", a.out, len(df))
else:
    from lalmbench.analysis.embed import load_encoder
    from lalmbench.rubrics.files import make_llm, run_rubric

    settings = json.loads(a.settings_json)
    llm = make_llm(settings["llm"], json.loads(a.llm_json), settings)
    embed, embedding_model = load_encoder(settings["embedding_model"])
    doc = run_rubric(items=a.items, predictions=a.predictions, out=a.out, run=json.loads(a.run_json), llm=llm,
                     embed=embed, embedding_model=embedding_model, settings=settings)
    s = doc["summary"]
    log.info("%s: %d answers, %d pass(es), mean score %s (std %s), %d LLM calls (the rest from the cache)",
             a.out, doc["answers"]["used"], len(doc["runs"]), s["mean"], s["std"], doc["llm_calls"])
    for n, run in enumerate(doc["runs"]):
        log.info("pass %d (seed %d): %d criteria; proposals %s; merges %s; scores %s", n, run["seed"],
                 run["summary"]["n_criteria"], run["summary"]["proposal_status"], run["summary"]["merge_status"],
                 run["summary"]["score_status"])
