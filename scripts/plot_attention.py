"""Rules attention_model_figures / attention_share: heatmaps + per-item table of one model, or the summary."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.attention import model_files, share_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
sub = p.add_subparsers(dest="what", required=True)
m = sub.add_parser("model", help="one model's capture.json -> heatmaps dir + per-item, per-layer TSV")
m.add_argument("--manifest", required=True)
m.add_argument("--heatmaps", required=True)
m.add_argument("--tsv", required=True)
s = sub.add_parser("share", help="every model's TSV -> audio-share summary figure + table")
s.add_argument("tables", nargs="*")
s.add_argument("--png", required=True)
s.add_argument("--svg", required=True)
s.add_argument("--tsv", required=True)
a = p.parse_args()
setup_logging()
if a.what == "model":
    model_files(a.manifest, heatmaps=a.heatmaps, tsv=a.tsv)
else:
    share_files(a.tables, png=a.png, svg=a.svg, tsv=a.tsv)
