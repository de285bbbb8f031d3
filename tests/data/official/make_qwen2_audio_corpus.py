"""Build a conformance corpus for Qwen2-Audio's label-accuracy scripts, in a scratch folder outside the repo:

    git --git-dir=<mirror of QwenLM/Qwen2-Audio> show 595360e:eval_audio/evaluate_emotion.py > evaluate_emotion.py
    python3 -m venv /tmp/x && /tmp/x/bin/pip install scikit-learn
    /tmp/x/bin/python make_qwen2_audio_corpus.py --script evaluate_emotion.py --which meld \
        --commit 595360e82b5839c1507492ec83cae5bda6d5c7d4 --out meld_qwen2_audio.jsonl

The scoring block of evaluate_emotion.py / evaluate_vocal_sound.py (everything under
`if torch.distributed.get_rank() == 0:`) is cut out of the script's text as it is, dedented, and
exec'd with the merged lists the script builds; each case has its own `source`, so the script's
per-source line "<source> ACC_score: <acc> <n>" is that case's verdict.
"""
import argparse
import io
import json
import os
import random
import re
import sys
import textwrap
import time
from contextlib import redirect_stdout

from sklearn.metrics import accuracy_score

ap = argparse.ArgumentParser()
ap.add_argument("--script", required=True)
ap.add_argument("--which", choices=["meld", "vocalsound"], required=True)
ap.add_argument("--commit", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()

src = open(a.script).read().splitlines()
start = next(i for i, l in enumerate(src) if "Evaluating {args.dataset}" in l)
end = max(i for i, l in enumerate(src) if "torch.distributed.barrier()" in l)
block = textwrap.dedent("\n".join(src[start:end]))

rng = random.Random(29)
if a.which == "meld":
    labels = ["neutral", "joy", "sadness", "anger", "surprise", "fear", "disgust"]
    synonyms = {"neutral": "calm", "joy": "happy", "sadness": "sad", "anger": "angry", "surprise": "surprised",
                "fear": "scared", "disgust": "disgusted"}
    golds = ["neutral", "joy", "sadness", "anger", "surprise", "fear", "disgust", "joy", "neutral"]
else:
    labels = ["Laughter", "Sigh", "Cough", "Throat clearing", "Sneeze", "Sniff"]
    synonyms = {"Laughter": "laughing", "Sigh": "sighing", "Cough": "coughing", "Throat clearing": "throat-clearing",
                "Sneeze": "sneezing", "Sniff": "sniffing"}
    golds = ["Laughter", "Sigh", "Cough", "Throat clearing", "Sneeze", "Sniff", "Cough", "Laughter", "Sniff"]
mids = {"Laughter": "/m/01j3sz", "Sigh": "/m/07plz5l", "Cough": "/m/01b_21", "Throat clearing": "/m/0dl9sf8",
        "Sneeze": "/m/01hsr_", "Sniff": "/m/07ppn3j"}


def styles(gold: str) -> list[tuple[str, str]]:
    wrong = rng.choice([l for l in labels if l != gold])
    letter = "ABCDEFG"[labels.index(gold)]
    return [
        ("label", gold), ("label_lower", gold.lower()), ("label_upper", gold.upper()),
        ("label_title", gold.title()), ("label_period", gold + "."), ("label_exclaim", gold + "!"),
        ("leading_space", " " + gold), ("leading_newline", "\n" + gold), ("leading_tab", "\t" + gold),
        ("trailing_space", gold + " "), ("trailing_newline", gold + "\n"), ("quoted", f'"{gold}"'),
        ("markdown_bold", f"**{gold}**"), ("sentence", f"The answer is {gold}."),
        ("prefix_colon", f"Emotion: {gold}" if a.which == "meld" else f"Sound: {gold}"),
        ("synonym", synonyms[gold]), ("letter", letter), ("letter_paren", f"({letter})"),
        ("letter_text", f"{letter}. {gold}"), ("two_labels", f"{gold}, {wrong}"), ("or_labels", f"{gold} or {wrong}"),
        ("negation", f"not {gold}"), ("wrong_label", wrong), ("wrong_then_gold", f"{wrong} {gold}"),
        ("empty", ""), ("whitespace", "   "), ("none_text", "None"), ("explanation_after", f"{gold}\n\nThe speaker sounds so."),
        ("json", json.dumps({"label": gold})), ("cjk", "快乐" if a.which == "meld" else "咳嗽"),
        ("underscore", gold.replace(" ", "_")), ("space_inside", gold.replace(" ", "  ")),
        ("nbsp_prefix", "\u00a0" + gold), ("zero_width", "\u200b" + gold), ("refusal", "I cannot determine that."),
        ("mid", mids.get(gold, "/m/0"))]


cases = []
for k, gold in enumerate(golds):
    for style, out in styles(gold):
        n = len(cases)
        case = f"{a.which}-{n:04d}"
        if a.which == "meld":
            rec = {"Sr No.": str(n + 1), "Utterance": "Oh, it's you.", "Speaker": "Ross", "Emotion": gold,
                   "Sentiment": "neutral", "Dialogue_ID": str(n), "Utterance_ID": str(k), "Season": "1",
                   "Episode": "2", "StartTime": "00:01:02,000", "EndTime": "00:01:04,000"}
            cid = f"dia{n}_utt{k}"
        else:
            rec = {"wav": f"/data/sls/scratch/yuangong/vocalsound/data/audio_16k/f{n:04d}_0_x.wav",
                   "labels": mids[gold]}
            cid = rec["wav"]
        cases.append({"case": cid, "group": case, "style": style, "record": rec, "output": out, "gold": gold})

args = argparse.Namespace(dataset=a.which)
g = {"json": json, "time": time, "tqdm": lambda x: x, "accuracy_score": accuracy_score, "args": args,
     "merged_gts": [c["gold"] for c in cases], "merged_responses": [c["output"] for c in cases],
     "merged_sources": [c["group"] for c in cases], "merged_audio_paths": [c["case"] for c in cases]}
buf = io.StringIO()
with redirect_stdout(buf):
    exec(compile(block, a.script, "exec"), g)
printed = {}
for line in buf.getvalue().splitlines():
    m = re.match(r"^(\S+) ACC_score: (\S+) (\d+)$", line)
    if m:
        printed[m.group(1)] = float(m.group(2))
assert len(printed) == len(cases), (len(printed), len(cases))
for c in cases:
    c["verdict"] = int(printed[c["group"]])
    del c["gold"]
counts = {}
for c in cases:
    counts[c["style"]] = counts.get(c["style"], 0) + 1
header = {"corpus": {
    "scorer": "qwen2_audio_exact", "preset": a.which,
    "script": {"repo": "QwenLM/Qwen2-Audio", "path": f"eval_audio/{os.path.basename(a.script)}", "commit": a.commit},
    "ran": ("the script's scoring block (its lines from print(f\"Evaluating {args.dataset} ...\") to the final "
            "torch.distributed.barrier(), dedented, unmodified) exec'd with merged_gts / merged_responses / "
            "merged_sources as the script gathers them, sklearn " + __import__("sklearn").__version__
            + "; each case has its own source, so its printed '<source> ACC_score: <acc> 1' line is its verdict; "
            "gt is the label text the preset gives the item (the script's meld_eval.jsonl / vocalsound_eval.jsonl "
            "gt strings are not reachable offline)"),
    "seed": 29, "verdicts": "1 correct, 0 wrong", "n_cases": len(cases), "styles": counts}}
with open(a.out, "w", encoding="utf-8") as f:
    f.write(json.dumps(header, ensure_ascii=False) + "\n")
    for c in cases:
        f.write(json.dumps(c, ensure_ascii=False) + "\n")
print(a.out, len(cases), sum(c["verdict"] for c in cases), "correct", len(counts), "styles")
