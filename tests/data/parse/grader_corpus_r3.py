"""Round-3 styles of the grader corpus, written blind (before the parser rules they test):
markup fragments, lower-case and echoed labels, option texts that carry a negation, near-miss
spellings, non-answers of many kinds. Each case carries the label a careful grader gives (or
None) and, for non-answers, the reason class the parser must name (``expect``).

Imported by make_grader_corpus.py; the rows land in grader_corpus.jsonl after the earlier styles,
so the earlier case ids and texts do not change.
"""
from __future__ import annotations

import string

L = string.ascii_uppercase

INSTR = ["Guitar", "Accordion", "Violin", "Trumpet"]
PEOPLE = ["Orson, Rosa", "Mara, Theo", "Ivan, Lena", "Paul, Nora"]
OFFICE = ["He can't be back to the office soon.", "He will be back to the office soon.",
          "He is already at the office.", "He never works at the office."]
PRESENCE = ["True", "False"]
EVENTS = ["Man", "Woman", "Child", "Crowd"]
ANIMALS = ["Dog barking", "Cat meowing", "Rain falling", "Car horn"]
COUNT = ["one", "two", "three", "four"]
LYRICS = ["Melody", "Rhythm", "Harmony", "Lyrics"]
GENRE = ["Jazz", "Blues", "Reggae", "Techno"]
NOISE = ["No noise is present", "Traffic noise", "Wind noise", "Crowd noise"]
SEASON = ["Spring", "Summer", "Autumn", "Winter"]
ONOMATO = ["Xylophone", "Saxophone", "Harmonica", "Clarinet"]


def opts(choices: list[str]) -> list[dict]:
    return [{"label": L[i], "text": c} for i, c in enumerate(choices)]


def echo(ch: list[str], sep: str = " ") -> str:
    return sep.join(f"({L[i]}) {c}" for i, c in enumerate(ch))


# (style, raw, choices, grader label, expected non-answer class or None, note)
CASES: list[tuple[str, str, list[str], str | None, str | None, str]] = []


def add(style: str, raw: str, ch: list[str], label: str | None, note: str, expect: str | None = None) -> None:
    CASES.append((style, raw, ch, label, expect, note))


# --- 1. markup fragments ----------------------------------------------------------------------------
MF = "markup-fragments"
for x, lab in (("Man", "A"), ("Woman", "B"), ("Child", "C"), ("Crowd", "D")):
    add(MF, f"The voice is low and speaks slowly, and the speaker sounds adult. Therefore, the answer is '{x}'.\n"
            "</answer>", EVENTS, lab, "a stray closing answer tag after a plain conclusion")
    add(MF, f"Listening to the clip, I hear a single voice. The answer is {x}.</answer>", EVENTS, lab,
        "stray </answer> glued to the conclusion")
    add(MF, f"Let me reason. Other voices are absent.</think>\nThe speaker is a {x.lower()}.\n</answer>", EVENTS, lab,
        "a lone </think> and a stray </answer>")
    add(MF, f"<answer>{x}", EVENTS, lab, "an answer tag never closed")
    add(MF, f"<answer>\nThe speaker is most likely a {x.lower()}.\n", EVENTS, lab, "unclosed answer tag with a sentence")
    add(MF, f"<answer>{x}</answer>\n</answer>", EVENTS, lab, "a repeated closing tag")
    add(MF, f"<answer><answer>{x}</answer></answer>", EVENTS, lab, "nested answer blocks")
for i, x in enumerate(INSTR):
    add(MF, f"The timbre is reedy with a bellows sound, and chords change in the left hand. So the answer is "
            f"**{x}**.\n</answer>", INSTR, L[i], "bold conclusion then a stray tag")
    add(MF, f"Final answer: {x}</answer><|im_end|>", INSTR, L[i], "stray tag and chat marker")
    add(MF, f"<answer>{L[i]}", INSTR, L[i], "an unclosed answer tag holding a label")
    add(MF, f"</answer>{x}", INSTR, L[i], "a closing tag before the answer (cut-off export)")
    add(MF, f"<think>The strings are bowed, maybe {INSTR[(i + 1) % 4]}?</think>\n<answer>{x}</answer>", INSTR, L[i],
        "closed think block then an answer block")
    add(MF, f"The sound could be a {INSTR[(i + 1) % 4].lower()} or a {x.lower()}.\n</answer>", INSTR, None,
        "a stray tag after a hedge is still a hedge")
    add(MF, f"<answer>{x}</answer> <answer>{INSTR[(i + 2) % 4]}</answer>", INSTR, None,
        "two answer blocks that disagree")
    add(MF, f"<Answer> {x} </ANSWER>", INSTR, L[i], "answer tags in odd case and spacing")
    add(MF, f"After comparing the options, the instrument is the {x.lower()}.</answer>\n\n</answer>", INSTR, L[i],
        "two stray closing tags")
    add(MF, f"<answer>The answer is {x}.<answer>", INSTR, L[i], "a malformed closing tag written as an opening one")

# added after the first fixes (the fragments a second look at the parser's reads turned up)
for i, x in enumerate(EVENTS):
    add(MF, f"The voice is deep and slow. It is a {x.lower()}.</think>", EVENTS, L[i],
        "a stray closing think tag that ends the output: the text before it is all there is")
    add(MF, f"<answer>{L[i].lower()}</answer>", EVENTS, L[i], "a lower-case letter filling an answer block")
    add(MF, f"The answer is {x}.</ANSWER>\n</think>", EVENTS, L[i], "two stray closing tags of different kinds")
    add(MF, f"Maybe {EVENTS[(i + 1) % 4].lower()} or {x.lower()}.</think>\n\n{x}", EVENTS, L[i],
        "a lone </think> after the scratchpad, then the answer")

# --- 2. lower-case and echoed labels ---------------------------------------------------------------
LE = "lowercase-echoed"
for i, x in enumerate(PEOPLE):
    others = ", ".join(f"({L[j].lower()}) {PEOPLE[j]}" for j in range(4) if j != i)
    add(LE, f"Option {others.split(')')[0]}) is unlikely because the names are wrong. Considering every option: "
            f"{others} all fail. Therefore, the best answer is ({L[i].lower()}) {x}.", PEOPLE, L[i],
        "a lower-case parenthesised label with its text after discussing every option")
    add(LE, f"Therefore, the best answer is ({L[i].lower()}) {x}.", PEOPLE, L[i], "lower-case label with its text")
    add(LE, f"the answer is ({L[i].lower()})", PEOPLE, L[i], "lower-case sentence, lower-case label")
    add(LE, f"Question: Who speaks first? Choices: {echo(PEOPLE)}' is: {L[i]}", PEOPLE, L[i],
        "the whole choice list echoed, then a bare label after 'is:'")
for i, x in enumerate(LYRICS):
    add(LE, f"The answer to 'Which element carries the message? Choices: {echo(LYRICS)}' is: {L[i]}", LYRICS, L[i],
        "a restated question with its choices, then 'is: X'")
    add(LE, f"Choices:\n(A) Melody\n(B) Rhythm\n(C) Harmony\n(D) Lyrics\nAnswer: {L[i]}", LYRICS, L[i],
        "an echoed list then an answer line")
    add(LE, f"Choices: {echo(LYRICS)}", LYRICS, None, "only the echoed choice list")
    add(LE, f"Which element carries the message? {echo(LYRICS)}\nThe answer is: ({L[i].lower()})", LYRICS, L[i],
        "a restated question then a lower-case label")
    add(LE, f"option ({L[i].lower()}) or option ({L[(i + 1) % 4].lower()})", LYRICS, None,
        "two lower-case labels, no commitment")
    add(LE, f"The correct choice is {L[i].lower()}.", LYRICS, L[i] if i else None,
        "a bare lower-case letter closing an answer statement; 'a' could be an article" if i else
        "'is a.' could be an article: not read")
for i, x in enumerate(GENRE):
    add(LE, f"(A) Jazz: swing feel absent. (B) Blues: no twelve-bar form. (C) Reggae: offbeat skank present. "
            f"(D) Techno: no four-on-the-floor. So the answer is ({L[i].lower()}) {x}.", GENRE,
        L[i] if i == 2 else None,
        "every option discussed with labels; the final label must agree with what the discussion supports"
        if i == 2 else "final label with its text conflicts with nothing but the discussion favoured C: still "
        "the model's committed answer", )
# the last three above: a careful grader reads the committed final statement, not the discussion
CASES[-4:] = [(s, r, c, L[k], e, "the final statement with label and text decides")
              for k, (s, r, c, _, e, _) in enumerate(CASES[-4:])]

# --- 3. options that carry their own negation --------------------------------------------------------
ON = "option-negation"
add(ON, "The man can’t be back to the office soon.", OFFICE, "A", "restates option A (its own negation) with a different subject")
add(ON, "He can't be back to the office soon.", OFFICE, "A", "exactly option A")
add(ON, "The speaker implies that he can't be back to the office soon, since the meeting runs late.", OFFICE, "A",
    "option A's negation inside the matched text")
add(ON, "Therefore, the answer is: He can’t be back to the office soon.", OFFICE, "A", "curly apostrophe")
add(ON, "The man will be back to the office soon.", OFFICE, "B", "option B restated")
add(ON, "He is not already at the office. He will be back to the office soon.", OFFICE, "B",
    "a real negation of C, then B")
add(ON, "It is not true that he can't be back to the office soon.", OFFICE, None,
    "a negation outside the option text negates it: no commitment to A, B not stated")
add(ON, "The woman says he never works at the office.", OFFICE, "D", "option D's own 'never'")
add(ON, "So he never works at the office, and he can't be back to the office soon.", OFFICE, None,
    "two options named")
add(ON, "I don't think he will be back to the office soon.", OFFICE, None,
    "B under a real negation; A not stated verbatim: not read")
for i, x in enumerate(NOISE):
    add(ON, f"Listening carefully, the answer is {x}.", NOISE, L[i], "an option whose text starts with 'No'")
add(ON, "No noise is present in the recording.", NOISE, "A", "option A restated as a sentence")
add(ON, "There is no traffic noise; it is wind noise.", NOISE, "C", "negated B, asserted C")
add(ON, "It is not wind noise.", NOISE, None, "only a negated option")
add(ON, "The clip is silent apart from the speech: no noise is present.", NOISE, "A", "option A after a colon")
add(ON, "The event is not in the audio, so the answer is False.", PRESENCE, "B", "a reason with 'not' then False")
add(ON, "False. The applause is not present.", PRESENCE, "B", "False then a negated description")
add(ON, "It is not false.", PRESENCE, None, "a double negative: a grader leaves it")

# --- 4. near-miss spellings ----------------------------------------------------------------------------
MS = "misspellings"
for raw, lab in (("Accordian", "B"), ("The instrument is an accordian.", "B"), ("Therefore, the answer is Violen.", "C"),
                 ("Trumphet", "D"), ("The answer is Gitar.", "A"), ("I hear an acordion.", "B"),
                 ("So it is the trumpett.", "D"), ("Therefore, the answer is Accordion.", "B")):
    add(MS, raw, INSTR, lab, "a near-miss spelling of one short option, no other option close")
for raw in ("Therefore, the answer is Violence.", "The answer is Trump.", "Guitarist", "The answer is Viola.",
            "The answer is Accord.", "The answer is Harp."):
    add(MS, raw, INSTR, None, "a different word, not a misspelling")
for raw, lab in (("Saxophon", "B"), ("The answer is Xylophon.", "A"), ("Clarinett", "D"), ("Harmonika", "C")):
    add(MS, raw, ONOMATO, lab, "a near-miss spelling among long distinct options")
for raw, lab in (("Sprig", "A"), ("Wintr", "D"), ("Sumer", "B"), ("The answer is Autum.", "C")):
    add(MS, raw, SEASON, lab, "a near-miss spelling of a season")
# close options: never by spelling
CLOSE = ["Beep", "Beeps", "Bleep", "Peep"]
for raw in ("Beap", "The answer is Bleap.", "Peeep"):
    add(MS, raw, CLOSE, None, "options close to each other: no spelling guess")
add(MS, "The answer is Caat meowing.", ANIMALS, "B", "a multi-word option with one misspelt word")
add(MS, "The answer is not Accordian.", INSTR, None, "a negated misspelling")
add(MS, "It might be an accordian.", INSTR, None, "a hedged misspelling")

# --- 5. non-answers ----------------------------------------------------------------------------------
NA = "non-answers"
ASKS = ["Could you please provide the dialogue?", "Please provide the audio file so I can answer.",
        "I would need the audio to answer this question.", "Can you share the recording?",
        "Could you provide more context about the clip?", "Please upload the audio.",
        "I need the transcript of the conversation to answer.", "What does the audio contain? Please describe it.",
        "I would need to hear the audio in order to determine the answer.",
        "Kindly provide the audio clip for analysis."]
UNDET = ["Unable to determine", "Insufficient Data", "None", "Cannot be determined from the given information.",
         "Unknown", "N/A", "It is impossible to determine the answer.", "The answer cannot be determined.",
         "Not enough information.", "Undetermined.", "insufficient information", "unknown.",
         "There is not enough information to answer.", "Not applicable", "None of the above"]
for t, raw in enumerate(ASKS):
    add(NA, raw, [INSTR, ANIMALS, EVENTS, SEASON][t % 4], None, "asks for input instead of answering",
        "non-answer: asks for input")
for t, raw in enumerate(UNDET + ["I don't know.", "I'm not sure.", "Hard to say."]):
    none = raw.startswith("None")
    add(NA, raw, [INSTR, ANIMALS, EVENTS, SEASON][t % 4], None,
        "rejects every option" if none else "says the answer cannot be determined",
        "non-answer: none of the options" if none else "non-answer: undetermined")
# options that are themselves "None"/"Unknown" are answers, not non-answers
add(NA, "None", ["None", "One", "Two", "Three"], "A", "'None' is an option's text")
add(NA, "Unknown", ["Known", "Unknown"], "B", "'Unknown' is an option's text")
add(NA, "The answer is None.", ["None", "One", "Two", "Three"], "A", "'None' is an option's text")
# non-answers that still carry an answer are answers
add(NA, "Insufficient data to be sure, but the answer is B.", INSTR, "B", "a caveat, then an explicit label")
add(NA, "Could you provide the audio? Anyway, the answer is Violin.", INSTR, "C",
    "asks, then answers explicitly")
