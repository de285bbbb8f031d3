"""Install an env's lock into the running Python: every env build (the Makefile's .venv and .venvs/<env> recipes,
rule build_venv) runs

    <env>/bin/python -m lalmbench.workflow.lock_install envs/<env>/requirements.lock

which runs `uv pip install --require-hashes -r envs/<env>/requirements.lock` into that Python. uv downloads in
parallel and keeps one cache for every env (`UV_CACHE_DIR`, else ~/.cache/uv): a wheel that two envs pin (core's and
captioning's CPU torch) is downloaded and unpacked once and hard-linked into both. The uv used is the one core pins
(`LALMBENCH_UV`, beside this Python, or on PATH); where there is none, core's hash-pinned uv wheel is installed once
with pip into ~/.cache/lalmbench/uv-<version> (`LALMBENCH_CACHE`). `LALMBENCH_INSTALLER=pip` installs with pip
instead, the same files (`pip install --require-hashes`).

Both write every module's bytecode at install time (uv `--compile-bytecode`; pip compiles by default). Without it
each job's Python compiles pandas, snakemake and torch from source on every start whenever Python may not write
`__pycache__` itself (`PYTHONDONTWRITEBYTECODE`, a read-only env): a second or more per process.

A lock compiled with uv overrides (envs/<env>/overrides.txt) pins versions that some package's own metadata refuses,
so a resolver would reject it: its header carries NO_DEPS_MARK and the lock's pins are installed exactly, --no-deps
(the lock already holds every dependency uv resolved).

A pin with a local version label (torch==2.13.0+cpu) is never on PyPI: the lock names the page that has it
(`--find-links https://download.pytorch.org/whl/cpu/torch/`). Where pip's own configuration already finds every such
wheel (a machine that keeps a copy in pip's find-links), the lock is installed without its remote page, and the
installer is pointed at those folders: a page it cannot reach costs pip five retries for each package. The hashes
are the same either way, so is what gets installed.

Standard library only: it runs before anything is installed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_LOCAL_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*==[^\s+]+\+[A-Za-z0-9.]+)\s", re.MULTILINE)
NO_DEPS_MARK = "# install: --no-deps"
_REMOTE_LINKS = re.compile(r"^--find-links[ \t]+https?://\S+[ \t]*\n?", re.MULTILINE)


def local_label_pins(text: str) -> list[str]:
    """`name==version+label` pins of a lock: the wheels that come from the lock's own pages, not from PyPI."""
    return _LOCAL_PIN.findall(text)


def pip_finds(pin: str) -> bool:
    """Whether this Python's pip, as configured (find-links), has the wheel without any index or network."""
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-index", "--no-deps",
                           "--ignore-installed", pin], capture_output=True, text=True)
    return proc.returncode == 0


def lock_for_this_machine(text: str, finds=pip_finds) -> str:
    """The lock as pip should read it here: without its remote --find-links pages when pip finds their wheels."""
    pins = local_label_pins(text)
    if pins and all(finds(pin) for pin in pins):
        return _REMOTE_LINKS.sub("", text)
    return text


def pip_options(text: str) -> list[str]:
    """Options the lock's header asks pip for: --no-deps where it was compiled with overrides."""
    return ["--no-deps"] if re.search(rf"(?m)^{re.escape(NO_DEPS_MARK)}$", text) else []


def pip_find_links() -> list[str]:
    """The find-links pip is configured with here (its config files and PIP_FIND_LINKS), as `pip config list` says."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    return [loc for value in re.findall(r"(?m)^\S*find-links='([^']*)'$", out) for loc in value.split()]


def uv_pin(core_lock: Path) -> tuple[str, list[str]]:
    """Core's uv pin and its hashes, read from core's lock: the uv every env is installed with."""
    match = re.search(r"(?m)^uv==(\S+)((?:[ \t]*\\\n[ \t]+--hash=sha256:[0-9a-f]{64})+)", core_lock.read_text())
    if not match:
        raise SystemExit(f"{core_lock}: no hash-pinned uv== line (uv is pinned in envs/core/requirements.txt)")
    return match.group(1), re.findall(r"--hash=(sha256:[0-9a-f]{64})", match.group(2))


def bootstrap_uv(core_lock: Path) -> str:
    """Core's uv, installed with pip (hash-checked, no dependencies) into a folder of its own the first time."""
    version, hashes = uv_pin(core_lock)
    cache = Path(os.environ.get("LALMBENCH_CACHE") or Path.home() / ".cache" / "lalmbench")
    target = cache / f"uv-{version}"
    uv = target / "bin" / "uv"
    if not uv.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            req = Path(tmp) / "uv.txt"
            req.write_text(f"uv=={version} " + " ".join(f"--hash={h}" for h in hashes) + "\n")
            staging = Path(tmp) / "uv"
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--require-hashes",
                   "--target", str(staging), "-r", str(req)]
            print("+", " ".join(cmd), file=sys.stderr, flush=True)
            subprocess.run(cmd, check=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(target, ignore_errors=True)
            os.replace(staging, target)
    return str(uv)


def find_uv(core_lock: Path) -> str:
    """LALMBENCH_UV, else the uv beside this Python (core's env has it), else one on PATH, else core's pin
    installed once into the lalmbench cache."""
    beside = Path(sys.executable).parent / "uv"
    for candidate in (os.environ.get("LALMBENCH_UV"), str(beside) if beside.is_file() else None, shutil.which("uv")):
        if candidate:
            return candidate
    return bootstrap_uv(core_lock)


def install_command(lock: Path, source: Path, text: str, local_links: list[str], installer: str) -> list[str]:
    """The install of `source` (the lock as read here) into this Python, with uv or pip."""
    links = [arg for loc in local_links for arg in ("--find-links", loc)]
    if installer == "pip":
        return [sys.executable, "-m", "pip", "install", "--require-hashes", *pip_options(text), "-r", str(source)]
    uv = find_uv(lock.resolve().parents[1] / "core" / lock.name)
    return [uv, "pip", "install", "--python", sys.executable, "--require-hashes", "--compile-bytecode",
            *pip_options(text), *links, "-r", str(source)]


def install(lock: Path) -> int:
    text = lock.read_text()
    wanted = lock_for_this_machine(text)
    installer = os.environ.get("LALMBENCH_INSTALLER", "uv")
    if installer not in ("uv", "pip"):
        raise SystemExit(f"LALMBENCH_INSTALLER={installer!r}: expected 'uv' (the default) or 'pip'")
    with tempfile.TemporaryDirectory() as tmp:
        source, local_links = lock, []
        if wanted != text:
            source = Path(tmp) / lock.name
            source.write_text(wanted)
            local_links = list(dict.fromkeys(loc for loc in pip_find_links() if Path(loc).is_dir()))
            print(f"{lock}: pip already finds {', '.join(local_label_pins(text))}: installing it without the "
                  "lock's remote --find-links pages", file=sys.stderr)
        cmd = install_command(lock, source, text, local_links, installer)
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isfile(sys.argv[1]):
        raise SystemExit("usage: python -m lalmbench.workflow.lock_install envs/<env>/requirements.lock")
    sys.exit(install(Path(sys.argv[1])))
