"""Results browser at scale: build the page for N items x R runs and time, in headless Chromium,
the first render and a filter change (the page must stay usable with thousands of items).

    .venv/bin/python bench/bench_browser.py [--items 5000] [--models 4] [--conditions 3]
Prints data.js size, build time, first-render and filter times (ms). Needs chromium + chromium-driver.
"""
import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.record import record  # noqa: E402
from lalmbench.core import io  # noqa: E402
from lalmbench.report.browser.build import write_browser  # noqa: E402

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--items", type=int, default=5000)
p.add_argument("--models", type=int, default=4)
p.add_argument("--conditions", type=int, default=3)
a = p.parse_args()

tmp = Path(tempfile.mkdtemp(prefix="bench-browser-"))
rng = np.random.default_rng(0)
items = [{"id": f"it{i:06d}", "task": f"task{i % 5}", "dataset": "bench", "clip_id": f"c{i}",
          "audio_path": f"results/data/bench/c{i}.wav", "question": f"Which sound comes first in clip {i}?",
          "options": [{"label": lab, "text": f"option {lab} of item {i}"} for lab in "ABCD"],
          "answer_label": "ABCD"[i % 4], "answer_text": f"option {'ABCD'[i % 4]} of item {i}", "meta": {}}
         for i in range(a.items)]
io.write_jsonl(tmp / "tasks.jsonl", items)
conds = ["audio", "no-audio", "noise", "silence", "shuffled"][: a.conditions]
rows = []
for m in range(a.models):
    for c in conds:
        pred = rng.choice(list("ABCD"), size=a.items)
        for it, pl in zip(items, pred):
            ok = pl == it["answer_label"]
            rows.append({"model": f"model{m}", "dataset": "bench", "task": it["task"], "condition": c,
                         "prompt": "mcq-default", "id": it["id"], "raw_output": f"The answer is {pl}.",
                         "pred_label": pl, "parse_status": "label-pattern", "outcome": "correct" if ok else "wrong",
                         "correct": ok, "gold_label": it["answer_label"]})
pd.DataFrame(rows).to_parquet(tmp / "decisions.parquet")
t0 = time.perf_counter()
write_browser([str(tmp / "tasks.jsonl")], str(tmp / "decisions.parquet"), out_html=str(tmp / "browser" / "index.html"),
              out_data=str(tmp / "browser" / "data.js"), root=tmp)
build_s = time.perf_counter() - t0
size_mb = (tmp / "browser" / "data.js").stat().st_size / 1e6

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

opts = webdriver.ChromeOptions()
opts.binary_location = shutil.which("chromium")
for f in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp / 'profile'}"):
    opts.add_argument(f)
drv = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
try:
    t0 = time.perf_counter()
    drv.get((tmp / "browser" / "index.html").as_uri())
    load_ms = (time.perf_counter() - t0) * 1000
    timing = drv.execute_script("""
        var t0 = performance.now();
        var s = document.getElementById('f-model'); s.value = 'model1'; s.dispatchEvent(new Event('change'));
        var t1 = performance.now();
        var o = document.getElementById('f-outcome'); o.value = 'wrong'; o.dispatchEvent(new Event('change'));
        var t2 = performance.now();
        return [t1 - t0, t2 - t1, document.querySelectorAll('.item').length,
                performance.getEntriesByType('navigation')[0].domComplete];""")
finally:
    drv.quit()
    shutil.rmtree(tmp, ignore_errors=True)
print(f"items={a.items} runs={a.models * len(conds)} answers={len(rows)} data.js={size_mb:.1f} MB build={build_s:.2f}s")
print(f"page load (driver.get, incl. parse + first render) = {load_ms:.0f} ms; domComplete = {timing[3]:.0f} ms")
print(f"filter model = {timing[0]:.0f} ms; + filter outcome = {timing[1]:.0f} ms; items on page = {timing[2]}")
if (a.items, a.models, a.conditions) == (5000, 4, 3):
    record("browser", "page load, 5,000 items x 12 runs (parse + first render)", load_ms, "ms")
    record("browser", "filter by model, 5,000 items x 12 runs", timing[0], "ms")
