"""Rule plot_accuracy: accuracy per model x task with 95% intervals and chance lines."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.accuracy import plot_accuracy_file

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--table", required=True)
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
a = p.parse_args()
plot_accuracy_file(a.table, png=a.png, svg=a.svg)
