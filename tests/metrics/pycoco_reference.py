"""Reference captioning scores from pycocoevalcap (the COCO caption evaluation code), run with the
captioning env's python: ``python pycoco_reference.py IN.json OUT.json`` with
IN = {"candidates": [...], "mult_references": [[...]]}. Used by tests/metrics/test_captioning.py and
bench/bench_captioning.py to cross-check lalmbench.scoring.metrics.captioning."""
import json
import sys

from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

req = json.load(open(sys.argv[1]))
gts = {i: [{"caption": r} for r in refs] for i, refs in enumerate(req["mult_references"])}
res = {i: [{"caption": c}] for i, c in enumerate(req["candidates"])}
tok = PTBTokenizer()
gts, res = tok.tokenize(gts), tok.tokenize(res)
out = {}
bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
out.update({f"bleu_{i + 1}": b for i, b in enumerate(bleu)})
out["meteor"], _ = Meteor().compute_score(gts, res)
out["rouge_l"], _ = Rouge().compute_score(gts, res)
out["cider_d"], _ = Cider().compute_score(gts, res)
json.dump({k: float(v) for k, v in out.items()}, open(sys.argv[2], "w"))
