"""The pick a refusal or a doubt about the audio leaves: "I cannot hear the audio, but ... The answer is B",
"None of the choices fit. Selecting \"violin\" as the least-wrong option", "However, if I had to make a guess,
... **4) Front**". A grader takes such a pick as the output's answer; without one the output stays a non-answer.
:mod:`lalmbench.scoring.parse` asks this module only about outputs with a refusal or doubt.
"""
from __future__ import annotations

import re
from typing import Callable, Protocol, Sequence

from lalmbench.scoring import answer_labels as al
from lalmbench.scoring import answer_slots as sl
from lalmbench.scoring import answer_text as at
from lalmbench.scoring import conclusion as cl
from lalmbench.scoring import label_checks as lc
from lalmbench.scoring import option_text as ot


class Read(Protocol):
    """What the parser read from a span: a label (or None), the stage that read it and why."""

    label: str | None
    status: str
    reason: str


def pick_after_refusal(text: str, masked: str, sentences: list[tuple[int, int]], opts: tuple[tuple[str, str], ...],
                       phrases: Sequence[ot.OptionPhrase], occurrences: list, refusal: str, stages: tuple[str, ...],
                       labels_shown: bool, reread: Callable[[str], Read]) -> tuple[str, str, str] | None:
    """A refusal or doubt followed by a committed answer statement that names one option is that
    option ("I cannot directly access the audio, but the analysis tool reports a dog. The answer is
    B"; "None of the choices properly reflect the style. Selecting \"violin\" as the least-wrong
    option"; "I'm sorry, I don't have that information. So, the correct choice is A. I do not have an
    answer"). Committed: after the last refusal or doubt about the audio, in a sentence that states an
    answer in so many words or a conclusion naming one option ("the sound is most likely a dog"), neither
    hedged ("I'd guess B") nor negated, and not contradicted; or the pick of a statement framed as a guess
    when pressed ("However, if I had to make a guess, ... **4) Front**"). The output is then read with the
    refusal's own clauses negated or doubted; without such a pick it stays a non-answer. A pick of the
    options' own non-answer ("I do not have an answer") agrees with the refusal wherever the refusal stands.
    Returns (label, stage, reason) of the pick, or None; ``reread`` parses a span of the output (the guess
    statement) as a whole output."""
    v = at.vetoes(text, masked, lift_refusal=True)
    own = {lab for lab, t in opts if sl.NON_ANSWER_OPTION.match(t)}
    why = f"after {refusal.strip()[:40]!r}"

    def after(label: str, pos: int) -> bool:
        return pos > v.refusal_end or label in own

    picked = sl.picked(text, masked, sentences, opts, phrases, v, labels_shown)
    if picked is not None and picked[2] in stages and after(*picked[:2]):
        return picked[0], picked[2], f"answer-is ({why})"
    if labels_shown and "label-pattern" in stages:
        lr = al.label_read(text, opts, phrases, v, bool(occurrences))
        if lr is not None and (lr.kind == "hard" or (lr.label is not None
                                                     and lc.label_is_other_text(text, lr, opts, phrases))) \
                or lc.label_slot_with_other_text(text, opts, phrases):
            return None  # the label and the text disagree, or the label is another option's text
        # an answer block ("<Conclusion>B</Conclusion>") commits by itself, whatever words its line has
        tagged = lr is not None and lr.kind == "explicit" and lr.reason == "answer-tag"
        if lr is not None and lr.label is not None and after(lr.label, lr.pos) \
                and (sl.committed(masked, sentences, lr.pos, v) or tagged) \
                and not (occurrences and lc.contradicted(text, masked, sentences, lr.label, lr.pos, phrases, v)):
            return lr.label, "label-pattern", f"{lr.reason} ({why})"
        # "Since none of the options (A, C, D, E) ... there is no answer in the provided options.\n\n**B**" with B
        # the benchmark's "I do not have an answer": a closing label that picks the options' own non-answer
        closing = _CLOSING_LABEL.search(text)
        if closing is not None and closing.group("l") in own:
            return closing.group("l"), "label-pattern", f"closing label of the options' non-answer ({why})"
    if occurrences and "conclusion" in stages:
        concl = cl.read_conclusion(text, masked, sentences, phrases, v, labels_shown)
        if concl is not None and concl.label is not None and after(concl.label, concl.pos) \
                and sl.committed(masked, sentences, concl.pos, v, at.MARKER):
            return concl.label, "conclusion", f"{concl.reason} ({why})"
    if (guess := sl.guess_statement(masked, sentences, v)) is not None:
        res = reread(text[guess[0]:guess[1]].strip(" ,*"))
        if res.label is not None and ot.named_options(text, *guess, phrases, v).asserted <= {res.label}:
            return res.label, res.status, f"{res.reason}, the pick of a guess ({why})"
    return None


_CLOSING_LABEL = re.compile(r"\n[ \t]*[*_(\[]*(?P<l>[A-J])[)\].*_]*[ \t]*$")
