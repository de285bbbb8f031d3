"""Every instruction-following check (MMAU-Pro IF, lalmbench.scoring.metrics.instruction) on adversarial
8 MiB replies: the checks must stay linear in the reply, whatever a model (or a hostile server) writes.

Target: the slowest check on any of these replies <= 5 CPU s (a regex that backtracks over a run, as
the official bullet and placeholder patterns do, takes about a day at 8 MiB). CPU time, not wall
time: the figure is the work a check does, whatever else the machine runs.
Usage: python bench/bench_instruction.py [--mib 8]

The replies are long runs of the characters the patterns key on (newlines, blanks, stars, brackets,
angle brackets, splitter fragments) and mixtures of them; each check is run with kwargs that make it
scan the whole reply. It also prints each check's time at 1/8 of the size: linear checks take about
an eighth of the time there.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.record import record  # noqa: E402
from lalmbench.scoring.metrics.instruction import CHECKS, check_item  # noqa: E402

KWARGS = {"keywords": "rain, thunder", "keyword": "rain", "forbidden_words": "loud, noisy", "N": 3, "N1": 1,
          "N2": 5, "postscript_marker": "P.S.", "section_splitter": "SECTION", "start_phrase": "In summary",
          "end_phrase": "Is there anything else?"}


def replies(size: int) -> dict[str, str]:
    """Adversarial replies of ``size`` characters, by name."""
    def rep(unit: str) -> str:
        return (unit * (size // len(unit) + 1))[:size]
    return {"newlines": rep("\n"), "blanks then a newline": rep(" " * 63 + "\n"), "open brackets": rep("["),
            "angle brackets": rep("<"), "stars": rep("*"), "star-newline": rep("*\n"), "newline-star": rep("\n*"),
            "blank lines before a section word": rep("\n \t SECTIO"), "splitter prefixes": rep("SECTIO "),
            "bracket-letter": rep("[a"), "title openers": rep("<<a"), "sentences": rep("a. "),
            "words": rep("rain "), "one long word": rep("a")}


def run(size: int) -> dict[tuple[str, str], float]:
    times = {}
    for name, text in replies(size).items():
        for tid in CHECKS:
            item = {"id": "x", "question": "Describe the sound.",
                    "meta": {"instruction": {"task_identifier": tid, "kwargs": KWARGS}}}
            t0 = time.process_time()
            check_item(item, text)
            times[(tid, name)] = time.process_time() - t0
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=8)
    a = ap.parse_args()
    size = a.mib << 20
    small = run(size // 8)
    full = run(size)
    total = sum(full.values())
    (tid, name), worst = max(full.items(), key=lambda kv: kv[1])
    for key in sorted(full, key=full.get, reverse=True)[:8]:
        print(f"{full[key]:7.3f} CPU s  ({small[key]:6.3f} at 1/8)  {key[0]} on {key[1]!r}")
    print(f"{len(full)} check runs on {a.mib} MiB replies in {total:.1f} CPU s; slowest: {tid} on {name!r}, "
          f"{worst:.3f} CPU s")
    if a.mib == 8:
        record("instruction", "slowest instruction check on an 8 MiB adversarial reply (CPU s)", worst, "s", "<= 5")
        record("instruction", f"all {len(full)} check runs on 8 MiB adversarial replies (CPU s)", total, "s")


if __name__ == "__main__":
    main()
