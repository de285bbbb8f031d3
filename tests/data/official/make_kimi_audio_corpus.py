"""Conformance corpora for Kimi-Audio-Evalkit's LLM-judged MQA scoring, in a scratch folder outside the repo
holding the scripts as fetched (git show 4080c49:almeval/datasets/base.py > base.py; likewise
almeval/datasets/ds_mqa.py > ds_mqa.py, data/download_benchmark.py > download_benchmark.py):

    python3 -m venv /tmp/y && /tmp/y/bin/pip install "pandas<3"
    /tmp/y/bin/python make_kimi_audio_corpus.py --commit 4080c492effcbb38d18e9d8893a9d61885f19d9b --outdir .

What is deterministic in that scoring is run unmodified: the judge prompt as ds_mqa.py's evaluate_llm
picks and base.py's run_llm_judge formats it (question and answer stripped, prediction as pandas'
astype(str) gives it), and base.py's collect_acc reading the judge's reply. The functions are taken
from the scripts' text with ast (no edit) and exec'd; the questions are the literal strings of
data/download_benchmark.py. Each case is its own results group with a companion reply "Result: yes", so collect_acc's
{'correct', 'valid'} gives that case's verdict (1 right, 0 wrong, null: left out as invalid).
"""
import argparse
import ast
import io
import json
import random
import textwrap

import pandas as pd

ap = argparse.ArgumentParser()
ap.add_argument("--commit", required=True)
ap.add_argument("--outdir", required=True)
a = ap.parse_args()

base_src = open("base.py").read()
mqa_src = open("ds_mqa.py").read()
dl_src = open("download_benchmark.py").read()


def function_source(src: str, cls: str, name: str) -> str:
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == name:
                    return ast.get_source_segment(src, f)
    raise KeyError(name)


ns: dict = {"pd": pd}
exec(textwrap.dedent(function_source(base_src, "AudioBaseDataset", "collect_acc")), ns)
collect_acc = ns["collect_acc"]
prompts = {n.targets[0].id: n.value.value for n in ast.parse(mqa_src).body
           if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)}
# evaluate_llm's choice of template, evaluated as written for each class's DATASET_NAME
classes = {n.name: {t.targets[0].id: t.value.value for t in n.body if isinstance(t, ast.Assign)}
           for n in ast.parse(mqa_src).body if isinstance(n, ast.ClassDef)}


def template_for(cls: str) -> str:
    name = classes[cls]["DATASET_NAME"]
    if name == 'tut2017':
        return prompts["TUT2017_SINGLE_CHOICE_PRPMPT"]
    if name == 'cochlscene':
        return prompts["COCHLSCENE_SINGLE_CHOICE_PRPMPT"]
    return prompts["SINGLE_CHOICE_PRPMPT"]


def literal_question(start: str) -> str:
    for node in ast.walk(ast.parse(dl_src)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(start) \
                and "Options:" in node.value:
            return node.value
    raise KeyError(start)


rng = random.Random(29)
REPLIES = [
    ("result_yes", "Explanation: The model's output matches the ground truth.\nResult: yes"),
    ("result_no", "Explanation: The model's output names another class.\nResult: no"),
    ("bare_yes", "yes"), ("bare_no", "no"), ("yes_period", "Yes."), ("no_upper", "NO"),
    ("result_yes_title", "Result: Yes"), ("trailing_blank_lines", "Result: yes\n\n\n"),
    ("trailing_spaces_line", "Result: no\n    "), ("crlf", "Explanation: fine\r\nResult: yes\r\n"),
    ("no_then_yes", "Result: no, wait, yes"), ("unknown", "Result: unknown"), ("not_sure", "Result: not sure"),
    ("correct_word", "Result: correct"), ("incorrect_word", "Result: incorrect"), ("none_word", "Result: None"),
    ("empty_reply", ""), ("whitespace_reply", "   \n  "), ("yesterday", "I judged this yesterday"),
    ("eyes", "Result: eyes"), ("nope", "Output: nope"), ("bold_yes", "Result: **yes**"),
    ("note_after_yes", "Result: yes\nNote: reconsidered"), ("yes_then_explanation", "yes\nExplanation: the output is a synonym"),
    ("chinese", "结果：是"), ("y_only", "Result: Y"), ("json_yes", '{"result": "yes"}'), ("json_no", '{"result": "no"}'),
    ("yes_inside_word_no", "Result: nonetheless yes"), ("knowledge", "Explanation: by knowledge\nResult: certain"),
    ("judge_failed", None), ("tab_yes", "\tyes\t"),
]
OUTPUTS = ["{letter}", "({letter})", "{gold}", "{gold_upper}", "The answer is {letter}.", "{wrong}", "", None,
           "{gold}\n", "Answer: {gold}"]

SETS = {
    "meld": dict(cls="MELD", start="Identify the predominant emotion", labels=[
        "neutral", "joy", "sadness", "anger", "surprise", "fear", "disgust"], golds=["joy", "neutral", "fear", "anger"]),
    "vocalsound": dict(cls="Vocalsound", start="Identify the human vocal sound in the audio.\nOptions:\n(A) Laughter",
                       labels=["Laughter", "Sigh", "Cough", "Throat clearing", "Sneeze", "Sniff"],
                       golds=["Cough", "Throat clearing", "Sniff", "Laughter"]),
    "nonspeech7k": dict(cls="Nonspeech7k", start="Identify the human vocal sound in the audio.\nOptions:\n(A) Breath",
                        labels=["breath", "cough", "crying", "laugh", "screaming", "sneeze", "yawn"],
                        golds=["screaming", "crying", "yawn", "breath"]),
    "tut2017": dict(cls="TUT2017", start="Identify the acoustic scene in the audio.\nOptions:\n(A) beach",
                    labels=["beach", "bus", "cafe/restaurant", "car", "city_center", "forest_path", "grocery_store",
                            "home", "library", "metro_station", "office", "park", "residential_area", "train", "tram"],
                    golds=["residential_area", "cafe/restaurant", "bus", "tram"]),
    "cochlscene": dict(cls="Cochlscene", start="Identify the acoustic scene in the audio.\nOptions:\n(A) bus",
                       labels=["Bus", "Cafe", "Car", "CrowdedIndoor", "Elevator", "Kitchen", "Park", "ResidentialArea",
                               "Restaurant", "Restroom", "Street", "Subway", "SubwayStation"],
                       golds=["CrowdedIndoor", "SubwayStation", "Bus", "ResidentialArea"]),
}
MIDS = {"Laughter": "/m/01j3sz", "Sigh": "/m/07plz5l", "Cough": "/m/01b_21", "Throat clearing": "/m/0dl9sf8",
        "Sneeze": "/m/01hsr_", "Sniff": "/m/07ppn3j"}


def record(preset: str, n: int, gold: str) -> tuple[str, dict]:
    if preset == "meld":
        return f"dia{n}_utt0", {"Sr No.": str(n + 1), "Utterance": "Really?", "Speaker": "Joey", "Emotion": gold,
                                "Sentiment": "neutral", "Dialogue_ID": str(n), "Utterance_ID": "0", "Season": "3",
                                "Episode": "4", "StartTime": "00:01:02,000", "EndTime": "00:01:04,000"}
    if preset == "vocalsound":
        wav = f"/data/sls/scratch/yuangong/vocalsound/data/audio_16k/m{n:04d}_0_x.wav"
        return wav, {"wav": wav, "labels": MIDS[gold]}
    if preset == "nonspeech7k":
        return f"{n}_0_0.wav", {"Filename": f"{n}_0_0.wav", "File ID": str(n), "Duration in ms": "1000",
                                "Class ID": "0", "Classname": gold, "Augment id": "0", "Augmentation type": "Original",
                                "source": "https://freesound.org/"}
    if preset == "cochlscene":   # the scene is the folder name, as Kimi's os.walk reads it
        split = "Test" if n % 2 else "Val"
        return f"{split}/{gold}/{gold}_{n:04d}.wav", {"path": f"{split}/{gold}/{gold}_{n:04d}.wav"}
    return f"audio/{n}.wav", {"file": f"audio/{n}.wav", "scene_label": gold}


for preset, s in SETS.items():
    question = literal_question(s["start"])
    template = template_for(s["cls"])
    cases = []
    for gi, gold in enumerate((s["golds"] * 3)[:10]):
        letter = "ABCDEFGHIJKLMNO"[s["labels"].index(gold)]
        wrong = rng.choice([l for l in s["labels"] if l != gold])
        for style, reply in REPLIES:
            n = len(cases)
            fmt = rng.choice(OUTPUTS)
            output = None if fmt is None else fmt.format(letter=letter, gold=gold, gold_upper=gold.upper(), wrong=wrong)
            cid, rec = record(preset, n, gold)
            df = pd.DataFrame({"question": [question], "answer": [gold], "prediction": [output]})
            # a companion row whose reply is always "yes" (a group of invalid replies only divides by zero)
            pair = pd.concat([df, df], ignore_index=True)
            try:
                res, _ = collect_acc([(0, reply), (1, "Result: yes")], pair)
                verdict = None if res["valid"] == 1 else int(res["correct"] == 2)
            except AttributeError:
                verdict = "script stops: collect_acc calls .strip() on a null judge reply"
            cases.append({"case": cid, "group": f"{preset}-{n:04d}", "style": style, "record": rec, "output": output,
                          "reply": reply, "verdict": verdict, "_gold": gold})
    # the results file as evaluate_llm reads it (pd.read_json(lines=True), astype(str)): a null prediction
    # among text ones becomes the text "None"
    results = "".join(json.dumps({"index": i, "question": question, "answer": c.pop("_gold"), "prediction": c["output"],
                                  "subset": "x"}) + "\n" for i, c in enumerate(cases))
    df = pd.read_json(io.StringIO(results), lines=True)
    for c, q, gt, pred in zip(cases, df["question"].astype(str), df["answer"].astype(str),
                              df["prediction"].astype(str)):
        c["script_prompt"] = template.format(answer=gt.strip(), question=q.strip(), prediction=pred)
    counts: dict = {}
    for c in cases:
        counts[c["style"]] = counts.get(c["style"], 0) + 1
    header = {"corpus": {
        "scorer": "kimi_audio_judge", "preset": preset, "judge": True,
        "script": {"repo": "MoonshotAI/Kimi-Audio-Evalkit", "path": "almeval/datasets/base.py", "commit": a.commit,
                   "also": ["almeval/datasets/ds_mqa.py (evaluate_llm, SINGLE_CHOICE_PRPMPT)",
                            "data/download_benchmark.py (the question text)"]},
        "ran": ("collect_acc (base.py) cut out with ast, unmodified, exec'd with pandas " + pd.__version__ + " on "
                "two-row groups [(0, judge reply), (1, 'Result: yes')] (a group whose replies are all invalid divides by "
                "zero): correct=2 -> 1, valid=1 -> null (left out), else 0; a null reply makes it stop "
                "(AttributeError). script_prompt: evaluate_llm's template for class " + s["cls"] +
                " (DATASET_NAME " + repr(classes[s["cls"]]["DATASET_NAME"]) + ") formatted as run_llm_judge does"),
        "seed": 29, "verdicts": "1 correct, 0 wrong, null left out of the denominator", "n_cases": len(cases),
        "styles": counts}}
    out = f"{a.outdir}/{preset}_kimi_audio.jsonl"
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(out, len(cases), {v: sum(c["verdict"] == v for c in cases) for v in (1, 0, None)})
