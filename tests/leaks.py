"""Find an API key in text or in files: whole, as any 8+ character fragment, or base64-encoded."""
from __future__ import annotations

import base64
from pathlib import Path

from lalmbench.models.secrets import MIN_FRAGMENT


def fragments(key: str, n: int = MIN_FRAGMENT) -> set[str]:
    return {key[i:i + n] for i in range(len(key) - n + 1)}


def b64_cores(key: str) -> set[str]:
    """Base64 of the key as it reads at each alignment inside a longer blob, minus the edge
    groups that mix in neighbouring bytes."""
    return {base64.b64encode(b"\0" * pad + key.encode()).decode()[4:-4] for pad in range(3)}


def needles(key: str) -> set[str]:
    return fragments(key) | {f for core in b64_cores(key) for f in fragments(core)}


def leaks(text: str, key: str) -> list[str]:
    """Every key fragment of MIN_FRAGMENT+ characters, or base64 run of the key, still in ``text``."""
    return sorted(n for n in needles(key) if n in text)


def file_text(path: Path) -> str:
    """A file as text a reader would see: parquet decoded to its rows, anything else byte for byte."""
    data = path.read_bytes()
    text = data.decode("latin-1")
    if data[:4] == b"PAR1":
        import pandas as pd

        text += pd.read_parquet(path).to_json(orient="records")
    return text


def scan_tree(root: Path, key: str) -> dict[str, list[str]]:
    """``{relative path: leaked needles}`` for every file under ``root`` that holds any."""
    found = {}
    wanted = needles(key)
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file() and not p.is_symlink()):
        text = file_text(path)
        hits = sorted(n for n in wanted if n in text)
        if hits:
            found[str(path.relative_to(root))] = hits
    return found
