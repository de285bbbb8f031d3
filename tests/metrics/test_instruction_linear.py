"""The instruction checks that run in linear time give the values of MMAU-Pro's regexes (which backtrack
over long runs: bench/bench_instruction.py times the checks on 8 MiB adversarial replies)."""
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from lalmbench.scoring.metrics.instruction import count_bullets, count_placeholders, count_sections, has_title

OFFICIAL = {  # MMAU-Pro's regexes: quadratic on long runs (bench/bench_instruction.py), exact on short texts
    "bullets": lambda t: len(re.findall(r"(?:^|\n)\s*\*\s+", t)),
    "placeholders": lambda t: len(re.findall(r"\[[^\]]+\]", t)),
    "title": lambda t: bool(re.search(r"<<[^>]+>>", t)),
}
OURS = {"bullets": count_bullets, "placeholders": count_placeholders, "title": has_title}
ALPHABET = st.text(alphabet=["\n", " ", "\t", "\r", "*", "[", "]", "<", ">", "a", "S", "\u2028"], max_size=24)


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(text=ALPHABET)
def test_linear_counts_equal_the_official_regexes(text):
    for name, official in OFFICIAL.items():
        assert OURS[name](text) == official(text), name


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(text=ALPHABET, splitter=st.sampled_from(["S", "SS", "*", " S", "S ", "\n", "\n\n", " ", "S\nS", "]"]))
def test_section_count_equals_the_official_split(text, splitter):
    parts = re.split(rf"\s*{re.escape(splitter)}\s*", text.strip())
    assert count_sections(text, splitter) == len([s for s in parts if s.strip()])
