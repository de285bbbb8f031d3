"""Every number of a report ledger is the one its README prints at the pinned commit, in table order.

Reads the README with ``git --git-dir <template> show <commit>:README.md``, the template from
LALMBENCH_GIT_DIR_TEMPLATE (e.g. '/mirrors/{owner}+{name}', the ledger fetch's convention); skips where no
local mirror of the repository is given."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from lalmbench.report.model_report import load_report

#: report -> (the model's row label, which <table> blocks of the README hold its audio table, ledger values read)
SPECS = {
    "qwen2-audio": ("Qwen2-Audio", [(1, "value"), (2, "also")]),
    "qwen25-omni": ("Qwen2.5-Omni-7B", [("<summary>Audio -> Text</summary>", "value")]),
    "kimi-audio": ("Kimi-Audio", [(slice(0, 3), "value")]),
}


def _readme(source: dict) -> str:
    template = os.environ.get("LALMBENCH_GIT_DIR_TEMPLATE")
    if not template:
        pytest.skip("LALMBENCH_GIT_DIR_TEMPLATE is not set: no local mirror of the reports' repositories")
    owner, name = source["repo"].split("/")
    git_dir = Path(template.format(owner=owner, name=name))
    if not git_dir.exists():
        pytest.skip(f"no mirror of {source['repo']} at {git_dir}")
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{source['commit']}:{source['path']}"],
                          check=True, capture_output=True, text=True).stdout


def _cells(tr: str) -> list[str]:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def model_numbers(tables: list[str], model: str) -> list[float]:
    """The numbers of ``model``'s rows, in table order; a cell stacking several models' scores line by line
    (Qwen2-Audio's AIR-Bench row) gives its last line, the model's."""
    out = []
    for table in tables:
        for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S):
            cells = _cells(tr)
            texts = [_text(c) for c in cells]
            if model in texts:
                out += [float(x) for x in re.findall(r"\d+\.\d+", " ".join(texts[texts.index(model) + 1:]))]
            elif any(t.endswith(model) and "<br>" in c for t, c in zip(texts, cells)):
                out += [float(x) for x in re.findall(r"\d+\.\d+", _text(cells[-1].split("<br>")[-1]))]
    return out


def test_kimi_audio_evalkit_leaderboard_prints_the_same_numbers():
    rep = load_report("kimi-audio")
    board = re.findall(r"<table[^>]*>(.*?)</table>", _readme(rep["sources"]["evalkit"]), re.S)
    assert model_numbers(board, "Kimi-Audio") == [r["value"] for r in rep["rows"]]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_ledger_values_are_the_readme_cells(name):
    rep = load_report(name)
    readme = _readme(rep["sources"]["readme"])
    model, parts = SPECS[name]
    tables = re.findall(r"<table[^>]*>(.*?)</table>", readme, re.S)
    for which, field in parts:
        if isinstance(which, str):       # the table after a <summary> heading
            chosen = [re.search(r"<table[^>]*>(.*?)</table>", readme.split(which, 1)[1], re.S).group(1)]
        else:
            chosen = tables[which] if isinstance(which, slice) else [tables[which]]
        led = [r["value"] if field == "value" else r["also"][0]["value"] for r in rep["rows"]]
        assert model_numbers(chosen, model) == led, (name, which)


@pytest.mark.slow
def test_released_qwen25_omni_outputs_fill_the_mmau_rows_of_its_report(tmp_path):
    """A third party's released MMAU outputs of Qwen2.5-Omni-7B, fetched at their pinned commit and scored as an
    imported model, against the README's MMAU row: MMAU's own string match credits 4 of 1,000 (the replies are
    letters in <Conclusion> tags), lalm-bench's parser reads 66.0% (README 65.60)."""
    from tests.workflow import copy_workflow, snakemake

    template = os.environ.get("LALMBENCH_GIT_DIR_TEMPLATE")
    for repo in ("Sakshi113/MMAU", "lovenya/Measuring-Faithfulness-of-CoT-Reasoning-LALMs"):
        owner, name = repo.split("/")
        if not template or not Path(template.format(owner=owner, name=name)).exists():
            pytest.skip(f"no local mirror of {repo} (LALMBENCH_GIT_DIR_TEMPLATE)")
    wd = copy_workflow(tmp_path / "wd")
    env = dict(os.environ, PYTHONPATH=str(wd))
    subprocess.run([sys.executable, "-m", "lalmbench.data.ledger", "fetch", "--out", "published", "--benchmark", "mmau",
                    "--entry", "qwen25-omni-7b@lovenya-direct"], cwd=wd, env=env, check=True, capture_output=True)
    snakemake(wd, "--configfile=config/examples/report-qwen25-omni-released.yaml", "results/tables/report_qwen25-omni.tsv")
    table = pd.read_csv(wd / "results" / "tables" / "report_qwen25-omni.tsv", sep="\t").set_index("row")
    avg = table.loc["mmau/avg"]
    assert (avg["published"], avg["value_official"], avg["n"], avg["flag"]) == (65.6, 0.4, 1000, "outside")
    assert avg["value"] == 66.0
    assert table.loc[["mmau/sound", "mmau/music", "mmau/speech"], "n"].tolist() == [333, 334, 333]
    assert (table.drop(index=["mmau/sound", "mmau/music", "mmau/speech", "mmau/avg"])["flag"] == "not run").all()
