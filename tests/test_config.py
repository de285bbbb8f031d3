"""Config validation: defaults are filled, and a bad config fails naming the bad key."""
import copy
from pathlib import Path

import pytest
import yaml

from lalmbench.workflow.config import ConfigError, iter_runs, validate_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "config" / "schema.yaml"


@pytest.fixture
def cfg():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def check(cfg):
    return validate_config(cfg, SCHEMA, ROOT)


def test_default_config_is_valid_and_defaults_are_filled(cfg):
    check(cfg)
    assert cfg["models"]["random"]["resources"] == {"gpus": 0, "cpus_per_gpu": 4, "cpus": 1, "mem_mb": 4000, "runtime": 60}
    assert cfg["max_error_rate"] == 0.0 and cfg["software"] == "current"


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["models"]["random"].update(resources={"gpuz": 1}),
     r"models.random.resources.gpuz: unknown key 'gpuz' for backend 'random'; did you mean 'gpus'\?"),
    (lambda c: c.update(sofware="venv"), r"<top level>: Additional properties .*'sofware' was unexpected"),
    (lambda c: c.update(software="docker"), r"software: 'docker' is not one of"),
    (lambda c: c["models"]["random"].update(batch_size=0), r"models.random.batch_size: 0 is less than the minimum"),
    (lambda c: c["tasks"]["pitch-order"].update(dataset="nope"), r"tasks.pitch-order.dataset: unknown dataset 'nope'"),
    (lambda c: c.update(prompts=["missing-template"]), r"template 'missing-template' not found"),
    (lambda c: c["models"]["text-prior"].update(conditions=["loud"]), r"models.text-prior.conditions.0: 'loud'"),
    (lambda c: c["models"]["text-prior"].update(prompts=["../prompts/mcq-default"]),
     r"models.text-prior.prompts.0: '../prompts/mcq-default' does not match"),
    (lambda c: c["models"]["signal"].update(params={"gap_treshold_s": 0.4}),
     r"models.signal.params.gap_treshold_s: unknown key 'gap_treshold_s' for backend 'signal'; "
     r"did you mean 'gap_threshold_s'\?"),
    (lambda c: c["tasks"]["pitch-order"]["params"].update(n_item=8),
     r"tasks.pitch-order.params.n_item: unknown param 'n_item' for family 'pitch_order'; did you mean 'n_items'\?"),
    (lambda c: c["tasks"]["pitch-order"].update(family="pitch_ordr"),
     r"tasks.pitch-order.family: unknown task family 'pitch_ordr'; did you mean 'pitch_order'\?"),
])
def test_bad_config_names_the_key(cfg, mutate, message):
    mutate(cfg)
    with pytest.raises(ConfigError, match=message):
        check(cfg)


def test_run_grid_respects_per_model_conditions(cfg):
    check(cfg)
    runs = list(iter_runs(cfg))
    assert {r.condition for r in runs if r.model == "text-prior"} == {"no-audio"}
    assert {r.condition for r in runs if r.model == "random"} == {"audio", "no-audio"}
    assert {r.condition for r in runs if r.model == "cascade"} == {"audio", "silence"}
    assert {r.condition for r in runs if r.model == "signal"} == {"audio", "silence"}
    assert len(runs) == len(cfg["tasks"]) * 7


def test_mix_dataset_must_name_an_existing_source(cfg):
    cfg["datasets"]["mixes"] = {"adapter": "mix", "params": {"from": "nowhere"}}
    with pytest.raises(ConfigError, match=r"datasets.mixes.params.from: unknown dataset 'nowhere'"):
        check(cfg)


def test_adapter_required_params_are_enforced(cfg):
    cfg["datasets"]["clotho"] = {"adapter": "clotho", "params": {"audio_root": "/data/clotho"}}
    with pytest.raises(ConfigError, match=r"datasets.clotho.params: 'captions' is a required property"):
        check(cfg)


# overlays are given after a base config (their header says which); tests/rubrics checks them merged
OVERLAYS = {"rubrics-clotho.yaml"}


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "config" / "examples").glob("*.yaml")
                                        if p.name not in OVERLAYS), ids=lambda p: p.name)
def test_example_configs_are_valid(path):
    cfg = yaml.safe_load(path.read_text())
    check(cfg)
    assert list(iter_runs(cfg))


def test_agreement_pairs_must_name_models(cfg):
    cfg["checks"] = {"agreement": [{"a": "random", "b": "ghost"}]}
    with pytest.raises(ConfigError, match=r"checks.agreement.0.b: unknown model 'ghost'"):
        check(cfg)


def test_the_mcq_judge_is_off_by_default_and_filled_with_defaults_when_on(cfg):
    assert "judge" not in check(copy.deepcopy(cfg))
    cfg["judge"] = {"judge_model": "random"}
    check(cfg)
    assert cfg["judge"] == {"judge_model": "random", "prompt": "mcq", "tasks": [], "audit_n": 20,
                            "max_disagreement": 0.05, "cache_dir": "results/cache/judge"}


@pytest.mark.parametrize("judge, message", [
    ({"judge_model": "gpt"}, r"judge.judge_model: unknown model 'gpt'"),
    ({"judge_model": "random", "tasks": ["nope"]}, r"judge.tasks: unknown task 'nope'"),
    ({"judge_model": "random", "prompt": "mcq_answer"},
     r"judge.prompt: 'mcq_answer' answers 'yes_no'; the MCQ fallback needs a prompt whose verdict is option_label"),
    ({"judge_model": "random", "prompt": "gone"}, r"judge.prompt: judge prompt 'gone' not found"),
    ({"judge_model": "random", "max_disagreement": 5}, r"judge.max_disagreement: 5 is greater than the maximum of 1"),
    ({"judge_model": "random", "audit": 3}, r"judge: Additional properties .*'audit' was unexpected"),
])
def test_a_bad_judge_block_names_the_key(cfg, judge, message):
    cfg["judge"] = judge
    with pytest.raises(ConfigError, match=message):
        check(cfg)


def test_builder_family_params_are_checked_before_any_job(cfg):
    cfg["datasets"]["strong"] = {"adapter": "audioset_strong",
                                 "params": {"annotations": "a.tsv", "labels": "l.csv", "audio_root": "audio"}}
    cfg["tasks"]["order"] = {"dataset": "strong", "family": "order", "params": {"min_gap": 0.5, "sample_seed": 1}}
    with pytest.raises(ConfigError, match=r"tasks.order.params.min_gap: unknown param 'min_gap' for family 'order'; "
                                          r"did you mean 'min_gap_s'\?"):
        check(cfg)


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["tasks"]["pitch-order"]["params"].update(n_items=-5),
     r"tasks.pitch-order.params.n_items: -5 is less than the minimum of 1 \(Items of a synthetic task"),
    (lambda c: c["tasks"]["pitch-order"]["params"].update(n_items=1e10),
     r"n_items: 10000000000.0 is greater than the maximum of 100000 \(.*each item is a WAV on disk"),
    (lambda c: c["tasks"]["scene-order"]["params"].update(n_options=10**6),
     r"n_options: 1000000 is greater than the maximum of 26 \(Options per question; 2-26"),
    (lambda c: c.update(sample_rate=0), r"sample_rate: 0 is less than the minimum of 8000 \(.*divide by zero"),
    (lambda c: c["datasets"]["synth-scenes"].setdefault("params", {}).update(n_clips=1e10),
     r"datasets.synth-scenes.params.n_clips: 10000000000.0 is greater than the maximum of 100000"),
])
def test_counts_sizes_and_rates_are_bounded_with_a_reason(cfg, mutate, message):
    mutate(cfg)
    with pytest.raises(ConfigError, match=message):
        check(cfg)


def test_an_alias_bomb_is_refused_before_anything_walks_it(cfg):
    import time

    bomb = ["lol"] * 9
    for _ in range(8):  # what yaml.safe_load makes of 9 levels of 9 aliases: shared lists, 9^9 leaves
        bomb = [bomb] * 9
    cfg["tasks"]["pitch-order"]["params"]["x"] = bomb
    start = time.monotonic()
    with pytest.raises(ConfigError, match=r"more than 200000 values once YAML aliases .* alias bomb"):
        check(cfg)
    assert time.monotonic() - start < 5


def test_the_study_size_is_estimated_and_an_absurd_one_needs_confirming(cfg):
    from lalmbench.workflow.config import check_study_size

    check(cfg)
    size = check_study_size(cfg)
    assert size["items"] > 0 and size["predictions"] >= size["items"]
    for task in cfg["tasks"].values():
        if cfg["datasets"][task["dataset"]]["adapter"] == "synth_trivial":
            task["params"]["n_items"] = 100000
    cfg["scale"] = 100
    with pytest.raises(ConfigError, match=r"this config asks for ~[\d,]+ predictions \(limit 2,000,000\) and ~[\d,]+ GB "
                                          r"of synthetic audio .* set confirm_large_study: true"):
        check_study_size(cfg)
    cfg["confirm_large_study"] = True
    assert check_study_size(cfg)["predictions"] > 2_000_000


# --- config files checked before Snakemake reads them --------------------------------------------------
def _mapping_bomb(levels: int = 9, keys: int = 9) -> str:
    """An alias bomb of nested *mappings*: ``keys ** levels`` leaves once expanded."""
    lines = ["a0: &a0 {" + ", ".join(f"k{i}: lol" for i in range(keys)) + "}"]
    lines += [f"a{n}: &a{n} {{" + ", ".join(f"k{i}: *a{n - 1}" for i in range(keys)) + "}" for n in range(1, levels)]
    return "seed: 0\n" + "\n".join(lines) + "\n"


def _huge_description(path: Path, size: int = 200 << 20) -> Path:
    """A config whose model description is a ``size``-byte string (sparse: costs no disk)."""
    with open(path, "wb") as f:
        f.write(b"models:\n  m:\n    backend: random\n    description: x")
        f.truncate(size)
    return path


def test_a_config_file_with_a_mapping_alias_bomb_or_a_huge_value_is_refused_before_loading(tmp_path):
    import time

    from lalmbench.workflow.config import check_config_file

    (tmp_path / "bomb.yaml").write_text(_mapping_bomb())
    (tmp_path / "loop.yaml").write_text("a: &a [1, *a]\n")
    start = time.monotonic()
    with pytest.raises(ConfigError, match=r"bomb.yaml: holds more than 200000 values once YAML aliases"):
        check_config_file(tmp_path / "bomb.yaml")
    with pytest.raises(ConfigError, match=r"loop.yaml: holds more than 200000 values"):
        check_config_file(tmp_path / "loop.yaml")
    with pytest.raises(ConfigError, match=r"huge.yaml: 209,715,200 bytes; a config file may hold at most 1,048,576"):
        check_config_file(_huge_description(tmp_path / "huge.yaml"))
    assert time.monotonic() - start < 2
    for ok in (ROOT / "config" / "config.yaml", *sorted((ROOT / "config" / "examples").glob("*.yaml"))):
        check_config_file(ok)


@pytest.mark.parametrize("kind", ["bomb", "huge"])
def test_snakemake_refuses_such_a_configfile_before_it_merges_it(tmp_path, kind):
    """Through the .pth hook the Makefile installs into .venv, Snakemake's own --configfile loading is
    checked: the bomb was expanded by its config merge (8 GB) before any workflow code ran."""
    import os
    import resource
    import subprocess
    import sys
    import time

    from lalmbench.workflow.config_guard import write_pth

    site = tmp_path / "site"
    site.mkdir()
    write_pth(site)
    bad = tmp_path / f"{kind}.yaml"
    if kind == "bomb":
        bad.write_text(_mapping_bomb())
    else:
        _huge_description(bad)
    code = "import site, sys; site.addsitedir(sys.argv.pop(1)); from snakemake.cli import main; main()"
    cap = lambda: resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # noqa: E731 - a bomb must not eat the box
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, str(site), "-n", "--snakefile", str(ROOT / "Snakefile"),
                           f"--configfile={bad}"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=cap)
    assert proc.returncode != 0
    assert f"Config file refused: {bad}" in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-2000:]
    assert time.monotonic() - start < 30


def test_the_makefile_installs_the_config_guard_where_snakemake_runs():
    import re

    make = (ROOT / "Makefile").read_text()
    assert "-m lalmbench.workflow.config_guard install" in make
    for target in ("run", "test-core", "test-fast", "lint"):
        assert "$(VENV)/.config_guard" in re.search(rf"^{target}:(.*)$", make, re.M).group(1), target


@pytest.mark.parametrize("where", ["datasets", "tasks", "models"])
def test_a_name_with_a_trailing_newline_is_refused(cfg, where):
    cfg[where]["x\n"] = next(iter(cfg[where].values()))
    with pytest.raises(ConfigError, match=r"'x\\n' does not match"):
        check(cfg)


def test_a_model_id_with_a_control_character_is_refused(cfg):
    name = next(iter(cfg["models"]))
    cfg["models"][name]["model_id"] = "org/model\nsecond line"
    with pytest.raises(ConfigError, match=rf"models.{name}.model_id: 'org/model\\nsecond line' does not match"):
        check(cfg)
