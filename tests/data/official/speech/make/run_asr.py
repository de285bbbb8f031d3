"""Runs a report's WER code, unmodified, on the pairs of cases.py and writes the raw corpus lines.

usage: python run_asr.py qwen|kimi SCRIPT_DIR OUT.jsonl    (then finalize.py adds the header)
qwen: SCRIPT_DIR = a checkout's eval_audio/ (QwenLM/Qwen2-Audio); evaluate_asr.py is imported with
import-time stand-ins for torch, transformers, requests and tqdm (its remove_sp and compute_wer never
call them) and, per source, the evaluation block of its __main__ runs: remove_sp(gt, lan),
remove_sp(response, lan), compute_wer(refs, hyps, lan).
kimi: SCRIPT_DIR = a folder holding almeval/metrics/ of MoonshotAI/Kimi-Audio-Evalkit (no
almeval/__init__.py: it imports the models); per subset, ASRDataset.evaluate_qwen2's steps: predictions
whose str is 'null' dropped, remove_sp, compute_wer(..., return_details=True).
Needs (README of each script): sacrebleu==1.5.1 editdistance zhconv regex more-itertools.
"""
import ast
import tempfile
from pathlib import Path
import contextlib
import io
import json
import random
import sys

from cases import EDGE, cases

which, script_dir, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
STUBS = {"torch/__init__.py": "from . import utils\n", "torch/utils/__init__.py": "from . import data\n",
         "torch/utils/data/__init__.py": "class Dataset: pass\nfrom . import sampler\n",
         "torch/utils/data/sampler.py": "class Sampler: pass\n",
         "transformers/__init__.py": "AutoProcessor = Qwen2AudioForConditionalGeneration = None\n",
         "transformers/pipelines/__init__.py": "",
         "transformers/pipelines/audio_utils.py": "def ffmpeg_read(*a, **k): raise RuntimeError('not used')\n",
         "requests.py": "def get(*a, **k): raise RuntimeError('not used')\n",
         "tqdm.py": "def tqdm(x, *a, **k): return x\n"}
if which == "qwen":
    stubs = Path(tempfile.mkdtemp())
    for rel, text in STUBS.items():
        (stubs / rel).parent.mkdir(parents=True, exist_ok=True)
        (stubs / rel).write_text(text)
    sys.path[:0] = [script_dir, str(stubs)]
    import evaluate_asr as script
else:
    sys.path[:0] = [script_dir]
    from almeval.metrics import wer as script
compute, remove_sp = script.compute_wer, script.remove_sp

SETS = {"en": "librispeech", "zh": "aishell2", "yue": "cv15_asr_yue", "fr": "cv15_asr_fr"}


def run_source(lang, refs, hyps):
    """What the script prints for one source: its WER, and the first pair's units (printed at i == 0)."""
    if which == "kimi":
        keep = [i for i, h in enumerate(hyps) if str(h) != "null"]
        refs, hyps = [refs[i] for i in keep], [hyps[i] for i in keep]
    refs = [remove_sp(x, lang) for x in refs]
    hyps = [remove_sp(x, lang) for x in hyps]
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            res = compute(refs, hyps, lang) if which == "qwen" else compute(refs, hyps, lang, return_details=True)
    except Exception as exc:  # the script stops on this source
        return {"stops": type(exc).__name__}
    wer = res if which == "qwen" else res[0]
    text = buf.getvalue()
    out = {"wer": wer}
    if "\nref_items:\n" in "\n" + text:
        out["ref_items"] = ast.literal_eval(text.split("ref_items:\n", 1)[1].split("\n", 1)[0])
        out["pred_items"] = ast.literal_eval(text.split("pred_items:\n", 1)[1].split("\n", 1)[0])
    if which == "kimi":
        out["distances"] = res[1]
    return out


def record(case_id, lang, ref, source):
    return {"audio": f"audio/{case_id}.wav", "prompt": f"<|startoftranscript|><|{lang}|><|transcribe|>",
            "source": source, "gt": ref}


lines = []
all_cases = cases() + [(f"{l}-n{i}", l, "null_text", r, "null") for i, (l, r) in
                       enumerate([("en", "STUFF IT INTO YOU HIS BELLY"), ("zh", "甚至出现交易几乎停滞的情况")])]
for cid, lang, style, ref, hyp in all_cases:
    src = f"{SETS[lang]}_{cid}"
    lines.append({"case": cid, "group": src, "style": style, "eval_set": SETS[lang],
                  "record": record(cid, lang, ref, src), "output": hyp, "verdict": run_source(lang, [ref], [hyp])})
for i, (lang, ref, hyp) in enumerate(EDGE):
    cid = f"{lang}-edge{i}"
    src = f"{SETS[lang]}_{cid}"
    lines.append({"case": cid, "group": src, "style": "reference_normalises_to_nothing", "eval_set": SETS[lang],
                  "record": record(cid, lang, ref, src), "output": hyp, "verdict": run_source(lang, [ref], [hyp])})
# several pairs per source: the corpus value is a ratio of sums, not a mean of item values
rng = random.Random(29)
by_lang = {}
for c in all_cases:
    by_lang.setdefault(c[1], []).append(c)
for lang, pool in by_lang.items():
    for g in range(3):
        members = rng.sample(pool, 12)
        if g == 2:   # a reference that normalises to nothing, not first: the script counts its insertions
            e = next(x for x in EDGE if x[0] == lang)
            members.insert(5, (f"{lang}-edge", lang, "reference_normalises_to_nothing", e[1], e[2]))
        src = f"{SETS[lang]}_group{g}"
        verdict = run_source(lang, [m[3] for m in members], [m[4] for m in members])
        for k, (cid, _, style, ref, hyp) in enumerate(members):
            case = f"{src}-{k:02d}"
            lines.append({"case": case, "group": src, "style": style, "eval_set": SETS[lang],
                          "record": record(case, lang, ref, src), "output": hyp,
                          "group_verdict": verdict})
print(len(lines), sum("stops" in (l.get("verdict") or {}) for l in lines), file=sys.stderr)
with open(out_path, "w", encoding="utf-8") as f:
    for l in lines:
        f.write(json.dumps(l, ensure_ascii=False) + "\n")
