"""The official rules that ask a model: SAKURA's LLM judge and AIR-Bench Chat's rating judge
(the registry in :mod:`lalmbench.scoring.official` names them beside the rule-based ones).

Each takes the judge as an :data:`~lalmbench.scoring.official.AskFn`, so tests run them with the
offline LLM or a fake; :func:`judge_ask` builds the configured judge (greedy, cached). The official
prompts live in resources/prompts/official/, apart from our judge prompts: their replies are read
by :func:`sakura_judgement` and :func:`air_bench_chat_scores`.
"""
from __future__ import annotations

import re

from lalmbench.core.io import InputError
from lalmbench.scoring.official import PROMPT_DIR, AskFn, OfficialItem, _gold_text, _options


def sakura_judgement(reply: str | None) -> str | None:
    """The judge's final ``Judgement:``, lower-cased. llm_judge.py reads the first match of
    ``Explanation: (.*?)\\nJudgement: (.*?)(?:\\n\\n|$)``; an explanation that quotes a candidate
    holding "Judgement: correct" would decide there, so the judgement is read after the *last*
    "\\nJudgement: " (the format puts it at the end), up to a blank line."""
    if reply is None:
        return None
    at = reply.rfind("\nJudgement: ")
    if at < 0 or reply.find("Explanation: ", 0, at) < 0:
        return None
    return reply[at + len("\nJudgement: "):].split("\n\n", 1)[0].lower().strip()


def sakura_judge(items: list[dict], raw: list[str | None], cfg: dict, *, ask: AskFn) -> list[OfficialItem]:
    """SAKURA's LLM judge (evaluation/llm_judge.py prompt, resources/prompts/official/sakura.yaml) and
    calculate_acc.py: a judgement other than "correct"/"incorrect" stays in the denominator as not
    correct. The question is the instruction with its embedded options; the label is "(c) text"."""
    from lalmbench.scoring.judge import MARKER_FLAG, has_verdict_marker, load_prompt

    prompt = load_prompt(cfg.get("prompt", "sakura"), prompt_dir=PROMPT_DIR, verdicts=["sakura_judgement"])
    records = [{"question": _sakura_question(it), "reference": _sakura_label(it), "candidate": r or ""}
               for it, r in zip(items, raw)]
    replies = ask([prompt.render(rec) for rec in records], [str(it.get("id")) for it in items])
    out = []
    for reply, r in zip(replies, raw):
        j = sakura_judgement(reply)
        notes = [] if j in ("correct", "incorrect") else ["invalid judgement"]
        notes += [MARKER_FLAG] if has_verdict_marker(r) else []
        out.append(OfficialItem(float(j == "correct"), pred=j, reason="; ".join(notes) or None))
    return out


def _sakura_question(item: dict) -> str:
    """The instruction as SAKURA's judge sees it: with its options "(a) dog (b) crow ..." embedded
    (kept when the question already has them, appended from the item's options otherwise)."""
    q = str(item.get("question") or "")
    if re.search(r"\(a\)", q, re.IGNORECASE) or not _options(item):
        return q
    return q + " " + " ".join(f"({str(o['label']).lower()}) {o.get('text') or ''}" for o in _options(item))


def _sakura_label(item: dict) -> str:
    """SAKURA's gold string "(c) Claws": the option label in lower case before its text."""
    gold = next((o for o in _options(item) if o.get("label") == item.get("answer_label")), None)
    if gold is None:
        return _gold_text(item)
    return f"({str(gold['label']).lower()}) {gold.get('text') or ''}"


def air_bench_chat_scores(reply: str | None) -> tuple[int, int] | None:
    """(reference score, model score) from a reply "8 6" (cal_score.py: exactly two integers
    separated by one space after newlines are removed; anything else is a failure). Both must be on
    the prompt's 1-10 scale: cal_score.py checks only the upper bound, so "-5 -5" or "8 -100" would
    pass there."""
    if reply is None:
        return None
    parts = reply.strip().replace("\n", "").split(" ")
    if len(parts) != 2:
        return None
    try:
        a, b = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return (a, b) if 1 <= a <= 10 and 1 <= b <= 10 else None


def air_bench_chat_judge(items: list[dict], raw: list[str | None], cfg: dict, *, ask: AskFn) -> list[OfficialItem]:
    """AIR-Bench Chat (score_chat.py prompt, cal_score.py): the judge rates the reference answer
    (assistant 1) and the model's (assistant 2) from 1 to 10 given the audio's text description
    (``meta.meta_info``); replies that are not two integers are left out. The paper rates each pair
    twice, the second time with the two answers swapped (cal_score.py's ``cir`` pass), against the
    judge's position bias: with ``swap`` (default true) the item's score is the mean of the model's
    ratings in the passes whose reply is readable; ``swap: false`` keeps the first pass only. The
    official score_chat.py skips items without a response."""
    from lalmbench.scoring.judge import MARKER_FLAG, has_verdict_marker, load_prompt

    prompt = load_prompt(cfg.get("prompt", "air_bench_chat"), prompt_dir=PROMPT_DIR,
                         verdicts=["air_bench_chat_scores"])
    orders = ((False, True) if cfg.get("swap", True) else (False,))
    out: list[OfficialItem | None] = [None] * len(items)
    asked, rendered, ids = [], [], []
    for i, (it, r) in enumerate(zip(items, raw)):
        if r is None:
            out[i] = OfficialItem(None, reason="no output")
            continue
        meta_info = (it.get("meta") or {}).get("meta_info")
        if meta_info is None:
            raise InputError(f"item {it.get('id')!r}: AIR-Bench Chat's judge needs meta.meta_info (the audio's "
                             f"description)")
        asked.append(i)
        reference = (it.get("references") or [_gold_text(it)])[0]
        for swapped in orders:
            first, second = (r, reference) if swapped else (reference, r)
            rendered.append(prompt.render({"meta_info": meta_info, "question": it.get("question"),
                                           "reference": first, "candidate": second}))
            ids.append(str(it.get("id")) + ("/swapped" if swapped else ""))
    replies = ask(rendered, ids) if asked else []
    for n, i in enumerate(asked):
        passes = replies[n * len(orders):(n + 1) * len(orders)]
        ratings = [s[1 if k == 0 else 0] for k, s in enumerate(map(air_bench_chat_scores, passes)) if s is not None]
        shown = " | ".join(str(p) for p in passes)
        note = MARKER_FLAG if has_verdict_marker(raw[i]) else None
        out[i] = (OfficialItem(sum(ratings) / len(ratings), pred=shown, reason=note) if ratings
                  else OfficialItem(None, pred=shown, reason="judge reply is not two scores"))
    return out  # type: ignore[return-value]


def judge_ask(spec: dict) -> AskFn:
    """The judge entry of ``spec`` (``judge_model`` + ``judge_model_cfg``, filled by the workflow) as
    an :data:`AskFn`: greedy, every reply cached under ``cache_dir`` by (model entry, prompt, item)."""
    import hashlib
    import json

    from lalmbench.scoring.judge import GREEDY, CachedLLM

    if not spec.get("judge_model") or not spec.get("judge_model_cfg"):
        raise InputError(f"official scorer {spec['scorer']!r} needs a judge: set judge_model in the dataset's "
                         f"official: entry or the top-level judge: block")
    llm = CachedLLM(spec["judge_model"], spec["judge_model_cfg"], GREEDY, cache_dir=spec.get("cache_dir"))

    def ask(prompts: list[str], ids: list[str]) -> list[str | None]:
        keys = [hashlib.sha256(json.dumps({"model": llm.cfg, "prompt": p, "id": i, "scorer": spec["scorer"]},
                                          sort_keys=True).encode()).hexdigest() for p, i in zip(prompts, ids)]
        replies = llm.ask_rendered(prompts, ids, keys, task="official-judge")
        return [None if r["error"] else r["raw"] for r in replies]

    return ask


# --- Kimi-Audio-Evalkit: LLM-judged multiple choice (MELD, VocalSound, Nonspeech7k, TUT2017, CochlScene) -----

#: what Kimi-Audio-Evalkit's MQA questions append after their options
KIMI_ANSWER_INSTRUCTION = ".Answer with the option's letter from the given choices directly and only give the best option."


def kimi_audio_verdict(reply: str | None) -> str | None:
    """"yes" / "no" / None (invalid) as base.py's ``collect_acc`` reads a judge reply: its last line,
    lower-cased; any "yes" in it is correct, else any "no" is wrong (so "not sure" and "unknown"
    read as wrong, "no, yes" as correct), else the reply is invalid and left out of the denominator.
    A failed judge call reads as None (the rule scores it 0 and says the script stops there)."""
    if reply is None:
        return None
    last = reply.strip().split("\n")[-1].strip().lower()
    if "yes" in last:
        return "yes"
    if "no" in last:
        return "no"
    return None


def kimi_question(item: dict, cfg: dict) -> str:
    """The question Kimi-Audio-Evalkit's judge is shown: the preset's (its download script's text),
    else the item's question with its options listed the way that script writes them."""
    if cfg.get("question"):
        return str(cfg["question"])
    opts = "".join(f"({o['label']}) {o.get('text') or ''}\n" for o in _options(item))
    return f"{item.get('question') or ''}\nOptions:\n{opts}{KIMI_ANSWER_INSTRUCTION}"


def kimi_audio_judge(items: list[dict], raw: list[str | None], cfg: dict, *, ask: AskFn) -> list[OfficialItem]:
    """Kimi-Audio-Evalkit's MQA scoring (almeval/datasets/ds_mqa.py ``evaluate_llm``, base.py
    ``run_llm_judge`` + ``collect_acc``): the judge prompt (resources/prompts/official/kimi_audio_mqa.yaml)
    with the question and gold answer stripped, the prediction as the results file holds it (a failed
    generation is the text "None", pandas' ``astype(str)`` of a null); accuracy over the replies whose
    last line says yes or no. The script's TUT2017 and CochlScene prompts are never used (it compares
    ``DATASET_NAME`` 'TUT2017' with 'tut2017'), so every preset gets the general prompt, as there."""
    from lalmbench.scoring.judge import MARKER_FLAG, has_verdict_marker, load_prompt

    prompt = load_prompt(cfg.get("prompt", "kimi_audio_mqa"), prompt_dir=PROMPT_DIR, verdicts=["kimi_audio_verdict"])
    records = [{"question": kimi_question(it, cfg).strip(), "reference": _gold_text(it).strip(),
                "candidate": "None" if r is None else r} for it, r in zip(items, raw)]
    replies = ask([prompt.render(rec) for rec in records], [str(it.get("id")) for it in items])
    out = []
    for reply, r in zip(replies, raw):
        if reply is None:
            out.append(OfficialItem(0.0, reason="no judge reply: the script stops here (collect_acc calls .strip() "
                                                "on it)"))
            continue
        v = kimi_audio_verdict(reply)
        note = MARKER_FLAG if has_verdict_marker(r) else None
        out.append(OfficialItem(None if v is None else float(v == "yes"), pred=v,
                                reason=note if v is not None else "judge reply says neither yes nor no"))
    return out
