"""The run key every stage shares: one (model, dataset, task, condition, prompt)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    model: str
    dataset: str
    task: str
    condition: str
    prompt: str

    @property
    def key(self) -> str:
        return f"{self.model}/{self.dataset}/{self.task}/{self.condition}/{self.prompt}"
