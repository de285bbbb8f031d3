"""Rule build_browser: task items + stacked decisions -> results/browser/index.html + data.js (static, file:// works)."""
import argparse
import json
import logging

import _bootstrap  # noqa: F401

from lalmbench.report.browser.build import write_browser
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--decisions", required=True, help="results/tables/decisions.parquet")
p.add_argument("--flags", default=None, help="results/tables/flags.tsv: what a reader must know about each run")
p.add_argument("--html", required=True)
p.add_argument("--data", required=True)
p.add_argument("--options-json", default="{}", help='config "browser:" section, e.g. {"max_raw_chars": 4000}')
p.add_argument("tasks", nargs="+", help="results/tasks/{dataset}/{task}.jsonl")
a = p.parse_args()
setup_logging()
opts = json.loads(a.options_json)
unknown = set(opts) - {"max_raw_chars", "bundle_audio"}
if unknown:
    raise SystemExit(f"browser options: unknown key(s) {sorted(unknown)}; known: max_raw_chars, bundle_audio")
data = write_browser(a.tasks, a.decisions, out_html=a.html, out_data=a.data,
                     max_raw_chars=int(opts.get("max_raw_chars", 4000)), bundle_audio=bool(opts.get("bundle_audio")),
                     flags_path=a.flags)
logging.getLogger("lalmbench.report.browser").info("%s: %d items, %d runs, %d answers", a.html, len(data["items"]),
                                            len(data["runs"]), len(data["preds"]))
