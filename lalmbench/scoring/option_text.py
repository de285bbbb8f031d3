"""Which option texts a span of an output names: each option's text as a whole-word pattern (case,
plurals, articles and punctuation ignored), the option texts a span asserts or names only under a
veto, near-miss spellings of one-word options, and the normalised forms the text stages compare.

Used by :mod:`lalmbench.scoring.parse` and :mod:`lalmbench.scoring.answer_labels`; linear in the
length of the output like :mod:`lalmbench.scoring.answer_text`.
"""
from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from lalmbench.scoring.answer_text import Vetoes

# CJK characters, which run on into Latin words ("Canon这种作曲技法"): a word ends where they start
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(rf"[^\W{_CJK}]+|[{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_ANSWER_PREFIX = re.compile(r"^(?:the\s+)?(?:correct\s+|final\s+|best\s+)?(?:answer|option|choice)"
                            r"\s*(?:is|would\s+be|should\s+be|:|=|-)\s*", re.IGNORECASE)

@lru_cache(maxsize=1 << 17)
def normalise_text(text: str) -> str:
    """Case-folded NFKC text with punctuation removed and whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _ANSWER_PREFIX.sub("", text.strip())
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


@lru_cache(maxsize=1 << 17)
def tokens(text: str) -> frozenset[str]:
    """MMAU's tokenisation: lower-cased ``\\b\\w+\\b`` words as a set (a CJK run is a word of its own)."""
    return frozenset(_WORD.findall(text.lower()))


# --- option phrases --------------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+#?")
ARTICLES = frozenset({"a", "an", "the"})


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Light morphology, the same on both sides: case, and plural ``s``/``es``/``ies``."""
    w = word.casefold()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "zes", "ches", "shes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


# a people's or language's name says its country ("Chinese cultural origins" for "China"); words that are
# also other words ("Polish", "Turkish") are left out
_DEMONYMS = {"chinese": "china", "japanese": "japan", "korean": "korea", "indian": "india", "french": "france",
             "spanish": "spain", "german": "germany", "italian": "italy", "russian": "russia", "british": "britain",
             "american": "america", "brazilian": "brazil", "mexican": "mexico", "canadian": "canada",
             "australian": "australia", "irish": "ireland", "scottish": "scotland", "dutch": "netherlands",
             "swedish": "sweden", "greek": "greece", "egyptian": "egypt", "vietnamese": "vietnam", "thai": "thailand",
             "portuguese": "portugal", "african": "africa", "european": "europe", "asian": "asia",
             "indonesian": "indonesia", "norwegian": "norway", "finnish": "finland", "danish": "denmark"}


@lru_cache(maxsize=1)
def _snowball():
    """Snowball's English stemmer, imported on first use like rapidfuzz: the inference envs import the
    parser for a job's live accuracy, and only the scoring env (core) must carry every parser library."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)
def lemma(word: str) -> str:
    """Snowball's English stem, a people's name as its country: what a paraphrase keeps of an option's
    word ("plays" for "playing", "arrival" for "Arriving", "Chinese" for "China"). Coarser than
    :func:`stem`, so it is only compared between word sets, never used to find an option's words in place."""
    w = word.casefold()
    return _DEMONYMS.get(w) or _snowball().stemWord(w)


_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
#: an option that is a count in digits is named by the count in words too ("five" for "5"); not the
#: other way round ("Segment 2:" numbers a list, it names no option "Two"), and never 1 ("one" is
#: also a pronoun)
_NUMBER_SPELLINGS = {str(i): w for i, w in enumerate(_NUMBER_WORDS) if w != "one"}
#: how often, as one word ("appears twice" says the count "two", "once" says "1 time")
_HOW_OFTEN = {"1": "once", "2": "twice", "3": "thrice"}
_NOT_HOW_OFTEN = r"(?!\s+(?:again|more|upon|the|it|they|he|she|we|you|i)\b)"
#: the digits a number word stands for ("three" -> "3")
NUMBER_WORDS = {w: str(i) for i, w in enumerate(_NUMBER_WORDS)}


#: a short word and the long forms that name it too ("The synthesizer plays" names "Synth")
_LONG_FORMS = {"synth": {"synthesizer", "synthesiser", "synthesizers", "synthesisers"}, "sax": {"saxophone"}}


def _forms(word: str) -> list[str]:
    """Spellings whose :func:`stem` is ``word`` (``beep`` -> ``beep``, ``beeps``), the other
    spelling of a number (``five``/``5``), and an emotion's noun or adjective (``sad``/``sadness``)."""
    forms = {word} | {f for f in (word + "s", word + "es", word[:-1] + "ies") if stem(f) == word}
    if word in _NUMBER_SPELLINGS:
        forms.add(_NUMBER_SPELLINGS[word])
    forms |= _LONG_FORMS.get(word, set())
    forms |= _EMOTION_FORMS.get(word, set())
    return sorted(forms)


# emotion-recognition options are adjectives or nouns, and answers use the other ("a state of
# sadness" for "sad", "fearful" for "fear")
_EMOTION_PAIRS = (("sad", "sadness"), ("happy", "happiness"), ("angry", "anger"), ("fearful", "fear"),
                  ("disgusted", "disgust"), ("surprised", "surprise"), ("calm", "calmness"))
_EMOTION_FORMS = {a: {b} for a, b in _EMOTION_PAIRS} | {b: {a} for a, b in _EMOTION_PAIRS}


def _literal_first(forms: list[str]) -> str:
    """Alternation of ``forms`` written as common literal prefix + rest, so the regex engine can
    scan for the literal (a pattern that starts with a lookaround is tried at every position)."""
    prefix = os.path.commonprefix(forms)
    rests = sorted({f[len(prefix):] for f in forms}, key=len, reverse=True)
    alt = "|".join(re.escape(r) for r in rests)
    # whole word: the character before the prefix is not a word character
    return rf"{re.escape(prefix)}(?<![\w#][\s\S]{{{len(prefix)}}})(?:{alt})" if prefix else rf"(?<![\w#])(?:{alt})"


_GAP = r"[\W_]+(?:(?:a|an|the)[\W_]+)?"
#: an option sentence that starts with one of these may be restated with its subject named
SUBJECT_PRONOUNS = frozenset({"he", "she", "they", "it", "we", "i", "you"})


@dataclass(frozen=True)
class OptionPhrase:
    label: str
    words: tuple[str, ...]  # stemmed words, articles dropped (kept when that leaves nothing)
    raw: str  # short option texts ("C", "G#", "A") are matched case-sensitively on their raw form
    pattern: re.Pattern  # on the lower-cased text, except cased ones (on the raw text)
    #: the pattern runs on the raw text: short texts, and chords named by their root ("A minor" for "A:min/P5",
    #: where "a minor difference" names none)
    chord: bool = False

    @property
    def short(self) -> bool:
        return len(self.raw) <= 2

    @property
    def cased(self) -> bool:
        return self.short or self.chord


#: a unit an output may abbreviate where the option spells it out (stemmed words -> the abbreviation)
#: a run of an option's words and the short forms that name it ("bpm", "UK accent"; never "US", also a pronoun)
_ABBREVIATIONS = {("beat", "per", "minute"): ("bpm",), ("united", "kingdom"): ("uk", "britain"),
                  ("united", "states"): ("usa", "america")}


# a chord in Harte's notation (MMAU's chord questions: "A:min/P5", "F#:maj7/1") and how prose names its root and
# quality ("A minor", "F sharp major seventh"); a chord with added or left-out notes ("A:maj(#11)/1") is named by
# its notation only
_HARTE = re.compile(r"(?P<root>[A-G])(?P<acc>[#b]?):(?P<q>maj|min|dim|aug|7|maj7|min7)(?:/[\w#]+)?")
_QUALITY = {"maj": "major", "min": "minor", "dim": "diminished", "aug": "augmented", "7": "dominant[ -](?:7th|seventh)",
            "maj7": "major[ -](?:7th|seventh)", "min7": "minor[ -](?:7th|seventh)"}
_ACCIDENTAL = {"#": r"(?:#|♯|[ -]sharp)", "b": r"(?:b|♭|[ -]flat)", "": ""}


def _chord_name(raw: str) -> str | None:
    """A pattern, on the raw text, for a chord option's name in prose (the root capitalised, as a note)."""
    m = _HARTE.fullmatch(raw)
    if m is None:
        return None
    name = rf"(?<![\w#]){m['root']}{_ACCIDENTAL[m['acc']]}[ -](?i:{_QUALITY[m['q']]})"
    return name + (r"(?![\w#])(?![ -](?i:7th|seventh))" if m["q"] in ("maj", "min") else r"(?![\w#])")


@lru_cache(maxsize=1 << 16)
def _chord_phrase(text: str) -> re.Pattern | None:
    """The whole pattern of a chord option, on the raw text: its notation in any case, or its name."""
    name = _chord_name(text.strip())
    ph = _phrase(text)
    return None if name is None or ph is None else re.compile(f"(?i:{ph[2].pattern})|{name}")


@lru_cache(maxsize=1 << 16)
def _phrase(text: str) -> tuple[tuple[str, ...], str, re.Pattern] | None:
    """(stemmed content words, raw text, compiled pattern) of one option text, cached per text:
    option texts recur across items with different option sets."""
    raw = text.strip()
    words = tuple(stem(t) for t in _TOKEN.findall(raw))
    if not words:
        return None
    # articles are dropped, except one that ends the text: "that's, a" is not "that's, that"
    content = tuple(w for i, w in enumerate(words) if w not in ARTICLES or i == len(words) - 1 > 0) or words
    if len(raw) <= 2:
        spelt = _NUMBER_SPELLINGS.get(raw)
        if raw in ("2", "3"):
            spelt = f"{spelt}|{_HOW_OFTEN[raw]}"
        alt = f"(?:{_literal_first([raw])}|(?i:(?<![\\w#]){spelt}))" if spelt else _literal_first([raw])
        if raw == "No":
            # "So, the answer to the question \"Did he misread it?\" is no.": the option, closing its line
            alt = rf"(?:{alt}|(?<=\bis )no(?=[.!]?[ \t]*(?:\n|$)))"
        # never a digit of a decimal ("0" in "0.5")
        return content, raw, re.compile(r"(?<!\d[.,])" + alt + r"(?![\w#]|[.,]\d)")
    if raw.lower() == "one":
        # "The word 'bag' appears once": a count; "one" itself is read as the option only as it is written
        after = "|".join(f"(?<={verb} )" for verb in ("appears", "occurs", "is heard", "is said", "is used", "rings",
                                                        "happens", "is repeated"))
        # "at least one unstressed phoneme", "one of the speakers", "no one": a quantifier, no count of one
        quantifier = "".join(rf"(?<!{q} )" for q in ("least", "than", "no", "any", "each", "every"))
        return content, raw, re.compile(rf"(?:{quantifier}{_literal_first(_forms('one'))}"
                                        rf"(?!\s+(?:of|or\s+more|another)\b)|(?:{after})once)(?![\w#])")
    if raw.lower() in NUMBER_WORDS:
        # "There are 2 participants" for the option "two": a count in digits before a plural noun (never a
        # list's number, "Segment 2:"); "appears twice" for "two"
        n = NUMBER_WORDS[raw.lower()]
        # ... or the number a sentence ends on after "is" ("The number of words ... is 4.")
        # (the noun may have one word before it: "6 unstressed phonemes")
        digits = rf"(?<![\w#.,]){n}(?=[ \t]+(?:[a-z-]{{2,}}[ \t]+)?[a-z]{{2,}}s\b)" \
            rf"|(?<=\bis ){n}(?=[.!]?[ \t]*(?:\n|$)|[.!][ \t])"
        times = _HOW_OFTEN.get(NUMBER_WORDS[raw.lower()])
        return content, raw, re.compile(rf"(?:{_literal_first(_forms(content[0]))}|{digits}"
                                        + (rf"|(?<![\w#]){times}" if times else "") + r")(?![\w#])")
    if len(content) == 1 and re.fullmatch(r"[a-z]{5,}", content[0]):
        # a one-word option written with a hyphen ("hiphop" / "Hip-hop")
        forms = "|".join("-?".join(re.escape(c) for c in f) for f in _forms(content[0]))
        return content, raw, re.compile(rf"(?<![\w#])(?:{forms})(?![\w#])")
    if len(words) > 1 and re.fullmatch(r"[\w#]+", raw) and "#" in raw[:-1]:
        # a chord written as one word ("F#m", "C#m7"): its letters, not its tokens, are the option
        return content, raw, re.compile(rf"(?<![\w#]){re.escape(raw.lower())}(?![\w#])")
    first, *rest = content

    def body(words) -> str:
        return "".join(_GAP + "(?:" + "|".join(re.escape(f) for f in _forms(w)) + ")" for w in words)

    pattern = _literal_first(_forms(first)) + body(rest)
    for run, shorts in _ABBREVIATIONS.items():
        k = next((i for i in range(len(content) - len(run) + 1) if content[i:i + len(run)] == run), None)
        for short in shorts if k is not None else ():
            # "57.0 bpm" says "57.0 beats per minute"
            first_a, *rest_a = content[:k] + (short,) + content[k + len(run):]
            pattern = f"(?:{pattern}|{_literal_first(_forms(first_a))}{body(rest_a)})"
    if len(content) == 2 and content[1] == "time" and (n := NUMBER_WORDS.get(first, first)) in _HOW_OFTEN:
        # "it appears once" says "1 time", "twice" "2 times"
        # (never "at once", "once again", "once upon a time", "once the music starts")
        pattern = f"(?:{pattern}|(?<![\\w#])(?<!at ){_HOW_OFTEN[n]}{_NOT_HOW_OFTEN})"
    if first in SUBJECT_PRONOUNS and len(rest) >= 4:
        # a restated option names its subject ("The man can't be back ..." for "He can't be back ...")
        pattern = f"(?:{pattern}|{_literal_first(_forms(rest[0]))}{body(rest[1:])})"
    return content, raw, re.compile(pattern + r"(?![\w#])")


_CLAUSE_START = "(?:" + "|".join(f"(?<={re.escape(b)})" for b in ("that ", "is ", "are ", ": ", "{", '"', "\n", ". ",
                                                                  ") ", "* ", "- ")) + "|^)"


@lru_cache(maxsize=4096)
def option_phrases(opts: tuple[tuple[str, str], ...]) -> tuple[OptionPhrase, ...]:
    """Each option's text as a whole-word pattern: case, plural and article-insensitive, any
    punctuation between words ("Orson, Rosa" is "orson rosa"), quotes ignored. Where every option
    starts with the same words and what differs holds a number ("Ratio is 3:1", "Ratio is 1:3") or
    three words or more, the part that differs names the option too ("The answer is 3:1")."""
    phrases = [OptionPhrase(label, ph[0], ph[1], chord or ph[2], chord is not None)
               for label, text in opts if (ph := _phrase(text)) is not None for chord in [_chord_phrase(text)]]
    shared = os.path.commonprefix([p.words for p in phrases]) if len(phrases) > 1 else ()
    if not shared or any(len(p.words) == len(shared) for p in phrases):
        return tuple(phrases)
    out = []
    for p in phrases:
        core = p.words[len(shared):]
        number = any(any(c.isdigit() for c in w) for w in core)
        # a number, or three words or more ("sounds heard None of these two sounds": "None of these two sounds")
        if p.cased or not (number or len(core) >= 3):
            out.append(p)
            continue
        alt = r"(?<![\w#])" + _GAP.join("(?:" + "|".join(re.escape(f) for f in _forms(w)) + ")" for w in core) \
            + r"(?![\w#])"
        if not number:
            # words, not a number: only where a clause starts ("... is that both names are ...", "\boxed{None of
            # these two sounds}"), never inside another statement ("shows happiness and second speaker remains ...")
            alt = _CLAUSE_START + alt
        out.append(OptionPhrase(p.label, p.words, p.raw, re.compile(f"(?:{p.pattern.pattern}|{alt})")))
    return tuple(out)


def _article_not_option(text: str, a: int, b: int, start: int) -> bool:
    """"A dog barks": a sentence-initial "A" (or any "I") before a lower-case word is an article or
    pronoun, not the option "A"."""
    word = text[a:b]
    if word not in ("A", "I"):
        return False
    nxt = text[b:b + 2]
    before = text[max(start, a - 3):a].rstrip()
    sentence_start = not before or before[-1] in ".!?:;\n"
    return bool(re.match(r"\s[a-z]", nxt) or nxt.startswith("'")) and (sentence_start or word == "I")


@lru_cache(maxsize=8)
def lower_same_length(text: str) -> str:
    """Lower-cased text with the same offsets (characters whose lower case is longer, like "İ",
    are left as they are)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


@lru_cache(maxsize=8)
def _cjk_apart(text: str) -> str:
    """``text`` with CJK characters as spaces (same offsets), so that a Latin option text run on into
    them ("Canon这种作曲技法") ends at a word boundary."""
    return _CJK_CHAR.sub(" ", text) if _CJK_CHAR.search(text) else text


def _searched(text: str, phrases: Sequence[OptionPhrase]) -> tuple[str, str]:
    """(text, lower-cased text) as the option patterns search them: CJK characters set apart,
    unless an option is written in them."""
    low = lower_same_length(text)
    if any(_CJK_CHAR.search(p.raw) for p in phrases):
        return text, low
    return _cjk_apart(text), _cjk_apart(low)


#: "Speaker 1 talks **3** times after Speaker 2": a numeral after such a noun names a thing, it is no count
_NAMED_BY_NUMBER = re.compile(r"(?i:\b(?:speaker|audio|person|track|clip|url|recording|segment|sample|channel"
                              r"|voice|option|choice)\s*#?\s*)$")


def find_options(text: str, start: int, end: int, phrases: Sequence[OptionPhrase]) -> list[tuple[str, int, int]]:
    """Occurrences ``(label, start, end)`` of option texts in ``text[start:end]``; an occurrence
    inside a longer option's occurrence is dropped ("piano and violin" names that option, not
    "piano"). One compiled regex per option: C-speed over long outputs."""
    hits = []
    raw, low = _searched(text, phrases)
    for p in phrases:
        for m in p.pattern.finditer(raw if p.cased else low, start, end):
            if p.short and _article_not_option(text, m.start(), m.end(), start):
                continue
            if p.raw.isdigit() and _NAMED_BY_NUMBER.search(text, max(0, m.start() - 24), m.start()):
                continue
            hits.append((m.start(), -m.end(), p.label))
    if len(hits) < 2:
        return [(lab, a, -b) for a, b, lab in hits]
    hits.sort()
    out, s0, e0 = [], -1, -1
    for a, nb, lab in hits:
        b = -nb
        if s0 <= a and b <= e0 and (e0 - s0) > (b - a):
            continue
        out.append((lab, a, b))
        if b > e0:
            s0, e0 = a, b
    return out


def starts_with_option(text: str, start: int, end: int, phrases: Sequence[OptionPhrase]) -> str | None:
    """Label of the option whose text ``text[start:end]`` begins with (the longest one), if any."""
    best = None
    raw, low = _searched(text, phrases)
    skip = re.match(r"[\W_]*(?:(?:a|an|the)[\W_]+)?", low[start:end])
    start += skip.end() if skip else 0
    for p in phrases:
        # matched on the whole text so its lookaheads see past ``end`` ("0" is not the start of "0.5")
        m = p.pattern.match(raw if p.cased else low, start)
        if m and m.end() <= end and (best is None or m.end() > best[0]):
            best = (m.end(), p.label)
    return best[1] if best else None


@dataclass(frozen=True)
class Named:
    """What a span says about the options: asserted labels, and labels only named under a veto."""

    asserted: frozenset[str]
    vetoed: frozenset[str]
    spans: tuple[tuple[str, int, int], ...]


def named_options(text: str, start: int, end: int, phrases: Sequence[OptionPhrase], v: Vetoes) -> Named:
    asserted, vetoed, spans = set(), set(), []
    for lab, a, b in find_options(text, start, end, phrases):
        if v.vetoed_at(a):
            vetoed.add(lab)
        else:
            asserted.add(lab)
            spans.append((lab, a, b))
    return Named(frozenset(asserted), frozenset(vetoed - asserted), tuple(spans))



# --- near-miss spellings -----------------------------------------------------------------------------

_LETTERS_WORD = re.compile(r"[^\W\d_]{4,}")


def near_misses(text: str, opts: Sequence[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """Words of ``text`` that are a near-miss spelling of exactly one one-word option
    (``Accordian`` for ``Accordion``): ``(start, end, option text)`` to read in their place.

    Bounded edit distance relative to length: 1 edit for options of 5-9 letters, 2 from 10; the
    word must be more than that plus one from every other option, and an option with another
    option within twice its bound is never guessed at ("Bleep"/"Sleep").
    """
    from rapidfuzz.distance import Levenshtein

    words = [(lab, t.strip()) for lab, t in opts if t and re.fullmatch(r"[^\W\d_]{5,}", t.strip())]
    if not words:
        return []
    all_texts = [t.strip().casefold() for _, t in opts if t and t.strip()]
    eligible = []
    for lab, w in words:
        k = 1 if len(w) < 10 else 2
        wf = w.casefold()
        if all(Levenshtein.distance(wf, o, score_cutoff=2 * k) > 2 * k for o in all_texts if o != wf):
            eligible.append((wf, w, k))
    out = []
    for m in _LETTERS_WORD.finditer(text):
        tok = m.group(0).casefold()
        hits = [(w, k) for wf, w, k in eligible
                if tok != wf and stem(tok) != wf and Levenshtein.distance(tok, wf, score_cutoff=k) <= k]
        if len(hits) != 1:
            continue
        w, k = hits[0]
        if all(Levenshtein.distance(tok, o, score_cutoff=k + 1) > k + 1 for o in all_texts if o != w.casefold()):
            out.append((m.start(), m.end(), w))
    return out
