"""Pins live in envs/<env>/requirements.txt; each conda YAML and container file must list exactly the same pins."""
import re

import pytest

from lalmbench.workflow.envs import (BASE_IMAGE, CONTAINER_ENVS, CONTAINERS_DIR, ENVS_DIR, conda_pip_list, env_names,
                            read_requirements, rendered_files, requirements_path, requirements_sha256)

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
def test_conda_yaml_matches_requirements(name):
    yaml_path = ENVS_DIR / f"{name}.yaml"
    assert yaml_path.is_file(), f"envs/{name}.yaml missing: run `python -m lalmbench.workflow.envs`"
    conda, pip = conda_pip_list(yaml_path)
    assert pip == read_requirements(ENVS_DIR / name / "requirements.txt"), (
        f"envs/{name}.yaml disagrees with envs/{name}/requirements.txt: run `python -m lalmbench.workflow.envs`")
    assert any(c.startswith("python=") for c in conda) and "pip" in conda


def test_unpinned_requirement_is_rejected(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("numpy==2.0\npandas>=2\n")
    with pytest.raises(ValueError, match=r"requirements.txt:2: 'pandas>=2' is not pinned"):
        read_requirements(req)
    req.write_text("-r other.txt\n")
    with pytest.raises(ValueError, match="pip options"):
        read_requirements(req)


@pytest.mark.parametrize("path", sorted(RENDERED), ids=lambda p: str(p.relative_to(ENVS_DIR)))
def test_committed_file_is_rendered_from_current_pins(path):
    assert path.is_file() and path.read_text() == RENDERED[path], (
        f"{path.relative_to(ENVS_DIR.parent)} is stale: run `python -m lalmbench.workflow.envs`")


@pytest.mark.parametrize("name,suffix", CONTAINER_FILES)
def test_container_file_lists_every_pin_and_its_hash(name, suffix):
    text = (CONTAINERS_DIR / f"{name}{suffix}").read_text()
    assert text.startswith(f"# Generated from envs/{name}/requirements.txt")
    listed = re.findall(r"(?m)^#   (\S+)$", text)
    assert listed == read_requirements(requirements_path(name))
    assert re.search(rf"(?m)^(COPY |    envs/){name}/requirements\.txt /opt/lalmbench/requirements\.txt$", text)
    assert re.search(rf"lalmbench\.env\W+{name}\b", text)
    assert re.search(rf"lalmbench\.requirements\.sha256\W+{requirements_sha256(name)}\b", text)


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
