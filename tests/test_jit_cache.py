"""librosa's numba caches are filled once when an env is built, so concurrent jobs only read them."""
import os
import re
import subprocess
import sys

from tests.workflow import ROOT


def test_warm_fills_the_numba_cache_in_one_process(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "lalmbench.core.jit_cache"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "numba caches filled: librosa"
    cached = {p.name.split("-")[1] for p in tmp_path.rglob("*.nbi")}
    # pyin's kernel and the ones librosa compiles at import (peak picking, zero crossings)
    assert {"pitch._pi_wrapper", "utils._localmax", "audio._zc_wrapper"} <= cached


def test_every_env_build_fills_the_cache_before_any_job_runs():
    make = (ROOT / "Makefile").read_text()
    for target in (r"\$\(VENV\)/\.installed:", r"\$\(ENVS\)/%/\.ready:"):
        recipe = re.search(target + r".*?\n((?:\t.*\n)+)", make).group(1)
        assert "-m lalmbench.core.jit_cache" in recipe.splitlines()[-2], recipe
    assert "-m lalmbench.core.jit_cache" in (ROOT / "rules" / "envs.smk").read_text()
