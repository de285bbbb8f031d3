"""Rule analysis_similarity: per-item sentence-embedding similarity of a run's outputs under two
conditions (e.g. noise vs audio), overall and per category; `table` combines the JSONs into one TSV."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.analysis.files import similarity_files, similarity_table
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
sub = p.add_subparsers(dest="cmd", required=True)
r = sub.add_parser("run")
r.add_argument("--a", required=True, help="decisions.parquet of condition A")
r.add_argument("--b", required=True, help="decisions.parquet of condition B")
r.add_argument("--labels", nargs=2, required=True, metavar=("A", "B"))
r.add_argument("--run", nargs=4, required=True, metavar=("MODEL", "DATASET", "TASK", "PROMPT"))
r.add_argument("--model", default="default", help="sentence-transformers model id or directory (default: bundled MiniLM)")
r.add_argument("--category", default=None, help="item meta key to group by (default: category, else the task)")
r.add_argument("--batch-size", type=int, default=64)
r.add_argument("--json", required=True)
r.add_argument("--tsv", required=True)
t = sub.add_parser("table")
t.add_argument("--out", required=True)
t.add_argument("jsons", nargs="+")
a = p.parse_args()
setup_logging()
if a.cmd == "run":
    run = dict(zip(("model", "dataset", "task", "prompt"), a.run))
    similarity_files(a.a, a.b, out_json=a.json, out_tsv=a.tsv, labels=a.labels, run=run, model=a.model,
                     category=a.category, batch_size=a.batch_size)
else:
    similarity_table(a.jsons, a.out)
