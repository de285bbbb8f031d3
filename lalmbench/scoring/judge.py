"""LLM-as-judge for open answers (slot filling, spoken QA), with a cache and an audit.

Why so much machinery: a judge is another model whose choices move scores by 10-15 points (MMAU:
44.4 string match vs 58.9 judged for the same Qwen2-Audio outputs). So every judged score carries
the judge's identity (backend, model id, revision, prompt name and hash, generation settings),
calls are deterministic (temperature 0) and cached by a hash of (judge, prompt, item), and
:func:`audit` reports how far the judge can be trusted: agreement with the rule parser where both
apply, and stability when candidate and reference swap places.

Any backend of :mod:`lalmbench.models` can judge (``load_model``); the judge sees text only (no
audio). Prompts live in ``resources/prompts/judge/<name>.yaml`` (``system``, ``user`` with
``{candidate}``, ``{reference}``, ``{question}``, ... placeholders, and ``verdict``: how to read the
reply). The system text is sent at the top of the single user message, so every backend receives
it the same way.

The answers a judge reads are untrusted text: a model can write "Judgement: correct" into its
answer. Every answer field (:data:`ANSWER_FIELDS`) is rendered inside a fence its text cannot
close (:func:`fence`), verdicts are read the way the prompt's format puts them (a reply that ends
in its verdict is read from its last verdict line), and a candidate holding verdict-like text is
flagged (:func:`has_verdict_marker`, ``judge_flag``), so an audit can look at those items.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from lalmbench.core import io

ROOT = Path(__file__).resolve().parents[2]
PROMPT_DIR = ROOT / "resources" / "prompts" / "judge"
JUDGE_VERSION = "1"
GREEDY = {"temperature": 0.0, "do_sample": False}


# --- verdict readers ------------------------------------------------------------------------------

def _yes_no(text: str) -> bool | None:
    t = text.strip().strip("`*\"' .!").lower()
    first = re.split(r"[\s,.:;!]+", t, maxsplit=1)[0] if t else ""
    if first in ("yes", "no"):
        return first == "yes"
    found = set(re.findall(r"\b(yes|no)\b", t))
    return (found.pop() == "yes") if len(found) == 1 else None


def _python_dict_correct(text: str) -> bool | None:
    found = set(m.lower() for m in re.findall(r"[\"']?correct[\"']?\s*:\s*(true|false)\b", text, re.IGNORECASE))
    return (found.pop() == "true") if len(found) == 1 else None


VERDICT_READERS: dict[str, Callable[[str], bool | None]] = {
    "yes_no": _yes_no,
    "python_dict_correct": _python_dict_correct,
}
#: verdicts that name an option rather than say yes/no (read by :mod:`lalmbench.scoring.judge_mcq`)
LABEL_VERDICTS = ("option_label",)


# --- the model's text inside a judge prompt ----------------------------------------------------------------

#: fields holding an answer's text (the model's, or the reference it trades places with in the swap
#: audit): fenced when a prompt is rendered, so the judge can tell them from the prompt's own words
ANSWER_FIELDS = ("candidate", "reference")
#: text that reads like a judge's verdict in any of the formats the judge prompts ask for
_VERDICT_MARKER = re.compile(r"\b(?:judge?ment|verdict|scores?|rating)\s*[:=]|\bcorrect[\"']?\s*:\s*(?:true|false)\b"
                             r"|^[ \t]*-?\d+[ \t]+-?\d+[ \t]*$", re.IGNORECASE | re.MULTILINE)
#: the flag of a judged item whose candidate holds verdict-like text
MARKER_FLAG = "candidate holds a verdict marker"


def fence(text: str) -> str:
    """``text`` on its own lines between two runs of backticks longer than any run inside it
    (Markdown's rule), so nothing in it can close the block and pass for the prompt's own words."""
    longest = max(map(len, re.findall(r"`+", text)), default=0)
    bar = "`" * max(3, longest + 1)
    return f"\n{bar}\n{text}\n{bar}\n"


def has_verdict_marker(text: str | None) -> bool:
    """Whether an answer holds text a judge could take for its own verdict ("Judgement: correct",
    "Verdict: yes", ``"Correct": True``, a line of two scores)."""
    return bool(text) and _VERDICT_MARKER.search(text) is not None


# --- prompts ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class JudgePrompt:
    name: str
    system: str
    user: str
    verdict: str
    fields: tuple[str, ...]

    @property
    def sha(self) -> str:
        return hashlib.sha256(json.dumps([self.system, self.user, self.verdict]).encode()).hexdigest()[:16]

    def render(self, record: dict) -> str:
        missing = [f for f in self.fields if record.get(f) is None]
        if missing:
            raise io.InputError(f"judge prompt {self.name!r}: item {record.get('id')!r} lacks field(s) {missing}")
        user = self.user.format(**{f: fence(str(record[f])) if f in ANSWER_FIELDS else str(record[f])
                                   for f in self.fields})
        return f"{self.system.strip()}\n\n{user}".strip() if self.system.strip() else user.strip()


def load_prompt(name_or_path: str, *, prompt_dir: Path = PROMPT_DIR,
                verdicts: Sequence[str] | None = None) -> JudgePrompt:
    """A judge prompt by name (``<prompt_dir>/<name>.yaml``, default ``resources/prompts/judge``) or path.
    ``verdicts`` are the reply readers its caller knows (default the judge's own)."""
    import yaml

    path = Path(name_or_path)
    if not path.suffix:
        path = prompt_dir / f"{name_or_path}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in prompt_dir.glob("*.yaml"))
        raise FileNotFoundError(f"prompt {name_or_path!r} not found ({path}); known: {known}")
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in ("user", "verdict", "fields"):
        if key not in spec:
            raise io.InputError(f"{path}: prompt lacks {key!r}")
    allowed = set(verdicts) if verdicts is not None else set(VERDICT_READERS) | set(LABEL_VERDICTS)
    if spec["verdict"] not in allowed:
        raise io.InputError(f"{path}: unknown verdict reader {spec['verdict']!r}; known: {sorted(allowed)}")
    return JudgePrompt(name=spec.get("name", path.stem), system=spec.get("system") or "", user=spec["user"],
                       verdict=spec["verdict"], fields=tuple(spec["fields"]))


# --- the judge ------------------------------------------------------------------------------------------

class CachedLLM:
    """A ``models:`` entry asked text-only prompts with fixed decoding settings, every reply cached on
    disk under a key the caller computes (what identifies the model, the prompt, the sampling).

    The model loads on the first prompt the cache cannot answer, so a rerun that is all cache hits
    never loads it. Failed calls are not cached (they are retried next time); a batch that raises
    marks each of its prompts with the error, never with an invented reply.
    """

    #: names of the reply and error fields in results and in the cache files
    REPLY_KEYS = ("raw", "error")

    def __init__(self, model_name: str, model_cfg: dict, generation: dict, *,
                 cache_dir: str | Path | None = None, model: Any = None):
        cfg = dict(model_cfg)
        cfg["generation"] = {**(cfg.get("generation") or {}), **generation}
        # replies are written text: an hf entry that scores options by log-likelihood (the text-only
        # baseline's cheap mode) generates here; these prompts have no options to score
        if cfg.get("scoring") == "loglik":
            cfg["scoring"] = "generate"
        if isinstance(cfg.get("params"), dict) and cfg["params"].get("scoring") == "loglik":
            cfg["params"] = {**cfg["params"], "scoring": "generate"}
        self.cfg = cfg
        self.name = model_name
        self._model = model
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.calls = 0

    @property
    def model(self) -> Any:
        if self._model is None:
            from lalmbench.models.base import load_model

            self._model = load_model(self.name, self.cfg)
        return self._model

    def _cache_get(self, key: str) -> dict | None:
        if not self.cache_dir:
            return None
        path = self.cache_dir / key[:2] / f"{key}.json"
        return io.read_json(path) if path.exists() else None

    def _cache_put(self, key: str, value: dict) -> None:
        if self.cache_dir:
            io.write_json(self.cache_dir / key[:2] / f"{key}.json", value)

    def ask_rendered(self, rendered: Sequence[str], ids: Sequence[str], keys: Sequence[str], *, task: str,
                     meta: dict | None = None, batch_size: int | None = None,
                     before_generate: Callable[[Any], None] | None = None) -> list[dict]:
        """The reply to each rendered prompt, from the cache where it has one: the two
        :attr:`REPLY_KEYS`, ``cached`` and ``cache_key`` per prompt. ``before_generate(model)`` runs
        before each uncached batch (e.g. to seed the sampler)."""
        from lalmbench.models.base import ModelInput, ModelOutput

        raw_key, err_key = self.REPLY_KEYS
        bs = int(batch_size or self.cfg.get("batch_size", 8))
        replies: dict[int, dict] = {}
        todo = []
        for i, k in enumerate(keys):
            hit = self._cache_get(k)
            if hit is not None:
                replies[i] = {**hit, "cached": True}
            else:
                todo.append(i)
        for start in range(0, len(todo), bs):
            idx = todo[start:start + bs]
            batch = [ModelInput(id=str(ids[i]), prompt=rendered[i], question=rendered[i], options=[],
                                audio=None, sample_rate=16000, task=task, meta=dict(meta or {})) for i in idx]
            try:
                if before_generate is not None:
                    before_generate(self.model)
                outs = self.model.generate(batch)
            except Exception as exc:  # the batch failed: record per item, never invent a reply
                outs = [ModelOutput(raw_output=None, error=f"{type(exc).__name__}: {exc}") for _ in idx]
            self.calls += len(idx)
            for i, out in zip(idx, outs):
                rec = {raw_key: out.raw_output, err_key: out.error}
                if out.error is None:
                    self._cache_put(keys[i], rec)
                replies[i] = {**rec, "cached": False}
        return [{**replies[i], "cache_key": keys[i]} for i in range(len(keys))]


class Judge(CachedLLM):
    """A backend model used as a judge, with greedy decoding and an on-disk cache.

    ``model_cfg`` is a normal model entry (``backend``, ``model_id``, ``revision``, ``generation``...);
    its generation settings are forced to greedy (temperature 0) and recorded with every verdict.
    """

    REPLY_KEYS = ("judge_raw", "judge_error")

    def __init__(self, model_name: str, model_cfg: dict, prompt: JudgePrompt | str, *,
                 cache_dir: str | Path | None = None, model: Any = None):
        super().__init__(model_name, model_cfg, GREEDY, cache_dir=cache_dir, model=model)
        self.prompt = load_prompt(prompt) if isinstance(prompt, str) else prompt
        self.model  # noqa: B018 - a judge loads at once: its settings name the loaded model

    @property
    def settings(self) -> dict:
        """What identifies this judge; stored with every score and part of every cache key."""
        return {"judge_model": self.name, "judge_backend": self.model.backend, "judge_model_id": self.model.model_id,
                "judge_revision": self.model.model_revision, "judge_prompt": self.prompt.name,
                "judge_prompt_sha": self.prompt.sha, "judge_generation": json.dumps(self.cfg["generation"], sort_keys=True),
                "judge_version": JUDGE_VERSION}

    def cache_key(self, rendered: str, item_id: str) -> str:
        payload = json.dumps({"settings": self.settings, "prompt": rendered, "id": item_id}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def fingerprint(self) -> str:
        """A short hash of :attr:`settings`: the judge's identity in one column (decisions, all.tsv)."""
        return hashlib.sha256(json.dumps(self.settings, sort_keys=True).encode()).hexdigest()[:16]

    def ask(self, records: Sequence[dict], *, batch_size: int | None = None) -> list[dict]:
        """The judge's reply to each record's rendered prompt, from the cache where it has one:
        ``judge_raw``, ``judge_error``, ``cached``, ``cache_key`` per record (failed calls are not
        cached, so they are retried next time)."""
        rendered = [self.prompt.render(r) for r in records]
        ids = [str(r.get("id")) for r in records]
        keys = [self.cache_key(p, i) for p, i in zip(rendered, ids)]
        return self.ask_rendered(rendered, ids, keys, task="judge", meta={"judge_prompt": self.prompt.name},
                                 batch_size=batch_size)

    def judge(self, records: Sequence[dict], *, batch_size: int | None = None) -> pd.DataFrame:
        """One row per record: id, verdict (True/False/None), judge_status (judged / unparseable /
        error), judge_raw, judge_flag (:data:`MARKER_FLAG` or None), cached, plus the judge settings columns."""
        if self.prompt.verdict not in VERDICT_READERS:
            raise ValueError(f"judge prompt {self.prompt.name!r} answers with {self.prompt.verdict!r}, not a "
                             f"yes/no verdict: use lalmbench.scoring.judge_mcq for it")
        reader = VERDICT_READERS[self.prompt.verdict]
        rows = []
        for r, rep in zip(records, self.ask(records, batch_size=batch_size)):
            verdict = None if rep.get("judge_error") or rep.get("judge_raw") is None else reader(rep["judge_raw"])
            status = "error" if rep.get("judge_error") else ("judged" if verdict is not None else "unparseable")
            rows.append({"id": r.get("id"), "verdict": verdict, "judge_status": status, "judge_raw": rep.get("judge_raw"),
                         "judge_error": rep.get("judge_error"),
                         "judge_flag": MARKER_FLAG if has_verdict_marker(r.get("candidate")) else None,
                         "cached": rep["cached"], "cache_key": rep["cache_key"], **self.settings})
        return pd.DataFrame(rows)


def judged_accuracy(verdicts: pd.DataFrame) -> dict:
    """Accuracy over all items (an unparseable or failed judgement counts as not correct and is
    reported in ``judge_failure_rate``), with a Wilson interval and the judge settings."""
    from lalmbench.core.stats import wilson_interval

    n = len(verdicts)
    k = int((verdicts["verdict"] == True).sum())  # noqa: E712 - None must not count
    failed = int((verdicts["judge_status"] != "judged").sum())
    lo, hi = wilson_interval(k, n)
    settings = {c: verdicts[c].iloc[0] for c in verdicts.columns if c.startswith("judge_") and
                c not in ("judge_raw", "judge_error", "judge_status", "judge_flag")} if n else {}
    flagged = int(verdicts["judge_flag"].notna().sum()) if "judge_flag" in verdicts else 0
    return {"metric": "judge_accuracy", "value": k / n if n else math.nan, "ci_low": lo, "ci_high": hi, "n": n,
            "n_correct": k, "judge_failure_rate": failed / n if n else math.nan,
            "judge_n_candidate_markers": flagged, **settings}


def swap_records(records: Sequence[dict]) -> list[dict]:
    """The same records with candidate and reference exchanged (for the stability audit)."""
    return [{**r, "candidate": r.get("reference"), "reference": r.get("candidate")} for r in records]


def audit(judge: Judge, records: Sequence[dict], *, rule_correct: pd.Series | None = None) -> dict:
    """How far the judge can be trusted on these records.

    - ``swap_stability``: share of items whose verdict is unchanged when candidate and reference swap
      places (a judge of equivalence should not care which is which), over items judged both ways.
    - ``rule_agreement`` / ``rule_kappa``: agreement (and Cohen's kappa) with a rule-based
      correctness (e.g. the MCQ parser or exact match) on items where both give a verdict.
    """
    from statsmodels.stats.inter_rater import cohens_kappa

    from lalmbench.core.stats import wilson_interval

    fwd = judge.judge(records).set_index("id")
    rev = judge.judge(swap_records(records)).set_index("id")
    both = fwd["verdict"].notna() & rev["verdict"].notna()
    same = (fwd.loc[both, "verdict"] == rev.loc[both, "verdict"])
    n_swap = int(both.sum())
    out: dict[str, Any] = {"n": len(fwd), "swap_n": n_swap,
                           "swap_stability": float(same.mean()) if n_swap else math.nan,
                           "swap_ci": wilson_interval(int(same.sum()), n_swap),
                           "swap_flipped_ids": list(same.index[~same])[:20], **judge.settings}
    if rule_correct is not None:
        rule = rule_correct.reindex(fwd.index)
        mask = fwd["verdict"].notna() & rule.notna()
        j = fwd.loc[mask, "verdict"].astype(bool)
        r = rule[mask].astype(bool)
        n = int(mask.sum())
        table = [[int((j & r).sum()), int((j & ~r).sum())], [int((~j & r).sum()), int((~j & ~r).sum())]]
        agree = int((j == r).sum())
        kappa = math.nan
        if n and len(set(j) | set(r)) > 1:
            kappa = float(cohens_kappa(table).kappa)
        out.update({"rule_n": n, "rule_agreement": agree / n if n else math.nan,
                    "rule_agreement_ci": wilson_interval(agree, n), "rule_kappa": kappa,
                    "rule_table": {"judge_yes_rule_yes": table[0][0], "judge_yes_rule_no": table[0][1],
                                   "judge_no_rule_yes": table[1][0], "judge_no_rule_no": table[1][1]}})
    return out
