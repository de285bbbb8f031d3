"""Rule agreement: answer agreement between configured pairs of model entries."""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.checks.agreement import write_agreement_table
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--pairs-json", required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
setup_logging()
write_agreement_table(json.loads(a.pairs_json), a.out)
