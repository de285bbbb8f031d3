"""The parser against a careful grader on 600+ outputs in the styles real audio LMs write
(tests/data/parse/grader_corpus.jsonl, written by make_grader_corpus.py next to it: long reasoning
with a final conclusion, invented letters, quoted refusals, hedges, echoed option lists,
paraphrases, CJK, degenerate repeats, think blocks, the examples quoted when the parser was
rebuilt). A wrong label is worse than an unparseable answer: zero are allowed."""
import json
from collections import Counter
from pathlib import Path

from lalmbench.scoring.parse import parse_answer

CORPUS = Path(__file__).resolve().parents[1] / "data" / "parse" / "grader_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
STYLES = {"cot-conclusion", "long-cot", "cot-label", "invented-letters", "quoted-refusals", "refusals", "hedges",
          "echoed-options", "paraphrases", "cjk", "degenerate", "think-blocks", "label-text", "negation-scope",
          "short-forms", "hidden-labels", "issue-verbatim", "freeform",
          # round 3
          "markup-fragments", "lowercase-echoed", "option-negation", "misspellings", "non-answers"}


def _grade():
    n, agree, wrong, missed = Counter(), Counter(), [], []
    for r in ROWS:
        got = parse_answer(r["raw"], r["options"], labels_shown=r["labels_shown"]).label
        n[r["style"]] += 1
        if got == r["label"]:
            agree[r["style"]] += 1
        elif got is None:
            missed.append((r["case"], r["raw"][:80]))
        else:
            wrong.append((r["case"], r["raw"][:80], r["label"], got))
    return n, agree, wrong, missed


def test_corpus_covers_every_style_with_both_answers_and_nulls():
    styles = Counter(r["style"] for r in ROWS)
    assert len(ROWS) >= 800 and set(styles) == STYLES, styles
    assert sum(r["label"] is None for r in ROWS) >= 150 and sum(r["label"] is not None for r in ROWS) >= 350


def test_agreement_with_the_grader_is_99_percent_with_no_wrong_label():
    n, agree, wrong, missed = _grade()
    for style in sorted(n):
        print(f"{style:17s} {agree[style]:4d}/{n[style]:<4d} {agree[style] / n[style]:.3f}")
    total = sum(agree.values()) / sum(n.values())
    print(f"{'all':17s} {sum(agree.values()):4d}/{sum(n.values()):<4d} {total:.4f}; missed {missed}")
    assert wrong == []
    assert total >= 0.99, missed


def test_non_answers_are_named_by_their_class_and_never_credited():
    named = [(r["case"], r["expect"], parse_answer(r["raw"], r["options"], labels_shown=r["labels_shown"]))
             for r in ROWS if r.get("expect")]
    assert len(named) >= 25
    off = [(case, want, res.status, res.reason) for case, want, res in named
           if res.label is not None or res.status != "non-answer" or not res.reason.startswith(want)]
    assert off == []


def test_only_non_answers_and_refusals_are_named_non_answers():
    """A reader must be able to trust "non-answer": an output that answers, or one the parser
    merely failed to read, is never put in that class."""
    wrong = [r["case"] for r in ROWS if not r.get("expect") and r["style"] != "refusals"
             and parse_answer(r["raw"], r["options"], labels_shown=r["labels_shown"]).status == "non-answer"
             and not r["note"].startswith(("a refusal", "refus"))]
    assert wrong == []
