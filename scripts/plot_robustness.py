"""Rule plot_robustness: circular vs plain accuracy, prompt-variant spread, answer-position bias."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.files import robustness_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--table", required=True, help="results/all.tsv")
p.add_argument("--decisions", required=True)
p.add_argument("--circular", default=None, help="results/sweeps/circular.tsv (optional)")
p.add_argument("--prompts", nargs="*", default=[])
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
p.add_argument("--tsv-spread", required=True)
p.add_argument("--tsv-position", required=True)
p.add_argument("--tsv-circular", required=True)
a = p.parse_args()
setup_logging()
robustness_files(a.table, a.decisions, circular=a.circular, png=a.png, svg=a.svg, tsv_spread=a.tsv_spread,
                 tsv_position=a.tsv_position, tsv_circular=a.tsv_circular, prompts=a.prompts)
