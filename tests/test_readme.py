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


# --- the README is a manual: short, narrow, and every link it or a docs page holds leads somewhere ---------

DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation other than - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", markdown), re.M):
        base, n = slug(heading), 0
        while (name := base if n == 0 else f"{base}-{n}") in found:
            n += 1
        found.add(name)
    return found


def broken_links(path: Path) -> list[str]:
    """Relative links (and #anchors) in a markdown file that lead to no file or heading."""
    text = path.read_text(encoding="utf-8")
    bad = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target} (no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest})")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            bad.append(f"{target} (no heading #{anchor} in {dest.name})")
    return bad


def test_the_link_checker_finds_missing_files_and_headings(tmp_path):
    (tmp_path / "a.md").write_text("# Top\n## Attention capture (`attention:`)\n## Top\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#attention-capture-attention) [ok](a.md#top-1) [web](https://x.org/y#z)\n"
                    "[gone](c.md) [no heading](a.md#nope)\n")
    assert broken_links(page) == [f"c.md (no file {tmp_path / 'c.md'})", "a.md#nope (no heading #nope in a.md)"]


def test_readme_is_a_manual_of_fewer_than_350_lines_none_wider_than_120():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 350
    assert [i + 1 for i, line in enumerate(lines) if len(line) > 120] == []


def test_readme_keeps_the_two_commands_ci_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in ("make run", "make test"):
        assert re.search(rf"^{command}\b", text, re.M) and re.search(rf"^{command}$", ci, re.M)


def test_readme_links_every_docs_page_and_no_link_is_broken():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in DOCS if f"(docs/{p.name}" not in readme] == []
    assert {p.name: broken_links(p) for p in [ROOT / "README.md", *DOCS] if broken_links(p)} == {}


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_docs_never_call_snakemake_or_pytest_off_path(page):
    assert bare_commands(page.read_text(encoding="utf-8")) == []
