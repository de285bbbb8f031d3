"""Parser agreement with a careful grader, side by side on the two graded corpora, and on the real
TACoBeLAL reference outputs:

- collected: real outputs released in public repositories (tests/data/parse/collected/, sources in
  its README), 650 of them graded blind (labels.jsonl); per source system;
- written: the frozen grader corpus written beside the parser (tests/data/parse/grader_corpus.jsonl);
  per style;
- TACoBeLAL: tests/data/parse/tacobelal_cases.jsonl, made from
  ../shared/reference-data/tacobelal/*/*/{raw_model_outputs,decisions}.jsonl.

    PYTHONPATH=$PWD python bench/parser_agreement.py

Per group: agreement with the grader, wrong labels (the parser picks another option than the
grader), missed (the grader has an option, the parser none), over-read (the grader none, the parser
an option), the read rate of final-sentence conclusions (outputs whose last sentence names exactly
one option's text and which the grader labels), the unparseable rate (failures only: non-answers
apart) and the non-answers; then each corpus by the parser's class (its status, non-answers by class).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lalmbench.scoring.parse import PARSER_VERSION, parse_answer

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "parse"
COLLECTED = DATA / "collected"


@dataclass
class Tally:
    """Counts of one group of graded outputs."""

    n: int = 0
    agree: int = 0
    wrong: int = 0
    missed: int = 0
    over: int = 0
    conclusions: int = 0
    conclusions_read: int = 0
    unparseable: int = 0
    non_answer: int = 0
    classes: Counter = field(default_factory=Counter)
    agree_by_class: Counter = field(default_factory=Counter)

    def add(self, row: dict) -> None:
        res = parse_answer(row["raw"], row["options"], labels_shown=row["labels_shown"], question=row.get("question"))
        ok = res.label == row["label"]
        klass = res.reason.split(" (")[0] if res.status == "non-answer" else res.status
        self.n += 1
        self.agree += ok
        self.wrong += res.label is not None and row["label"] is not None and not ok
        self.missed += res.label is None and row["label"] is not None
        self.over += res.label is not None and row["label"] is None
        self.unparseable += res.status == "unparseable"
        self.non_answer += res.status == "non-answer"
        self.classes[klass] += 1
        self.agree_by_class[klass] += ok
        if row["label"] is not None and final_sentence_names_one(row["raw"], row["options"]):
            self.conclusions += 1
            self.conclusions_read += ok

    def update(self, other: "Tally") -> None:
        for k in ("n", "agree", "wrong", "missed", "over", "conclusions", "conclusions_read", "unparseable",
                  "non_answer"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.classes.update(other.classes)
        self.agree_by_class.update(other.agree_by_class)

    @property
    def agreement(self) -> float:
        return self.agree / self.n

    @property
    def conclusion_rate(self) -> float:
        return self.conclusions_read / self.conclusions if self.conclusions else 1.0

    @property
    def unparseable_rate(self) -> float:
        return self.unparseable / self.n

    def row(self, corpus: str, group: str) -> str:
        return (f"| {corpus} | {group} | {self.n} | {self.agree} ({self.agreement:.1%}) | {self.wrong} | {self.missed} "
                f"| {self.over} | {self.conclusions_read}/{self.conclusions} | {self.unparseable} "
                f"({self.unparseable_rate:.1%}) | {self.non_answer} |")


def final_sentence_names_one(raw: str, options: list[dict]) -> bool:
    """Independent of the parser: the last non-empty sentence contains exactly one option text."""
    text = re.sub(r"<[^>]{1,12}>", " ", raw).strip()
    last = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    if not last:
        return False
    low = last[-1].casefold()
    return sum(bool(re.search(rf"(?<!\w){re.escape(o['text'].casefold())}(?!\w)", low))
               for o in options if len(o["text"]) > 2) == 1


#: the grading rounds of the collected corpus: ``labels.jsonl`` (650, graded before any rule change),
#: then samples graded after the rules of each round, before the next (they found what it fixed);
#: round 5 (300 outputs of four systems added for it, graded before the 2.3 rules) and round 6 (100
#: more of them, graded after); round 7 (120 MMAU-Pro outputs of one model on real audio and on white
#: noise, graded before the rules they called for) and round 8 (60 more of them, graded after)
ROUNDS = ("labels.jsonl", "labels_round2.jsonl", "labels_round3.jsonl", "labels_round5.jsonl",
          "labels_round6.jsonl", "labels_round7.jsonl", "labels_round8.jsonl", "labels_round9.jsonl",
          "labels_round10.jsonl", "labels_round11.jsonl", "labels_round12.jsonl",
          "labels_round13.jsonl", "labels_round13_new.jsonl", "labels_round14.jsonl", "labels_round15.jsonl",
          "labels_round16.jsonl", "labels_round17.jsonl", "labels_round18.jsonl", "labels_round19.jsonl",
          "labels_round20.jsonl", "labels_round21.jsonl", "labels_round22.jsonl", "labels_round23.jsonl",
          "labels_round24.jsonl", "labels_round25.jsonl", "labels_round26.jsonl",
          "labels_round27.jsonl", "labels_round28.jsonl", "labels_round29.jsonl")


def collected_rows(labels: str = "labels.jsonl") -> list[dict]:
    """The blind-graded collected outputs of one grading round: each source record with the grader's
    ``label``."""
    outputs = {}
    for path in sorted(COLLECTED.glob("*.jsonl")):
        if not path.name.startswith("labels"):
            for line in path.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                outputs[rec["case"]] = rec
    graded = [json.loads(line) for line in (COLLECTED / labels).read_text(encoding="utf-8").splitlines()]
    return [{**outputs[g["case"]], "label": g["label"]} for g in graded]


def tally(rows: list[dict], key: str) -> dict[str, Tally]:
    """One :class:`Tally` per value of ``row[key]``."""
    out: dict[str, Tally] = {}
    for r in rows:
        out.setdefault(r[key], Tally()).add(r)
    return out


def total(groups: dict[str, Tally]) -> Tally:
    t = Tally()
    for g in groups.values():
        t.update(g)
    return t


def graded_corpora() -> None:
    collected = tally(collected_rows(), "system")
    written_rows = [json.loads(line) for line in (DATA / "grader_corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    written = tally(written_rows, "style")
    c_all, w_all = total(collected), total(written)
    print(f"parser {PARSER_VERSION}: a careful grader's labels, collected (real released outputs, graded blind) "
          "and written (beside the parser)\n")
    print("| measure | collected | written |\n|---|---:|---:|")
    print(f"| outputs graded | {c_all.n} | {w_all.n} |")
    print(f"| agreement | {c_all.agreement:.2%} | {w_all.agreement:.2%} |")
    print(f"| wrong labels | {c_all.wrong} | {w_all.wrong} |")
    print(f"| missed / over-read | {c_all.missed} / {c_all.over} | {w_all.missed} / {w_all.over} |")
    print(f"| final-sentence conclusions read | {c_all.conclusions_read}/{c_all.conclusions} = {c_all.conclusion_rate:.1%} "
          f"| {w_all.conclusions_read}/{w_all.conclusions} = {w_all.conclusion_rate:.1%} |")
    print(f"| unparseable (non-answers apart) | {c_all.unparseable_rate:.1%} | {w_all.unparseable_rate:.1%} |")
    print(f"| non-answers | {c_all.non_answer} | {w_all.non_answer} |")
    print("\n| corpus | system / style | n | agree | wrong | missed | over-read | conclusions read | unparseable "
          "| non-answers |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, groups, everything in (("collected", collected, c_all), ("written", written, w_all)):
        for g in sorted(groups):
            print(groups[g].row(name, g))
        print(everything.row(f"**{name}**", "**all**"))
    print("\n| corpus | grading round | n | agree | wrong | missed | over-read | conclusions read | unparseable "
          "| non-answers |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for labels in ROUNDS:
        print(total(tally(collected_rows(labels), "system")).row("collected", labels))
    print("\n| parser class | collected n | agree | written n | agree |\n|---|---:|---:|---:|---:|")
    for c in sorted(set(c_all.classes) | set(w_all.classes)):
        print(f"| {c} | {c_all.classes[c]} | {c_all.agree_by_class[c]} | {w_all.classes[c]} | {w_all.agree_by_class[c]} |")


def reference_outputs() -> None:
    rows = [json.loads(line) for line in (DATA / "tacobelal_cases.jsonl").read_text(encoding="utf-8").splitlines()]
    agree_ref = agree_exp = unparse = non = 0
    classes = Counter()
    for r in rows:
        res = parse_answer(r["raw"], r["options"])
        agree_ref += res.label == r["reference_label"]
        agree_exp += res.label == r["expected_label"]
        unparse += res.status == "unparseable"
        non += res.status == "non-answer"
        classes[res.reason.split(" (")[0] if res.status == "non-answer" else res.status] += 1
    t = len(rows)
    print(f"\nTACoBeLAL reference outputs: {t}; agreement with TACoBeLAL's parser {agree_ref}/{t} = {agree_ref / t:.4f}; "
          f"with the hand-checked labels {agree_exp}/{t}; unparseable {unparse}/{t} = {unparse / t:.3f}; "
          f"non-answers {non}; classes {dict(sorted(classes.items()))}")


if __name__ == "__main__":
    graded_corpora()
    reference_outputs()
