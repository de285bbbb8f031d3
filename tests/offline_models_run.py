"""Answer items with the default run's offline models (cascade, signal) and write what they computed, as JSON.

usage: python tests/offline_models_run.py ITEMS_JSONL OUT_JSON

Run in a subprocess so each run starts with the CPU-dispatch settings of its environment (ATEN_CPU_CAPABILITY,
CT2_FORCE_CPU_ISA, NPY_DISABLE_CPU_FEATURES, ...): libraries read them once, when they load
(tests/models/test_cpu_dispatch.py).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lalmbench.models.base import ModelInput, load_model  # noqa: E402

MODELS = {"cascade": {"backend": "cascade", "params": {"cpu_threads": 1}},
          "signal": {"backend": "signal", "params": {"cpu_threads": 1}}}


def main(items_path: str, out_path: str) -> None:
    items = [json.loads(line) for line in Path(items_path).read_text().splitlines() if line.strip()]
    inputs = []
    for it in items:
        audio, sr = sf.read(it["audio_path"], dtype="float32")
        inputs.append(ModelInput(id=it["id"], prompt=it["question"], question=it["question"], options=it["options"],
                                 audio=audio, sample_rate=sr, task=it.get("task", ""), meta=it.get("meta") or {}))
    out = {}
    for name, cfg in MODELS.items():
        model = load_model(name, cfg)
        for x, o in zip(inputs, model.generate(inputs)):
            out[f"{name}/{x.id}"] = {"raw_output": o.raw_output, "error": o.error, "extra": o.extra}
    Path(out_path).write_text(json.dumps(out, sort_keys=True, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:])
