"""rules/adapters.smk in the real workflow: real-format datasets -> tables/items -> tasks -> scores."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml

from tests.workflow import ROOT, copy_workflow, planned_jobs, snakemake

DATA = ROOT / "tests" / "data" / "datasets"
SR = 16000


def _tone(path, seconds, hz):
    t = np.arange(int(SR * seconds)) / SR
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, (0.2 * np.sin(2 * np.pi * hz * t)).astype(np.float32), SR)


@pytest.fixture(scope="module")
def wf(tmp_path_factory):
    wd = copy_workflow(tmp_path_factory.mktemp("wf_adapters"))
    snake = wd / "Snakefile"
    if "rules/adapters.smk" not in snake.read_text():          # until the Snakefile includes it
        snake.write_text(snake.read_text() + '\ninclude: "rules/adapters.smk"\n')
    ext = wd / "external"
    tb = pd.read_csv(DATA / "tacobelal" / "annotations_strong.csv")
    for i, f in enumerate(tb["filename"].unique()):
        _tone(ext / "tacos" / "audio" / f, 31.0, 300 + 100 * i)
    recs = json.loads((DATA / "mmau" / "mmau-test-mini-sample.json").read_text())
    for r in recs:
        _tone(ext / "mmau" / r["audio_id"], 0.5, 440)
    shutil.copytree(DATA, ext / "samples")
    cfg = {
        "seed": 0, "scale": 1,
        "datasets": {
            "tacobelal": {"adapter": "tacobelal", "params": {
                "annotations": "external/samples/tacobelal/annotations_strong.csv",
                "mcq_jsonl": "external/samples/tacobelal/mcq_event_timeline_sample.jsonl",
                "audio_root": "external/tacos/audio",
                "consistency": {"policy": "warn"}}},
            "mmau-mini": {"adapter": "mmau", "params": {"items": "external/samples/mmau/mmau-test-mini-sample.json",
                                                        "audio_root": "external/mmau"}},
            "tb-mix": {"adapter": "mix", "params": {"from": "tacobelal", "n_mixtures": 4, "min_level_diff_db": 6}},
        },
        "tasks": {
            "tb-next-import": {"dataset": "tacobelal", "family": "import"},
            "tb-next": {"dataset": "tacobelal", "family": "next", "params": {"n_options": 3, "max_items_per_clip": 20}},
            "mmau-speech": {"dataset": "mmau-mini", "family": "import", "params": {"where": {"task": "speech"}}},
            "mix-louder": {"dataset": "tb-mix", "family": "louder"},
        },
        "models": {"random": {"backend": "random", "seed": 0, "batch_size": 16}},
        "conditions": ["audio"], "prompts": ["mcq-default"],
    }
    (wd / "adapters.yaml").write_text(yaml.safe_dump(cfg))
    for r in json.loads((DATA / "mmar" / "MMAR-meta.json").read_text()):
        _tone(ext / "mmar" / r["audio_path"], 0.5, 440)
    for f in ("Animal/audio/dog_1.wav", "Animal/audio/crow_2.wav", "Emotion/audio/happy_1.wav"):
        _tone(ext / "sakura" / f, 0.5, 440)
    presets = {
        "seed": 0, "scale": 1,
        "datasets": {
            "mmar": {"adapter": "mmar", "params": {"items": "external/samples/mmar/MMAR-meta.json",
                                                   "audio_root": "external/mmar"}},
            "sakura": {"adapter": "sakura", "params": {"items": "external/samples/sakura/data",
                                                       "audio_root": "external/sakura"}},
        },
        "tasks": {"mmar": {"dataset": "mmar", "family": "import"},
                  "sakura": {"dataset": "sakura", "family": "import"}},
        "models": {"random": {"backend": "random", "seed": 0, "batch_size": 16},
                   "text-prior": {"backend": "text-overlap", "batch_size": 16, "conditions": ["no-audio"]}},
        "conditions": ["audio"], "prompts": ["mcq-default"],
    }
    (wd / "presets.yaml").write_text(yaml.safe_dump(presets))
    return wd


def test_dry_run_plans_adapter_import_and_mix_rules(wf):
    out = snakemake(wf, "--configfile", "adapters.yaml", "-n", "results/all.tsv").stdout
    jobs = planned_jobs(out)
    by_rule = {}
    for j in jobs:
        by_rule.setdefault(j["rule"], []).append(j["wildcards"])
    assert sorted(w["dataset"] for w in by_rule["adapt_dataset"]) == ["mmau-mini", "tacobelal"]
    assert sorted(w["task"] for w in by_rule["import_task"]) == ["mmau-speech", "tb-next-import"]
    assert [w["dataset"] for w in by_rule["mix_dataset"]] == ["tb-mix"]
    assert {"mix-louder", "tb-next"} <= {w["task"] for w in by_rule["build_task"]}
    assert not {"tb-next-import", "mmau-speech"} & {w["task"] for w in by_rule["build_task"]}


@pytest.mark.slow
def test_real_format_datasets_run_to_scores(wf):
    mine = {"tacobelal": ["tb-next-import", "tb-next"], "mmau-mini": ["mmau-speech"], "tb-mix": ["mix-louder"]}
    targets = [f"results/scores/random/{d}/{t}/audio/mcq-default/metrics.json" for d, ts in mine.items() for t in ts]
    snakemake(wf, *targets, "--configfile", "adapters.yaml")
    items = [json.loads(x) for x in (wf / "results/tasks/tacobelal/tb-next-import.jsonl").read_text().splitlines()]
    src = [json.loads(x) for x in (DATA / "tacobelal" / "mcq_event_timeline_sample.jsonl").read_text().splitlines()]
    assert [(i["id"], i["answer_label"]) for i in items] == [(s["id"], s["answer_label"]) for s in src]
    mmau = [json.loads(x) for x in (wf / "results/tasks/mmau-mini/mmau-speech.jsonl").read_text().splitlines()]
    assert len(mmau) == 6 and {i["meta"]["task"] for i in mmau} == {"speech"}
    stats = json.loads((wf / "results/data/tacobelal/adapt.stats.json").read_text())
    assert stats["clips_written"] == 3 and stats["events_written"] == 14 and stats["items_written"] == 11
    assert stats["consistency"]["clips_checked"] == 3
    louder = (wf / "results/tasks/tb-mix/mix-louder.jsonl").read_text().splitlines()
    assert len(louder) == 4
    n_items = {"tb-next-import": 11, "mmau-speech": 6, "mix-louder": 4}
    for t in targets:                                   # scored end to end by the random baseline
        m = json.loads((wf / t).read_text())
        assert m["n_error"] == 0 and m["parse_failure_rate"] == 0.0
        if m["task"] in n_items:
            assert m["n"] == n_items[m["task"]], (t, m["n"])


@pytest.mark.slow
def test_presets_run_to_all_tsv_with_left_out_items_flagged(wf):
    """MMAR and SAKURA in their published layouts, scored by the random and text-prior floors: gold
    answers are the source's, and the items the adapter left out are flagged on every row."""
    snakemake(wf, "results/all.tsv", "--configfile", "presets.yaml")
    table = pd.read_csv(wf / "results/all.tsv", sep="\t", keep_default_na=False)
    acc = table[table["metric"] == "accuracy"].set_index(["model", "task"])
    assert acc.loc[("random", "mmar"), "n"] == 3 and acc.loc[("text-prior", "sakura"), "n"] == 5
    assert acc.loc[("random", "mmar"), "flags"] == "items left out at source: 1 (answer_not_in_choices=1)"
    assert acc.loc[("random", "sakura"), "flags"] == "items left out at source: 1 (answer_not_in_choices=1)"
    items = [json.loads(x) for x in (wf / "results/tasks/sakura/sakura.jsonl").read_text().splitlines()]
    gold = {i["id"]: i["answer_text"] for i in items}
    assert gold["Animal-dog_1.wav-multi"] == "Claws" and gold["Emotion-happy_1.wav-single"] == "happy"
    flags = pd.read_csv(wf / "results/tables/flags.tsv", sep="\t")
    assert set(flags["task"]) == {"mmar", "sakura"}
