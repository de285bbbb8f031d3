"""Rule plot_reliance: accuracy with vs without the item's audio per model (McNemar-tested drops)."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.files import reliance_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--decisions", required=True)
p.add_argument("--prompts", nargs="*", default=[], help="prompt preference order (the config's prompts)")
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
p.add_argument("--tsv", required=True)
a = p.parse_args()
setup_logging()
reliance_files(a.decisions, png=a.png, svg=a.svg, tsv=a.tsv, prompts=a.prompts)
