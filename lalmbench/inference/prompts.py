"""Named prompt templates (``resources/prompts/<name>.txt``) rendered per item."""
from __future__ import annotations

import string
from pathlib import Path

ALLOWED_FIELDS = {"question", "options", "labels"}


def load_template(path: str | Path) -> str:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: prompt template not found (templates live in resources/prompts/<name>.txt)")
    text = path.read_text(encoding="utf-8")
    fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
    unknown = fields - ALLOWED_FIELDS
    if unknown:
        raise ValueError(f"{path}: unknown placeholder(s) {sorted(unknown)}; allowed: {sorted(ALLOWED_FIELDS)}")
    return text


def shows_labels(template: str) -> bool:
    """Whether a template shows the option labels (``{options}`` renders "A. text" lines,
    ``{labels}`` lists them): when it does not, a parser must not read "C" as option C."""
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    return bool(fields & {"options", "labels"})


def render_options(options: list[dict]) -> str:
    return "\n".join(f"{o['label']}. {o['text']}" for o in options)


def render(template: str, item: dict) -> str:
    options = item.get("options") or []
    return template.format(question=item["question"], options=render_options(options),
                           labels=", ".join(o["label"] for o in options)).strip()
