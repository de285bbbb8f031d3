"""The workflow itself: lint, dry run, a tiny end-to-end run, byte-stable results, partial reruns."""
import hashlib
import json
import re

import pandas as pd
import pytest
import yaml

from tests.workflow import ROOT, copy_workflow, planned_jobs, snakemake


def test_lint_is_clean(tmp_path):
    proc = snakemake(copy_workflow(tmp_path), "--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Lints for" not in proc.stdout + proc.stderr


def test_dry_run_of_default_target_plans_every_run(tmp_path):
    out = snakemake(copy_workflow(tmp_path), "-n", "results/all.tsv").stdout
    jobs = planned_jobs(out)
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    # one generate job (one model load) per model and dataset, whatever its number of runs
    datasets = sorted({t["dataset"] for t in cfg["tasks"].values()})
    per_model_dataset = [(m, d) for m in sorted(cfg["models"]) for d in datasets]
    assert sorted((j["wildcards"]["model"], j["wildcards"]["unit"]) for j in jobs if j["rule"].startswith("generate_")) \
        == per_model_dataset
    # run_jobs: per-dataset: one runs_<i> job per model and dataset writes the files of all its runs
    assert cfg["run_jobs"] == "per-dataset"
    assert not {"infer", "score"} & {j["rule"] for j in jobs}
    assert len([j for j in jobs if j["rule"].startswith("runs_")]) == len(per_model_dataset)
    assert sum(j["rule"] == "aggregate" for j in jobs) == 1


def test_rulegraph_with_target_first_is_a_dot_digraph_of_the_rules(tmp_path):
    # README's command: the target goes before --rulegraph (which takes an optional format)
    dot = snakemake(copy_workflow(tmp_path), "results/all.tsv", "--rulegraph").stdout
    assert dot.startswith("digraph snakemake_dag {") and dot.rstrip().endswith("}")
    nodes = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.M))
    ids = {name: i for i, name in nodes.items()}
    # run_jobs: per-dataset (the default config): the runs_<i> rules score the MCQ runs that aggregate reads
    runs = [name for name in ids if name.startswith("runs_")]
    assert "aggregate" in ids and runs and "score" not in ids
    assert all(re.search(rf"^\s*{ids[r]} -> {ids['aggregate']}$", dot, re.M) for r in runs)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("wf"))
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv", "results/figures/accuracy.png")
    return wd


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_tiny_run_writes_all_tsv_and_figure(tiny):
    df = pd.read_csv(tiny / "results" / "all.tsv", sep="\t")
    assert list(df.columns[:13]) == ["model", "dataset", "task", "condition", "prompt", "metric", "value", "ci_low",
                                     "ci_high", "n", "chance", "p_vs_chance", "parse_failure_rate"]
    # random: 3 tasks x 2 conditions x 2 prompts; text-prior: 3 tasks x no-audio x 1 prompt
    assert len(df[df.metric == "accuracy"]) == 3 * 2 * 2 + 3
    assert df[["model", "dataset", "task", "condition", "prompt", "metric"]].equals(
        df[["model", "dataset", "task", "condition", "prompt", "metric"]].sort_values(
            ["model", "dataset", "task", "condition", "prompt", "metric"]).reset_index(drop=True))
    acc = df[df.metric == "accuracy"]
    assert ((acc.ci_low <= acc.value) & (acc.value <= acc.ci_high)).all()
    assert (acc[acc.task == "beep-count"].chance == 0.25).all() and (acc[acc.task == "pitch-order"].chance == 0.5).all()
    assert (acc[acc.model == "random"].parse_failure_rate == 0).all()
    assert (tiny / "results" / "figures" / "accuracy.png").stat().st_size > 10_000
    assert (tiny / "results" / "figures" / "accuracy.svg").read_text().lstrip().startswith("<?xml")
    log = (tiny / "results" / "logs" / "generate" / "random" / "synth-trivial.log").read_text()
    # random on synth-trivial: 2 tasks x 2 conditions x 2 prompts, 8 items each, in one job with one load
    assert log.count("loading model random") == 1, log
    assert re.search(r"(\d+)/\1 \[.*item/s", log), log


@pytest.mark.slow
def test_results_are_byte_identical_across_runs(tiny, tmp_path):
    wd2 = copy_workflow(tmp_path)
    snakemake(wd2, "--configfile=.test/config.yaml", "results/all.tsv", "results/figures/accuracy.svg")
    assert _sha(tiny / "results" / "all.tsv") == _sha(wd2 / "results" / "all.tsv")
    assert _sha(tiny / "results" / "figures" / "accuracy.svg") == _sha(wd2 / "results" / "figures" / "accuracy.svg")


def _rerun_plan(wd, edit):
    cfg_path = wd / ".test" / "config.yaml"
    original = cfg_path.read_text()
    prompt_path = wd / "resources" / "prompts" / "mcq-reasoned.txt"
    prompt_original = prompt_path.read_text()
    try:
        edit(wd)
        out = snakemake(wd, "--configfile=.test/config.yaml", "-n", "results/all.tsv").stdout
    finally:
        cfg_path.write_text(original)
        prompt_path.write_text(prompt_original)
        # restore mtimes' meaning: Snakemake compares content-derived params, not only mtimes
    return planned_jobs(out)


def _edit_cfg(fn):
    def edit(wd):
        p = wd / ".test" / "config.yaml"
        cfg = yaml.safe_load(p.read_text())
        fn(cfg)
        p.write_text(yaml.safe_dump(cfg))
    return edit


@pytest.mark.slow
def test_nothing_reruns_without_a_change(tiny):
    assert _rerun_plan(tiny, lambda wd: None) == []


@pytest.mark.slow
def test_editing_one_model_reruns_only_its_jobs(tiny):
    # the seed breaks the text-overlap baseline's ties (it takes no generation settings)
    jobs = _rerun_plan(tiny, _edit_cfg(lambda c: c["models"]["text-prior"].update(seed=7)))
    infer = [j for j in jobs if j["rule"] == "infer"]
    assert len(infer) == 3 and {j["wildcards"]["model"] for j in infer} == {"text-prior"}
    fingerprints = [j for j in jobs if j["rule"] == "model_fingerprint"]
    assert len(fingerprints) == 1 and "Params have changed" in fingerprints[0]["reason"]
    assert {j["rule"] for j in jobs} - {"all"} == {"model_fingerprint", "generate_core", "infer", "score", "aggregate"}
    assert all(j["wildcards"].get("model", "text-prior") == "text-prior" for j in jobs)


@pytest.mark.slow
@pytest.mark.parametrize("edit", [
    lambda c: c["models"]["random"].update(batch_size=3),
    lambda c: c["models"]["random"].update(resources={"gpus": 1, "runtime": 600, "mem_mb": 64000}),
], ids=["batch_size", "resources"])
def test_batch_size_and_resources_rerun_nothing(tiny, edit):
    assert _rerun_plan(tiny, _edit_cfg(edit)) == []


@pytest.mark.slow
def test_a_new_condition_adds_only_its_own_runs(tiny):
    jobs = _rerun_plan(tiny, _edit_cfg(lambda c: c["models"]["random"].update(conditions=["audio", "no-audio", "noise"])))
    infer = [j for j in jobs if j["rule"] == "infer"]
    assert {j["wildcards"]["condition"] for j in infer} == {"noise"} and len(infer) == 3 * 2
    assert {j["wildcards"]["condition"] for j in jobs if j["rule"] == "score"} == {"noise"}


@pytest.mark.slow
def test_a_prompt_that_exists_elsewhere_adds_only_its_own_runs(tiny):
    # model, prompt and condition all exist already: only the pairing is new
    jobs = _rerun_plan(tiny, _edit_cfg(lambda c: c["models"]["text-prior"].update(prompts=["mcq-default", "mcq-reasoned"])))
    infer = [j for j in jobs if j["rule"] == "infer"]
    assert len(infer) == 3 and {(j["wildcards"]["model"], j["wildcards"]["prompt"]) for j in infer} == {("text-prior", "mcq-reasoned")}
    assert {(j["wildcards"]["model"], j["wildcards"]["prompt"]) for j in jobs if j["rule"] == "score"} == {("text-prior", "mcq-reasoned")}


@pytest.mark.slow
def test_editing_one_prompt_reruns_only_its_jobs(tiny):
    def edit(wd):
        p = wd / "resources" / "prompts" / "mcq-reasoned.txt"
        p.write_text(p.read_text() + "Think step by step.\n")
    jobs = _rerun_plan(tiny, edit)
    infer = [j for j in jobs if j["rule"] == "infer"]
    assert infer and {j["wildcards"]["prompt"] for j in infer} == {"mcq-reasoned"}
    assert len(infer) == 3 * 2  # random x 3 tasks x 2 conditions
    assert {j["wildcards"]["model"] for j in jobs if j["rule"].startswith("generate_")} == {"random"}
    assert not [j for j in jobs if j["rule"] in ("synth_trivial_task", "build_task", "synth_scenes")]


@pytest.mark.slow
def test_editing_one_task_reruns_only_that_task(tiny):
    jobs = _rerun_plan(tiny, _edit_cfg(lambda c: c["tasks"]["pitch-order"]["params"].update(n_items=10)))
    built = [j for j in jobs if j["rule"] in ("synth_trivial_task", "build_task")]
    assert [j["wildcards"]["task"] for j in built] == ["pitch-order"]
    assert "Params have changed" in built[0]["reason"]
    assert {j["wildcards"]["task"] for j in jobs if j["rule"] in ("infer", "score")} == {"pitch-order"}


@pytest.mark.slow
def test_a_parser_upgrade_rescores_every_run_without_inference(tiny):
    parse_py = tiny / "lalmbench" / "scoring" / "parse.py"
    original = parse_py.read_text()
    try:
        parse_py.write_text(re.sub(r'PARSER_VERSION = "[^"]+"', 'PARSER_VERSION = "99.0.0"', original))
        out = snakemake(tiny, "--configfile=.test/config.yaml", "-n", "results/all.tsv").stdout
    finally:
        parse_py.write_text(original)
    jobs = planned_jobs(out)
    score = [j for j in jobs if j["rule"] == "score"]
    # every run of the tiny config (random: 3 tasks x 2 conditions x 2 prompts; text-prior: 3) ...
    assert len(score) == 3 * 2 * 2 + 3 and all("Params have changed" in j["reason"] for j in score)
    # ... and nothing upstream of scoring: predictions stay as they are
    assert not [j for j in jobs if j["rule"].startswith(("generate", "infer", "model_fingerprint", "build", "synth"))]
    assert "aggregate" in {j["rule"] for j in jobs}


@pytest.mark.slow
def test_after_a_task_edit_only_its_items_are_generated(tmp_path):
    wd = copy_workflow(tmp_path)
    args = ("--configfile=.test/config.yaml", "results/all.tsv")
    snakemake(wd, *args)
    scenes = wd / "results" / "predictions" / "random" / "generate" / "synth-scenes.json"
    made = scenes.stat().st_mtime_ns
    _edit_cfg(lambda c: c["tasks"]["pitch-order"]["params"].update(n_items=10))(wd)
    snakemake(wd, *args)
    # one generate job per dataset: only pitch-order's (synth-trivial) runs and loads the model again
    summary = json.loads((wd / "results" / "predictions" / "random" / "generate" / "synth-trivial.json").read_text())
    assert summary["model_loads"] == 1
    assert scenes.stat().st_mtime_ns == made
    generated = {s["out"]: s["generated"] for s in summary["slices"]}
    # pitch-order: 10 new items x 2 conditions x 2 prompts; every other file came from the cache
    assert sum(generated.values()) == 10 * 4
    assert {o.split("/")[4] for o, n in generated.items() if n} == {"pitch-order"}
    assert all(s["cached"] == s["items"] for s in summary["slices"] if "/pitch-order/" not in s["out"])


@pytest.mark.slow
def test_random_baseline_is_at_chance_on_a_large_set(tmp_path):
    wd = copy_workflow(tmp_path)
    cfg = {"seed": 0, "datasets": {"synth-trivial": {"adapter": "synth_trivial"}},
           "tasks": {"beep-count": {"dataset": "synth-trivial", "family": "beep_count", "params": {"n_items": 400}}},
           "models": {"random": {"backend": "random", "seed": 0, "batch_size": 256},
                      "random-b": {"backend": "random", "seed": 1, "batch_size": 256}},
           "conditions": ["silence"], "prompts": ["mcq-default"],
           "checks": {"agreement": [{"a": "random", "b": "random-b"}]}}
    (wd / "big.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(wd, "--configfile=big.yaml", "results/all.tsv", "results/tables/agreement.tsv")
    row = pd.read_csv(wd / "results" / "all.tsv", sep="\t").iloc[0]
    assert row.n == 400 and row.chance == 0.25
    assert row.ci_low <= 0.25 <= row.ci_high
    assert row.p_vs_chance > 0.01
    # two independent chance-level guessers agree on 1/4 of 4-option items
    agree = pd.read_csv(wd / "results" / "tables" / "agreement.tsv", sep="\t").iloc[0]
    assert (agree.pair, agree.n_compared) == ("random-vs-random-b", 400)
    assert agree.ci_low <= 0.25 <= agree.ci_high


def test_venv_mode_builds_each_env_once_and_rules_use_its_python(tmp_path):
    out = snakemake(copy_workflow(tmp_path), "-n", "-p", "--config", "software=venv", "--", "results/all.tsv").stdout
    jobs = planned_jobs(out)
    builds = [j for j in jobs if j["rule"] == "build_venv"]
    assert [j["wildcards"]["env"] for j in builds] == ["core"]
    assert ".venvs/core/bin/python scripts/infer.py" in out
    assert "-m venv .venvs/core" in out and "-m lalmbench.workflow.lock_install envs/core/requirements.lock" in out



@pytest.mark.slow
def test_a_dataset_that_fails_to_build_never_blocks_the_other_datasets_runs(tmp_path):
    wd = copy_workflow(tmp_path)
    cfg = {"seed": 0,
           "datasets": {"synth-trivial": {"adapter": "synth_trivial"},
                        # fails in its build job (the generator needs min_events <= max_events)
                        "broken": {"adapter": "synth_scenes", "params": {"n_clips": 4, "min_events": 5, "max_events": 3}}},
           "tasks": {"pitch-order": {"dataset": "synth-trivial", "family": "pitch_order", "params": {"n_items": 4}},
                     "scene-order": {"dataset": "broken", "family": "order"}},
           "models": {"random": {"backend": "random", "seed": 0}},
           "conditions": ["audio"], "prompts": ["mcq-default"], "sweeps": {}}
    (wd / "two.yaml").write_text(yaml.safe_dump(cfg))
    proc = snakemake(wd, "--keep-going", "--configfile=two.yaml", "results/all.tsv", check=False)
    assert proc.returncode != 0 and "synth_scenes" in proc.stderr
    good = "random/synth-trivial/pitch-order/audio/mcq-default"
    assert len(pd.read_parquet(wd / f"results/predictions/{good}.parquet")) == 4
    assert json.loads((wd / f"results/scores/{good}/metrics.json").read_text())["n"] == 4
    assert not (wd / "results/predictions/random/broken").exists()


# --- run_jobs: per-dataset (one job per model and dataset writes all of its MCQ runs) ------------------
@pytest.fixture(scope="module")
def per_dataset(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("wf-per-dataset"))
    _edit_cfg(lambda c: c.update(run_jobs="per-dataset"))(wd)
    out = snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    return wd, out.stdout + out.stderr


def _runs_log(wd, model, dataset):
    return (wd / "results" / "logs" / "runs" / model / f"{dataset}.log").read_text()


@pytest.mark.slow
def test_per_dataset_jobs_write_what_per_run_jobs_write(tiny, per_dataset):
    wd, out = per_dataset
    assert (wd / "results" / "all.tsv").read_bytes() == (tiny / "results" / "all.tsv").read_bytes()
    for d in sorted((tiny / "results" / "scores").rglob("decisions.parquet")):
        rel = d.relative_to(tiny)
        pd.testing.assert_frame_equal(pd.read_parquet(wd / rel), pd.read_parquet(d), obj=str(rel))
    # no per-run infer or score job: one runs_<i> job per model and dataset (random, text-prior x 2 datasets)
    ran = re.findall(r"^(?:local)?rule (\S+):", out, re.M)
    assert not {"infer", "score"} & set(ran)
    assert sum(r.startswith("runs_") for r in ran) == 2 * 2
    assert "materialised 8, predictions_current 0, scored 8, scores_current 0" in _runs_log(wd, "random", "synth-trivial")


@pytest.mark.slow
def test_per_dataset_task_edit_rescores_only_that_tasks_runs(per_dataset):
    wd, _ = per_dataset
    scores = wd / "results" / "scores"
    before = {p: p.read_bytes() for p in scores.rglob("decisions.parquet")}
    _edit_cfg(lambda c: c["tasks"]["pitch-order"]["params"].update(n_items=10))(wd)
    snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    changed = {p.relative_to(scores).parts[2] for p, b in before.items() if p.read_bytes() != b}
    assert changed == {"pitch-order"}
    # random on synth-trivial: 2 tasks x 2 conditions x 2 prompts, the 4 pitch-order runs made and scored again
    assert "materialised 4, predictions_current 4, scored 4, scores_current 4" in _runs_log(wd, "random", "synth-trivial")
    df = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    assert set(df[df.task == "pitch-order"].n) == {10}
    assert snakemake(wd, "--configfile=.test/config.yaml", "-n", "results/all.tsv").stdout.count("rule ") == 0


@pytest.mark.slow
def test_per_dataset_parser_upgrade_rescores_without_inference(per_dataset):
    wd, _ = per_dataset
    parse_py = wd / "lalmbench" / "scoring" / "parse.py"
    original = parse_py.read_text()
    try:
        parse_py.write_text(re.sub(r'PARSER_VERSION = "[^"]+"', 'PARSER_VERSION = "99.0.0"', original))
        jobs = planned_jobs(snakemake(wd, "--configfile=.test/config.yaml", "-n", "results/all.tsv").stdout)
        snakemake(wd, "--configfile=.test/config.yaml", "results/all.tsv")
    finally:
        parse_py.write_text(original)
    assert {j["rule"] for j in jobs if not j["rule"].startswith("runs_")} <= {"aggregate", "listening_check", "all"}
    assert all("Params have changed" in j["reason"] for j in jobs if j["rule"].startswith("runs_"))
    assert sum(j["rule"].startswith("runs_") for j in jobs) == 2 * 2
    # every run scored again with the new parser, none of them made again from the cache
    assert "materialised 0, predictions_current 8, scored 8, scores_current 0" in _runs_log(wd, "random", "synth-trivial")


@pytest.mark.slow
def test_a_missing_per_dataset_decisions_file_is_rebuilt_by_the_next_plain_run(tmp_path):
    """A per-dataset job whose run failed leaves that run's decisions missing while what was built
    from the others is up to date; Snakemake rebuilds a missing intermediate file only for a job that
    runs anyway, so rule all lists every run's decisions and metrics."""
    wd = copy_workflow(tmp_path / "wf")

    def small(c):
        c.update(run_jobs="per-dataset", prompts=["mcq-default"], models={"random": c["models"]["random"]})
        c["datasets"] = {"synth-trivial": c["datasets"]["synth-trivial"]}
        c["tasks"] = {t: v for t, v in c["tasks"].items() if v["dataset"] == "synth-trivial"}

    _edit_cfg(small)(wd)
    snakemake(wd, "--configfile=.test/config.yaml")
    gone = wd / "results/scores/random/synth-trivial/pitch-order/audio/mcq-default/decisions.parquet"
    gone.unlink()
    jobs = planned_jobs(snakemake(wd, "--configfile=.test/config.yaml", "-n").stdout)
    assert [j["rule"] for j in jobs if "Missing output files" in j["reason"]] == ["runs_0"], jobs
    snakemake(wd, "--configfile=.test/config.yaml")
    assert gone.exists()
    assert planned_jobs(snakemake(wd, "--configfile=.test/config.yaml", "-n").stdout) == []
