"""The README's commands run as written after `make run`: snakemake and pytest live in .venv, which
make never activates, so a bare `snakemake ...` is "command not found" for a new user."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"`([^`\n]+)`")
# a tool in command position: line start, after && || ; | $( or after VAR=value assignments
BARE = re.compile(r"(?:^|&&|\|\||;|\||\$\()\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*"
                  r"(snakemake|pytest|python3? -m pytest)(?=\s|$)")
ACTIVATE = re.compile(r"^\s*(?:source|\.)\s+\.venv/bin/activate\b")


def bare_commands(markdown: str) -> list[str]:
    """Lines of fenced shell blocks and inline code spans that call snakemake/pytest off PATH.

    A fenced block may activate .venv first (`source .venv/bin/activate`); lines after that are fine.
    An inline span counts only when it is a command with arguments (`snakemake` alone names the tool)."""
    found = []
    for lang, body in FENCE.findall(markdown):
        if lang in ("yaml", "yml", "json", "python", "dot"):
            continue
        active = False
        for line in body.splitlines():
            code = line.split("#", 1)[0]
            active = active or bool(ACTIVATE.match(code))
            if not active and BARE.search(code):
                found.append(line.strip())
    prose = FENCE.sub("", markdown)
    for span in INLINE.findall(prose):
        if " " in span.strip() and BARE.search(span):
            found.append(span)
    return found


@pytest.mark.parametrize("text, bare", [
    ("```bash\nsnakemake --cores 2\n```\n", ["snakemake --cores 2"]),
    ("```bash\nsource .venv/bin/activate\nsnakemake --cores 2\npytest -q\n```\n", []),
    ("```bash\nsnakemake -n\nsource .venv/bin/activate\n```\n", ["snakemake -n"]),
    ("```\nPYTHONHASHSEED=0 snakemake --rulegraph | dot -Tsvg > g.svg\n```\n", ["PYTHONHASHSEED=0 snakemake --rulegraph | dot -Tsvg > g.svg"]),
    ("```bash\n.venv/bin/snakemake --cores 2 && .venv/bin/python -m pytest\n```\n", []),
    ("```bash\nmake run && python -m pytest -x\n```\n", ["make run && python -m pytest -x"]),
    ("run `pytest -m \"not slow\"` or `.venv/bin/snakemake -n`; `snakemake` is on PATH after activating\n",
     ['pytest -m "not slow"']),
    ("pinned `snakemake-executor-plugin-slurm 2.0`\n", []),
    ("```yaml\nsnakemake: 1\n```\n", []),
])
def test_the_checker_finds_bare_calls(text, bare):
    assert bare_commands(text) == bare


def test_readme_never_calls_snakemake_or_pytest_off_path():
    assert bare_commands((ROOT / "README.md").read_text()) == []
