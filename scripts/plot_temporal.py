"""Rule plot_temporal: accuracy binned by onset gap, overlap and duration ratio; grounding IoU."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.files import temporal_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--decisions", required=True)
p.add_argument("--prompts", nargs="*", default=[])
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
p.add_argument("--tsv", required=True)
p.add_argument("--tsv-iou", required=True)
a = p.parse_args()
setup_logging()
temporal_files(a.decisions, png=a.png, svg=a.svg, tsv=a.tsv, tsv_iou=a.tsv_iou, prompts=a.prompts)
