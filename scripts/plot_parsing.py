"""Rule plot_parsing: confusion matrices (gold vs predicted label) and parse-stage composition."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.files import parsing_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--decisions", required=True)
p.add_argument("--prompts", nargs="*", default=[])
for name in ("confusion-png", "confusion-svg", "confusion-tsv", "stages-png", "stages-svg", "stages-tsv"):
    p.add_argument(f"--{name}", required=True)
a = p.parse_args()
setup_logging()
parsing_files(a.decisions, confusion_png=a.confusion_png, confusion_svg=a.confusion_svg, confusion_tsv=a.confusion_tsv,
              stages_png=a.stages_png, stages_svg=a.stages_svg, stages_tsv=a.stages_tsv, prompts=a.prompts)
