"""Rule plot_paired: pairwise exact McNemar tests between models (Holm-adjusted), as a matrix."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.files import paired_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--decisions", required=True)
p.add_argument("--prompts", nargs="*", default=[])
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
p.add_argument("--tsv", required=True)
a = p.parse_args()
setup_logging()
paired_files(a.decisions, png=a.png, svg=a.svg, tsv=a.tsv, prompts=a.prompts)
