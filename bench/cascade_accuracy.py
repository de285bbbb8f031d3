"""Cascade accuracy per task on built task items, with Wilson intervals and CPU per item.

Runs one ``cascade`` model entry (the default config's, with ``--params`` merged over its params)
over every item of the task files given, in one condition (``audio``) and the ``mcq-default`` prompt,
the way the generate job builds its inputs, and prints one row per task. The task files come
from the workflow (``snakemake results/tasks/synth-scenes/scene-order.jsonl ...``), run from the
directory their ``audio_path`` values are relative to:

    cd <checkout with built tasks> && python bench/cascade_accuracy.py results/tasks/*/*.jsonl \\
        --params '{"tags": "none"}'

A label equal to the gold label is correct (the cascade answers with a label, or with a
reasoner's text when that reasoner generates: then the first option label found in it counts).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _label(raw: str | None, labels: list[str]) -> str | None:
    if raw is None:
        return None
    if raw.strip() in labels:
        return raw.strip()
    m = re.search(r"\b([A-Z])\b", raw)
    return m.group(1) if m and m.group(1) in labels else None


def main(argv: list[str] | None = None) -> int:
    import yaml

    from lalmbench.inference.model_job import build_input
    from lalmbench.models.base import load_model
    from lalmbench.core.stats import wilson_interval

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="+", help="task JSONL files (results/tasks/<dataset>/<task>.jsonl)")
    ap.add_argument("--params", default="{}", help="JSON merged over the config's cascade params")
    ap.add_argument("--config", default=str(REPO / "config" / "config.yaml"))
    ap.add_argument("--model", default="cascade", help="the cascade entry of --config")
    ap.add_argument("--limit", type=int, default=0, help="at most this many items per task (0: all)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--condition", default="audio", help="audio | silence | noise | shuffled | no-audio")
    ap.add_argument("--answers", default="", help="write {item id: answer} here (JSON), e.g. to compare conditions")
    a = ap.parse_args(argv)
    cfg = yaml.safe_load(Path(a.config).read_text())
    from lalmbench.workflow.config import validate_config

    validate_config(cfg, REPO / "config" / "schema.yaml", REPO)
    entry = dict(cfg["models"][a.model])
    entry["params"] = {**(entry.get("params") or {}), **json.loads(a.params)}
    template = (REPO / "resources" / "prompts" / "mcq-default.txt").read_text()
    t0, c0 = time.perf_counter(), time.process_time()
    model = load_model(a.model, entry)
    print(f"load: {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU; params "
          f"{json.dumps(entry['params'], sort_keys=True)}")
    print(f"{'task':16s} {'n':>4s} {'acc':>6s} {'95% Wilson':>15s} {'chance':>6s} {'CPU ms/item':>11s}")
    total_cpu, total_n = 0.0, 0
    answers: dict[str, str | None] = {}
    for path in a.tasks:
        items = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        items = items[:a.limit] if a.limit else items
        inputs = [build_input(it, condition=a.condition, template=template, sample_rate=16000, seed=0) for it in items]
        c = time.process_time()
        outs = []
        for s in range(0, len(inputs), a.batch_size):
            outs += model.generate(inputs[s:s + a.batch_size])
        cpu = time.process_time() - c
        k = sum(_label(o.raw_output, [x["label"] for x in it["options"]]) == it["answer_label"]
                for o, it in zip(outs, items))
        n = len(items)
        lo, hi = wilson_interval(k, n)
        chance = sum(1 / len(it["options"]) for it in items) / n
        print(f"{items[0]['task']:16s} {n:4d} {k / n:6.3f} [{lo:.3f}, {hi:.3f}] {chance:6.3f} {1000 * cpu / n:11.0f}")
        total_cpu += cpu
        total_n += n
        answers.update({it["id"]: o.raw_output for it, o in zip(items, outs)})
    print(f"all: {total_n} items, {1000 * total_cpu / total_n:.0f} ms CPU per item ({a.condition} -> answer, "
          "model loaded)")
    if a.answers:
        Path(a.answers).write_text(json.dumps(answers, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
