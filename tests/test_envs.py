"""Pins live in envs/<env>/requirements.txt; envs/<env>/requirements.lock pins everything they pull in, with hashes,
and each conda YAML and container file installs exactly that lock."""
import hashlib
import re
import shutil

import pytest

from lalmbench.workflow.envs import (BASE_IMAGE, CONTAINER_ENVS, CONTAINERS_DIR, ENVS_DIR, conda_pip_list, env_names,
                                     lock_path, lock_problems, lock_sha256, read_lock, read_requirements,
                                     rendered_files, requirements_path, requirements_sha256)
from lalmbench.workflow.locks import TORCH_CPU_PAGE
from tests.workflow import ROOT

NAMES = env_names()
RENDERED = rendered_files()
CONTAINER_FILES = [(name, suffix) for name in CONTAINER_ENVS for suffix in (".def", ".Dockerfile")]
DOCKERFILE_INSTRUCTIONS = {"FROM", "RUN", "COPY", "ENV", "LABEL", "WORKDIR", "ARG", "ENTRYPOINT", "CMD"}


def dockerfile_instructions(text: str) -> list[str]:
    """Keyword of each instruction: the first word of every line that is not blank, a comment or a continuation."""
    keywords, continued = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if not continued and stripped and not stripped.startswith("#"):
            keywords.append(stripped.split()[0])
        continued = stripped.endswith("\\")
    return keywords


def test_core_env_exists():
    assert "core" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_lock_belongs_to_the_requirements_file(name):
    problems = lock_problems(requirements_path(name), lock_path(name))
    assert not problems, "\n".join(problems)


def test_a_requirements_edit_without_make_lock_is_caught(tmp_path):
    req, lock = tmp_path / "requirements.txt", tmp_path / "requirements.lock"
    shutil.copy(requirements_path("mlflow-server"), req)
    shutil.copy(lock_path("mlflow-server"), lock)
    assert lock_problems(req, lock) == []
    req.write_text(req.read_text().replace("mlflow==3.17.2", "mlflow==3.17.1"))
    [problem] = lock_problems(req, lock)
    assert "was compiled from another" in problem and problem.endswith("run `make lock`")
    # a hand-edited header cannot hide a pin the lock does not hold
    text = lock.read_text()
    recorded = re.search(r"sha256=([0-9a-f]{64})", text).group(1)
    lock.write_text(text.replace(recorded, hashlib.sha256(req.read_bytes()).hexdigest()))
    assert lock_problems(req, lock) == [f"{lock} holds mlflow==3.17.2 for 'mlflow==3.17.1': run `make lock`"]


def test_a_lock_line_without_hashes_is_refused(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"# requirements: envs/x/requirements.txt sha256={'0' * 64}\n"
                    "six==1.16.0 \\\n    --hash=sha256:8abb\n    # via x\nnumpy==2.4.6\n")
    with pytest.raises(ValueError, match=r"requirements.lock:5: 'numpy==2.4.6' is not a `name==version --hash"):
        read_lock(lock)
    lock.write_text("six==1.16.0 --hash=sha256:8abb\n")
    with pytest.raises(ValueError, match="run `make lock`"):
        read_lock(lock)


@pytest.mark.parametrize("name", NAMES)
def test_lock_pins_every_package_once_with_hashes(name):
    text = lock_path(name).read_text()
    lock = read_lock(lock_path(name))
    entries = re.findall(r"(?m)^([A-Za-z0-9][\w.-]*)==", text)
    assert len(entries) == len(lock.pins) == len(lock.lines) > len(read_requirements(requirements_path(name)))
    assert all(line.split()[0].count("==") == 1 and " --hash=sha256:" in line for line in lock.lines)


def test_core_takes_the_cpu_build_of_torch_from_pytorchs_index():
    """PyPI's Linux torch is the CUDA build (GBs of nvidia-* wheels); core pins the CPU build, fetched from
    PyTorch's page by pip and uv alike, and nothing of CUDA."""
    lock = read_lock(lock_path("core"))
    assert lock.pins["torch"] == "2.13.0+cpu" and lock.options == [f"--find-links {TORCH_CPU_PAGE}"]
    assert not [p for p in lock.pins if p.startswith("nvidia-") or p == "triton"]
    assert {p for p in read_lock(lock_path("hf")).pins if p.startswith("nvidia-")}, "hf: CUDA torch for GPU nodes"


@pytest.mark.parametrize("name", NAMES)
def test_conda_yaml_installs_the_lock(name):
    yaml_path = ENVS_DIR / f"{name}.yaml"
    assert yaml_path.is_file(), f"envs/{name}.yaml missing: run `make lock`"
    conda, pip = conda_pip_list(yaml_path)
    lock = read_lock(lock_path(name))
    assert pip == lock.options + lock.lines, f"envs/{name}.yaml disagrees with envs/{name}/requirements.lock: run `make lock`"
    assert any(c.startswith("python=") for c in conda) and "pip" in conda


def test_every_venv_build_installs_its_lock_with_hashes_required():
    make = (ROOT / "Makefile").read_text()
    for target, lock in ((r"\$\(VENV\)/\.installed:", "envs/core/requirements.lock"), (r"\$\(ENVS\)/%/\.ready:", "$<")):
        prereqs, recipe = re.search(target + r"(.*)\n((?:\t.*\n)+)", make).groups()
        assert "requirements.lock" in prereqs and "requirements.txt" not in prereqs
        installs = [ln for ln in recipe.splitlines() if "install" in ln]
        assert installs[0].endswith(f"/bin/python -m lalmbench.workflow.lock_install {lock}"), recipe
        assert all("pip install --no-deps" in ln for ln in installs[1:]), recipe
    rule = (ROOT / "rules" / "envs.smk").read_text()
    assert '"envs/{env}/requirements.lock"' in rule and "-m lalmbench.workflow.lock_install {input:q}" in rule


@pytest.mark.parametrize("path", sorted(RENDERED), ids=lambda p: str(p.relative_to(ENVS_DIR)))
def test_committed_file_is_rendered_from_current_pins(path):
    assert path.is_file() and path.read_text() == RENDERED[path], (
        f"{path.relative_to(ENVS_DIR.parent)} is stale: run `make lock`")


@pytest.mark.parametrize("name,suffix", CONTAINER_FILES)
def test_container_file_lists_every_pin_and_its_hash(name, suffix):
    text = (CONTAINERS_DIR / f"{name}{suffix}").read_text()
    assert text.startswith(f"# Generated from envs/{name}/requirements.lock")
    listed = re.findall(r"(?m)^#   (\S+)$", text)
    assert listed == read_requirements(requirements_path(name))
    assert re.search(rf"(?m)^(COPY |    envs/){name}/requirements\.lock /opt/lalmbench/requirements\.lock$", text)
    assert "pip install --no-cache-dir --require-hashes -r /opt/lalmbench/requirements.lock" in text
    assert re.search(rf"lalmbench\.env\W+{name}\b", text)
    assert re.search(rf"lalmbench\.requirements\.sha256\W+{requirements_sha256(name)}\b", text)
    assert re.search(rf"lalmbench\.lock\.sha256\W+{lock_sha256(name)}\b", text)


def test_dockerfile_instructions_skip_comments_and_continuations():
    assert dockerfile_instructions("# c\nFROM x\n\nRUN a \\\n && b\nfoo\n") == ["FROM", "RUN", "foo"]


@pytest.mark.parametrize("name", CONTAINER_ENVS)
def test_dockerfile_has_only_known_instructions(name):
    keywords = dockerfile_instructions((CONTAINERS_DIR / f"{name}.Dockerfile").read_text())
    assert keywords[0] == "FROM" and set(keywords) <= DOCKERFILE_INSTRUCTIONS
    assert keywords.count("FROM") == 1 and "RUN" in keywords and "COPY" in keywords


@pytest.mark.parametrize("name", CONTAINER_ENVS)
def test_apptainer_def_has_header_and_sections(name):
    lines = [ln for ln in (CONTAINERS_DIR / f"{name}.def").read_text().splitlines() if not ln.startswith("#")]
    assert lines[:2] == ["Bootstrap: docker", f"From: {BASE_IMAGE}"]
    assert {"%files", "%post", "%labels"} <= set(lines)
    post = lines[lines.index("%post") + 1:]
    assert "    python -m pip check" in post[:post.index("")]
