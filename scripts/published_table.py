"""Rule published_table: a ledger's published numbers beside value_official and value from all.tsv."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.report.published import write_published

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--table", required=True, help="results/all.tsv")
p.add_argument("--ledger", required=True, help="lalmbench/data/published/<benchmark>.yaml")
p.add_argument("--datasets", nargs="+", required=True, help="the config's datasets of the ledger's preset")
p.add_argument("--files-json", default="{}", help="model_key -> the imported file the config scores for it")
p.add_argument("--tsv", required=True)
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
a = p.parse_args()
write_published(a.table, a.ledger, a.datasets, tsv=a.tsv, png=a.png, svg=a.svg, files=json.loads(a.files_json))
