"""Per-rule software environments: the top-level pins live in envs/<name>/requirements.txt (the one place);
envs/<name>/requirements.lock pins every package they pull in, with hashes (`make lock`: lalmbench.workflow.locks);
envs/<name>.yaml (conda, for --sdm conda) and, for the GPU envs, envs/containers/<name>.def (Apptainer)
and envs/containers/<name>.Dockerfile are rendered from the lock and checked to agree.

Regenerate every rendered file after editing pins:  make lock  (after editing only this module: make envs)
"""
from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ENVS_DIR = Path(__file__).resolve().parents[2] / "envs"
CONTAINERS_DIR = ENVS_DIR / "containers"
PYTHON = "3.11"
# GPU envs that get container files: the ones run on cluster nodes, where a prebuilt image beats a pip build per node.
CONTAINER_ENVS = ("hf", "vllm")
# Not a CUDA base image: PyPI's Linux x86_64 torch/vLLM wheels bundle the CUDA runtime (nvidia-* wheels), so the
# image needs only the host's NVIDIA driver, which docker --gpus / apptainer --nv bring in; slim is much smaller.
BASE_IMAGE = f"python:{PYTHON}-slim"
IMAGE_LOCK = "/opt/lalmbench/requirements.lock"
LOCK_FILE = "requirements.lock"
# The lock's own record of what it was compiled from (its header line); a changed requirements file fails the tests.
_LOCK_SOURCE = re.compile(r"^# requirements: envs/(?P<name>[^/\s]+)/requirements\.txt sha256=(?P<sha256>[0-9a-f]{64})$",
                          re.MULTILINE)
_LOCK_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)$")


def read_requirements(path: str | Path) -> list[str]:
    """Requirement lines without comments/blank lines. Only exact pins (==) are allowed: these envs
    must rebuild identically on a cluster months later."""
    reqs = []
    for lineno, raw in enumerate(Path(path).read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-"):
            raise ValueError(f"{path}:{lineno}: pip options ({line.split()[0]}) are not allowed: conda YAMLs "
                             "cannot follow them; list packages only")
        if "==" not in line:
            raise ValueError(f"{path}:{lineno}: {line!r} is not pinned with '=='")
        reqs.append(line)
    return reqs


def conda_pip_list(yaml_path: str | Path) -> tuple[list[str], list[str]]:
    """(conda dependencies, pip dependencies) of a conda env file."""
    spec = yaml.safe_load(Path(yaml_path).read_text())
    conda, pip = [], []
    for dep in spec.get("dependencies", []):
        if isinstance(dep, dict) and "pip" in dep:
            pip += [str(x) for x in dep["pip"]]
        else:
            conda.append(str(dep))
    return conda, pip


def requirements_path(name: str) -> Path:
    return ENVS_DIR / name / "requirements.txt"


def requirements_sha256(name: str) -> str:
    """sha256 of the requirements file as committed: the image label ties an image to the pins it was built from
    (check with `sha256sum envs/<name>/requirements.txt`)."""
    return hashlib.sha256(requirements_path(name).read_bytes()).hexdigest()


def lock_path(name: str) -> Path:
    return ENVS_DIR / name / LOCK_FILE


def lock_sha256(name: str) -> str:
    """sha256 of the lock as committed: what provenance and the image labels record of an env."""
    return hashlib.sha256(lock_path(name).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Lock:
    """A requirements.lock as pip reads it: the requirements.txt digest it was compiled from, pip options
    (where a wheel that is not on PyPI comes from) and one `name==version --hash=sha256:...` line per package."""
    requirements_sha256: str
    options: list[str]
    pins: dict[str, str]  # normalized name -> version
    lines: list[str]


def read_lock(path: str | Path) -> Lock:
    """Parse a lock written by `make lock`; a missing or hand-edited one is an error that names the file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} missing: run `make lock`")
    text = path.read_text()
    source = _LOCK_SOURCE.search(text)
    if not source:
        raise ValueError(f"{path}: no '# requirements: envs/<env>/requirements.txt sha256=...' header: run `make lock`")
    options, pins, lines = [], {}, []
    for lineno, line in _logical_lines(text):
        words = line.split()
        if words[0].startswith("-"):
            options.append(line)
            continue
        pin = _LOCK_PIN.match(words[0])
        if not pin or not words[1:] or not all(w.startswith("--hash=sha256:") for w in words[1:]):
            raise ValueError(f"{path}:{lineno}: {words[0]!r} is not a `name==version --hash=sha256:...` line")
        pins[canonicalize_name(pin["name"])] = pin["version"]
        lines.append(line)
    return Lock(source["sha256"], options, pins, lines)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement as pip reads it: comments dropped, backslash
    continuations joined, runs of whitespace made one space."""
    out, parts, start = [], [], 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not parts:
            start = lineno
        parts.append(line.removesuffix("\\"))
        if line.endswith("\\"):
            continue
        joined, parts = " ".join(" ".join(parts).split()), []
        if joined:
            out.append((start, joined))
    return out


def lock_problems(requirements: str | Path, lock: str | Path) -> list[str]:
    """Why a lock does not install this requirements file (empty when it does): compiled from other contents,
    or a top-level pin it lacks or holds at another version (a local label, 2.13.0+cpu for ==2.13.0, agrees)."""
    requirements, lock = Path(requirements), Path(lock)
    parsed = read_lock(lock)
    sha256 = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if parsed.requirements_sha256 != sha256:
        return [f"{lock} was compiled from another {requirements} (sha256 {parsed.requirements_sha256[:12]}..., "
                f"now {sha256[:12]}...): run `make lock`"]
    problems = []
    for line in read_requirements(requirements):
        req = Requirement(line)
        locked = parsed.pins.get(canonicalize_name(req.name))
        if locked is None or not req.specifier.contains(locked, prereleases=True):
            problems.append(f"{lock} holds {req.name}=={locked} for {line!r}: run `make lock`")
    return problems


def _generated_line(name: str) -> str:
    return f"# Generated from envs/{name}/{LOCK_FILE} by `make lock` (or `make envs`); do not edit by hand."


def render_conda_yaml(name: str, lock: Lock) -> str:
    """The lock's lines verbatim under pip: (Snakemake copies the YAML away from envs/, so an `-r` path could not
    follow it); any --hash makes pip check every file, as --require-hashes does."""
    lines = [_generated_line(name), f"name: lalmbench-{name}", "channels:", "  - conda-forge", "dependencies:",
             f"  - python={PYTHON}", "  - pip", "  - pip:"]
    lines += [f"      - {r}" for r in lock.options + lock.lines]
    return "\n".join(lines) + "\n"


def _container_header(name: str, build: str, run: str, reqs: list[str], sha256: str, lock_sha: str) -> list[str]:
    """Comment block both container files open with: how to build and run, and the pins (listed so that a pin
    change shows in the diff of these files, not only in the label's hash)."""
    return [
        _generated_line(name),
        f"# Build from the repository root: {build}",
        f"# Base {BASE_IMAGE}, not a CUDA image: PyPI's Linux x86_64 torch wheels bundle the CUDA runtime",
        "# (nvidia-* wheels), so only the host's NVIDIA driver is needed; the image is smaller. The tag follows",
        "# Python 3.11 patch releases: pin a digest (name@sha256:...) for a bit-identical base.",
        "# Hugging Face cache: mount it and point HF_HOME at it, e.g.",
        f"#   {run}",
        "# HF_HUB_OFFLINE is deliberately not set (downloads work by default); set it to 1 on nodes without network.",
        f"# Installs envs/{name}/{LOCK_FILE} (sha256 {lock_sha}), compiled from these pins",
        f"# (envs/{name}/requirements.txt, sha256 {sha256}):",
        *[f"#   {r}" for r in reqs],
    ]


def _install_commands() -> list[str]:
    """Build-time shell commands shared by both formats. gcc: Triton (vLLM's kernels, torch.compile) compiles a
    small C launcher on first use and slim has no compiler. pip check: fail the build, not the first job."""
    return [
        "apt-get update",
        "apt-get install -y --no-install-recommends gcc libc6-dev",
        "rm -rf /var/lib/apt/lists/*",
        f"python -m pip install --no-cache-dir --require-hashes -r {IMAGE_LOCK}",
        "python -m pip check",
    ]


def render_dockerfile(name: str, reqs: list[str], sha256: str, lock_sha: str) -> str:
    build = f"docker build -f envs/containers/{name}.Dockerfile -t lalmbench-{name} envs  (context envs/: pins only)"
    run = (f'docker run --gpus all -v "$HF_HOME":/hf -e HF_HOME=/hf -v "$PWD":/repo -w /repo lalmbench-{name} '
           "python scripts/generate.py ...")
    lines = _container_header(name, build, run, reqs, sha256, lock_sha) + [
        f"FROM {BASE_IMAGE}",
        f'LABEL lalmbench.env="{name}" \\',
        f'      lalmbench.requirements.sha256="{sha256}" \\',
        f'      lalmbench.lock.sha256="{lock_sha}"',
        "ENV PYTHONUNBUFFERED=1",
        f"COPY {name}/{LOCK_FILE} {IMAGE_LOCK}",
        "RUN " + " \\\n && ".join(_install_commands()),
        'CMD ["python"]',
    ]
    return "\n".join(lines) + "\n"


def render_apptainer_def(name: str, reqs: list[str], sha256: str, lock_sha: str) -> str:
    build = f"apptainer build envs/containers/{name}.sif envs/containers/{name}.def"
    run = (f'apptainer exec --nv --bind "$HF_HOME" envs/containers/{name}.sif python scripts/generate.py ...'
           "  (the host's HF_HOME passes through; $HOME is bound by default)")
    lines = _container_header(name, build, run, reqs, sha256, lock_sha) + [
        "Bootstrap: docker",
        f"From: {BASE_IMAGE}",
        "",
        "%files",
        f"    envs/{name}/{LOCK_FILE} {IMAGE_LOCK}",
        "",
        "%post",
        *[f"    {c}" for c in _install_commands()],
        "",
        "%environment",
        "    export PYTHONUNBUFFERED=1",
        "",
        "%labels",
        f"    lalmbench.env {name}",
        f"    lalmbench.requirements.sha256 {sha256}",
        f"    lalmbench.lock.sha256 {lock_sha}",
        "",
        "%runscript",
        '    exec python "$@"',
    ]
    return "\n".join(lines) + "\n"


def env_names() -> list[str]:
    return sorted(p.parent.name for p in ENVS_DIR.glob("*/requirements.txt"))


def rendered_files() -> dict[Path, str]:
    """Every generated file and the text it must hold now: main() writes these and the tests compare the
    committed files against them, so a pin edited without regenerating fails."""
    files = {}
    for name in env_names():
        reqs = read_requirements(requirements_path(name))
        files[ENVS_DIR / f"{name}.yaml"] = render_conda_yaml(name, read_lock(lock_path(name)))
        if name in CONTAINER_ENVS:
            sha256, lock_sha = requirements_sha256(name), lock_sha256(name)
            files[CONTAINERS_DIR / f"{name}.def"] = render_apptainer_def(name, reqs, sha256, lock_sha)
            files[CONTAINERS_DIR / f"{name}.Dockerfile"] = render_dockerfile(name, reqs, sha256, lock_sha)
    return files


def main() -> None:
    from lalmbench.core.io import write_text

    for path, text in rendered_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)
        print(f"wrote {path.relative_to(ENVS_DIR.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
