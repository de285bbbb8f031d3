"""Every code block of README.md, docs/api.md and docs/models.md runs as a user would copy it.

Each fenced block carries its language. ``python`` blocks run, in a folder that holds the files they
name (the MMAU fixture as ``mmau-test-mini.json`` and its released outputs as ``released.json``);
``yaml`` blocks are configs and pass the workflow's config check (lalmbench.workflow.config.validate_config)
with the sections they give replacing the embedded default's; ``text`` blocks are diagrams, layouts and
messages, not code. A shell block is marked on the line above it: ``<!-- doc-test: dry: why -->`` has
its ``make`` targets dry-run (``make -n``) and every repository path it names checked to exist, since
running it builds envs or runs suites for minutes; ``<!-- doc-test: skip: why -->`` (a SLURM cluster, a
downloaded checkpoint) is skipped with that reason. docs/models.md's MMAU import block also runs through
the workflow in tests/test_imported_workflow.py."""
from __future__ import annotations

import copy
import glob
import json
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/api.md", "docs/models.md")
LANGUAGES = {"python", "yaml", "bash", "sh", "text"}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.M | re.S)
MARK = re.compile(r"<!-- doc-test: (skip|dry): (.+?) -->\s*$")
MMAU = ROOT / "tests" / "data" / "imported" / "mmau_test_mini_24.json"


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    body: str
    mark: str | None      # skip | dry, from the line above the fence
    reason: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str, text: str | None = None) -> list[Block]:
    """The fenced blocks of a page, with the line each opens on and its doc-test mark."""
    text = (ROOT / page).read_text() if text is None else text
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        above = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(above)
        out.append(Block(page, line, m.group(1), m.group(2), mark and mark.group(1), mark and mark.group(2)))
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def test_the_extractor_reads_language_line_and_mark():
    text = "x\n<!-- doc-test: skip: needs a SLURM cluster -->\n```bash\nsbatch x\n```\n\n```text\na\n```\n"
    assert blocks("p", text) == [Block("p", 3, "bash", "sbatch x\n", "skip", "needs a SLURM cluster"),
                                 Block("p", 7, "text", "a\n", None, None)]


@pytest.mark.parametrize("block", ALL, ids=[b.where for b in ALL])
def test_every_block_says_its_language_and_every_shell_block_how_it_is_checked(block):
    assert block.lang in LANGUAGES, f"{block.where}: fence language {block.lang!r}; use one of {sorted(LANGUAGES)}"
    if block.lang in ("bash", "sh"):
        assert block.mark, f"{block.where}: a shell block needs <!-- doc-test: dry|skip: why --> on the line above"


def _fixture_dir(tmp_path: Path) -> Path:
    """The files the Python blocks name: MMAU's question file and released outputs of it (the right
    answer for most records, another choice for a few, one bare letter)."""
    records = json.loads(MMAU.read_text())
    (tmp_path / "mmau-test-mini.json").write_text(json.dumps(records))
    released = []
    for k, r in enumerate(records[2:]):
        out = r["answer"] if k % 5 else next(c for c in r["choices"] if c != r["answer"])
        released.append({**r, "model_prediction": "B" if k == 3 else out})
    (tmp_path / "released.json").write_text(json.dumps(released))
    return tmp_path


PYTHON = [b for b in ALL if b.lang == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=[b.where for b in PYTHON])
def test_python_blocks_run(block, tmp_path, monkeypatch):
    monkeypatch.chdir(_fixture_dir(tmp_path))
    scope: dict = {"__name__": "__doc_block__"}
    exec(compile(block.body, block.where, "exec"), scope)
    # the API example ends with both values of the same outputs, read with one default
    if "score_official" in block.body:
        assert scope["summary"]["value"] == scope["metrics"]["value"]
        assert scope["metrics"]["n"] == scope["summary"]["n_official"] == len(scope["predictions"])


YAML = [b for b in ALL if b.lang == "yaml"]


def _default_config() -> dict:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


@pytest.mark.parametrize("block", YAML, ids=[b.where for b in YAML])
def test_yaml_blocks_pass_the_config_check(block):
    from lalmbench.workflow.config import validate_config

    given = yaml.safe_load(block.body)
    assert isinstance(given, dict), f"{block.where}: a config block is a mapping of config sections"
    cfg = copy.deepcopy(_default_config())
    cfg.update(given)
    # a block with its own datasets but no tasks names the tasks it runs too; models run what is there
    validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT, source=block.where)


SHELL = [b for b in ALL if b.lang in ("bash", "sh")]
#: a token that names a file or folder of this repository (an env's python, a path under it)
REPO_PATH = re.compile(r"^(?:config|tests|envs|bench|docs|resources|lalmbench|scripts|profiles)/\S+$")


def _commands(body: str) -> list[list[str]]:
    """The commands of a shell block: comments cut, ``&&`` chains split."""
    out = []
    for line in body.splitlines():
        code = line.split("#", 1)[0].strip()
        for part in filter(None, (p.strip() for p in code.split("&&"))):
            out.append(shlex.split(part))
    return out


@pytest.mark.parametrize("block", SHELL, ids=[b.where for b in SHELL])
def test_shell_blocks_name_real_targets_and_paths(block):
    if block.mark == "skip":
        pytest.skip(f"{block.where}: {block.reason}")
    for cmd in _commands(block.body):
        if cmd[0] == "make":
            proc = subprocess.run(["make", "-n", *cmd[1:]], cwd=ROOT, capture_output=True, text=True)
            assert proc.returncode == 0, f"{block.where}: `{' '.join(cmd)}` is no make target: {proc.stderr}"
        for tok in cmd:
            path = tok.split("=", 1)[1] if tok.startswith("--") and "=" in tok else tok
            if REPO_PATH.match(path):
                assert glob.glob(str(ROOT / path)), f"{block.where}: {path} does not exist"


def test_make_venv_builds_the_env_the_manual_names():
    """README and docs speak of `.venv` as the thing to build: `make .venv` is a target (dry run)."""
    proc = subprocess.run(["make", "-n", ".venv"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    if not (ROOT / ".venv" / ".installed").exists():
        assert "-m venv .venv" in proc.stdout and "lalmbench.workflow.lock_install envs/core/requirements.lock" in proc.stdout
    assert "`make .venv`" in (ROOT / "README.md").read_text()
