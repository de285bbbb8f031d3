"""Write grader_corpus.jsonl: model outputs in the styles real audio LMs produce, each with the
label a careful grader gives (the option the model committed to, or null).

The labels come from how each template is written, never from the parser: a template that
concludes with option X is labelled X, a hedge or refusal template null. Option sets are real
MMAU test-mini choice sets (mmau_test_mini_sample.json, filtered to distinct, non-overlapping
short choices) and a few hand-made ones (notes, beeps, singers). Regenerate:

    python tests/data/parse/make_grader_corpus.py

Fields: case, style, raw, options, labels_shown, label (grader), note, expect (non-answers: the
reason class the parser must name).
"""
from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

HERE = Path(__file__).resolve().parent
L = string.ascii_uppercase
FW = {c: chr(ord(c) + 0xFEE0) for c in "ABCD"}  # full-width letters


def _ok(choices: list[str]) -> bool:
    low = [c.lower() for c in choices]
    neg = ("not", "no ", "none", "isn't", "n't", "never")
    return (len(set(low)) == len(low) == 4 and all(3 <= len(c) <= 45 for c in choices)
            and not any(a != b and a in b for a in low for b in low)
            and not any(n in c for c in low for n in neg) and not any("," in c for c in choices)
            and not any(re.match(r"[A-G][#b]?(?::|m\b|$)", c) for c in choices))  # chords read like letters


def option_sets() -> list[list[str]]:
    mmau = json.loads((HERE / "mmau_test_mini_sample.json").read_text())
    sets = [it["choices"] for it in mmau if _ok(it["choices"])]
    sets += [["Dog barking", "Cat meowing", "Rain falling", "Car horn"],
             ["Vacuum cleaner", "Hair dryer", "Ceiling fan", "Blender"],
             ["Bicycle", "Skateboard", "Horse", "Scooter"],
             ["Campfire", "Fireplace", "Stove", "Bonfire"],
             ["Female singer", "Male singer", "Choir", "Children's choir"],
             ["one beep", "two beeps", "three beeps", "four beeps"],
             ["Laptop", "Smartphone", "Radio", "Television"],
             ["Church bell", "Doorbell", "Bicycle bell", "School bell"],
             ["Thunderstorm", "Waterfall", "Ocean waves", "Traffic"]]
    return sets


def opts(choices: list[str]) -> list[dict]:
    return [{"label": L[i], "text": c} for i, c in enumerate(choices)]


NEUTRAL = ["Let me think about the audio step by step.", "The clip is short and fairly clean.",
           "I will go through the options one at a time.", "The recording has a steady background level.",
           "First, consider the overall character of the sound.", "Listening carefully, a few details stand out."]
REJECT = ["'{y}' does not fit what is heard.", "The option '{y}' is unlikely here.",
          "It is not {y}, since that would sound different.", "{y} can be ruled out.",
          "I don't think it is {y}."]
CONCLUDE = ["Therefore, the answer is {x}.", "So the most appropriate answer is '{x}'.",
            "Therefore, the correct answer is \"{x}\".", "In conclusion, {x}.", "Final answer: {x}",
            "Thus, I would choose {x}.", "Overall, the best match is {x}.", "**{x}**",
            "<answer>{x}</answer>", "The answer is \\boxed{{{x}}}.", "So the answer is {xl}.",
            "Therefore, it is most likely {xl}."]
AFTER = ["", "", " I hope this helps.", " Let me know if you need anything else."]


class Corpus:
    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.rows: list[dict] = []
        self.sets = option_sets()

    def add(self, style: str, raw: str, options: list[dict], label: str | None, note: str,
            labels_shown: bool = True, expect: str | None = None) -> None:
        n = sum(r["style"] == style for r in self.rows)
        row = {"case": f"{style}-{n:03d}", "style": style, "raw": raw, "options": options,
               "labels_shown": labels_shown, "label": label, "note": note}
        if expect:
            row["expect"] = expect  # the non-answer class the parser must name
        self.rows.append(row)

    def pick(self):
        ch = self.rng.choice(self.sets)
        i, j, k = self.rng.sample(range(4), 3)
        return ch, opts(ch), i, j, k

    # --- styles ---------------------------------------------------------------------------------
    def cot_conclusion(self, n: int) -> None:
        for _ in range(n):
            ch, o, i, j, k = self.pick()
            body = [self.rng.choice(NEUTRAL), self.rng.choice(REJECT).format(y=ch[j])]
            if self.rng.random() < 0.5:
                body.append(self.rng.choice(REJECT).format(y=ch[k]))
            end = self.rng.choice(CONCLUDE).format(x=ch[i], xl=ch[i].lower())
            self.add("cot-conclusion", " ".join(body) + " " + end + self.rng.choice(AFTER), o, L[i],
                     "reasoning rejects other options, then concludes with one option's text")

    def cot_label(self, n: int) -> None:
        forms = ["Therefore, the answer is ({l}).", "Answer: {l}", "**Answer: {l}**", "The correct option is {l}.",
                 "So I choose {l}.", "Final answer: ({l})", "Hence the answer is {l}. {x} matches the audio best."]
        for _ in range(n):
            ch, o, i, j, k = self.pick()
            body = (f"Option {L[j]} ({ch[j]}) would sound different. "
                    f"Option {L[k]}, {ch[k]}, is possible but less consistent with the clip. ")
            self.add("cot-label", body + self.rng.choice(forms).format(l=L[i], x=ch[i]), o, L[i],
                     "discusses other lettered options, then states one letter")

    def invented_letters(self, n: int) -> None:
        forms = ["The answer is (E).", "Option F", "I choose G.", "The answer is E.", "Answer: (X)",
                 "The correct option is Z.", "E", "(F)"]
        for t in range(n):
            ch, o, i, j, k = self.pick()
            pre = self.rng.choice(["", "After listening, ", "Based on the clip, "])
            raw = pre + forms[t % len(forms)]
            self.add("invented-letters", raw[0].upper() + raw[1:], o, None, "a letter that is not an option")

    def quoted_refusals(self, n: int) -> None:
        quotes = ["\"I'm sorry, but I just sat in this line for an hour.\"", "\"I don't know what you mean.\"",
                  "\"I am not sure about that,\"", "\"As an AI, I cannot help you.\"",
                  "\"I apologize for the delay.\""]
        for t in range(n):
            ch, o, i, j, k = self.pick()
            q = quotes[t % len(quotes)]
            if t % 2:
                raw = f"The second speaker says {q} Therefore, the answer is {ch[i]}."
                lab = L[i]
            else:
                raw = f"In the clip someone says {q} Based on this, the answer is ({L[i]})."
                lab = L[i]
            self.add("quoted-refusals", raw, o, lab, "a refusal phrase inside quoted speech, then an answer")

    def refusals(self, n: int) -> None:
        forms = ["I'm sorry, but I cannot listen to audio files. Based on the question alone, the most likely answer "
                 "is {x}.", "As an AI language model, I can't hear the clip. I'd guess ({l}).",
                 "I cannot determine the answer from the audio provided.", "There is no audio provided, so I can't "
                 "answer. If I had to pick, {l}.", "I apologize, but I am unable to process audio. Answer: {l}",
                 "None of the options match the sound.", "I'm unable to listen to the recording, but {x} seems "
                 "plausible.", "I'm not sure what the sound is; I can't tell from the audio.",
                 "Sorry, as a text-based model I do not have the ability to hear audio."]
        # a refusal followed by an answer stated in so many words or a conclusion naming one option (not
        # hedged, not supposed), or by the pick it makes when pressed ("If I had to pick, C"), is that answer,
        # as the blind rounds of the collected corpus grade it ("a pick after a refusal or doubt that names one
        # option is that option"); "I'd guess" and a supposition stay no answer
        picks = {0, 3, 4, 6}
        for t in range(n):
            ch, o, i, j, k = self.pick()
            if t % len(forms) in picks:
                self.add("refusals", forms[t % len(forms)].format(x=ch[i], l=L[i]), o, L[i],
                         "a refusal, then an answer stated in so many words: that answer")
            else:
                self.add("refusals", forms[t % len(forms)].format(x=ch[i], l=L[i]), o, None,
                         "refuses the task, or only guesses after the refusal: no answer")

    def hedges(self, n: int) -> None:
        forms = ["It could be {x} or {y}.", "Either ({l}) or ({m}).", "I'm not sure, maybe {x}.",
                 "{x}, or possibly {y}.", "Both {x} and {y} are plausible.", "Between ({l}) and ({m}), I can't decide.",
                 "The answer is {l} or {m}.", "It might be {x}, but it might also be {y}.", "{l}/{m}",
                 "I am not certain; perhaps {x}."]
        for t in range(n):
            ch, o, i, j, k = self.pick()
            self.add("hedges", forms[t % len(forms)].format(x=ch[i], y=ch[j], l=L[i], m=L[j]), o, None,
                     "commits to no single option")

    def echoed_options(self, n: int) -> None:
        for t in range(n):
            ch, o, i, j, k = self.pick()
            listing = "\n".join(f"{L[q]}. {ch[q]}" for q in range(4))
            kind = t % 5
            if kind == 0:
                raw, lab = f"The options are:\n{listing}\nThe answer is: {L[i]}", L[i]
            elif kind == 1:
                raw, lab = "Choices: " + " ".join(f"({L[q]}) {ch[q]}" for q in range(4)) + f". Answer: {L[i]}", L[i]
            elif kind == 2:
                raw, lab = f"Here are the options:\n{listing}", None
            elif kind == 3:
                raw, lab = f"{listing}\n\nAnswer: {L[i]}. {ch[i]}", L[i]
            else:
                raw, lab = f"Options:\n{L[0]}.", None
            self.add("echoed-options", raw, o, lab, "the option list echoed, with or without an answer")

    def paraphrases(self, n: int) -> None:
        nouns = [["Dog", "Cat", "Cow", "Horse"], ["Smartphone", "Laptop", "Radio", "Television"],
                 ["Church bell", "Doorbell", "Wind chime", "Car horn"], ["Bicycle", "Skateboard", "Scooter", "Tractor"],
                 ["Guitar", "Violin", "Trumpet", "Drum"], ["Bird", "Frog", "Cricket", "Owl"]]
        forms = ["{p}", "{p}.", "It sounds like {p}.", "I can hear {p} in this recording.", "The sound comes from {p}.",
                 "the {s}", "THE {S}", "'{s}'", "It's a {s}.", "Clearly the {s}."]
        for t in range(n):
            ch = self.rng.choice(nouns)
            o = opts(ch)
            i = self.rng.randrange(4)
            s = ch[i].lower()
            p = s + ("es" if s.endswith(("ch", "sh")) else "s")
            self.add("paraphrases", forms[t % len(forms)].format(p=p, s=s, S=s.upper()), o, L[i],
                     "the option's text with plural, article, case or quotes changed")
        # true synonym paraphrases: a grader reads them, a rule parser does not (counted as misses)
        syn = [("A pooch is yapping.", ["Dog barking", "Cat meowing", "Rain falling", "Car horn"], "A"),
               ("Water is dropping from the sky.", ["Dog barking", "Cat meowing", "Rain falling", "Car horn"], "C")]
        for raw, ch, lab in syn:
            self.add("paraphrases", raw, opts(ch), lab, "a synonym paraphrase (no option words)")

    def cjk(self, n: int) -> None:
        forms = ["答案是{l}", "答案：{l}", "正确答案是（{l}）", "{fw}", "选{l}", "答案是{l}。因为声音很明显。",
                 "最终答案：{l}", "答案为{fw}", "答案是{l}或{m}", "我不确定，可能是{l}或{m}"]
        for t in range(n):
            ch, o, i, j, k = self.pick()
            f = forms[t % len(forms)]
            lab = None if "或" in f else L[i]
            self.add("cjk", f.format(l=L[i], m=L[j], fw=FW[L[i]]), o, lab, "CJK answer markers / full-width letters")

    def degenerate(self, n: int) -> None:
        for t in range(n):
            ch, o, i, j, k = self.pick()
            kind = t % 6
            if kind == 0:
                raw, lab, note = (f"{L[i]} " * 300).strip(), None, "a bare letter repeated to max tokens"
            elif kind == 1:
                raw, lab, note = f"The answer is {L[i]}. " * 80, L[i], "one answer statement repeated"
            elif kind == 2:
                listing = " ".join(f"{L[q]}. {ch[q]}" for q in range(4)) + " "
                raw, lab, note = listing * 60, None, "the option list looping"
            elif kind == 3:
                raw, lab, note = "Let me listen again. " * 120, None, "a reasoning loop with no answer"
            elif kind == 4:
                raw = f"The first sound is {ch[j].lower()}, and then " * 50
                lab, note = None, "a description looping, unfinished"
            else:
                raw = f"{ch[i]}\n" * 100
                lab, note = L[i], "one option text repeated"
            self.add("degenerate", raw, o, lab if kind != 5 else None,
                     note if kind != 5 else "one option text repeated to max tokens (degenerate, no statement)")

    def think_blocks(self, n: int) -> None:
        for t in range(n):
            ch, o, i, j, k = self.pick()
            kind = t % 5
            if kind == 0:
                raw, lab = f"<think>Maybe {ch[j]}? Or ({L[k]})...</think>\nThe answer is {ch[i]}.", L[i]
            elif kind == 1:
                raw, lab = f"<think>The clip suggests {ch[i]}, so maybe the answer is {L[i]}", None
            elif kind == 2:
                raw, lab = f"<think>Compare {ch[j]} and {ch[i]}.</think><answer>{L[i]}</answer>", L[i]
            elif kind == 3:
                raw, lab = f"Hmm, {ch[j]} or {ch[i]}. I lean to {ch[i]}.</think>\n\n{ch[i]}", L[i]
            else:
                raw, lab = f"<think>I think it is ({L[i]}) {ch[i]}. Let me double check the other", None
            self.add("think-blocks", raw, o, lab, "closed blocks are skipped; an unclosed scratchpad is not an answer")

    def label_text(self, n: int) -> None:
        for t in range(n):
            ch, o, i, j, k = self.pick()
            kind = t % 6
            raw, lab = [
                (f"Answer: ({L[i]}) {ch[j]}", None), (f"{L[i]}. {ch[j]}", None),
                (f"The answer is {L[i]}: {ch[j]}", None), (f"Answer: ({L[i]}) {ch[i]}", L[i]),
                (f"{L[i]}. {ch[i]}", L[i]), (f"The answer is ({L[i].lower()}) {ch[i]}.", L[i])][kind]
            self.add("label-text", raw, o, lab, "a letter with its own text, or with another option's text")

    def negation_scope(self, n: int) -> None:
        for t in range(n):
            ch, o, i, j, k = self.pick()
            kind = t % 6
            raw, lab = [
                (f"There are no other prominent sounds in the clip. It is most likely {ch[i].lower()}.", L[i]),
                (f"It is not {ch[j]}, it is {ch[i]}.", L[i]),
                (f"It sounds like {ch[i]}, not {ch[j]}.", L[i]),
                (f"The answer is {ch[i]}. There is no {ch[j].lower()} in the audio.", L[i]),
                (f"It is not {ch[i]}.", None),
                (f"Neither {ch[i]} nor {ch[j]}.", None)][kind]
            self.add("negation-scope", raw, o, lab, "a negation vetoes only its own clause")

    def short_forms(self, n: int) -> None:
        forms = ["{l}", "{ll}", "({l})", "{l}.", "**{l}**", "Answer: {l}", "The answer is {l}.", "[{l}]",
                 "{l})", "The correct answer is ({l}).", "I choose option {l}.", " {l}</s>", "{l}<|im_end|>"]
        for t in range(n):
            ch, o, i, j, k = self.pick()
            self.add("short-forms", forms[t % len(forms)].format(l=L[i], ll=L[i].lower()), o, L[i],
                     "a bare or formatted letter")

    def hidden_labels(self, n: int) -> None:
        sets = [["C", "D", "G", "A"], ["E", "F#", "Bb", "C"], ["A", "E", "D", "G"]]
        forms = ["{x}", "The note is {x}.", "The answer is {x}.", "I hear {x}.", "{x}."]
        for t in range(n):
            ch = self.rng.choice(sets)
            i = self.rng.randrange(4)
            self.add("hidden-labels", forms[t % len(forms)].format(x=ch[i]), opts(ch), L[i],
                     "the prompt showed no letters: letter-like option texts are texts", labels_shown=False)
        for ch in sets:
            self.add("hidden-labels", "A dog barks in the distance.", opts(ch), None,
                     "the article 'A' is not the note A", labels_shown=False)

    def issue_verbatim(self) -> None:
        v = [("The correct answer is 'She is quitting to teach the third grade'.",
              ["She is moving to another city", "She is quitting to teach the third grade", "She got a promotion",
               "She is retiring"], "B"),
             ("The rhythm and crackling fit a hearth indoors. Therefore, the most appropriate answer is 'Fireplace'.",
              ["Campfire", "Fireplace", "Stove", "Bonfire"], "B"),
             ("Wheels roll on pavement with clacks at joints. A bicycle would be quieter. Therefore, the source "
              "being ridden is most likely a skateboard.", ["Bicycle", "Skateboard", "Horse", "Scooter"], "B"),
             ("The voice has natural breathing, unlike a parrot or a robot. Therefore, the answer is (c) Human.",
              ["Parrot", "Robot", "Human", "Dog"], "C"),
             ("Smartphones", ["Laptop", "Smartphone", "Radio", "Television"], "B"),
             ("The motor hum is steady. There are no other prominent sounds in the recording. The hot-air whoosh "
              "is most likely a hair dryer.", ["Vacuum cleaner", "Hair dryer", "Ceiling fan", "Blender"], "B"),
             ("The customer says, \"I'm sorry, but I just sat in this line for an hour.\" Therefore, the answer "
              "is An hour.", ["Ten minutes", "Half an hour", "An hour", "Two hours"], "C"),
             ("Answer: (B) a short pause", ["a short pause", "a long pause"], None),
             ("<think> The two beeps are close together... maybe the answer is A",
              ["a short pause", "a long pause"], None),
             ("答案是B", ["a short pause", "a long pause"], "B"), ("答案：B", ["a short pause", "a long pause"], "B"),
             ("Ｂ", ["a short pause", "a long pause"], "B"),
             ("The answer is E:maj7/1", ["C:maj/3", "E:maj7/1", "G:min", "D:7"], "B"),
             ("The closest option is 2.18 seconds", ["1.52 seconds", "2.18 seconds", "2.45 seconds", "3.10 seconds"],
              "B"),
             ("The two names are said in that order, so the best answer is (c) Orson, Rosa",
              ["Rosa, Orson", "Orson", "Orson, Rosa", "Rosa"], "C"),
             ("Based on the instruments, the answer is (d)", ["Tribal", "Jazz", "Classical", "Electronic"], "D"),
             ("Question: what is heard? Choices: A. Thunder B. Birds chirping C. White noise D. Wind blowing. "
              "The correct answer is: D", ["Thunder", "Birds chirping", "White noise", "Wind blowing"], "D"),
             ("Option A, thunder, would be louder, and option C, white noise, would be flat. The chirps are "
              "clear. \\boxed{B}", ["Thunder", "Birds chirping", "White noise", "Wind blowing"], "B"),
             ("The vocal is high and breathy, a solo female singer. The answer is B.",
              ["Female singer", "Male singer", "Choir", "Children's choir"], None),
             ("Options:\nA.", ["Female singer", "Male singer", "Choir", "Children's choir"], None),
             (("D " * 400).strip(), ["Thunder", "Birds chirping", "White noise", "Wind blowing"], None)]
        for raw, ch, lab in v:
            self.add("issue-verbatim", raw, opts(ch), lab, "an example quoted in the parser's issue")

    def long_cot(self) -> None:
        """Hand-written long chain-of-thought outputs, one per option set, ending in a conclusion."""
        for t, ch in enumerate(self.sets):
            o = opts(ch)
            i, j, k = (t % 4), ((t + 1) % 4), ((t + 2) % 4)
            raw = (f"To answer this, I first listen to the whole clip. The opening seconds are quiet, then the main "
                   f"sound starts. Some listeners might say {ch[j]}, and that was my first impression too. However, "
                   f"on a second listen the texture is different from {ch[j]}. {ch[k]} is another candidate, but the "
                   f"timing does not fit it.\n\nWeighing everything, the answer is {ch[i]}.")
            self.add("long-cot", raw, o, L[i], "long reasoning naming several options, one final conclusion")
            raw2 = (f"Step 1: identify the main sound. Step 2: compare with the options.\n- ({L[j]}) {ch[j]}: "
                    f"possible.\n- ({L[i]}) {ch[i]}: possible.\nBoth seem to fit, so I cannot decide between them.")
            self.add("long-cot", raw2, o, None, "long reasoning that ends undecided")


ANIMALS = ["Dog barking", "Cat meowing", "Rain falling", "Car horn"]
WEATHER = ["Calm weather", "Stormy weather", "Snowfall", "Heatwave"]
MOOD = ["Joyful", "Suspenseful", "Calm", "Sad"]
SINGER = ["Female singer", "Male singer", "Choir", "Children's choir"]
BEEPS = ["one beep", "two beeps", "three beeps", "four beeps"]
FREEFORM = [  # written one by one, in the voices of real systems (instruction-tuned, reasoning, cascades)
    ("The audio features a dog barking repeatedly in the background.", ANIMALS, "A"),
    ("I hear what sounds like a car horn honking twice, followed by traffic.", ANIMALS, "D"),
    ("Based on the audio, the sound is rain falling on a roof. It is steady and soft.", ANIMALS, "C"),
    ("There is thunder and heavy wind, which points to stormy weather.", WEATHER, "B"),
    ("The music is slow and in a minor key, so the mood is sad.", MOOD, "D"),
    ("The music builds tension with low strings; I'd describe it as suspenseful rather than calm.", MOOD, "B"),
    ("The piece feels calm at first but becomes joyful later.", MOOD, None),
    ("The singer has a deep voice. **Answer: Male singer**", SINGER, "B"),
    ("A group of voices sing in harmony - it is a choir, not a solo female singer.", SINGER, "C"),
    ("Counting the tones: beep... beep... beep. That is three beeps.", BEEPS, "C"),
    ("I counted two beeps, though a third one might be hidden under the noise.", BEEPS, None),
    ("Two beeps? Three beeps? Hard to say.", BEEPS, None),
    ("The first event is a dog barking and the second is a cat meowing.", ANIMALS, None),
    ("Answer: C) Rain falling", ANIMALS, "C"),
    ("The correct choice would be B - cat meowing - because of the high pitch.", ANIMALS, "B"),
    ("The sound matches option 2, a cat meowing.", ANIMALS, "B"),
    ("My best guess is D.", ANIMALS, "D"),
    ("Sound: car horn. Confidence: high.", ANIMALS, "D"),
    ("Caption: a dog barks while rain falls on a metal roof.", ANIMALS, None),
    ("It's hard to say for sure, but it seems to be rain falling.", ANIMALS, "C"),
    ("I can hear rain falling, but I cannot determine whether a dog is also barking.", ANIMALS, "C"),
    ("Snowfall is silent, so it is not snowfall; the wind and thunder mean stormy weather.", WEATHER, "B"),
    ("The weather sounds calm. Actually, listening again, there is thunder, so stormy weather.", WEATHER, "B"),
    ("Heatwave", WEATHER, "D"),
    ("stormy", WEATHER, None),
    ("The answer is A, dog barking.", ANIMALS, "A"),
    ("The answer is A, cat meowing.", ANIMALS, None),
    ("Final Answer: The final answer is $\\boxed{C}$", ANIMALS, "C"),
    ("<answer>Rain falling</answer>", ANIMALS, "C"),
    ("I would say the mood is joyful. The tempo is fast and the melody bright. Definitely not sad.", MOOD, "A"),
]


def main() -> None:
    c = Corpus()
    for raw, ch, lab in FREEFORM:
        c.add("freeform", raw, opts(ch), lab, "hand-written in the voice of a real system")
    c.issue_verbatim()
    c.long_cot()
    c.cot_conclusion(70)
    c.cot_label(40)
    c.invented_letters(24)
    c.quoted_refusals(20)
    c.refusals(27)
    c.hedges(40)
    c.echoed_options(30)
    c.paraphrases(40)
    c.cjk(30)
    c.degenerate(30)
    c.think_blocks(30)
    c.label_text(30)
    c.negation_scope(36)
    c.short_forms(39)
    c.hidden_labels(20)
    from grader_corpus_r3 import CASES  # round 3, written blind; appended so earlier cases keep their ids

    for style, raw, ch, lab, expect, note in CASES:
        c.add(style, raw, opts(ch), lab, note, expect=expect)
    out = HERE / "grader_corpus.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in c.rows), encoding="utf-8")
    print(f"{out}: {len(c.rows)} outputs")


if __name__ == "__main__":
    main()
