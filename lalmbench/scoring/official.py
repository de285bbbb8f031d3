"""Each benchmark's own scoring rule, reproduced beside ours (``value_official`` in results/all.tsv).

Why: published numbers are only comparable when scored the way the benchmark's authors scored
them, quirks included (MMAU's token string match credits "dog or cat?" when "cat" is no option's
word; MMSU drops replies it cannot read from the denominator). Our own ``value`` stays the
pipeline's rule parser; this module answers "what would the official script have printed".

A scorer is a pure function ``(items, raw outputs, settings) -> list[OfficialItem]``: per item a
score (1.0/0.0 for right/wrong, a 1-10 rating for AIR-Bench Chat) or ``None`` when the official
script leaves the item out of its denominator, with the reason. :func:`score_official` applies the
registry entry and the aggregate rule (mean over the items kept). Judge-based rules
(``sakura_judge``, ``air_bench_chat_judge``, in :mod:`lalmbench.scoring.official_judge`) and the
embedding rule (``mmau_pro_nearest_choice``) take their model as a callable, so tests run them with
the offline LLM or a fake embedder.
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
from lalmbench.core.stats import explode_lists

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
    stats: tuple | None = None  # sufficient statistics a corpus-level rule sums (WER: distance, length)


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


def _published_choices(item: dict) -> list:
    """The choices as the benchmark's file lists them, which is what its script reads: blank and
    duplicate entries included, in their positions (``item["published"]``, kept by the reader when
    they differ from the options), else the option texts."""
    pub = item.get("published") or {}
    if pub.get("choices") is not None:
        return list(pub["choices"])
    return [str(o.get("text") or "") for o in _options(item)]


def _published_note(item: dict) -> str | None:
    """``official_reason`` for an item the rule read as published where that differs from its options
    (MMAR's blank choice, MMAU's repeated ones), or None."""
    pub = item.get("published") or {}
    if not pub:
        return None
    choices = pub.get("choices") or []
    what = [w for w, hit in (("a blank choice", any(c is None or not str(c).strip() for c in choices)),
                             ("a repeated choice", len({str(c).strip() for c in choices if c is not None
                                                        and str(c).strip()}) <
                              sum(c is not None and bool(str(c).strip()) for c in choices)))
            if hit]
    return "choices as published" + (f" ({', '.join(what)} kept)" if what else "")


def _published_answer(item: dict):
    """The gold answer as the file stores it (exact text, compared as the script compares it)."""
    pub = item.get("published") or {}
    return pub["answer"] if "answer" in pub else _gold_text(item)


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
    scores an empty ``model_output`` (it stops on a JSON null). The choices are the published list:
    MMAR's blank entry ('') is kept, it has no words and so adds none to the wrong choices' words."""
    out = []
    for it, r in zip(items, raw):
        choices = ["" if c is None else str(c) for c in _published_choices(it)]
        out.append(OfficialItem(float(string_match(str(_published_answer(it)), r or "", choices)), pred=r,
                                reason=_published_note(it) if r is not None else "no output: scored as an empty output"))
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


def _choice_text(item: dict, letter: str):
    """What the script's ``choice_a``..``choice_d`` holds at A-D position ``letter`` (None past the
    published choices, as ``record.get('choice_c')`` of a record without one)."""
    pub = _published_choices(item)
    k = _LETTERS.index(letter)
    return pub[k] if k < len(pub) else None


def _unreadable(predict: str) -> bool:
    """An empty reply, or the text "None": both scripts test ``predict != 'None' and predict``."""
    return predict == "None" or not predict


def mmsu_accuracy(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """mmsu_evaluation.py, over the items in the order the script reads the records (the benchmark
    file's order). A reply it cannot read as a letter is skipped (not in the denominator), and so is
    no reply at all (a failed generation, a JSON null: ``None.strip()`` fails and the record is
    skipped). Correct when the text of the chosen choice equals ``answer_gt``, so a duplicate choice
    text is credited at either position.

    The released 2025 script (dingdongwang/MMSU_Bench) never resets its predicted letter between
    records: an empty, whitespace-only or "None" reply is scored with the letter of the last
    readable reply before it, and one that comes before any readable reply stops the script
    (UnboundLocalError; scored 0 here, with that reason). ``carry_letter: false`` follows the 2026
    script (dingdongwang/MMSU), which resets it: such a reply counts, as wrong."""
    carry = bool(cfg.get("carry_letter", True))
    last: str | None = None
    out = []
    for it, r in zip(items, raw):
        if r is None:
            out.append(OfficialItem(None, reason="no output"))
            continue
        predict = r.strip().replace("\n", "")
        if _unreadable(predict):
            if not carry:
                out.append(OfficialItem(0.0, reason="empty output"))
            elif last is None:
                out.append(OfficialItem(0.0, reason="empty output before any readable reply: the script stops "
                                                    "here (UnboundLocalError)"))
            else:
                out.append(OfficialItem(float(_choice_text(it, last) == _published_answer(it)), pred=last,
                                        reason=f"empty output: scored with the letter {last} carried from the "
                                               f"last readable reply"))
            continue
        letter = first_or_penultimate_letter(predict)
        if letter is None:
            out.append(OfficialItem(None, reason="wrong format"))
            continue
        last = letter
        out.append(OfficialItem(float(_choice_text(it, letter) == _published_answer(it)), pred=letter,
                                reason=_published_note(it)))
    return out


def air_bench_foundation(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """score_foundation.py: an empty reply, "None" or one it cannot read as a letter goes to
    ``fail_num`` (left out of every accuracy). The gold letter is the first of choice_a..choice_d
    whose text equals ``answer_gt`` (a duplicate choice text counts at its first position only);
    accuracy is reported per ``task_name_dataset_name`` (our breakdown fields). A record whose
    ``task_name`` is null is skipped."""
    out = []
    for it, r in zip(items, raw):
        if "task_name" in (it.get("meta") or {}) and it["meta"]["task_name"] is None:
            out.append(OfficialItem(None, reason="task_name is None"))
            continue
        predict = (r or "").strip().replace("\n", "")
        if _unreadable(predict):
            out.append(OfficialItem(None, reason="no output"))
            continue
        letter = first_or_penultimate_letter(predict)
        if letter is None:
            out.append(OfficialItem(None, reason="wrong format"))
            continue
        gold = _published_answer(it)
        gt = next((lab for lab in _LETTERS if _choice_text(it, lab) == gold), None)
        if gt is None:
            raise InputError(f"item {it.get('id')!r}: answer {gold!r} is none of choices A-D (the official "
                             f"script stops here)")
        out.append(OfficialItem(float(letter == gt), pred=letter, reason=_published_note(it)))
    return out


# --- MMAU-Pro: nearest choice by sentence embedding ---------------------------------------------------

def mmau_pro_nearest_choice(items: list[dict], raw: list[str | None], cfg: dict, *,
                            embed: EmbedFn) -> list[OfficialItem]:
    """MMAU-Pro's closed-form rule: embed the output and every choice, take the most similar choice
    (cosine; first on ties, as argmax), correct when it is the gold answer. The official embedder is
    NV-Embed-v2; ``embed`` is whatever the run configured (default all-MiniLM-L6-v2: a substitute,
    so the figure is close to, not equal to, the published one). Items with fewer than two choices
    are left out, as the official script filters them. The choices are the published list (a blank
    or duplicate entry is a candidate too) and the match is exact text equality with the answer; a
    failed generation is embedded as the empty text (the script's ``fillna("")``)."""
    out = []
    for it, r in zip(items, raw):
        choices = _published_choices(it)
        if len(choices) < 2:
            out.append(OfficialItem(None, reason="fewer than 2 choices"))
            continue
        emb = np.asarray(embed([r or ""] + [str(c) for c in choices]), dtype=np.float64)
        emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        sims = emb[1:] @ emb[0]
        best = choices[int(np.argmax(sims))]
        out.append(OfficialItem(float(best == _published_answer(it)), pred=str(best), reason=_published_note(it)))
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


# --- Qwen2-Audio: exact label match (MELD, VocalSound) ---------------------------------------------------

def qwen2_audio_exact(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """Qwen2-Audio's eval_audio/evaluate_emotion.py and evaluate_vocal_sound.py: sklearn's
    ``accuracy_score`` of the gold labels against the replies with leading whitespace removed, i.e.
    the reply must *be* the label: same case, nothing after it (a trailing period or newline is
    wrong), no synonyms. A failed generation is the empty reply (the script always decodes text)."""
    return [OfficialItem(float((r or "").lstrip() == str(_published_answer(it))), pred=(r or "").lstrip())
            for it, r in zip(items, raw)]


# --- MMAU-Pro: instruction following ---------------------------------------------------------------

def mmau_pro_instruction(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
    """MMAU-Pro's instruction-following success (evaluate_aif_sample; the same checks as our
    ``instruction`` kind). Where the script differs from ours: an item whose ``task_identifier`` is
    unknown or missing counts as not followed (ours leaves it out), and a failed generation is checked
    as the text "None" (the script's ``str(row.get(...))`` of a null output)."""
    from lalmbench.scoring.metrics.instruction import check_item

    out = []
    for it, r in zip(items, raw):
        ok, why = check_item(it, "None" if r is None else r)
        if ok is None:
            out.append(OfficialItem(0.0, reason=f"{why}: the script counts it as not followed"))
        else:
            out.append(OfficialItem(float(ok), reason=None if r is not None else
                                    "no output: checked as the text 'None'"))
    return out


# --- registry and aggregate ----------------------------------------------------------------------------

def _speech_rule(name: str) -> Callable[..., list[OfficialItem]]:
    """A rule of :mod:`lalmbench.scoring.official_speech` (which builds on this module)."""
    def rule(items: list[dict], raw: list[str | None], cfg: dict) -> list[OfficialItem]:
        from lalmbench.scoring import official_speech

        return getattr(official_speech, name)(items, raw, cfg)

    rule.__name__ = name
    return rule


def _speech_aggregate(name: str) -> Callable[[list[tuple], dict], float]:
    def agg(stats: list[tuple], cfg: dict) -> float:
        from lalmbench.scoring import official_speech

        return getattr(official_speech, name)(stats, cfg)

    return agg


def _judge_rule(name: str) -> Callable[..., list[OfficialItem]]:
    """A rule of :mod:`lalmbench.scoring.official_judge`, imported when first called (that module
    builds on this one)."""
    def rule(items: list[dict], raw: list[str | None], cfg: dict, *, ask: AskFn) -> list[OfficialItem]:
        from lalmbench.scoring import official_judge

        return getattr(official_judge, name)(items, raw, cfg, ask=ask)

    rule.__name__ = name
    return rule


@dataclass(frozen=True)
class Scorer:
    fn: Callable[..., list[OfficialItem]]
    kind: str                  # the task kind it scores: mcq | open | instruction
    needs: str | None = None   # "embed" (a sentence embedder) or "ask" (a judge model)
    metric: str = "accuracy"
    #: a corpus-level value from the kept items' ``stats`` (corpus WER, corpus BLEU); None: the mean score
    aggregate: Callable[[list[tuple], dict], float] | None = None


SCORERS: dict[str, Scorer] = {
    "mmau_string_match": Scorer(mmau_string_match, "mcq"),
    "mmsu_accuracy": Scorer(mmsu_accuracy, "mcq"),
    "air_bench_foundation": Scorer(air_bench_foundation, "mcq"),
    "mmau_pro_nearest_choice": Scorer(mmau_pro_nearest_choice, "mcq", "embed"),
    "mmau_pro_instruction": Scorer(mmau_pro_instruction, "instruction"),
    "clotho_aqa_accuracy": Scorer(clotho_aqa_accuracy, "open"),
    "sakura_judge": Scorer(_judge_rule("sakura_judge"), "mcq", "ask"),
    "air_bench_chat_judge": Scorer(_judge_rule("air_bench_chat_judge"), "open", "ask", "mean_score"),
    "qwen2_audio_wer": Scorer(_speech_rule("qwen2_audio_wer"), "open", None, "wer", _speech_aggregate("wer_aggregate")),
    "kimi_audio_wer": Scorer(_speech_rule("kimi_audio_wer"), "open", None, "wer", _speech_aggregate("wer_aggregate")),
    "qwen2_audio_bleu": Scorer(_speech_rule("qwen2_audio_bleu"), "open", None, "bleu",
                               _speech_aggregate("bleu_aggregate")),
    "qwen2_audio_exact": Scorer(qwen2_audio_exact, "mcq"),
    "kimi_audio_judge": Scorer(_judge_rule("kimi_audio_judge"), "mcq", "ask"),
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


def preset_rules(official: str | dict | list | None, breakdowns: Sequence) -> list[dict]:
    """A preset's ``official:`` (a scorer name, ``{scorer, settings...}`` such as the speech rules'
    ``{scorer: qwen2_audio_wer, language: en}``, or a list of them) as rule entries carrying the
    preset's paper-table breakdown fields unless an entry names its own."""
    entries = official if isinstance(official, list) else [official]
    out = []
    for e in entries:
        if e:
            spec = {"scorer": e} if isinstance(e, str) else dict(e)
            spec.setdefault("breakdown", list(breakdowns))
            out.append(spec)
    return out


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
    aggregate = SCORERS[name].aggregate
    if aggregate is not None:
        per["official_stats"] = pd.Series([r.stats for r in res], dtype=object)
    kept = per["official_score"].dropna()
    excluded = per.loc[per["official_score"].isna(), "official_reason"].fillna("excluded").value_counts()
    value = (aggregate([r.stats for r in res if r.score is not None], spec) if aggregate is not None
             else float(kept.mean()) if len(kept) else math.nan)
    summary = {"official_scorer": name, "official_metric": metric,
               "value_official": value, "n_official": int(len(kept)),
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
        from lalmbench.scoring.official_judge import judge_ask

        ask = judge_ask(spec)
    per, summary = score_official(spec, items, raw, embed=embed, ask=ask)
    out, n_dis = attach(decisions, per)
    summary["n_official_disagree"] = n_dis
    if spec.get("breakdown"):
        summary["official_breakdown"] = list(spec["breakdown"])
        agg = SCORERS[spec["scorer"]].aggregate
        summary["breakdown"] = paper_breakdown(_with_meta(out, items, spec["breakdown"]), spec["breakdown"],
                                               aggregate=(lambda st: agg(st, spec)) if agg else None)
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


def paper_breakdown(decisions: pd.DataFrame, fields: Sequence[str | Sequence[str]], *,
                    aggregate: Callable[[list[tuple]], float] | None = None) -> list[dict]:
    """Ours and the official value per group of each breakdown field, as the paper's table groups
    them (MMAU: category; MMAR: modality, category; SAKURA: [track, hop] crossed). A field is an
    item meta key, or a list of keys crossed; groups keep the source's labels, and a list-valued field
    groups by element (an item with ``["A", "B"]`` counts in A and in B). An item the official
    rule left out counts in ``n`` but not in ``n_official``. ``aggregate``: a corpus-level rule's value
    of a group from its items' ``official_stats`` (corpus WER per speaker), instead of the mean score."""
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
        d = explode_lists(decisions.assign(_ours=ours), cols)
        for key, g in d.groupby([d[c].astype(str) for c in cols], sort=True):
            key = key if isinstance(key, tuple) else (key,)
            off = g["official_score"].dropna()
            if aggregate is not None and len(off):
                value_official = aggregate(list(g.loc[g["official_score"].notna(), "official_stats"]))
            else:
                value_official = float(off.mean()) if len(off) else None
            rows.append({"field": " x ".join(keys), "group": " x ".join(map(str, key)), "n": int(len(g)),
                         "value": float(g["_ours"].mean()) if ours_col and g["_ours"].notna().any() else None,
                         "n_official": int(len(off)), "value_official": value_official})
    return rows
