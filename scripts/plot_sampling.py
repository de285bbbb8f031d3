"""Rule plot_sampling: sampled models beside greedy ones (accuracy against k, and against output tokens)."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.report.plots.sampling import write_sampling

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--table", required=True, help="results/all.tsv")
p.add_argument("--cost", required=True, help="results/tables/cost.tsv")
p.add_argument("--tsv", required=True)
p.add_argument("--png", required=True)
p.add_argument("--svg", required=True)
p.add_argument("--curve-tsv", help="results/tables/sampling_curve.tsv: pass@j and majority@j per sampled model")
p.add_argument("--metrics", nargs="*", default=[], help="the runs' metrics.json (their sampling curves)")
a = p.parse_args()
write_sampling(a.table, a.cost, tsv=a.tsv, png=a.png, svg=a.svg, metrics=a.metrics, curve_tsv=a.curve_tsv)
