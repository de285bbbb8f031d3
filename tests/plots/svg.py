"""Read back the text a matplotlib SVG shows (it draws glyphs as paths and keeps each text in a comment)."""
from __future__ import annotations

import html
import re
from pathlib import Path


def svg_texts(path: Path) -> set[str]:
    """Every text line drawn in the figure (titles, tick labels, legends, annotations)."""
    return {html.unescape(t) for t in re.findall(r"<!-- (.*?) -->", Path(path).read_text(), re.S)}
