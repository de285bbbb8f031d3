"""Classification presets through the real Snakefile on released-style outputs: MELD's test CSV as
multiple choice over its label set with Qwen2-Audio's exact match as value_official, ESC-50's
meta CSV as open questions scored by label_match, GiantSteps' tempo files scored by tempo."""
import json

import pandas as pd
import pytest
import yaml

from tests.workflow import copy_workflow, snakemake

MELD = ("Sr No.,Utterance,Speaker,Emotion,Sentiment,Dialogue_ID,Utterance_ID,Season,Episode,StartTime,EndTime\n"
        "1,Hi.,Ross,joy,positive,0,0,1,1,\"00:00:01,000\",\"00:00:02,000\"\n"
        "2,No!,Rachel,anger,negative,0,1,1,1,\"00:00:03,000\",\"00:00:04,000\"\n"
        "3,Okay.,Monica,neutral,neutral,1,0,1,1,\"00:00:05,000\",\"00:00:06,000\"\n"
        "4,What?,Joey,surprise,positive,1,1,1,1,\"00:00:07,000\",\"00:00:08,000\"\n")
ESC = ("filename,fold,target,category,esc10,src_file,take\n1-100032-A-0.wav,1,0,dog,True,100032,A\n"
       "1-100038-A-14.wav,1,14,chirping_birds,False,100038,A\n1-115545-A-48.wav,1,48,fireworks,False,115545,A\n"
       "2-109505-A-21.wav,2,21,sneezing,False,109505,A\n")


@pytest.mark.slow
def test_meld_and_esc50_presets_scored_end_to_end(tmp_path):
    wd = copy_workflow(tmp_path)
    data = wd / "data"
    (data / "meld").mkdir(parents=True)
    (data / "meld" / "test_sent_emo.csv").write_text(MELD)
    (data / "esc" / "meta").mkdir(parents=True)
    (data / "esc" / "meta" / "esc50.csv").write_text(ESC)
    # a model's replies: the bare label (both rules right), the label with a period (ours right, Qwen's
    # wrong), a letter (wrong for both: an imported model was shown no option letters), a wrong label
    meld_out = [("dia0_utt0", "joy"), ("dia0_utt1", "anger."), ("dia1_utt0", "A"), ("dia1_utt1", "fear")]
    esc_out = [("1-100032-A-0.wav", "A dog is barking."), ("1-100038-A-14.wav", "chirping birds and a dog"),
               ("1-115545-A-48.wav", "Fireworks"), ("2-109505-A-21.wav", "someone sneezes")]
    tempo = data / "gs" / "annotations" / "tempo"
    tempo.mkdir(parents=True)
    for track, bpm in (("1030011.LOFI", "126"), ("1114156.LOFI", "86"), ("1327052.LOFI", "0.0")):
        (tempo / f"{track}.bpm").write_text(bpm)
    gs_out = [("1030011.LOFI", "about 128 BPM"), ("1114156.LOFI", "172"), ("1327052.LOFI", "120")]
    for name, rows in (("meld", meld_out), ("esc", esc_out), ("gs", gs_out)):
        (data / f"{name}.jsonl").write_text("".join(json.dumps({"id": i, "response": r}) + "\n" for i, r in rows))
    models = {f"released-{name}": {"backend": "imported", "params": {"predictions": f"data/{name}.jsonl"},
                                   "max_error_rate": 0.0, "tasks": [name]} for name in ("meld", "esc", "gs")}
    config = {"seed": 0, "scale": 1, "run_jobs": "per-dataset",
              "datasets": {"meld": {"adapter": "meld", "params": {"items": "data/meld"}},
                           "esc": {"adapter": "esc50", "params": {"items": "data/esc"}},
                           "gs": {"adapter": "giantsteps_tempo", "params": {"items": "data/gs"}}},
              "tasks": {"meld": {"dataset": "meld", "family": "import"},
                        "esc": {"dataset": "esc", "family": "import", "scoring": {"kind": "label_match"}},
                        "gs": {"dataset": "gs", "family": "import", "scoring": {"kind": "tempo"}}},
              "models": models, "conditions": ["audio"], "prompts": ["mcq-default"]}
    (wd / "cls.yaml").write_text(yaml.safe_dump(config))
    snakemake(wd, "--configfile=cls.yaml", "results/all.tsv")
    table = pd.read_csv(wd / "results" / "all.tsv", sep="\t")
    meld = table.query("task == 'meld' and metric == 'accuracy'").iloc[0]
    assert (meld["n"], meld["value"], meld["value_official"], meld["n_official"]) == (4, 2 / 4, 1 / 4, 4)
    esc = table.query("task == 'esc' and metric == 'label_accuracy'").iloc[0]
    assert (esc["n"], esc["value"]) == (4, 2 / 4) and pd.isna(esc["value_official"])
    gs = table.query("task == 'gs'").set_index("metric")
    assert gs.loc["tempo_accuracy1", ["n", "value"]].tolist() == [2, 1 / 2]
    assert gs.loc["tempo_accuracy2", "value"] == 1.0 and "no_reference_tempo=1" in gs.loc["tempo_accuracy1", "flags"]
    dec = pd.read_parquet(wd / "results" / "scores" / "released-meld" / "meld" / "meld" / "audio" / "mcq-default"
                          / "decisions.parquet").set_index("id")
    assert dec.loc["dia0_utt1", "official_disagrees"] and not dec.loc["dia0_utt0", "official_disagrees"]
