"""Each benchmark's own scoring rule, reproduced beside ours (``value_official`` in results/all.tsv).

Why: published numbers are only comparable when scored the way the benchmark's authors scored
them, quirks included (MMAU's token string match credits "dog or cat?" when "cat" is no option's
word; MMSU drops replies it cannot read from the denominator). Our own ``value`` stays the
pipeline's rule parser; this module answers "what would the official script have printed".

A scorer is a pure function ``(items, raw outputs, settings) -> list[OfficialItem]``: per item a
score (1.0/0.0 for right/wrong, a 1-10 rating for AIR-Bench Chat) or ``None`` when the official
script leaves the item out of its denominator, with the reason. :func:`score_official` applies the
registry entry and the aggregate rule (mean over the items kept). Judge-based rules
(``sakura_judge``, ``air_bench_chat_judge``) and the embedding rule (``mmau_pro_nearest_choice``)
take their model as a callable, so tests run them with the offline LLM or a fake embedder.
Which scorer a dataset uses is its preset's ``official:`` (docs/scoring-official.md).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from lalmbench.core.io import InputError

ROOT = Path(__file__).resolve().parents[2]
#: the official judge prompts (kept apart from our judge prompts: their replies are read differently)
PROMPT_DIR = ROOT / "resources" / "prompts" / "official"

#: a text-only model asked a list of prompts -> its replies (None where the call failed)
AskFn = Callable[[list[str], list[str]], list[str | None]]
#: texts -> L2-normalised embeddings (one row per text)
EmbedFn = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class OfficialItem:
    score: float | None       # None: the official script leaves the item out of its denominator
    pred: str | None = None   # what the rule read (a letter, a matched option text, a judgement)
    reason: str | None = None  # why it was excluded, or a note on how it was read


def _options(item: dict) -> list[dict]:
    return list(item.get("options") or [])


def _gold_text(item: dict) -> str:
    """The gold answer as the benchmark stores it (option text for MCQ)."""
    if item.get("answer_text") not in (None, ""):
        return str(item["answer_text"])
    gold = next((o for o in _options(item) if o.get("label") == item.get("answer_label")), None)
    if gold is None:
        raise InputError(f"item {item.get('id')!r}: no answer_text and no option labelled "
                         f"{item.get('answer_label')!r}: the official rule needs the gold answer")
    return str(gold.get("text") or "")


# --- MMAU / MMAR: token string match --------------------------------------------------------------------

def _tokens(text: str) -> set[str]:
    return set(re.findall(r"\b\w+\b", text.lower()))


def string_match(answer: str, prediction: str, choices: Sequence[str]) -> bool:
    """MMAU's and MMAR's ``string_match`` (evaluation.py): every word of the answer is in the
    output and no word that only a wrong choice has. Word sets, not order: "not a dog" with the
    answer "dog" is credited, and so is an output that names the answer among unlisted words."""
    pred = _tokens(prediction)
    ans = _tokens(answer)
    if not pred:
        return False
    wrong: set[str] = set()
    for c in choices:
        ct = _tokens(c)
        if ct != ans:
            wrong |= ct - ans
    return ans <= pred and pred.isdisjoint(wrong)


def mmau_string_match(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """A failed generation (no output) scores as an empty output: wrong, as the official script
    scores an empty ``model_output``."""
    out = []
    for it, r in zip(items, raw):
        choices = [str(o.get("text") or "") for o in _options(it)]
        out.append(OfficialItem(float(string_match(_gold_text(it), r or "", choices)), pred=r))
    return out


# --- MMSU / AIR-Bench Foundation: first letter, else the second-to-last character ----------------------

_LETTERS = ("A", "B", "C", "D")


def first_or_penultimate_letter(response: str) -> str | None:
    """The letter MMSU's and AIR-Bench's scripts read: the reply (stripped, newlines removed) starts
    with A-D, or its second-to-last character is one ("The answer is A."). "As heard..." reads
    as A; "(B)" reads as B only through its second-to-last character."""
    predict = response.strip().replace("\n", "")
    if predict and predict[0] in _LETTERS:
        return predict[0]
    if len(predict) > 1 and predict[-2] in _LETTERS:
        return predict[-2]
    return None


def _choice_text(item: dict, letter: str) -> str | None:
    """The text of the option at A-D position ``letter`` (the benchmark's choice_a..choice_d)."""
    opts = _options(item)
    k = _LETTERS.index(letter)
    return str(opts[k].get("text") or "") if k < len(opts) else None


def mmsu_accuracy(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """mmsu_evaluation.py: a reply it cannot read as a letter is skipped (not in the denominator);
    an empty reply or the text "None" counts, as wrong; no reply at all (failed generation) is
    skipped. Correct when the chosen choice's text equals ``answer_gt``."""
    out = []
    for it, r in zip(items, raw):
        if r is None:
            out.append(OfficialItem(None, reason="no output"))
            continue
        predict = r.strip().replace("\n", "")
        if predict == "None" or not predict:
            out.append(OfficialItem(0.0, pred=None, reason="empty output"))
            continue
        letter = first_or_penultimate_letter(r)
        if letter is None:
            out.append(OfficialItem(None, reason="wrong format"))
            continue
        out.append(OfficialItem(float(_choice_text(it, letter) == _gold_text(it)), pred=letter))
    return out


def air_bench_foundation(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """score_foundation.py: an empty reply, "None" or one it cannot read as a letter goes to
    ``fail_num`` (left out of every accuracy). The gold letter is the first choice whose text equals
    ``answer_gt``; accuracy is reported per ``task_name_dataset_name`` (our breakdown fields)."""
    out = []
    for it, r in zip(items, raw):
        predict = (r or "").strip().replace("\n", "")
        if predict == "None" or not predict:
            out.append(OfficialItem(None, reason="no output"))
            continue
        letter = first_or_penultimate_letter(predict)
        if letter is None:
            out.append(OfficialItem(None, reason="wrong format"))
            continue
        gold = _gold_text(it)
        gt = next((lab for lab in _LETTERS if _choice_text(it, lab) == gold), None)
        if gt is None:
            raise InputError(f"item {it.get('id')!r}: answer {gold!r} is none of choices A-D (the official "
                             f"script stops here)")
        out.append(OfficialItem(float(letter == gt), pred=letter))
    return out


# --- MMAU-Pro: nearest choice by sentence embedding ---------------------------------------------------

def mmau_pro_nearest_choice(items: list[dict], raw: list[str | None], cfg: dict, *,
                            embed: EmbedFn) -> list[OfficialItem]:
    """MMAU-Pro's closed-form rule: embed the output and every choice, take the most similar choice
    (cosine; first on ties, as argmax), correct when it is the gold answer. The official embedder is
    NV-Embed-v2; ``embed`` is whatever the run configured (default all-MiniLM-L6-v2: a substitute,
    so the figure is close to, not equal to, the published one). Items with fewer than two choices
    are left out, as the official script filters them."""
    out = []
    for it, r in zip(items, raw):
        choices = [str(o.get("text") or "") for o in _options(it)]
        if len(choices) < 2:
            out.append(OfficialItem(None, reason="fewer than 2 choices"))
            continue
        emb = np.asarray(embed([r or ""] + choices), dtype=np.float64)
        emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        sims = emb[1:] @ emb[0]
        best = choices[int(np.argmax(sims))]
        out.append(OfficialItem(float(best == _gold_text(it)), pred=best))
    return out


# --- Clotho-AQA ------------------------------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def clotho_aqa_accuracy(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """Clotho-AQA's accuracy (the paper scores yes/no questions as binary accuracy and the others
    as top-1 answer accuracy; it ships no script for generative models): a yes/no item is read from
    the first "yes"/"no" word of the output; any other item is correct when the normalised output
    (lower case, words only) equals a normalised reference."""
    out = []
    for it, r in zip(items, raw):
        refs = [str(x) for x in (it.get("references") or [it.get("answer_text")]) if x not in (None, "")]
        if not refs:
            raise InputError(f"item {it.get('id')!r}: Clotho-AQA scoring needs a reference answer")
        got = _norm(r or "")
        if {_norm(x) for x in refs} <= {"yes", "no"}:
            first = next((w for w in got.split() if w in ("yes", "no")), None)
            out.append(OfficialItem(float(first is not None and first == _norm(refs[0])), pred=first))
        else:
            out.append(OfficialItem(float(got in {_norm(x) for x in refs}), pred=got))
    return out


# --- judge-based rules ---------------------------------------------------------------------------------

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


# --- registry and aggregate ----------------------------------------------------------------------------

def mmau_pro_instruction(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """MMAU-Pro's instruction-following success (the same checks as our ``instruction`` kind, which
    reimplements them); an item whose check is unknown is left out, as ours does."""
    from lalmbench.scoring.metrics.instruction import check_item

    return [OfficialItem(None if ok is None else float(ok), reason=why)
            for ok, why in (check_item(it, r) for it, r in zip(items, raw))]


@dataclass(frozen=True)
class Scorer:
    fn: Callable[..., list[OfficialItem]]
    kind: str                  # the task kind it scores: mcq | open | instruction
    needs: str | None = None   # "embed" (a sentence embedder) or "ask" (a judge model)
    metric: str = "accuracy"


SCORERS: dict[str, Scorer] = {
    "mmau_string_match": Scorer(mmau_string_match, "mcq"),
    "mmsu_accuracy": Scorer(mmsu_accuracy, "mcq"),
    "air_bench_foundation": Scorer(air_bench_foundation, "mcq"),
    "mmau_pro_nearest_choice": Scorer(mmau_pro_nearest_choice, "mcq", "embed"),
    "mmau_pro_instruction": Scorer(mmau_pro_instruction, "instruction"),
    "clotho_aqa_accuracy": Scorer(clotho_aqa_accuracy, "open"),
    "sakura_judge": Scorer(sakura_judge, "mcq", "ask"),
    "air_bench_chat_judge": Scorer(air_bench_chat_judge, "open", "ask", "mean_score"),
}


def check_scorer(name: str) -> None:
    if name not in SCORERS:
        import difflib

        close = difflib.get_close_matches(name, SCORERS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InputError(f"unknown official scorer {name!r}{hint}; known: {', '.join(sorted(SCORERS))}")


def official_spec(official: str | dict | None) -> dict | None:
    """A preset's ``official:`` (a scorer name, or ``{scorer, breakdown, ...}``) as a dict, or None."""
    if not official:
        return None
    spec = {"scorer": official} if isinstance(official, str) else dict(official)
    check_scorer(spec.get("scorer", ""))
    spec.setdefault("breakdown", [])
    return spec


def spec_for_task(official: str | dict | list | None, task_kind: str) -> dict | None:
    """The official rule of a dataset that applies to one of its tasks. A dataset's ``official:`` is
    one scorer or a list (MMAU-Pro: nearest choice for its MCQ task, the instruction checks for its
    instruction task); each scorer scores one task kind (``mcq``, ``instruction``, ``open`` for every
    other open-ended kind), so a task gets the one of its kind or none."""
    specs = [official_spec(o) for o in (official if isinstance(official, list) else [official]) if o]
    kind = task_kind if task_kind in ("mcq", "instruction") else "open"
    fits = [s for s in specs if s is not None and SCORERS[s["scorer"]].kind == kind]
    if len(fits) > 1:
        raise InputError(f"official: {[s['scorer'] for s in fits]} all score {kind} tasks; keep one")
    return fits[0] if fits else None


def score_official(spec: dict, items: list[dict], raw: list[str | None], *, embed: EmbedFn | None = None,
                   ask: AskFn | None = None) -> tuple[pd.DataFrame, dict]:
    """(per item: id, official_score, official_pred, official_reason; the summary for metrics.json:
    ``value_official`` = mean score over the items the rule keeps, ``n_official``, the exclusions by
    reason and the scorer's notes)."""
    name = spec["scorer"]
    check_scorer(name)
    fn, needs, metric = SCORERS[name].fn, SCORERS[name].needs, SCORERS[name].metric
    if len(items) != len(raw):
        raise ValueError(f"{len(items)} items but {len(raw)} outputs")
    kw = {}
    if needs == "embed":
        if embed is None:
            raise ValueError(f"official scorer {name!r} needs a sentence embedder")
        kw["embed"] = embed
    elif needs == "ask":
        if ask is None:
            raise ValueError(f"official scorer {name!r} needs a judge model (the config's judge entry)")
        kw["ask"] = ask
    res = fn(items, raw, spec, **kw)
    per = pd.DataFrame({"id": [it["id"] for it in items],
                        "official_score": pd.Series([r.score for r in res], dtype="float64"),
                        "official_pred": pd.Series([r.pred for r in res], dtype=object),
                        "official_reason": pd.Series([r.reason for r in res], dtype=object)})
    kept = per["official_score"].dropna()
    excluded = per.loc[per["official_score"].isna(), "official_reason"].fillna("excluded").value_counts()
    summary = {"official_scorer": name, "official_metric": metric,
               "value_official": float(kept.mean()) if len(kept) else math.nan, "n_official": int(len(kept)),
               "official_excluded": {str(k): int(v) for k, v in sorted(excluded.items())}}
    if name == "mmau_pro_nearest_choice":
        summary["official_embedder"] = spec.get("embedder", "all-MiniLM-L6-v2")
        summary["official_note"] = ("nearest choice by " + summary["official_embedder"]
                                    + " (the official script uses nvidia/NV-Embed-v2)")
    return per, summary


#: the decisions column that holds our own per-item verdict, by scoring path
OURS_COLUMNS = ("correct", "verdict", "followed")


def attach(decisions: pd.DataFrame, per: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Decisions with the official columns and ``official_disagrees`` (ours says right, the official
    rule wrong, or the reverse; false where either has no verdict), and the disagreement count."""
    out = decisions.merge(per, on="id", how="left", validate="one_to_one")
    ours_col = next((c for c in OURS_COLUMNS if c in out.columns), None)
    if ours_col is None:
        out["official_disagrees"] = False
        return out, 0
    ours = out[ours_col].map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v))
    official_ok = out["official_score"].map(lambda v: None if math.isnan(v) else v >= 1.0)
    both = ours.notna() & official_ok.notna()
    out["official_disagrees"] = both & (ours != official_ok)
    return out, int(out["official_disagrees"].sum())


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


def run_official(spec: dict, items: list[dict], decisions: pd.DataFrame, *, embed: EmbedFn | None = None,
                 ask: AskFn | None = None) -> tuple[pd.DataFrame, dict]:
    """Score a run's decisions (``raw_output``, ``error`` per item) by the official rule: the
    decisions with the official columns, and the metrics.json fields. The embedder or judge a rule
    needs is loaded here from ``spec`` unless given."""
    by_id = decisions.set_index(decisions["id"].astype(str))
    raw = []
    for it in items:
        row = by_id.loc[str(it["id"])]
        err = row.get("error")
        failed = err is not None and not (isinstance(err, float) and math.isnan(err)) and err != ""
        r = row.get("raw_output")
        raw.append(None if failed or r is None or (isinstance(r, float) and math.isnan(r)) else str(r))
    needs = SCORERS[spec["scorer"]].needs
    if needs == "embed" and embed is None:
        from lalmbench.models.sentence_encoder import load_encoder

        embed, _ = load_encoder(spec.get("embedder"))
    if needs == "ask" and ask is None:
        ask = judge_ask(spec)
    per, summary = score_official(spec, items, raw, embed=embed, ask=ask)
    out, n_dis = attach(decisions, per)
    summary["n_official_disagree"] = n_dis
    if spec.get("breakdown"):
        summary["official_breakdown"] = list(spec["breakdown"])
        summary["breakdown"] = paper_breakdown(_with_meta(out, items, spec["breakdown"]), spec["breakdown"])
    return out, summary


def _with_meta(decisions: pd.DataFrame, items: list[dict], fields: Sequence[str | Sequence[str]]) -> pd.DataFrame:
    """Decisions with a ``meta_<key>`` column for every breakdown key they lack (open-ended
    decisions carry no meta), taken from the items by id."""
    keys = {k for f in fields for k in ([f] if isinstance(f, str) else f)}
    meta = {str(it["id"]): it.get("meta") or {} for it in items}
    ids = decisions["id"].astype(str)
    add = {f"meta_{k}": ids.map(lambda i, k=k: meta.get(i, {}).get(k)) for k in sorted(keys)
           if f"meta_{k}" not in decisions.columns}
    return decisions.assign(**add) if add else decisions


def paper_breakdown(decisions: pd.DataFrame, fields: Sequence[str | Sequence[str]]) -> list[dict]:
    """Ours and the official value per group of each breakdown field, as the paper's table groups
    them (MMAU: category; MMAR: modality, category; SAKURA: [track, hop] crossed). A field is an
    item meta key, or a list of keys crossed; groups keep the source's labels. An item the official
    rule left out counts in ``n`` but not in ``n_official``."""
    ours_col = next((c for c in OURS_COLUMNS if c in decisions.columns), None)
    rows = []
    for f in fields:
        keys = [f] if isinstance(f, str) else list(f)
        cols = [f"meta_{k}" for k in keys]
        if any(c not in decisions.columns for c in cols):
            rows.append({"field": " x ".join(keys), "group": None, "missing": True})
            continue
        ours = decisions[ours_col].astype(float) if ours_col else pd.Series(math.nan, index=decisions.index)
        if ours_col == "verdict":  # a failed judgement counts as not correct in our judged value
            ours = ours.fillna(0.0)
        d = decisions.assign(_ours=ours)
        for key, g in d.groupby([d[c].astype(str) for c in cols], sort=True):
            key = key if isinstance(key, tuple) else (key,)
            off = g["official_score"].dropna()
            rows.append({"field": " x ".join(keys), "group": " x ".join(map(str, key)), "n": int(len(g)),
                         "value": float(g["_ours"].mean()) if ours_col and g["_ours"].notna().any() else None,
                         "n_official": int(len(off)), "value_official": float(off.mean()) if len(off) else None})
    return rows
