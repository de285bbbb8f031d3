"""Parser agreement, per grader class and corpus style, on the frozen grader corpus and on the real
TACoBeLAL reference outputs (tests/data/parse/tacobelal_cases.jsonl, made from
../shared/reference-data/tacobelal/*/*/{raw_model_outputs,decisions}.jsonl).

    PYTHONPATH=$PWD python bench/parser_agreement.py

Prints: agreement with the grader per style and per reason class (the parser's status, with
non-answers by class), the read rate of final-sentence conclusions (outputs whose last sentence
names exactly one option's text and which a grader labels), the unparseable rate (failures only)
and the non-answer rate; then agreement with TACoBeLAL's own parser on its real outputs.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from lalmbench.scoring.parse import PARSER_VERSION, parse_answer

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "parse"


def _klass(res) -> str:
    if res.status == "non-answer":
        return res.reason.split(" (")[0]
    return res.status


def _final_sentence_names_one(raw: str, options: list[dict]) -> bool:
    """Independent of the parser: the last non-empty sentence contains exactly one option text."""
    text = re.sub(r"<[^>]{1,12}>", " ", raw).strip()
    last = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    if not last:
        return False
    low = last[-1].casefold()
    return sum(bool(re.search(rf"(?<!\w){re.escape(o['text'].casefold())}(?!\w)", low))
               for o in options if len(o["text"]) > 2) == 1


def grader_corpus() -> None:
    rows = [json.loads(line) for line in (DATA / "grader_corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    n, agree, by_class, agree_class = Counter(), Counter(), Counter(), Counter()
    wrong = fs_n = fs_read = unparse = non = 0
    for r in rows:
        res = parse_answer(r["raw"], r["options"], labels_shown=r["labels_shown"])
        ok = res.label == r["label"]
        n[r["style"]] += 1
        agree[r["style"]] += ok
        by_class[_klass(res)] += 1
        agree_class[_klass(res)] += ok
        wrong += res.label is not None and res.label != r["label"]
        unparse += res.status == "unparseable"
        non += res.status == "non-answer"
        if r["label"] is not None and _final_sentence_names_one(r["raw"], r["options"]):
            fs_n += 1
            fs_read += ok
    total = sum(n.values())
    print(f"parser {PARSER_VERSION}; grader corpus: {total} outputs")
    print("| style | n | agree | share |\n|---|---:|---:|---:|")
    for s in sorted(n):
        print(f"| {s} | {n[s]} | {agree[s]} | {agree[s] / n[s]:.3f} |")
    print(f"| **all** | {total} | {sum(agree.values())} | {sum(agree.values()) / total:.4f} |")
    print("\n| parser class | n | agree with grader |\n|---|---:|---:|")
    for c in sorted(by_class):
        print(f"| {c} | {by_class[c]} | {agree_class[c]} |")
    print(f"\nwrong labels: {wrong}; final-sentence conclusions read: {fs_read}/{fs_n} = {fs_read / fs_n:.3f}; "
          f"unparseable (failures): {unparse}/{total} = {unparse / total:.3f}; non-answers: {non}/{total}")


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
        classes[_klass(res)] += 1
    t = len(rows)
    print(f"\nTACoBeLAL reference outputs: {t}; agreement with TACoBeLAL's parser {agree_ref}/{t} = {agree_ref / t:.4f}; "
          f"with the hand-checked labels {agree_exp}/{t}; unparseable {unparse}/{t} = {unparse / t:.3f}; "
          f"non-answers {non}; classes {dict(sorted(classes.items()))}")


if __name__ == "__main__":
    grader_corpus()
    reference_outputs()
