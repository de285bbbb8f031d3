"""Floors every table needs: chance (``random``) and a language prior (``text-overlap``).

Both answer per item from a generator seeded by (seed, item id), so their outputs do not depend
on batch size or item order, and neither ever looks at the audio.
"""
from __future__ import annotations

import re
import time
import zlib

from lalmbench.inference.conditions import item_rng
from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend

_WORD = re.compile(r"[a-z0-9]+")


@register_backend("random")
class RandomBaseline(Model):
    """Uniform choice among the item's option labels: the chance floor, with real sampling noise.

    ``delay_s`` (config) sleeps per batch to imitate a slow model when testing resume and progress logs.
    """

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        time.sleep(float(self.cfg.get("delay_s", 0)))
        out = []
        for x in batch:
            if not x.options:
                out.append(ModelOutput(raw_output=None, error="random baseline needs options (open-ended item)"))
                continue
            k = int(item_rng(self.seed, x.id).integers(len(x.options)))
            out.append(ModelOutput(raw_output=x.options[k]["label"], input_tokens=0, output_tokens=1))
        return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@register_backend("text-overlap")
class TextOverlapBaseline(Model):
    """Text-only language-prior floor: picks the option sharing most words with the question.

    Ties are broken by a hash of the option text, never by position, so this baseline has no
    built-in position bias: what it scores above chance comes from the text alone.
    """

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        out = []
        for x in batch:
            if not x.options:
                out.append(ModelOutput(raw_output=None, error="text-overlap baseline needs options"))
                continue
            q = _words(x.question)

            def key(opt: dict) -> tuple[float, int]:
                w = _words(opt["text"])
                jacc = len(q & w) / len(q | w) if (q | w) else 0.0
                return (jacc, zlib.crc32(f"{self.seed}:{opt['text']}".encode()))

            best = max(x.options, key=key)
            out.append(ModelOutput(raw_output=best["label"], input_tokens=len(x.prompt.split()), output_tokens=1))
        return out
