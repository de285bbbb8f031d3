"""Config values reach job shells as single arguments: a path with spaces, quotes and ``$( )`` is
used as that path, never split and never run."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.workflow import copy_workflow, snakemake

HOSTILE = 'we ird/it\'s "q" $(touch PWNED)'

CONFIG = {
    "seed": 0, "scale": 1,
    "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
    "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 6}}},
    "models": {"random": {"backend": "random", "seed": 0}},
    "conditions": ["audio"], "prompts": ["mcq-default"],
}


def _unquoted(command: str) -> str:
    """What bash would still expand in a command: everything outside single quotes (a single quote
    inside double quotes is literal, as ``'"'"'`` in shlex.quote's output relies on)."""
    kept, state = [], None
    for ch in command:
        if state == "'":
            state = None if ch == "'" else state
        elif state == '"':
            state = None if ch == '"' else state
            kept.append(ch)
        elif ch in "'\"":
            state = ch
        else:
            kept.append(ch)
    return "".join(kept)


@pytest.mark.slow
def test_a_hostile_path_in_the_config_is_one_argument_in_every_job(tmp_path):
    wd = copy_workflow(tmp_path / "wf")
    planned = {**CONFIG, "software": "venv", "venv_root": f"{HOSTILE}/venvs", "prediction_cache": f"results/{HOSTILE}/c",
               "tracking": {"backend": "mlflow", "tracking_uri": "http://127.0.0.1:9", "dir": f"results/{HOSTILE}/t"}}
    (wd / "planned.yaml").write_text(yaml.safe_dump(planned))
    out = snakemake(wd, "--configfile=planned.yaml", "-n", "-p").stdout
    commands = [line for line in out.splitlines() if line.startswith("Shell command: ")]
    assert any("-m venv 'we ird/it'\"'\"'s \"q\" $(touch PWNED)/venvs/core'" in c for c in commands), out[-3000:]
    assert any("tracking.sync" in c for c in commands) and any("scripts/infer.py" in c for c in commands)
    assert [c for c in commands if "$(" in _unquoted(c)] == []

    # and for real: the cache lands under the literal path, nothing is executed
    ran = {**CONFIG, "prediction_cache": f"results/{HOSTILE}/c"}
    (wd / "ran.yaml").write_text(yaml.safe_dump(ran))
    snakemake(wd, "--configfile=ran.yaml", "results/all.tsv")
    # one cache file per generate job (model x dataset), under the literal hostile path
    assert len(list((wd / "results" / "we ird" / 'it\'s "q" $(touch PWNED)' / "c" / "random").rglob("*.jsonl"))) == 1
    assert not list(wd.rglob("PWNED")) and not Path("PWNED").exists()
    assert (wd / "results/all.tsv").read_text().count("\n") == 2
