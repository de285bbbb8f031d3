"""Rule listening_check: does a model's answer change when its audio is replaced by silence/noise?"""
import argparse
import json

import _bootstrap  # noqa: F401

from lalmbench.checks.listening import write_listening_check
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--paths-json", required=True, help="{condition: {task: decisions.parquet}}")
p.add_argument("--settings-json", required=True, help="checks.listening from the config")
p.add_argument("--out", required=True)
a = p.parse_args()
setup_logging()
s = json.loads(a.settings_json)
write_listening_check(json.loads(a.paths_json), a.out, on_flag=s["on_flag"], model=a.model, reference=s["reference"],
                      threshold=s["threshold"], min_items=s["min_items"])
