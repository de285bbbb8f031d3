"""Fill librosa's numba caches once, in one process, when an env is built.

librosa compiles its numba kernels at import and on first use and caches them beside its own files
(``librosa/**/__pycache__/*.nbi``). Two jobs that import it at the same moment in a fresh env (a
model's generate jobs for two datasets, say) write that cache together and can leave it unreadable:
every later ``librosa.pyin`` in that env then dies with a segmentation fault. Filling the cache while
the env is built, before any job runs, leaves the jobs only reading it.

    python -m lalmbench.core.jit_cache     # Makefile and rule build_venv run it after pip install
"""
from __future__ import annotations

import importlib.util


def warm() -> list[str]:
    """Compile and cache the kernels the pipeline uses; the packages warmed (none without librosa)."""
    if importlib.util.find_spec("librosa") is None:
        return []
    import librosa
    import numpy as np

    tone = np.sin(2 * np.pi * 440 * np.arange(4096) / 16000)
    librosa.pyin(tone, fmin=60, fmax=2000, sr=16000, frame_length=1024)
    return ["librosa"]


if __name__ == "__main__":
    print("numba caches filled:", ", ".join(warm()) or "none (librosa is not in this env)")
