"""Captioning metrics through the captioning env, cross-checked against pycocoevalcap on real
Clotho references (caption_1 as the candidate, captions 2-5 as references).

The env-dependent tests need `.venvs/captioning` (CI builds it: see envs/captioning/requirements.txt);
without it they skip, saying so. The input checks run everywhere."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lalmbench.core.io import InputError
from lalmbench.scoring.metrics import captioning
from lalmbench.scoring.metrics.captioning import CaptioningEnvMissing, caption_metric_rows, score_captions

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = HERE.parent / "data" / "metrics" / "clotho_evaluation_first100.csv"


def _clotho():
    rows = list(csv.DictReader(DATA.open(encoding="utf-8")))
    return [r["caption_1"] for r in rows], [[r[f"caption_{i}"] for i in range(2, 6)] for r in rows]


def _env_python():
    try:
        return captioning.captioning_python()
    except CaptioningEnvMissing as exc:
        pytest.skip(f"captioning env not built: {exc}")


@pytest.fixture(scope="module")
def ours_and_reference(tmp_path_factory):
    py = _env_python()
    cands, refs = _clotho()
    tmp = tmp_path_factory.mktemp("aac")
    ours = score_captions(cands, refs, cache_dir=tmp / "cache")
    (tmp / "in.json").write_text(json.dumps({"candidates": cands, "mult_references": refs}))
    subprocess.run([py, str(HERE / "pycoco_reference.py"), str(tmp / "in.json"), str(tmp / "ref.json")],
                   check=True, capture_output=True, cwd=tmp)
    return ours, json.loads((tmp / "ref.json").read_text()), tmp


@pytest.mark.slow
def test_matches_pycocoevalcap_on_clotho(ours_and_reference):
    ours, ref, _ = ours_and_reference
    for metric in ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider_d"):
        assert ours["corpus"][metric] == pytest.approx(ref[metric], abs=1e-9), metric
    # sanity: human captions score as human captions do on Clotho (CIDEr-D ~0.7-0.8 leave-one-out)
    assert 0.5 < ours["corpus"]["cider_d"] < 1.0
    assert len(ours["sentences"]["cider_d"]) == 100


@pytest.mark.slow
def test_offline_unavailable_metrics_say_why_and_have_no_number(ours_and_reference):
    ours, _, _ = ours_and_reference
    for metric in ("spice", "spider", "fense"):
        if metric in ours["corpus"]:  # a machine where the downloads exist computes them for real
            continue
        assert metric in ours["unavailable"] and ours["unavailable"][metric]
    if "spice" in ours["unavailable"]:
        assert "stanford-corenlp-3.6.0" in ours["unavailable"]["spice"]
        assert "SPICE" in ours["unavailable"]["spider"]
    assert 0.0 < ours["corpus"]["sbert_sim"] < 1.0  # local all-MiniLM-L6-v2
    assert ours["info"]["aac_metrics"] == "0.6.0" and "PTB" in ours["info"]["tokenizer"]
    assert "aac_metrics" not in sys.modules  # never imported in the driver's process


@pytest.mark.slow
def test_sbert_sim_equals_aac_metrics_and_later_jobs_read_cached_references(ours_and_reference):
    ours, _, tmp = ours_and_reference
    assert ours["info"]["sbert_cache"]["references"]["computed"] == 400  # first job: all encoded
    subprocess.run([_env_python(), str(HERE / "aac_sbert_reference.py"), str(tmp / "in.json"), str(tmp / "aac.json"),
                    str(tmp / "cache")], check=True, capture_output=True)
    aac = json.loads((tmp / "aac.json").read_text())
    assert ours["corpus"]["sbert_sim"] == pytest.approx(aac["corpus"], abs=1e-6)
    assert ours["sentences"]["sbert_sim"] == pytest.approx(aac["sentences"], abs=1e-6)
    cands, refs = _clotho()
    again = score_captions(cands, refs, metrics=["sbert_sim"], cache_dir=tmp / "cache")
    assert again["info"]["sbert_cache"]["references"] == {"sentences": 400, "distinct": 400, "cached": 400,
                                                          "computed": 0}
    assert again["sentences"]["sbert_sim"] == pytest.approx(ours["sentences"]["sbert_sim"], abs=1e-6)


@pytest.mark.slow
def test_changed_sbert_model_misses_the_reference_cache(ours_and_reference):
    _, _, tmp = ours_and_reference
    cands, refs = _clotho()
    cands, refs = cands[:10], refs[:10]
    # the same model, fingerprinted from its weights: a subset of the cached references hits
    same = score_captions(cands, refs, metrics=["sbert_sim"], cache_dir=tmp / "cache")
    assert same["info"]["sbert_cache"]["references"]["computed"] == 0
    # one weight changed in a copy of the model: nothing of the first model's cache is read
    changed = tmp / "changed-model"
    subprocess.run([_env_python(), "-c", CHANGE_ONE_WEIGHT, same["info"]["sbert_model"], str(changed)], check=True,
                   capture_output=True)
    other = score_captions(cands, refs, metrics=["sbert_sim"], cache_dir=tmp / "cache", sbert_model=str(changed))
    assert other["info"]["sbert_cache"]["references"] == {"sentences": 40, "distinct": 40, "cached": 0,
                                                          "computed": 40}
    assert len(list((tmp / "cache" / "sbert-embeddings").iterdir())) == 2  # one directory per fingerprint


CHANGE_ONE_WEIGHT = """
import shutil, sys
from pathlib import Path
from safetensors.torch import load_file, save_file
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
shutil.copytree(src, dst)
w = load_file(src / "model.safetensors")
name = sorted(w)[-1]
w[name] = w[name].clone()
w[name].view(-1)[0] += 0.01
save_file(w, dst / "model.safetensors", metadata={"format": "pt"})
"""


@pytest.mark.slow
def test_rows_have_intervals_only_where_they_mean_something(ours_and_reference):
    rows = {r["metric"]: r for r in caption_metric_rows(ours_and_reference[0])}
    assert rows["cider_d"]["ci_low"] < rows["cider_d"]["value"] < rows["cider_d"]["ci_high"]
    assert rows["bleu_4"]["ci_low"] is None and rows["meteor"]["ci_high"] is None
    assert "spice" not in rows or ours_and_reference[0]["corpus"].get("spice") is not None


def test_input_errors_name_the_item():
    with pytest.raises(InputError, match="2 candidates but 1 reference"):
        score_captions(["a", "b"], [["x"]], python="unused")
    with pytest.raises(InputError, match="item #1 needs >= 1 non-empty reference"):
        score_captions(["a", "b"], [["x"], []], python="unused")
    with pytest.raises(InputError, match="candidate #0 is NoneType"):
        score_captions([None], [["x"]], python="unused")
    with pytest.raises(ValueError, match="unknown captioning metric"):
        score_captions(["a"], [["x"]], metrics=["cider"], python="unused")


def test_missing_env_tells_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.delenv("LALMBENCH_CAPTIONING_PYTHON", raising=False)
    with pytest.raises(CaptioningEnvMissing, match="envs/captioning/requirements.txt"):
        captioning.captioning_python(tmp_path)


def _worker_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("aac_worker_under_test", captioning.WORKER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # stdlib only at import: loadable outside the captioning env
    return mod


def test_meteor_jvm_that_cannot_start_says_why(tmp_path):
    import shutil

    if shutil.which("java") is None:
        pytest.skip("no java on PATH")
    worker = _worker_module()
    with pytest.raises(FileNotFoundError, match="METEOR jar not found at .*meteor-1.5.jar"):
        worker.Meteor(tmp_path)
    jar = tmp_path / "aac-metrics" / "meteor" / "meteor-1.5.jar"
    jar.parent.mkdir(parents=True)
    jar.write_text("not a jar")
    meteor = worker.Meteor(tmp_path)
    meteor._score([worker.Meteor.encode("a dog barks", ["a dog barks"])])
    meteor.close()
    assert isinstance(meteor.error, RuntimeError)
    assert "METEOR (java) stopped with exit code 1" in str(meteor.error) and "jarfile" in str(meteor.error)


def test_missing_ptb_jar_says_where_it_looked(tmp_path):
    worker = _worker_module()
    with pytest.raises(FileNotFoundError, match="PTB tokenizer jar not found at .*stanford-corenlp-3.4.1.jar"):
        worker.ptb_tokenize(["a dog barks"], tmp_path)


def test_the_cpu_only_env_imports_aac_metrics_and_refuses_clap_by_name():
    """The captioning env leaves msclap and torchaudio out (CUDA-only on PyPI): aac-metrics still imports, on the CPU
    torch, and CLAP-Sim, which this project never computes, says why it cannot run."""
    code = ("import sys; sys.path.insert(0, 'lalmbench/scoring/metrics'); from aac_worker import guard_msclap; "
            "guard_msclap(); import aac_metrics, torch; print(torch.__version__, torch.cuda.is_available()); "
            "from aac_metrics.functional.clap_sim import CLAP; CLAP()")
    proc = subprocess.run([_env_python(), "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.stdout.split() == ["2.13.0+cpu", "False"], proc.stdout + proc.stderr
    assert "RuntimeError: CLAP-Sim and MACE need msclap and torchaudio, which the captioning env does not install" \
        in proc.stderr
