"""Rule collect_decisions: stack every run's decisions.parquet (with its run keys) into one table for the figures."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.files import collect_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--out", required=True)
p.add_argument("decisions", nargs="+", help="results/scores/{model}/{dataset}/{task}/{condition}/{prompt}/decisions.parquet")
a = p.parse_args()
setup_logging()
collect_files(a.decisions, a.out)
