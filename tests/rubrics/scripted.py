"""A scripted text backend for the rubric tests: replies chosen by a function of (prompt, seed), so a
test can make the LLM say exactly what a case needs. Every prompt it receives is recorded."""
from __future__ import annotations

from typing import Callable

from lalmbench.models.base import Model, ModelInput, ModelOutput

PROPOSE = "You design grading rubrics"
MERGE = "You tidy grading rubrics"
SCORE = "You grade one audio caption"


class Scripted(Model):
    backend = "scripted"

    def __init__(self, reply: Callable[[str, int], str]):
        super().__init__("scripted", {"backend": "scripted", "model_id": "scripted"})
        self.reply = reply
        self.prompts: list[str] = []

    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        assert all(x.audio is None for x in batch)  # the rubric LLM is text-only
        self.prompts += [x.prompt for x in batch]
        return [ModelOutput(raw_output=self.reply(x.prompt, self.seed)) for x in batch]


def stage(prompt: str) -> str:
    return "propose" if prompt.startswith(PROPOSE) else "merge" if prompt.startswith(MERGE) else "score"
