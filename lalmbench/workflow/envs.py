"""Per-rule software environments: pins live in envs/<name>/requirements.txt (the one place);
envs/<name>.yaml (conda, for --sdm conda) and, for the GPU envs, envs/containers/<name>.def (Apptainer)
and envs/containers/<name>.Dockerfile are rendered from them and checked to agree.

Regenerate every rendered file after editing pins:  python -m lalmbench.workflow.envs
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import yaml

ENVS_DIR = Path(__file__).resolve().parents[2] / "envs"
CONTAINERS_DIR = ENVS_DIR / "containers"
PYTHON = "3.11"
# GPU envs that get container files: the ones run on cluster nodes, where a prebuilt image beats a pip build per node.
CONTAINER_ENVS = ("hf", "vllm")
# Not a CUDA base image: PyPI's Linux x86_64 torch/vLLM wheels bundle the CUDA runtime (nvidia-* wheels), so the
# image needs only the host's NVIDIA driver, which docker --gpus / apptainer --nv bring in; slim is much smaller.
BASE_IMAGE = f"python:{PYTHON}-slim"
IMAGE_REQUIREMENTS = "/opt/lalmbench/requirements.txt"


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


def _generated_line(name: str) -> str:
    return f"# Generated from envs/{name}/requirements.txt by `python -m lalmbench.workflow.envs`; do not edit by hand."


def render_conda_yaml(name: str, reqs: list[str]) -> str:
    lines = [_generated_line(name), f"name: lalmbench-{name}", "channels:", "  - conda-forge", "dependencies:",
             f"  - python={PYTHON}", "  - pip", "  - pip:"]
    lines += [f"      - {r}" for r in reqs]
    return "\n".join(lines) + "\n"


def _container_header(name: str, build: str, run: str, reqs: list[str], sha256: str) -> list[str]:
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
        f"# Pins (envs/{name}/requirements.txt, sha256 {sha256}):",
        *[f"#   {r}" for r in reqs],
    ]


def _install_commands() -> list[str]:
    """Build-time shell commands shared by both formats. gcc: Triton (vLLM's kernels, torch.compile) compiles a
    small C launcher on first use and slim has no compiler. pip check: fail the build, not the first job."""
    return [
        "apt-get update",
        "apt-get install -y --no-install-recommends gcc libc6-dev",
        "rm -rf /var/lib/apt/lists/*",
        f"python -m pip install --no-cache-dir -r {IMAGE_REQUIREMENTS}",
        "python -m pip check",
    ]


def render_dockerfile(name: str, reqs: list[str], sha256: str) -> str:
    build = f"docker build -f envs/containers/{name}.Dockerfile -t lalmbench-{name} envs  (context envs/: pins only)"
    run = (f'docker run --gpus all -v "$HF_HOME":/hf -e HF_HOME=/hf -v "$PWD":/repo -w /repo lalmbench-{name} '
           "python scripts/generate.py ...")
    lines = _container_header(name, build, run, reqs, sha256) + [
        f"FROM {BASE_IMAGE}",
        f'LABEL lalmbench.env="{name}" \\',
        f'      lalmbench.requirements.sha256="{sha256}"',
        "ENV PYTHONUNBUFFERED=1",
        f"COPY {name}/requirements.txt {IMAGE_REQUIREMENTS}",
        "RUN " + " \\\n && ".join(_install_commands()),
        'CMD ["python"]',
    ]
    return "\n".join(lines) + "\n"


def render_apptainer_def(name: str, reqs: list[str], sha256: str) -> str:
    build = f"apptainer build envs/containers/{name}.sif envs/containers/{name}.def"
    run = (f'apptainer exec --nv --bind "$HF_HOME" envs/containers/{name}.sif python scripts/generate.py ...'
           "  (the host's HF_HOME passes through; $HOME is bound by default)")
    lines = _container_header(name, build, run, reqs, sha256) + [
        "Bootstrap: docker",
        f"From: {BASE_IMAGE}",
        "",
        "%files",
        f"    envs/{name}/requirements.txt {IMAGE_REQUIREMENTS}",
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
        files[ENVS_DIR / f"{name}.yaml"] = render_conda_yaml(name, reqs)
        if name in CONTAINER_ENVS:
            sha256 = requirements_sha256(name)
            files[CONTAINERS_DIR / f"{name}.def"] = render_apptainer_def(name, reqs, sha256)
            files[CONTAINERS_DIR / f"{name}.Dockerfile"] = render_dockerfile(name, reqs, sha256)
    return files


def main() -> None:
    from lalmbench.core.io import write_text

    for path, text in rendered_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text)
        print(f"wrote {path.relative_to(ENVS_DIR.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
