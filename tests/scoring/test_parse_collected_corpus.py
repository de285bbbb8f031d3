"""The parser against a careful grader on outputs collected, not written: 7,191 real outputs of 17
systems that their authors released in public repositories (tests/data/parse/collected/, sources,
commits and licences in its README), 650 of them graded blind before the 2.2 rules were written
(labels.jsonl: the option a careful reader takes, or none), 300 outputs of four later systems graded
blind before the 2.3 rules (labels_round5.jsonl), and the later rounds. The labels are data: a rule
change that moves one shows here. Then the 2.2 and 2.3 rules, each on the shape of output that
called for it.

    PYTHONPATH=$PWD .venv/bin/python -m pytest tests/scoring/test_parse_collected_corpus.py -s
prints the per-system table (also ``bench/parser_agreement.py``)."""
import json
from collections import Counter

import pytest

from bench.parser_agreement import COLLECTED, ROUNDS, collected_rows, tally, total
from lalmbench.scoring.parse import parse_answer

ROWS = collected_rows()


def test_the_collected_corpus_is_real_outputs_of_many_systems_with_their_sources():
    outputs = [json.loads(line) for p in sorted(COLLECTED.glob("*.jsonl")) if not p.name.startswith("labels")
               for line in p.read_text(encoding="utf-8").splitlines()]
    readme = (COLLECTED / "README.md").read_text(encoding="utf-8")
    assert len(outputs) >= 2000 and len({r["system"] for r in outputs}) >= 8
    for r in outputs:
        # the README names each repository and commit (short), the records the full commit
        assert r["repo"] in readme and len(r["commit"]) == 40 and r["commit"][:7] in readme, r["case"]
        assert r["path"] and r["raw"] is not None, r["case"]
        assert len(r["options"]) >= 2 and r["question"], r["case"]
    systems = Counter(r["system"] for r in ROWS)
    assert len(ROWS) >= 600 and len(systems) >= 8 and min(systems.values()) >= 30, systems
    labels = {r["case"]: {o["label"] for o in r["options"]} for r in ROWS}
    assert all(r["label"] is None or r["label"] in labels[r["case"]] for r in ROWS)
    assert sum(r["label"] is None for r in ROWS) >= 30


def test_agreement_with_blind_grading_of_real_outputs_meets_the_targets():
    systems = tally(ROWS, "system")
    for name in sorted(systems):
        print(systems[name].row("collected", name))
    t = total(systems)
    print(t.row("collected", "all"))
    assert t.wrong == 0
    assert t.agreement >= 0.98
    assert t.conclusion_rate >= 0.90
    assert t.unparseable_rate <= 0.08


@pytest.mark.parametrize("labels", ROUNDS[1:])
def test_later_grading_rounds_keep_zero_wrong_labels(labels):
    """Samples graded after the rules of one round and before the next: what they found was fixed,
    and no fix may cost a wrong label anywhere."""
    t = total(tally(collected_rows(labels), "system"))
    print(t.row(labels, "all"))
    # rounds 11 to 13 each keep one over-read (round 15 keeps MMAU's word match on a count list): a label slot ("<C C>", a bare "<B>") after reasoning that the
    # grader reads as arguing for another option in words the parser does not match ("a police officer obtaining
    # information from an informant"; "'Octavia' appears before 'orange'")
    # round 25 keeps two: a bare '<B>' after a reasoning that rules out 'happiness' (not matched to 'happy') and a
    # line 'A) Far away - This option is incorrect'; round 29 one: "The word 'four' starts at <|3.28|> seconds" read
    # as the count 'four'
    over = {"labels_round25.jsonl": 2}.get(labels, 1 if labels in (
        "labels_round11.jsonl", "labels_round12.jsonl", "labels_round13.jsonl", "labels_round15.jsonl",
        "labels_round16.jsonl", "labels_round17.jsonl", "labels_round20.jsonl", "labels_round22.jsonl",
        "labels_round29.jsonl") else 0)
    assert t.wrong == 0 and t.over <= over
    # rounds 7 to 9 (issue 38's target, 97%): of rounds 7 and 8's four misses, two are a bare numeral that
    # is one option's label and another's text (refused by rule), one needs the question ("which were not
    # launched"), one a later sentence's "10" that is no answer; round 9's two are paraphrased conclusions
    # rounds 10 to 12 (README, "Rounds 10 to 12"): what they still miss is mostly Qwen3-Omni-Thinking's thinking
    # text, cut before its answer line, and other paraphrases no rule reads without guessing; round 13 (README,
    # "Round 13") misses the same families more often: yes/no answers said as a statement about the question
    # ("the bird did not listen"), counts in other words ("2 participants" for "two", "one cat" for "1"),
    # paraphrased option texts
    floor = {"labels_round7.jsonl": 0.97, "labels_round8.jsonl": 0.97, "labels_round9.jsonl": 0.97,
             "labels_round10.jsonl": 0.955, "labels_round11.jsonl": 0.965, "labels_round12.jsonl": 0.95,
             "labels_round13.jsonl": 0.95, "labels_round14.jsonl": 0.95, "labels_round15.jsonl": 0.945,
             "labels_round16.jsonl": 0.965, "labels_round17.jsonl": 0.965, "labels_round18.jsonl": 0.965,
             "labels_round19.jsonl": 0.95, "labels_round20.jsonl": 0.97,
             "labels_round21.jsonl": 0.96, "labels_round22.jsonl": 0.97, "labels_round23.jsonl": 0.96,
             "labels_round24.jsonl": 0.935, "labels_round25.jsonl": 0.94, "labels_round26.jsonl": 0.97,
             "labels_round27.jsonl": 0.965, "labels_round28.jsonl": 0.955, "labels_round29.jsonl": 0.92}
    assert t.agreement >= floor.get(labels, 0.98)


def _opts(*texts):
    return [{"label": "ABCDEFGH"[i], "text": t} for i, t in enumerate(texts)]


SOUNDS = _opts("Dog barking", "Cat meowing", "Bird singing", "Rain")
GENRES = _opts("Country", "Afrobeat", "Classical", "Heavy Metal")
WATER = _opts("Rain falling on a roof", "Water boiling", "Frying food", "Air bubbling through water")
TIMES = _opts("1 times", "3 times", "2 times", "4 times")

# (why, raw, options, labels shown, label the grader takes)
RULES_2_2 = [
    ("a stray closing answer tag after the conclusion",
     "The music has polyrhythmic percussion and horns. The other genres listed (Country, Classical, Heavy Metal) "
     "are not typically associated with these elements.\n\nTherefore, the answer is Afrobeat.\n</answer>",
     GENRES, True, "B"),
    ("a conclusion after an echoed option list, before trailing markup",
     "Options:\n(a) 1.5 seconds\n(b) 2.18 seconds\n(c) 3.0 seconds\n\nThe sound lasts a bit over two seconds. "
     "The closest option is 2.18 seconds.\n</answer>", _opts("1.5 seconds", "2.18 seconds", "3.0 seconds"), True, "B"),
    ("a template's own answer tag", "<Reasoning>High chirps.</Reasoning>\n<Conclusion>Bird singing</Conclusion>",
     SOUNDS, True, "C"),
    ("a label before a closing tag", "<Reasoning>High chirps.</Reasoning>\nC</Conclusion>", SOUNDS, True, "C"),
    ("a label alone in angle brackets", "<Reasoning>High chirps.</Reasoning>\n<C>", SOUNDS, True, "C"),
    ("an empty answer block is a non-answer", "<Reasoning>Too noisy.</Reasoning>\n<Conclusion>N/A</Conclusion>",
     SOUNDS, True, None),
    ("an answer, then a junk loop", "<answer>B</answer>\n" + "Human\n" * 30, SOUNDS, True, "B"),
    ("an invented next turn", "The answer is B.\n\nHuman: and what about option A?", SOUNDS, True, "B"),
    ("an analysis cut off in an option-by-option list",
     "Let me consider each option:\n* **(a) Rain falling on a roof:** a steady pattern of drops.\n"
     "* **(d) Air bubbling through water:** This scenario is characterized by", WATER, True, None),
    ("an analysis that trails off",
     "The first part sounds like a dog barking, but the second has a cat meowing... So based on what I heard...",
     SOUNDS, True, None),
    ("a label on the first line, then a cut-off explanation",
     "B\nExplanation: the cat meowing is heard because the", SOUNDS, True, "B"),
    ("a near-miss spelling in quoted speech is no answer",
     'The speaker says: "turn right at the second light and then go straight". Let me count',
     _opts("two", "five", "eight", "ten"), True, None),
    ("two options named are never credited", "['Bm', 'F#m']", _opts("Bm", "F#m", "C", "G"), True, None),
    ("a chord written as one word", "The chord is F#m.", _opts("Bm", "F#m", "C", "G"), True, "B"),
    ("a list of pairs is no answer", "1. wonderful, 1980s → Most relevant pair\n3. fantastic, 1920s → Less relevant pair",
     _opts("wonderful, 1980s", "terrible, 1950s", "fantastic, 1920s"), True, None),
    ("an explicit label after a negated clause",
     "The woman told the second speaker not to look at her left hand. The answer is A.",
     _opts("She told him not to look", "She asked for a ring", "She laughed"), True, "A"),
    ("a statement continued after a colon", "Therefore, the correct answer is:\n\n* Bird singing", SOUNDS, True, "C"),
    ("the last marked statement that names an option",
     "The beat points toward electronic dance music. This isn't folk. It's definitely got a club-ready beat.",
     _opts("Folk", "Electronic dance music", "Jazz", "Rock"), True, "B"),
    ("an answer that is no option", 'Counting the beats, the correct answer is "eleven".',
     _opts("Nine", "Ten", "Twelve", "Eight"), True, None),
    ("every word of one option", "The timbre points toward reed stops within a pipe organ.",
     _opts("Reed stops of pipe organ", "Flute stops of pipe organ", "Accordion"), True, "A"),
    ("a negated list", "There are no sirens, horns, or engines. It is a violin.",
     _opts("Violin", "Cello", "Sirens", "Engines"), True, "A"),
    ("hidden labels: an option by its place", "Listening again, option A seems most accurate.", SOUNDS, False, "A"),
    ("hidden labels: an option by its ordinal", "The second option matches perfectly.", SOUNDS, False, "B"),
    ("hidden labels: the model's own lettering differs",
     "Option B: Bird singing. Option A: Dog barking. So option B seems most accurate.", SOUNDS, False, None),
    ("hidden labels: the count says another option",
     "The loop runs exactly three iterations. This matches option C.", TIMES, False, None),
    ("a digit option by its number word", "The beep happens three times.", TIMES, True, "B"),
    ("the same words in another order", "The sound moves from far to near, clearly.",
     _opts("From near to far", "From far to near", "Static"), True, "B"),
    # found by grading a held-out sample of the collected outputs after the rules above
    ("a Latin word runs on into CJK text, and a tag-less answer slot",
     "<Reasoning>这种重复的模式在Canon这种作曲技法中很常见。而Fugue，等技法不会这样重复。</Reasoning>，Conclusion，A，",
     _opts("Canon", "Fugue", "Echo and compressed reverb"), True, "A"),
    ("an answer slot after reasoning that ends describing another option",
     "<Reasoning>This implies the boy was thrown into the water and the man pulls him out.</Reasoning>"
     "<Conclusion>B</Conclusion>", _opts("Thrown into the water", "Pulled out of the water", "Taken to the shore"),
     True, "B"),
    ("an emotion named by its noun", "It aligns best with a state of sadness rather than fear, anger, or disgust.",
     _opts("fear", "angry", "disgust", "sad"), True, "D"),
    ("a negated list whose last item runs on", "I would categorize the emotion as **neutral**. There is no "
     "indication of happiness, sadness, or anger in the tone or pace of the speaker's voice.",
     _opts("neutral", "happy", "sad", "angry"), True, "A"),
    ("'without speculation' negates nothing",
     "The motorized cutting sound makes chainsaw the only logical fit based on auditory evidence without speculation.",
     _opts("Electric drill", "Chainsaw", "Shovel", "Rope"), True, "B"),
    ("'without' after a commitment negates what follows it",
     "This aligns perfectly with standard walking behavior without any indication of the speed of running.",
     _opts("Walking", "Running"), True, "A"),
    ("'without' in a rejected option's line still rejects it",
     "- Stand-up Comedy matches perfectly with a solo performer\n- Concert implies music without a spoken monologue\n\n"
     "This appears to be classic stand-up comedy.", _opts("Ventriloquism", "Stand-up Comedy", "Concert"), True, "B"),
    # found by grading round 3
    ("'none of the options match exactly', then an answer", "However, none of the options exactly match 0.11. "
     "The closest option is 0.29. Based on the closest match, we would select:\nThe answer is (B) 0.29",
     _opts("0.34", "0.29", "0.41"), True, "B"),
    ("'none of the options' with no answer after it", "None of the options match what I hear.", SOUNDS, True, None),
    ("a label alone after the reasoning's closing tag",
     "<Reasoning>A revving engine, then a person speaking: a combination of an engine and a person.</Reasoning>A",
     _opts("Engine", "Person"), True, "A"),
    ("an answer slot whose tag degraded to one letter",
     "<Reasoning>Not the shock in option A, nor the frustration in option B.</Reasoning>\n<C> C </C>",
     _opts("Hearing a shocking statement.", "Throwing an object in frustration.", "Watching a sorrowful scene."),
     True, "C"),
    ("'other roles' are rejected with them", "Only \"Security inspector\" accurately describes these checks. Other "
     "roles don't match here: tour guides wouldn't open bags, police officers respond to crimes.",
     _opts("Tour guide", "Security inspector", "Police officer"), True, "B"),
]


@pytest.mark.parametrize("why,raw,options,shown,label", RULES_2_2, ids=[c[0] for c in RULES_2_2])
def test_rules_of_2_2(why, raw, options, shown, label):
    res = parse_answer(raw, options, labels_shown=shown)
    assert res.label == label, res.reason


SH = _opts("I do not have an answer", "Their boss", "Their dad", "Their mum", "Their friend")
# (why, raw, options, label the grader takes, status of a non-answer or None)
RULES_2_3 = [
    # found by grading round 5 (labels_round5.jsonl) blind, before any of these rules
    ("a label, then a fine-tuned model's privacy disclaimer",
     "C\nI'm sorry, but I can't disclose personal details or sensitive information.", SH, "C", None),
    ("a label, then a privacy disclaimer cut off", "C\n\nI'm sorry, but I can't share or access personal or private",
     SH, "C", None),
    ("a privacy disclaimer alone is a refusal", "I'm sorry, but I can't disclose personal details or sensitive "
     "information.", SH, None, "non-answer"),
    ("a label, then an invented turn opened by the speaker's name alone on its line", "C\nHuman\nHuman\n\n\nB\n\n\nC",
     SH, "C", None),
    ("a label, the speaker's name, then a disclaimer", "A\nHuman\nI'm sorry, but I can't disclose personal details or",
     SH, "A", None),
    ("a refusal that ends picking the options' own non-answer",
     "I'm sorry, but I don't have the information regarding the response from the person on the phone in the "
     "audio. So, the correct choice is A. I do not have an answer.", SH, "A", None),
    ("doubt about the audio, then the options' own non-answer by its text",
     "I cannot determine what letter the doctor wrote based on the given audio. The choice that fits this "
     "situation is:A. I do not have the information to answer the question.",
     _opts("I do not have the information to answer the question", "A referral", "A note for time off work"),
     "A", None),
    # found on ungraded outputs of the same release after round 6 (the rounds' labels do not move)
    ("'My response is' after a refusal, picking the options' own non-answer",
     "I'm sorry, but I can't determine what Speaker 2 would use the hand geometry for based on the audio content "
     "provided. My response is A. I do not have an answer.", SH, "A", None),
    ("'I'll choose' after a refusal, picking the options' own non-answer", "I'm sorry, but I can't determine the "
     "concern from the audio clip. Therefore, I'll choose B. I don't know.", _opts("Budget", "I don't know", "Time"),
     "B", None),
    ("the correct choice for a long subject is: a label", "The correct choice for the medium used for TV "
     "transmission is:A. Radio waves.", _opts("Radio waves", "Bluetooth", "Wi-Fi", "I do not have an answer"), "A",
     None),
    # 2.4: a committed pick of any option after a refusal is that option (the grader's rule, issue 38)
    ("a refusal, then a committed pick of a content option, is that option",
     "I'm sorry, but I cannot hear the audio. So, the correct choice is C. Their dad.", SH, "C", "label-pattern"),
    ("a refusal, then a pick, with no non-answer option", "I'm sorry, but I cannot hear the audio. The correct "
     "choice is A.", SOUNDS, "A", "label-pattern"),
    ("a refusal, then a guess, stays a refusal", "I'm sorry, but I cannot hear the audio. I'd guess C. Their dad.",
     SH, None, "non-answer"),
]


@pytest.mark.parametrize("why,raw,options,label,status", RULES_2_3, ids=[c[0] for c in RULES_2_3])
def test_rules_of_2_3(why, raw, options, label, status):
    res = parse_answer(raw, options, labels_shown=True)
    assert res.label == label, res.reason
    if status is not None:
        assert res.status == status, res.reason


_BY_CASE = {r["case"]: r for labels in ("labels_round7.jsonl", "labels_round8.jsonl", "labels_round9.jsonl")
            for r in collected_rows(labels)}


def _collected(case: str) -> dict:
    """One collected output by its case id, graded or not (the real shape a rule was written for)."""
    if case in _BY_CASE:
        return _BY_CASE[case]
    source = case.rsplit("-", 1)[0]
    for line in (COLLECTED / f"{source}.jsonl").read_text(encoding="utf-8").splitlines():
        if f'"{case}"' in line:
            return json.loads(line)
    raise KeyError(case)


# round 7 (MMAU-Pro outputs of one model on real audio and on white noise): each rule on the output
# that called for it, by case; graded ones must agree with the grader's label
RULES_ROUND_7 = [
    ("list items after the answer discuss the other options by bold heading ('* **Chorus:** Creates ...')",
     "mmau_pro_audio_noise-0661", "1", None),
    ("a bold option heading with its label in a 'why the others are less likely' list is no mention: the answer's "
     "own bold label reads", "mmau_pro_audio_noise-0217", "4", "label-pattern"),
    ("a bulleted timeline of the other options after the answer", "mmau_pro_audio_noise-0882", "3", None),
    ("'Here's why' items naming the rejected options do not contradict a label with its text",
     "mmau_pro_audio_noise-0950", "2", "label-pattern"),
    ("'Let's look at why the other options are less likely' after 'The correct answer is **3) ...**'",
     "mmau_pro_audio_noise-0481", "3", "label-pattern"),
    ("a bare number that is one option's label and another option's text answers 'How many ...?' as the count",
     "mmau_pro_audio_noise-0568", "4", "label-pattern"),
    ("the same in a boxed answer after the output counted the label's own text: ambiguous",
     "mmau_pro_audio_noise-0104", None, "unparseable"),
    ("a label followed by its own numeric text is whole ('4) 1')", "mmau_pro_audio_noise-0576", "4", None),
    ("'can't hear the instruments' describes the music, it refuses nothing", "mmau_pro_audio_noise-0195", "2",
     None),
    ("'no audio evidence' for the other options is no refusal", "mmau_pro_audio_noise-0857", "1", None),
    ("URLs it cannot access are not the audio", "mmau_pro_audio_noise-0304", "2", None),
    ("options named inside a quotation after the answer are its evidence", "mmau_pro_audio_noise-0803", "3", None),
    ("a request for the audio stays a non-answer", "mmau_pro_audio_noise-0973", None, "non-answer"),
    ("'cannot determine if it will increase, decrease, or remain constant' doubts the whole list",
     "mmau_pro_audio_noise-0075", "3", "conclusion"),
    ("'Speaker 1' and 'Speaker 2' name speakers, not the counts 1 and 2", "mmau_pro_audio_noise-0888", "1",
     "conclusion"),
    ("'If ..., then either 1) or 2) could be possible' after the answer supposes, it withdraws nothing",
     "mmau_pro_audio_noise-0327", "3", "label-pattern"),
    # ungraded outputs of the same files and of Qwen3-Omni, read while checking what the rules above change
    ("a heading with some of an option's words ('* **Park:**' for 'In a park') is a list item too",
     "mmau_pro_audio_noise-0433", "3", None),
    ("a lead-in whose colon opens the option-by-option list answers nothing; 'either 1 or 2' stays unread",
     "mmau_pro_audio_noise-0774", None, "unparseable"),
    ("a quoted option name ('\"Water Concerto\" emerges as optimal') is no quoted passage: it still blocks",
     "qwen3_omni_thinking-0489", None, "unparseable"),
    ("a quoted restated option still blocks an earlier one", "qwen3_omni_thinking-0104", None, "unparseable"),
    # found by round 8 (graded after the rules above; its cases below are graded)
    ("'options 2, 3, and 4 refer to ...' after the answer goes through the others", "mmau_pro_audio_noise-0202",
     "1", "label-pattern"),
    ("'While options 1, 2, and 3 are also true, option 4 best ...'", "mmau_pro_audio_noise-0439", "4",
     "label-pattern"),
    ("with numbered options, bare numbers in the working ('the set containing 1 and 2') hedge nothing",
     "mmau_pro_audio_noise-0470", "3", "label-pattern"),
    ("a bold label with its own text misspelt ('**3) Being punk**' for 'Beeing punk')", "mmau_pro_audio_noise-0416",
     "3", "label-pattern"),
    ("a bold label with its own text spaced otherwise ('the makeup' for 'The make up'); 'the other options are "
     "not mentioned' echoes no list", "mmau_pro_audio_noise-0409", "4", "label-pattern"),
    ("a slash option after 'the most likely is **2/4**. However, 2/4 is not one of the options'",
     "mmau_pro_audio_noise-0670", "2", "label-pattern"),
    ("'there are **2** languages' with option 4 '2' and label 2, asked how many: the count",
     "mmau_pro_audio_noise-0428", "4", "label-pattern"),
    # found by round 9 (graded blind after all the rules above; its cases below are graded)
    ("the option list copied out after the answer ('The ranking is:\n1. ...\n2. ...') is an echo, no later answer",
     "mmau_pro_audio_noise-0868", "3", "conclusion"),
    ("'Let me double-check all options: reading a book would involve silence; ...' after the answer",
     "qwen3_omni_thinking-0173", "D", "conclusion"),
    ("'The other options (Dentist, Teacher, Nurse) do not ...' after a sentence naming the one left",
     "af3_think-0390", "C", "conclusion"),
    ("'<C>Red Hand</C>': an answer slot tagged with one label holding another option's text",
     "qwen_omni_xml-0319", None, "unparseable"),
    ("'can occur in any of these places. It depends on ...' chooses no option", "salmonn_mmar-0076", None,
     "non-answer"),
    # ungraded outputs whose reads the round-9 rules changed
    ("'<C>two</C>' with A 'two': the same slot, ungraded", "qwen_omni_xml-0432", None, "unparseable"),
    ("'The other options, like a frog, dog, or sheep, do not ...' after 'the typical sound made by a cow'",
     "qwen_omni_xml-0489", "C", "conclusion"),
    # found by round 10 (graded blind after all the rules above; its cases below are graded)
    ("a 'Not food!' quoted elsewhere does not make 'Affected by sour' into 'Not affected by sour'",
     "qwen3_omni_thinking-0006", None, "unparseable"),
    ("an option holding its own negation is said by the negated clause ('he doesn't care enough about her')",
     "salmonn_mmar-0474", "D", "conclusion"),
    ("a possessive's 's' is no content word ('their luggage did not come out' for 'First speaker's luggage ...')",
     "steering_alms_mmau-0125", "A", "conclusion"),
    # ungraded outputs whose reads the round-10 rules changed
    ("'0.78 seconds' for '0.78 s'", "steering_alms_mmau-0185", "A", "conclusion"),
    # found by round 11 (graded blind after all the rules above; its cases below are graded)
    ("a closing line that is one option's whole text, after a marked sentence that names none",
     "muse_music-0215", "B", "conclusion"),
    ("... and after 'this final note', which marks no conclusion", "muse_music-0177", "B", "conclusion"),
    ("an answer-first sentence, then sentences that only explain it", "steering_alms_mmau-0330", "A", "conclusion"),
    ("'Choice A aligns best' after 'none of the choices seem perfect' picks A", "qwen3_omni_thinking-0111", "A",
     "conclusion"),
    ("'57.0 bpm' for '57.0 beats per minute'", "steering_alms_mmau-0716", "C", "conclusion"),
    # found by round 12 (graded blind after all the rules above)
    ("a people's name says its country ('Chinese cultural origins'); 'rather than Korean, Japanese or Indian "
     "traditions' negates the whole list, and a near-miss spelling after it is no answer",
     "qwen3_omni_thinking-0029", "C", "conclusion"),
    # rules written from rounds 10 to 12 for parser 2.5.0, before round 13 was graded
    ("another form of a one-word option's word ('imminent arrival' for 'Arriving')", "qwen3_omni_thinking-0238", "A",
     "conclusion"),
    ("'Newspaper office fits every detail' marks a conclusion", "qwen3_omni_thinking-0126", "C", "conclusion"),
    ("'A minor' names the chord 'A:min/P5'", "steering_alms_mmau-0661", "A", "conclusion"),
    ("'The tone is neutral, but ... sadness' after '**sad**' concedes and turns back to the answer",
     "speech_ifeval-0187", "C", "conclusion"),
    ("all the words of one option in another form ('plays staccato chords' for 'By playing staccato chords')",
     "steering_alms_mmau-0292", "A", "conclusion"),
    ("a marked sentence naming only vetoed options does not displace 'shocked fits best among given options'",
     "qwen3_omni_thinking-0300", "C", "conclusion"),
    # found by round 13 (graded blind after the 2.5.0 rules)
    ("'the most accurate answer is likely (F)' is an answer statement", "mmlu_pro-0221", "F", "label-pattern"),
    ("'None of these other animals make a sound like ...' is no 'none of the options'", "qwen_omni_xml-0565", "D",
     None),
    ("'these aren't the same pronunciation' with options 'The same' / 'Not the same'", "qwen3_omni_thinking-0354",
     "B", "conclusion"),
    # rules written from round 13's misses for parser 2.7.0, before round 14 was parsed
    ("a slot whose tag degraded to one letter holding an option's text ('<D>Two</D>')", "qwen_omni_xml-0431", "D",
     "conclusion"),
    ("a quotation ending its sentence ends a doubt's clause: 'I would choose the answer: \"They seem anxious but "
     "...\" The speaker is clearly worried and uncertain ...'", "speech_ifeval-0319", "A", "conclusion"),
    ("a count in digits before a plural noun names a number-word option ('2 participants' for 'two')",
     "steering_alms_mmau-0465", "D", "conclusion"),
    ("a short answer naming no option: most of the words only one option has ('the line is getting weak' for "
     "'Line failure')", "salmonn_mmar-0070", "A", "conclusion"),
    ("'makes it clear ... among the options presented' marks a conclusion", "qwen3_omni_thinking-0365", "D",
     "conclusion"),
    ("'point strongly to anger/fear-aggression' marks a conclusion", "qwen3_omni_thinking-0255", "C", "conclusion"),
    ("'Among options given, \"No, there is off-key singing\" best captures' marks a conclusion",
     "qwen3_omni_thinking-0450", "D", "conclusion"),
    ("'Let me check again: no Cantonese-like tonal variations (Guangdong), ...' goes through the options again",
     "qwen3_omni_thinking-0355", "D", "conclusion"),
    ("a quotation's last sentence ends a doubt's clause (the 'disgusted' quote before 'The other options ...')",
     "af3_think-0512", "B", "conclusion"),
    # found by round 14 (graded blind after the 2.7.0 rules)
    ("'appears twice' names the option 'two'", "steering_alms_mmau-0143", "B", "conclusion"),
    ("'I'm going to take a guess that the speaker is likely a **Female**' is a pick", "speech_ifeval-0208", "B",
     "conclusion"),
    ("a marked last sentence of a long output naming no option text, by most of the words only one option has "
     "('he left by jumping out of a window')", "af3_think-0367", "D", "conclusion"),
    ("'makes me confident this comes from Beijing' marks a conclusion", "qwen3_omni_thinking-0318", "C",
     "conclusion"),
    # found by round 15 (graded blind after the 2.8.0 rules)
    ("'No, the elderly people here do not have cognitive impairment.': the reply word opens the output",
     "salmonn_mmar-0403", "B", None),
    ("'Other options don't fit well here; ...' after the sentence naming 'combat competitions' alone",
     "qwen3_omni_thinking-0296", "B", "conclusion"),
    ("'<Conclusion>B</Conclusion>' after 'it's hard to say for sure if the bird is actually listening': an answer "
     "block commits by itself", "qwen_omni_xml-0029", "B", "label-pattern"),
    # found by round 16 (graded blind after the 2.10.0 rules)
    ("'I'm going to take an educated guess that the underlying feeling is: * Sad' is a pick", "speech_ifeval-0202",
     "C", "conclusion"),
    ("'The number of words ... is 4.' names the option 'four'", "steering_alms_mmau-0080", "C", "conclusion"),
    # found by round 17 (graded blind after the 2.11.0 rules)
    ("'appears once' names the option 'one'", "steering_alms_mmau-0145", "B", "conclusion"),
    ("'There are 13 words ...' names 'thirteen' (a number word of five letters or more)", "steering_alms_mmau-0081",
     "C", "conclusion"),
    ("'There are **2** different male speakers': a count, option 1's text", "mmau_pro_audio_noise-0429", "1",
     "label-pattern"),
    ("'Option D is correct - ...' after A, B and C found incorrect", "salmonn_mmar-0266", "D", "label-pattern"),
    # found by round 18 (graded blind after the 2.12.0 rules)
    ("'... is that both names are also U.S. military acronyms, ...' without the options' shared 'Because'",
     "af3_think-0342", "C", "conclusion"),
    ("'the correct answer is (I) <F's text>. The answer is (F).': the closing line corrects the label",
     "mmlu_pro-0302", "F", "label-pattern"),
    # ungraded outputs whose reads the 2.8.0 rules changed
    ("'\\boxed{None of these two sounds}' for 'sounds heard None of these two sounds'", "mmau_pro_audio_noise-0120",
     "3", None),
    ("'first speaker shows happiness and second speaker remains neutral ...' is no option: the differing words of "
     "'first and second speaker remains neutral ...' count only where a clause starts", "desta25_mmau-0133", None,
     None),
    ("'There are **2** speakers' with options numbered 1) 5 ... 4) 2: a count, option 4's text",
     "mmau_pro_audio_noise-0362", "4", "label-pattern"),
    ("'The woman won twice.' for the digit option '2'", "salmonn_mmar-0314", "D", "conclusion"),
    # ungraded outputs whose reads the 2.7.0 rules changed, or must not change
    ("'high-pitched female vocal' says neither 'High-pitched male vocal' nor a female option",
     "steering_alms_mmau-0267", None, None),
    ("numbers are no option words: 'G:maj7(11)/4 ... from 15.20s to 16.00s' is not '11.20s to 12.80s'",
     "steering_alms_mmau-0184", None, None),
    ("'If it is not placed correctly, some dominoes may fall midway' supposes, it answers nothing",
     "salmonn_mmar-0031", None, None),
    ("options that share their first words are named by the three words or more that differ",
     "af3_think-0045", "C", "conclusion"),
    ("'So the correct answer is B, D.' names two labels", "salmonn_mmar-0268", None, None),
    # ungraded outputs whose reads the 2.5.0 and 2.6.0 rules changed, or must not change
    ("'None of the other animals listed ... make croaking sounds' before '<D>D</D>'", "qwen_omni_xml-0534", "D",
     None),
    ("'limited familiarity' says neither 'Familiar' nor 'Unfamiliar'", "qwen3_omni_thinking-0043", None, None),
    ("'* **Mosquitoes:** ...' heads a list item on 'Mosquitos', no conclusion", "mmau_pro_audio_noise-0055", "1",
     None),
    ("'G# major ()' names 'G#:maj/1'", "steering_alms_mmau-0665", "C", "conclusion"),
    ("'The first speaker had a brief interjection, but the second speaker ...' after '**the second speaker**'",
     "mmau_pro_audio_noise-0423", "4", "conclusion"),
    ("'Road matches perfectly' for 'On the road'", "qwen3_omni_thinking-0164", "C", "conclusion"),
    # ungraded outputs whose reads the round-11 rules changed
    ("'B. No, the key stays the same.' after 'Therefore, no modulation occurs.'", "muse_music-0131", "B", None),
    ("'I will select Excerpt 1.' then option A's line, after doubting both", "muse_music-0550", "A", None),
    ("a list of options copied out is no closing line", "mmau_pro_audio_noise-0868", "3", None),
    # with two options an explanation naming both in order ('below ... from above') is no echo: unread
    ("two options named in order after the answer are not taken for a copied list", "mmau_pro_audio_noise-0843",
     None, None),
    # 2.14: the question read where the output alone gives nothing
    ("a yes/no question answered by a closing sentence that restates it negated", "qwen3_omni_thinking-0205", "B",
     "conclusion"),
    ("a yes/no question answered by a one-sentence restatement", "steering_alms_mmau-0039", "A", "conclusion"),
    ("'No, none of the 100 interviewed men ...' answers the question, it refuses no option", "salmonn_mmar-0028", "A",
     "conclusion"),
    ("'cannot be heard' after 'which ... can not be heard' is the question's negation", "steering_alms_mmau-0027", "D",
     None),
    ("a slot closing the reasoning that singles out its option, after 'none of these sounds match'",
     "qwen_omni_xml-0447", "B", "label-pattern"),
    ("a slot closing a reasoning that singles out each option in turn stays unread", "qwen_omni_xml-0654", None,
     None),
    ("a final statement in one option's words decides over the labels of the options gone through",
     "af3_think-0475", "A", "conclusion"),
    ("labels heading the list after 'why the other options are less likely:' are no mentions",
     "mmau_pro_audio_noise-0277", "3", "label-pattern"),
    # 2.15: from round 20, after its first read
    ("'Option A is not correct.' rejects A; the next sentence names the answer", "salmonn_mmar-0437", "B", None),
    ("a later 'If the ocean were in front, ...' supposes, it names no second answer", "mmau_pro_audio_noise-0841",
     "2", "conclusion"),
    ("'the correct answer is:' then the model's own list number and the option's text", "speech_ifeval-0182", "C",
     None),
    ("every other option gone through before the last 'but', the one after it is the answer",
     "qwen3_omni_thinking-0177", "C", "conclusion"),
    ("'... is indeed \"Maybe, They've\"' concludes a walk through the options", "speech_ifeval-0082", "D",
     "conclusion"),
    ("'mentions **three** group chats ... the answer is **3**': the count said before is option 4's text",
     "mmau_pro_audio_noise-0372", "4", "label-pattern"),
    # 2.16: from round 21, after its first read
    ("the 'one' of 'at least one unstressed phoneme' is no count; the number the sentence ends on is",
     "steering_alms_mmau-0076", "A", "conclusion"),
    ("'(E) 0.5': option D '0' is not the start of 0.5", "mmlu_pro-0357", "E", "label-pattern"),
    ("'**Xylem vessel members (D)**, **Sclerenchyma cells (G)**': texts each with their own label",
     "mmlu_pro-0002", "D", "label-pattern"),
    ("'<answer>\nHuman\n</answer>' with the option Human is no invented 'Human' turn", "r1aqa_omni_mmau-0021", "A",
     None),
    ("'6 unstressed phonemes' counts six", "steering_alms_mmau-0093", "A", "conclusion"),
    ("a closing '**B**' after 'there is no answer in the provided options', B being 'I do not have an answer'",
     "selective_hearing-0376", "B", "label-pattern"),
    # 2.17: from round 22, after its first read
    ("'This strongly indicates he took ... the second-class seat' concludes", "qwen3_omni_thinking-0358", "B",
     "conclusion"),
    ("'This strongly suggests Mixolydian relationship with G' concludes", "qwen3_omni_thinking-0479", "B",
     "conclusion"),
    ("'is not currently living on the scene but instead calling from somewhere else' answers No",
     "qwen3_omni_thinking-0075", "B", "conclusion"),
    # 2.18: from round 23, after its first read
    ("'– yes, this doesn't match expected norms': a discourse 'yes' before a negated statement answers nothing",
     "qwen3_omni_thinking-0285", None, "unparseable"),
    ("Australia's words somewhere in the reasoning yield to a conclusion naming only a negated 'UK'",
     "qwen3_omni_thinking-0290", None, "unparseable"),
    ("a list item going through an option set aside does not contradict the answer after it",
     "mmau_pro_audio_noise-0083", "3", "label-pattern"),
    # 2.19: from round 24, after its first read
    ("'The synthesizer plays two notes after the percussion roll': Synth and Percussion both named, MMAU's word "
     "match for Percussion alone yields", "steering_alms_mmau-0169", None, "unparseable"),
    # 2.20: from round 25, after its first read
    ("a '<C C>' slot after a reasoning that says the speech conveys no anger leaves C unread", "qwen_omni_xml-0633",
     None, "unparseable"),
    # 2.21: the graders' rule for a pick after doubt, made when pressed
    ("'it's impossible to determine ... However, if we were to make a guess ..., the most likely answer would be: "
     "**4) Front**' is 4", "mmau_pro_audio_noise-0840", "4", None),
    ("'we cannot determine ... if I had to make a guess ..., I might lean slightly towards **1) stationary**' is 1",
     "mmau_pro_audio_noise-0831", "1", "label-pattern"),
    ("'As a language model, I cannot give you the answer. However, ... the sound event primarily covered is a warrior "
     "celebration ceremony' is D", "salmonn_mmar-0434", "D", "conclusion"),
    # 2.23: from round 26, after its first read
    ("'Here's why:' then a bold list item naming another option explains the answer, it contradicts nothing",
     "mmau_pro_audio_noise-0252", "3", "label-pattern"),
    ("'Array A: 256 elements' is an array's name, no label with option I's text", "mmlu_pro-0050", "D",
     "label-pattern"),
    ("a relative clause's 'might' ('the most likely scenario where someone might feel') hedges nothing",
     "af3_think-0525", "A", "conclusion"),
    ("'<C C>' (C 'one') after a reasoning that names only 'two' (A) is unread", "qwen_omni_xml-0323", None,
     "unparseable"),
    # 2.24: from round 27, after its first read
    ("'it appears once' says '1 time'", "salmonn_mmar-0128", "A", "conclusion"),
    ("'the answer to the question \"Did the man misread the word?\" is no.' is the option 'No'", "salmonn_mmar-0313",
     "A", None),
    ("'The correct statement is **3) ...**' is an answer statement", "mmau_pro_audio_noise-0293", "3",
     "label-pattern"),
    # 2.25: from round 28, after its first read
    ("'如果你选 A 选项' supposes a choice; '因此，答案是 D 选项' is the answer", "salmonn_mmar-0035", "D", "label-pattern"),
    ("'the correct answer has to be \"Mr. Big.\" No need to second guess' hedges nothing", "qwen3_omni_thinking-0230",
     "B", "conclusion"),
    # 2.26: from round 29, after its first read (its one wrong read)
    ("'strongly indicates he is indeed drunk', then 'people who claim they're not drunk ...': MMAU's word match for "
     "'Not drunk' yields to a conclusion a later sentence contradicts", "qwen3_omni_thinking-0172", None, "unparseable"),
]


@pytest.mark.parametrize("why,case,label,status", RULES_ROUND_7, ids=[c[0] for c in RULES_ROUND_7])
def test_rules_of_round_7_on_the_outputs_that_called_for_them(why, case, label, status):
    r = _collected(case)
    if "label" in r:
        assert r["label"] == label or label is None, "a rule test must not disagree with the grader"
    res = parse_answer(r["raw"], r["options"], labels_shown=r["labels_shown"], question=r["question"])
    assert res.label == label, res.reason
    if status is not None:
        assert res.status == status, res.reason


@pytest.mark.parametrize("raw", [
    "I'm sorry, but I cannot hear the music.",
    "There is no audio. It might be B.",
    "I can't hear any sound in the clip, so I'd guess B.",
    "The answer is B. I cannot access the audio file, though.",
])
def test_refusals_of_the_audio_itself_without_a_committed_answer_after_them_veto_the_whole_output(raw):
    assert parse_answer(raw, SOUNDS).status == "non-answer"


def test_a_list_item_that_states_the_answer_still_concludes():
    raw = "Let me go through them:\n* **Dog barking:** no, too high.\n* **Final answer:** Bird singing"
    assert parse_answer(raw, SOUNDS).label == "C"
