"""Run ``python -m lalmbench.inference`` and SIGKILL it in the middle of a prediction-cache write.

usage: python tests/kill_mid_write.py N FRACTION -- <lalmbench.inference arguments>

The real command line runs unchanged, except that the N-th write to the prediction cache puts only
the first FRACTION of its text on disk (as a full disk or a kill inside write(2) would) before the
process sends itself SIGKILL. Used by tests/test_inference_faults.py.
"""
import os
import runpy
import signal
import sys

import lalmbench.inference.cache as cache

n_write, fraction = int(sys.argv[1]), float(sys.argv[2])
args = sys.argv[sys.argv.index("--") + 1:]


class _TornOnNthWrite:
    """The cache's append handle; every call but ``write`` goes to the real file."""

    writes = 0

    def __init__(self, fh):
        self._fh = fh

    def write(self, text: str) -> int:
        _TornOnNthWrite.writes += 1
        if _TornOnNthWrite.writes == n_write:
            self._fh.write(text[:max(1, int(len(text) * fraction))])
            self._fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return self._fh.write(text)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def _open(file, mode="r", *args, **kwargs):
    fh = open(file, mode, *args, **kwargs)
    return _TornOnNthWrite(fh) if "a" in mode else fh


cache.open = _open  # the cache module's name lookup finds this before the builtin
sys.argv = ["lalmbench.inference", *args]
runpy.run_module("lalmbench.inference", run_name="__main__", alter_sys=True)
