"""Readings that need the item's question: tried only when the output alone gives no answer.

Two families of real outputs answer in the question's own words rather than with an option:

- a negation the question asked for: "Which instrument is not present?" -> "The instrument not
  present in this piece is the **Flute**." The "not" is the question's, so it vetoes nothing;
- a yes/no question answered by a statement: "Is this man telling the truth?" -> "I believe he's
  not telling the truth." The statement is Yes or No only when it restates the question's words
  (all of them, but for its first one where a pronoun takes up the subject) with at most one
  negation and no hedge, contrast or second option.
"""
from __future__ import annotations

import re

from lalmbench.scoring import answer_text as at
from lalmbench.scoring import option_text as ot

_NEGATION = re.compile(r"\b(?:can)?not\b|n't\b|\bnever\b", re.IGNORECASE)
#: words between a negation and the word it negates ("can not *be* heard", "is not *a* sound")
_SKIP = {"be", "been", "being", "a", "an", "the", "any", "ever"}
_WORD = re.compile(r"[a-z0-9]+", re.IGNORECASE)

_YES, _NO = "yes", "no"
#: option texts that may stand beside Yes and No ("Maybe", "Not sure") without changing the reading
_UNDECIDED = {"maybe", "not sure", "unsure", "uncertain", "i don t know", "cannot determine", "can t tell",
              "cannot be determined"}
_POLAR = re.compile(r"(?:^|[,.:;!]\s*|\n)\s*(?P<aux>is|are|was|were|do|does|did|can|could|has|have|had|will|would|"
                    r"should)\b(?P<rest>[^?.!\n]*)", re.IGNORECASE)
#: the question's words a statement need not repeat
_FUNCTION = {"a", "an", "the", "this", "that", "these", "those", "there", "it", "its", "you", "your", "we", "i",
             "he", "she", "they", "him", "her", "them", "his", "their", "of", "in", "on", "at", "to", "any", "some",
             "audio", "clip", "recording", "identify", "is", "are", "was", "were", "be", "been", "do", "does", "did"}
_NEGATORS = {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot"}
#: a statement holding any of these is not read as Yes or No: a hedge, a contrast, a negation in
#: other words, or a reply word that is not the opening one
_HEDGES = {"maybe", "might", "may", "possibly", "perhaps", "could", "whether", "if", "unclear", "uncertain",
           "unsure", "impossible", "difficult", "hard", "doubt", "unlikely", "hardly", "barely", "rarely",
           "lack", "lacks", "lacking", "absent", "absence", "without", "fail", "fails", "failed", "rather",
           "instead", "but", "although", "though", "however", "only", "fake", "false", "deny", "denies", "yes",
           "seems", "seem", "appears", "unable", "except", "either", "or"}
_MAX_WORDS = 40
_NEGATING_PREFIXES = ("in", "un", "im", "ir", "il")
#: what may take up the question's subject ("Is this man ...?" -> "he is not ...")
_PRONOUNS = {"he", "she", "they", "it", "him", "her", "them", "his", "their", "its"}


def _words(text: str) -> list[str]:
    text = re.sub(r"n't\b", " not", re.sub(r"\bcannot\b", "can not", text, flags=re.IGNORECASE),
                  flags=re.IGNORECASE)
    return [w.lower() for w in _WORD.findall(text)]


def echoed_negations(question: str, text: str) -> list[tuple[int, int]]:
    """Spans of the negations in ``text`` that repeat one of the question's ("not present" after
    "Which instrument is not present?", "cannot be heard" after "which sound can not be heard")."""
    keys = set()
    for m in _NEGATION.finditer(question):
        after = [w for w in _words(question[m.end():])[:4] if w not in _SKIP]
        if after:
            keys.add(ot.lemma(after[0]))
    spans = []
    for m in _NEGATION.finditer(text) if keys else ():
        after = [w for w in _words(text[m.end():])[:4] if w not in _SKIP]
        if after and ot.lemma(after[0]) in keys:
            start = m.start() + (3 if m.group(0).lower().startswith("can") else 0)
            spans.append((start, m.end()))
    return spans


def yes_no_options(opts: tuple[tuple[str, str], ...]) -> dict[str, str] | None:
    """``{"yes": label, "no": label}`` when the options are one Yes, one No (each maybe with its reason) and at
    most undecided ones."""
    found: dict[str, list[str]] = {_YES: [], _NO: []}
    for label, text in opts:
        words = _WORD.findall(text.lower())
        if words and words[0] in found:
            # "Yes", or "No. \"Driver\" is a word.": the reply word the option opens with
            found[words[0]].append(label)
        elif " ".join(words) not in _UNDECIDED:
            return None
    return {k: v[0] for k, v in found.items()} if all(len(v) == 1 for v in found.values()) else None


def polar_content(question: str) -> tuple[list[str], set[str]] | None:
    """The lemmas of a yes/no question's own words, in order ("Is this man telling the truth" ->
    man, tell, truth), and those a restatement may leave out: the first (the subject a pronoun takes
    up) and manner adverbs ("finally"). None when it is no plain yes/no question (no auxiliary opens
    its last clause, or it offers a choice with "or" or is itself negated)."""
    m = None
    for m in _POLAR.finditer(question):
        pass
    if m is None:
        return None
    rest = _words(m.group("rest"))
    if not rest or "or" in rest or _NEGATORS & set(rest):
        return None
    content: list[str] = []
    optional: set[str] = set()
    for w in rest:
        lem = ot.lemma(w)
        if w in _FUNCTION or lem in content:
            continue
        if not content or (w.endswith("ly") and len(w) > 4):
            optional.add(lem)
        content.append(lem)
    return content, optional


def last_sentence(text: str) -> str:
    """The output's closing sentence, markup dropped."""
    plain = re.sub(r"[*_#`>]+", " ", text).strip()
    spans = at.sentence_spans(plain)
    return plain[slice(*spans[-1])].strip() if spans else ""


def polar_reading(question: str, text: str, opts: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """(label, why) when the output's closing sentence answers a yes/no question by restating it."""
    labels = yes_no_options(opts)
    polar = polar_content(question) if labels else None
    if not polar or len(polar[0]) < 2:
        return None
    content, optional = polar
    sentence = last_sentence(text)
    # "... is not currently living on the scene but instead calling from somewhere else": what it is instead
    # only explains the negation
    instead = re.search(r",?\s+but\s+(?:instead|rather)\b", sentence, re.IGNORECASE)
    if instead is not None and _NEGATORS & set(_words(sentence[:instead.start()])):
        sentence = sentence[:instead.start()]
    words = _words(sentence)
    reply = None
    if words and words[0] in (_YES, _NO) and re.match(r"\W*(?:yes|no)\s*,", sentence, re.IGNORECASE):
        reply, words = words[0], words[1:]
    if not words or len(words) > _MAX_WORDS or "?" in sentence or _HEDGES & set(words):
        return None
    lemmas = {ot.lemma(w) for w in words}
    # "incorrect" for the question's "correct": its word, negated
    negated_words = {ot.lemma(w[2:]) for w in words if w[:2] in _NEGATING_PREFIXES and ot.lemma(w[2:]) in content}
    lemmas |= negated_words
    if len(set(content) & lemmas) < 2 or any(w not in lemmas and w not in optional for w in content) \
            or (content[0] not in lemmas and not _PRONOUNS & set(words)):
        return None
    negations = sum(w in _NEGATORS for w in words) + len(negated_words)
    if negations > 1 and reply != _NO:
        return None
    said = _NO if negations else _YES
    if reply is not None and reply != said:
        return None
    return labels[said], f"restates the yes/no question{' negated' if said == _NO else ''}: {sentence[:60]!r}"


_COUNT_QUESTION = re.compile(r"(?i:\bhow\s+many\b|\bnumber\s+of\b|\bcount\b)")
_NUMBER = re.compile(r"\s*\d{1,3}\s*")
#: "1. **Siren:**": a list's own numbering, no count
_LIST_NUMBER = re.compile(r"(?<![^\n])\d{1,2}[.)]\s")


def counted_option(question: str, text: str, opts: tuple[tuple[str, str], ...], label: str, other: str) -> bool:
    """Whether a bare number that is option ``label``'s label and option ``other``'s text answers a
    question that asks how many, over options that are all counts: then it is the count, ``other``.
    Not when the output counts option ``label``'s own text elsewhere ("there are **4** distinct sounds
    ... the correct answer is **3**", 3 being the option "4"): then the label may be meant."""
    texts = dict(opts)
    if not (_COUNT_QUESTION.search(question) and all(_NUMBER.fullmatch(t) for t in texts.values())
            and label in texts and other in texts):
        return False
    own = texts[label].strip()
    spoken = {w for w, d in ot.NUMBER_WORDS.items() if d == own}
    counts = [m for m in re.finditer(r"\b\d{1,3}\b|\b[a-z]+\b", text.lower())
              if (m.group(0) == own or m.group(0) in spoken) and not _LIST_NUMBER.match(text, m.start())]
    return not counts
