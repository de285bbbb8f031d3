"""Rebuild the collected corpus (one ``<source>.jsonl`` per source beside this file) from snapshots
of the public repositories listed in README.md. Run from the repo root with the snapshots as bare git
directories under ``MIRROR`` (default ``/work/.mirror/<owner>+<name>/repo``):

    python tests/data/parse/collected/make_collected.py

The outputs are frozen and committed; the tests read only them. Every record keeps the output text
exactly as the source released it (``raw``), the question and the option list the system was shown,
and where it came from (``repo``, ``commit``, ``path``, ``ref``: the row's id or index in that file).
Large files are subsampled with a fixed seed; nothing else is filtered.
"""
from __future__ import annotations

import ast
import json
import os
import random
import re
import subprocess
from pathlib import Path

MIRROR = Path(os.environ.get("MIRROR", "/work/.mirror"))
OUT = Path(__file__).resolve().parent
LETTERS = "ABCDEFGHIJ"


def show(repo: str, commit: str, path: str) -> str:
    git_dir = MIRROR / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def opts(texts: list[str]) -> list[dict]:
    return [{"label": LETTERS[i], "text": t} for i, t in enumerate(texts)]


def lettered(choices: str) -> list[str]:
    """ "(A) Man (B) Woman" or "(A) Man\\n(B) Woman" -> ["Man", "Woman"]."""
    parts = re.split(r"\s*\(([A-J])\)\s*", " " + choices.strip())
    found = dict(zip(parts[1::2], (p.strip() for p in parts[2::2])))
    return [found[k] for k in LETTERS[:len(found)]]


def sample(rows: list, n: int, seed: int) -> list:
    if len(rows) <= n:
        return rows
    keep = sorted(random.Random(seed).sample(range(len(rows)), n))
    return [rows[i] for i in keep]


def record(source, system, kind, benchmark, repo, commit, path, ref, question, options, labels_shown, raw):
    return {"source": source, "system": system, "kind": kind, "benchmark": benchmark, "question": question,
            "options": options, "labels_shown": labels_shown, "raw": raw,
            "repo": repo, "commit": commit, "path": path, "ref": ref}


def desta25_mmau():
    repo, commit = "kehanlu/DeSTA2.5-Audio", "5503dfcb8c07ddc608ef705542f0f9b94cc99de8"
    path = "examples/evaluation/MMAU-v05.15.25/results/mmau-test-mini_results.json"
    for r in sample(json.loads(show(repo, commit, path)), 600, 4):
        yield record("desta25_mmau", "DeSTA2.5-Audio", "chat", "MMAU test-mini", repo, commit, path, r["id"],
                     r["question"], opts(r["choices"]), False, r["model_output"])


def r1aqa_omni_mmau():
    repo, commit = "JOY-SWang/R1-AQA-Omni", "a2a17ddee1a80765b7c9fc313fb320b78d288be0"
    path = "exp/model/test_500/res_mmau_mini_CoT.json"
    for r in sample(json.loads(show(repo, commit, path)), 600, 5):
        yield record("r1aqa_omni_mmau", "R1-AQA-Omni (Qwen2.5-Omni-7B GRPO, step 500)", "reasoning-tags",
                     "MMAU test-mini", repo, commit, path, r["id"], r["question"], opts(r["choices"]), False,
                     r["model_prediction"])


def selective_hearing():
    repo, commit = "Elocinacademia/SelectiveHearing-Bench", "df67604a33b0f76c02dc82411a6d5b92d34286d0"
    for name, system, seed in (("gemini_basic_qa", "Gemini (SelectiveHearing basic)", 1),
                               ("qwen25omni_basic_qa", "Qwen2.5-Omni-7B (SelectiveHearing basic)", 2),
                               ("stepaudio_basic_qa", "Step-Audio (SelectiveHearing basic)", 3)):
        path = f"results/{name}.json"
        rows = json.loads(show(repo, commit, path))
        for i, r in sample(list(enumerate(rows)), 400, seed):
            yield record("selective_hearing", system, "chat", "SelectiveHearing-Bench", repo, commit, path, i,
                         r["question"], opts(r["options"]), True, r["pred"])


LOVENYA = ("lovenya/Measuring-Faithfulness-of-CoT-Reasoning-LALMs", "e4cee03cb8106d7b000330687db35363ee7dbe6b")


def af3_think():
    repo, commit = LOVENYA
    files = [("results/flamingo_hf/baseline/baseline_flamingo_hf_mmar.jsonl", "MMAR", 400)]
    files += [(f"results/flamingo_hf/baseline/baseline_flamingo_hf_sakura-{t}.jsonl", f"SAKURA {t}", 75)
              for t in ("animal", "emotion", "gender", "language")]
    for k, (path, bench, n) in enumerate(files):
        rows = jsonl(show(repo, commit, path))
        for i, r in sample(list(enumerate(rows)), n, 10 + k):
            yield record("af3_think", "Audio Flamingo 3 (think prompt)", "reasoning", bench, repo, commit, path,
                         f"{r['id']}#{r['chain_id']}", r["question"], opts(lettered(r["choices"])), True,
                         r["generated_cot"])


def qwen_omni_xml():
    repo, commit = LOVENYA
    path = "results/qwen_omni/baseline/baseline_qwen_omni_mmar.jsonl"
    for r in jsonl(show(repo, commit, path)):
        yield record("qwen_omni_xml", "Qwen2.5-Omni-7B (<Reasoning>/<Conclusion> template)", "reasoning-tags",
                     "MMAR", repo, commit, path, f"{r['id']}#{r['chain_id']}", r["question"],
                     opts(lettered(r["choices"])), True, r["final_answer_raw"])
    manifests = {}
    for bench, sub in (("MMAU test-mini", "mmau"), ("SAKURA animal", "sakura/animal"),
                       ("SAKURA emotion", "sakura/emotion")):
        mpath = f"pooneh_version/data/{sub}/" + ("mmau_manifest.jsonl" if sub == "mmau" else
                                                  f"{sub.split('/')[1]}_manifest.jsonl")
        manifests[bench] = {m["id"]: m for m in jsonl(show(repo, commit, mpath))}
    for k, (bench, path) in enumerate((
            ("MMAU test-mini", "pooneh_version/result/baseline/qwen2.5/mmau/baseline_mmau_REAS.jsonl"),
            ("SAKURA animal", "pooneh_version/result/baseline/qwen2.5/animal/baseline_animal_REAS.jsonl"),
            ("SAKURA emotion", "pooneh_version/result/baseline/qwen2.5/emotion/baseline_emotion_REAS.jsonl"))):
        rows = jsonl(show(repo, commit, path))
        for i, r in sample(list(enumerate(rows)), 150, 20 + k):
            m = manifests[bench][r["id"]]
            outs = r["raw_model_outputs"]
            raw, = outs if isinstance(outs, list) else ast.literal_eval(outs)
            yield record("qwen_omni_xml", "Qwen2.5-Omni-7B (<Reasoning>/<Conclusion> template)", "reasoning-tags",
                         bench, repo, commit, path, r["id"], m["question"], opts(lettered(m["choices"])), True, raw)


def qwen3_omni_thinking():
    repo, commit = "sujitnoronha/audio_reasoning_interspeech", "b6d3b1b2236cbeec1df7c58da00836f91f0c90ce"
    meta = {m["id"]: m for m in json.loads(show(repo, commit, "src/data/MMAR-meta.json"))}
    path = "src/inference/v9_results/predictions.jsonl"
    for r in sample(jsonl(show(repo, commit, path)), 500, 6):
        m = meta[r["id"]]
        yield record("qwen3_omni_thinking", "Qwen3-Omni-30B-A3B-Thinking (v9 prompt, released thinking text)",
                     "reasoning", "MMAR", repo, commit, path, r["id"], m["question"], opts(m["choices"]), False,
                     r["thinking_prediction"])


def salmonn_mmar():
    repo, commit = LOVENYA[0], "046698ffaf8e8e2e22a73caa36dfc392441c0e61"
    path = "baseline_salmonn_mmar.jsonl"
    rows = jsonl(show(repo, commit, path))
    for i, r in sample(list(enumerate(rows)), 500, 30):
        yield record("salmonn_mmar", "SALMONN (CoT prompt)", "chat", "MMAR", repo, commit, path,
                     f"{r['id']}#{r['chain_id']}", r["question"], opts(lettered(r["choices"])), True, r["generated_cot"])


def speech_ifeval():
    repo, commit = "kehanlu/Speech-IFEval", "e2e9c14d3609aeb6613c64e3e6c8be44329c476a"
    for model, system, kind in (("meta-llama--Meta-Llama-3-8B-Instruct",
                                 "Llama-3-8B-Instruct on transcript + speaker tags (cascade)", "cascade"),
                                ("DeSTA-ntu--DeSTA2-8B-beta", "DeSTA2-8B", "chat")):
        path = f"outputs/{model}/chain-of-thought.jsonl"
        for i, r in enumerate(jsonl(show(repo, commit, path))):
            # only the items with an option list: MMAU's ("Choose the answer from "a", "b" or "c".") and
            # emotion recognition's four categories (ASR and gender items have none)
            m = re.search(r'Choose the answer from (".*") or "(.*?)"\.?\s*\n', r["instruction"])
            if m:
                choices = re.findall(r'"(.*?)"', m.group(1)) + [m.group(2)]
                question, bench = r["instruction"][:m.start()].strip(), "MMAU (Speech-IFEval CoT)"
            elif "four emotion categories: neutral, happy, sad, and angry" in r["instruction"]:
                choices, question = ["neutral", "happy", "sad", "angry"], r["instruction"]
                bench = "emotion recognition (Speech-IFEval CoT)"
            else:
                continue
            yield record("speech_ifeval", system, kind, bench, repo, commit, path, i, question, opts(choices),
                         False, r["response"])


def mmlu_pro():
    repo, commit = "TIGER-AI-Lab/MMLU-Pro", "ff991b5b7f14a383fd41da3987447ab6c08bf138"
    cats = ("biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
            "history", "law", "math", "other", "philosophy", "physics", "psychology")
    for model, system, n in (("gpt4o", "GPT-4o (MMLU-Pro CoT)", 15), ("deepseek", "DeepSeek (MMLU-Pro CoT)", 15)):
        for k, cat in enumerate(cats):
            path = f"eval_results/{model}/{cat}_result.json"
            rows = json.loads(show(repo, commit, path))
            for i, r in sample(list(enumerate(rows)), n, 40 + k):
                yield record("mmlu_pro", system, "text-llm", f"MMLU-Pro {cat}", repo, commit, path, r["question_id"],
                             r["question"], opts(r["options"] if isinstance(r["options"], list) else ast.literal_eval(r["options"])), True, r["response"])


def gpt_choices(prompt: str) -> tuple[str, list[str]]:
    """SelectiveHearing's GPT prompts print the options run together after the question:
    ``Question:Q?Choose from:A. £10B. £100C. £42D. I don't knowE. £25`` -> (Q?, [£10, £100, …])."""
    head, _, tail = prompt.partition("Choose from:")
    starts, at = [], 0
    for letter in LETTERS:
        k = tail.find(f"{letter}. ", at)
        if k < 0:
            break
        starts.append(k)
        at = k + 3
    assert starts and starts[0] == 0, prompt
    texts = [tail[a + 3:b].strip() for a, b in zip(starts, starts[1:] + [len(tail)])]
    return head.rpartition("Question:")[2].strip(), texts


def selective_hearing_more():
    """Four systems of the same release that the first file leaves out: GPT (the `*_gpt_answer` files,
    the prompt with its options kept beside each answer), Qwen2.5-Omni-3B, and the two checkpoints the
    authors fine-tuned (BPFT: Qwen2.5-Omni-7B and Step-Audio-2-mini), each in the general (`basic`) and
    the selective mode."""
    repo, commit = "Elocinacademia/SelectiveHearing-Bench", "df67604a33b0f76c02dc82411a6d5b92d34286d0"
    for name, system, n, seed in (
            ("basic_gpt_answer", "GPT (SelectiveHearing gpt_answer)", 250, 101),
            ("selective_gpt_answer", "GPT (SelectiveHearing gpt_answer)", 250, 102),
            ("qwen25omni3B_basic_qa", "Qwen2.5-Omni-3B (SelectiveHearing)", 250, 103),
            ("qwen25omni3B_selective_qa", "Qwen2.5-Omni-3B (SelectiveHearing)", 250, 104),
            ("train_qwen25omni_basic_qa", "Qwen2.5-Omni-7B BPFT (SelectiveHearing fine-tuned)", 200, 105),
            ("train_qwen25omni_selective_qa", "Qwen2.5-Omni-7B BPFT (SelectiveHearing fine-tuned)", 200, 106),
            ("train_stepaudio2_basic_qa", "Step-Audio-2-mini BPFT (SelectiveHearing fine-tuned)", 100, 107),
            ("train_stepaudio2_selective_qa", "Step-Audio-2-mini BPFT (SelectiveHearing fine-tuned)", 100, 108)):
        path = f"results/{name}.json"
        rows = json.loads(show(repo, commit, path))
        mode = "selective" if "selective" in name else "basic"
        if isinstance(rows, dict):   # GPT: {audio_idx: {question: full prompt, answer: output}}
            for key, r in sample(sorted(rows.items()), n, seed):
                question, texts = gpt_choices(r["question"])
                yield record("selective_hearing_more", system, "chat", f"SelectiveHearing-Bench ({mode})", repo,
                             commit, path, key, question, opts(texts), True, r["answer"])
        else:
            for i, r in sample(list(enumerate(rows)), n, seed):
                texts = r["options"] if isinstance(r["options"], list) else ast.literal_eval(r["options"])
                yield record("selective_hearing_more", system, "chat", f"SelectiveHearing-Bench ({mode})", repo,
                             commit, path, i, r["question"], opts(texts), True, r["pred"])


def mmau_pro_audio_noise():
    """One harness's MMAU-Pro run released as two parquet files: the model (not named in the release;
    its inference script offers Qwen2.5-Omni, Qwen3-Omni and Gemma 3n) on the real audio, and on one
    white-noise clip in place of every item's audio, so that the second shows what a model writes when
    it hears nothing (no sound, an image it imagines, then often an answer). The prompt numbered the
    options ``1) …``, so the labels are the numbers shown. Open and instruction items have no options."""
    import io

    import pandas as pd

    repo, commit = "jemin7709/audio-llm-benchmark", "d75410cc991036b652da79a63b5f5f92aadcf0cc"
    for name, system, seed in (("predictions_with_audio", "MMAU-Pro harness model (real audio)", 201),
                               ("predictions_with_noise", "MMAU-Pro harness model (white noise for audio)", 202)):
        path = f"experiments/similarity/audio_similarity/{name}.parquet"
        git_dir = MIRROR / repo.replace("/", "+") / "repo"
        blob = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], check=True,
                              capture_output=True).stdout
        rows = [r for r in pd.read_parquet(io.BytesIO(blob)).to_dict("records")
                if r["choices"] is not None and len(r["choices"]) >= 2]
        for r in sample(rows, 500, seed):
            options = [{"label": str(i + 1), "text": str(t)} for i, t in enumerate(r["choices"])]
            yield record("mmau_pro_audio_noise", system, "chat", f"MMAU-Pro {r['category']}", repo, commit, path,
                         r["id"], r["question"], options, True, r["model_output"])


def steering_alms_mmau():
    """Qwen-Audio-Chat and Qwen2-Audio-7B-Instruct on MMAU test-mini (an older revision) from an
    activation-steering study's baseline runs. The prompt was the question, "Select one option from the
    provided choices." and the choices as a Python list, no letters, so the models mostly answer with a
    sentence that restates an option (some invent letters of their own). The release's third file
    (``qwen2_audio_7b_results_0percent.json``) has only empty outputs and is left out."""
    repo, commit = "nguyentuc/Steering_ALMs", "e3cc3b64aaf54ca29c233c703040d25eee8b4ff1"
    for name, system, seed in (("qwen_audio_chat_results", "Qwen-Audio-Chat (MMAU, steering baseline)", 301),
                               ("qwen2_audio_7b_instruct_results",
                                "Qwen2-Audio-7B-Instruct (MMAU, steering baseline)", 302)):
        path = f"{name}.json"
        for r in sample(json.loads(show(repo, commit, path)), 500, seed):
            yield record("steering_alms_mmau", system, "chat", "MMAU test-mini (older revision)", repo, commit, path,
                         r["id"], r["question"], opts(r["choices"]), False, r["model_output"])


MUSE_TASKS = {"chord_progression_matching": "progression_matching", "chord_quality": "chord_quality",
              "contourID": "contourID", "instrumentID": "instrumentID", "key_modulation": "keymod",
              "meter_identification": "meterID", "oddballs": "oddballs", "rhythm_matching": "rhythm_matching",
              "syncopation": "syncopation", "transposition": "transposition"}
MUSE_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - ", re.M)


def muse_prompt(runner: str) -> tuple[str, list[dict], bool]:
    """The chain-of-thought prompt a MUSE runner sends each trial and its answer lines, read from the
    runner's module-level string constants: "A. Major" lines give lettered options, the bare
    "Yes, these are ..." / "No, ..." pairs of the same/different tasks are options shown without letters."""
    consts = {t.id: node.value.value for node in ast.parse(runner).body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name) and isinstance(node.value, ast.Constant)}
    prompt = consts.get("COT_PROMPT_TEMPLATE") or consts["COT_PROMPT"]
    if "YES_CANON" in consts:
        return prompt, opts([consts["YES_CANON"], consts["NO_CANON"]]), False
    lines = [consts[f"{c}_CANON"] for c in LETTERS if f"{c}_CANON" in consts]
    return prompt, [{"label": s[0], "text": s[3:]} for s in lines], True


def muse_music():
    """Four models on the MUSE music-perception benchmark's ten forced-choice listening tasks (chord
    quality, key modulation, meter, contour, instrument, and same/different judgements answered "Yes,
    these are ..." or "No, ..."), chain-of-thought prompt, from the authors' released run logs: each
    trial's full response sits between its "LLM Full Response:" line and the next log line."""
    repo, commit = "brandoncarone/MUSE_music_benchmark", "a9e4acde97b731e607b1e79f25c898487449e5b0"
    for folder, tag, runner_dir, system, seed in (
            ("Gemini/Gemini_Pro_Logs", "G25Pro", "Gemini", "Gemini 2.5 Pro (MUSE, CoT)", 1101),
            ("Gemini/Gemini_Flash_logs", "G25Flash", "Gemini", "Gemini 2.5 Flash (MUSE, CoT)", 1102),
            ("Qwen2.5-Omni/Qwen_Logs", "Qwen2.5-Omni", "Qwen2.5-Omni", "Qwen2.5-Omni-7B (MUSE, CoT)", 1103),
            ("AF3/AF3_Logs", "AF3", "AF3", "Audio Flamingo 3 chat (MUSE, CoT)", 1104)):
        rows = []
        for task, runner in MUSE_TASKS.items():
            question, options, shown = muse_prompt(show(repo, commit, f"{runner_dir}/{runner}_{runner_dir}_runner.py"))
            for group in ("GroupA", "GroupB"):
                for s in (1, 2, 3):
                    path = f"{folder}/{task}_{tag}_CHAT_COT_{group}_seed{s}.log"
                    for entry in MUSE_ENTRY.split(show(repo, commit, path)):
                        head, sep, raw = entry.partition(" - LLM Full Response:\n")
                        if sep:
                            rows.append((path, head.split()[-1], question, options, shown, raw.removesuffix("\n")))
        for path, ref, question, options, shown, raw in sample(rows, 300, seed):
            yield record("muse_music", system, "chat, CoT prompt", "MUSE (music perception)", repo, commit, path,
                         ref, question, options, shown, raw)


TACOBELAL = "younissk/TACoBeLAL"


def tacobelal():
    """One run of an audio-MCQ harness on event order in AudioCaps-style clips, prompt "Choose exactly one
    option.\nA. …\n\nReturn only the option label from: A, B, C." with at most 16 new tokens, so longer answers
    stop mid-sentence. Qwen2-Audio-7B-Instruct was run with no audio at all (its run keeps the question but not
    the options; they are the same dataset items' options in the release's mapping file of the no-audio Audio
    Flamingo 3 run, checked against the Qwen run's own answer label and text). The release's beep-count runs
    are left out: tests/data/parse/tacobelal_cases.jsonl holds them already, so they are not unseen."""
    commit = "425517b631b7943d9bfcf443b8febd402fd1fe46"
    run = "results/mcq-order/qwen2-audio-7b-instruct-no-audio/20260217_120455"
    mapping = json.loads(show(TACOBELAL, commit, "results/mcq-order/audio-flamingo-3-no-audio/20260217_130051/"
                                                  "workdir/audioflamingo_mapping.json"))
    items = {m["example_id"]: m for m in mapping.values()}
    decisions = {d["example_id"]: d for d in jsonl(show(TACOBELAL, commit, f"{run}/decisions.jsonl"))}
    path = f"{run}/raw_model_outputs.jsonl"
    for r in sample(jsonl(show(TACOBELAL, commit, path)), 500, 1301):
        item, d = items[r["id"]], decisions[r["id"]]
        options = [{"label": o["label"], "text": o["text"]} for o in item["options"]]
        assert item["question"] == d["question"] and {o["label"]: o["text"] for o in options}[d["answer_label"]] \
            == d["answer_text"] and d["raw_prediction"] == r["pred"], r["id"]
        yield record("tacobelal", "Qwen2-Audio-7B-Instruct, no audio (TACoBeLAL event order, 16 new tokens)", "chat",
                     "TACoBeLAL MCQ-ORDER", TACOBELAL, commit, path, r["id"], item["question"], options, True, r["pred"])


SOURCES = (desta25_mmau, r1aqa_omni_mmau, selective_hearing, af3_think, qwen_omni_xml, qwen3_omni_thinking,
           salmonn_mmar, speech_ifeval, mmlu_pro, selective_hearing_more, mmau_pro_audio_noise, steering_alms_mmau,
           muse_music, tacobelal)
#: the sources of the first grading rounds (labels.jsonl, round 2, round 3); later sources were added for
#: round 5 (labels_round5.jsonl, labels_round6.jsonl) and round 7 (labels_round7.jsonl)
FIRST_SOURCES = SOURCES[:9]


def main(only: tuple[str, ...] = ()) -> None:
    for source in SOURCES:
        if only and source.__name__ not in only:
            continue
        rows = list(source())
        with open(OUT / f"{source.__name__}.jsonl", "w", encoding="utf-8") as f:
            for i, r in enumerate(rows):
                f.write(json.dumps({"case": f"{source.__name__}-{i:04d}", **r}, ensure_ascii=False) + "\n")
        print(source.__name__, len(rows))


if __name__ == "__main__":
    import sys
    main(tuple(sys.argv[1:]))


def grading_sample(per_system: int = 50, seed: int = 7, sources=None, exclude=()) -> list[str]:
    """The cases graded blind (labels.jsonl): per system, an equal share from each third of its
    outputs by length, so short labels, mid-length answers and long analyses all count.

    ``sources`` (names of source files, default those of the first rounds) and ``exclude`` (cases
    graded before) draw the later rounds: round 5 is ``grading_sample(75, 5005, ("selective_hearing_more",))``,
    round 6 ``grading_sample(25, 6006, ("selective_hearing_more",), exclude=<round 5's cases>)``."""
    names = sources or tuple(s.__name__ for s in FIRST_SOURCES)
    rows = [json.loads(line) for name in sorted(names)
            for line in (OUT / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["case"] not in set(exclude)]
    rng, chosen = random.Random(seed), []
    for system in sorted({r["system"] for r in rows}):
        mine = sorted((r for r in rows if r["system"] == system), key=lambda r: (len(r["raw"]), r["case"]))
        thirds = [mine[i * len(mine) // 3:(i + 1) * len(mine) // 3] for i in range(3)]
        for i, third in enumerate(thirds):
            n = per_system // 3 + (i < per_system % 3)
            chosen += [r["case"] for r in rng.sample(third, min(n, len(third)))]
    return chosen


# Round 9's draw: per source, how many of each system's outputs, weighted to the long and
# reasoning-style outputs where the parser has most to get wrong.
ROUND9_SHARES = {"mmau_pro_audio_noise": 18, "af3_think": 18, "qwen3_omni_thinking": 18, "qwen_omni_xml": 15,
                 "salmonn_mmar": 15, "r1aqa_omni_mmau": 15, "desta25_mmau": 12, "selective_hearing_more": 6}


def shared_sample(shares: dict[str, int], seed: int, own: str, drawn=()) -> list[str]:
    """A later round's cases: ``grading_sample`` per source with that source's share, leaving out every
    case a labels file other than the round's own (``own``) graded, so the round is fresh to the rules,
    and the cases an earlier draw of the same round took (``drawn``)."""
    graded = {json.loads(line)["case"] for path in sorted(OUT.glob("labels*.jsonl")) if path.name != own
              for line in path.read_text(encoding="utf-8").splitlines()} | set(drawn)
    return [case for source, n in shares.items() for case in grading_sample(n, seed, (source,), exclude=graded)]


def round9_sample(seed: int = 9009) -> list[str]:
    """Round 9's cases (``labels_round9.jsonl``)."""
    return shared_sample(ROUND9_SHARES, seed, "labels_round9.jsonl")


# Round 10's draw: 20 per system of the source new for it, the rest over every earlier source, weighted to
# the long reasoning styles (shares are per system: mmau_pro_audio_noise, speech_ifeval and mmlu_pro have 2,
# selective_hearing 3, selective_hearing_more 4).
ROUND10_SHARES = {"steering_alms_mmau": 20, "qwen3_omni_thinking": 18, "af3_think": 16, "salmonn_mmar": 14,
                  "qwen_omni_xml": 14, "r1aqa_omni_mmau": 12, "desta25_mmau": 8, "mmau_pro_audio_noise": 7,
                  "speech_ifeval": 6, "mmlu_pro": 6, "selective_hearing": 4, "selective_hearing_more": 2}


def round10_sample(seed: int = 10010) -> list[str]:
    """Round 10's cases (``labels_round10.jsonl``)."""
    return shared_sample(ROUND10_SHARES, seed, "labels_round10.jsonl")


# Round 11's draw: 13 per system of the source new for it (muse_music), the rest over every earlier source,
# weighted to the long reasoning styles, at most 15 of qwen3_omni_thinking (shares are per system, as in round 10).
ROUND11_SHARES = {"muse_music": 13, "af3_think": 20, "qwen_omni_xml": 18, "salmonn_mmar": 16, "qwen3_omni_thinking": 15,
                  "r1aqa_omni_mmau": 14, "desta25_mmau": 12, "mmau_pro_audio_noise": 10, "steering_alms_mmau": 10,
                  "speech_ifeval": 8, "mmlu_pro": 7, "selective_hearing": 6, "selective_hearing_more": 2}


def round11_sample(seed: int = 11011) -> list[str]:
    """Round 11's cases (``labels_round11.jsonl``)."""
    return shared_sample(ROUND11_SHARES, seed, "labels_round11.jsonl")


# Round 12's draw: no new source was found, so every share is over the earlier sources, weighted to the long
# reasoning styles, at most 15 of qwen3_omni_thinking (shares are per system, as in round 10). The first draw
# (118) was graded and committed first; the second (seed + 1, leaving out the first) brings the round to ~200.
ROUND12_SHARES = {"muse_music": 5, "steering_alms_mmau": 5, "af3_think": 14, "qwen3_omni_thinking": 10,
                  "salmonn_mmar": 10, "qwen_omni_xml": 10, "r1aqa_omni_mmau": 8, "desta25_mmau": 6,
                  "mmau_pro_audio_noise": 4, "speech_ifeval": 3, "mmlu_pro": 3, "selective_hearing": 2,
                  "selective_hearing_more": 1}


ROUND12_MORE_SHARES = {"muse_music": 3, "steering_alms_mmau": 5, "af3_think": 12, "qwen3_omni_thinking": 5,
                       "salmonn_mmar": 8, "qwen_omni_xml": 8, "r1aqa_omni_mmau": 6, "desta25_mmau": 4,
                       "mmau_pro_audio_noise": 4, "speech_ifeval": 2, "mmlu_pro": 2, "selective_hearing": 1,
                       "selective_hearing_more": 1}


def round12_sample(seed: int = 12012) -> list[str]:
    """Round 12's cases (``labels_round12.jsonl``): the first draw, then the second."""
    first = shared_sample(ROUND12_SHARES, seed, "labels_round12.jsonl")
    return first + shared_sample(ROUND12_MORE_SHARES, seed + 1, "labels_round12.jsonl", drawn=first)


# Round 13's draw: ~300 over every source, weighted to the long reasoning styles as in round 11, at most 20 of
# qwen3_omni_thinking (shares are per system, as in round 10). It was drawn and committed before the rules
# written after round 12 were final, and the rule writer left its cases out of everything they read.
ROUND13_SHARES = {"muse_music": 18, "af3_think": 26, "qwen_omni_xml": 22, "salmonn_mmar": 20, "qwen3_omni_thinking": 20,
                  "r1aqa_omni_mmau": 18, "desta25_mmau": 15, "mmau_pro_audio_noise": 12, "steering_alms_mmau": 14,
                  "speech_ifeval": 10, "mmlu_pro": 9, "selective_hearing": 8, "selective_hearing_more": 3}


def round13_sample(seed: int = 13013) -> list[str]:
    """Round 13's cases (``labels_round13.jsonl``)."""
    return shared_sample(ROUND13_SHARES, seed, "labels_round13.jsonl")


# Round 13's second draw: 20 per system of the source new for it (tacobelal), none graded before; drawn and
# committed before it was graded, as round 13's cases were.
ROUND13_NEW_SHARES = {"tacobelal": 20}


def round13_new_sample(seed: int = 13113) -> list[str]:
    """Round 13's cases of the source added for it (``labels_round13_new.jsonl``)."""
    return shared_sample(ROUND13_NEW_SHARES, seed, "labels_round13_new.jsonl")


def later_round_sample(n: int, drawn=()) -> list[str]:
    """Round ``n``'s cases (``labels_round{n}.jsonl``), for rounds 14 to 29: round 13's shares, seed ``n * 1001``
    (14014, ..., 29029), each drawn and committed before the parser version it measured first ran on it (the
    collected README says which). Rounds 20 and 21 were drawn together, round 21 leaving out round 20's draw
    (``drawn``); the smallest sources run out, so rounds 21 to 26 hold 299, round 27 285, round 28 245 and round 29
    209 (no MUSE left). Later rounds' labels leave more cases out, so an earlier round's draw no longer reproduces
    its committed case list."""
    return shared_sample(ROUND13_SHARES, n * 1001, f"labels_round{n}.jsonl", drawn=drawn)
