"""Rule item_version_check: were an imported model's outputs made on the items of this dataset?"""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.checks.item_versions import write_item_version_check
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--dataset", required=True)
p.add_argument("--model-json", required=True, help="the imported model's entry")
p.add_argument("--out", required=True)
p.add_argument("items", nargs="+", help="the dataset's task items the model runs")
a = p.parse_args()
setup_logging()
write_item_version_check(json.loads(a.model_json), a.items, a.out, model=a.model, dataset=a.dataset)
