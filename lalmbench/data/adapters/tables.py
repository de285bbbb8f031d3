"""Question files as published, read into plain records: JSON list, JSONL, CSV/TSV, parquet, a
Hugging Face ``datasets`` ``save_to_disk`` folder, a folder of parquet shards, or a Hub dataset id
resolved from the local Hugging Face cache (never downloaded here: the error gives the command).

Records are dicts of Python values (lists stay lists, embedded audio stays ``{"bytes", "path"}``),
so the declarative reader (:mod:`lalmbench.data.adapters.reader`) sees each benchmark's fields as
its authors wrote them.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from lalmbench.core.io import InputError, atomic_path, read_jsonl

_HUB_ID = re.compile(r"^(?:hf://(?:datasets/)?)?([A-Za-z0-9][\w.-]*/[\w.-]+)$")


def hub_download_command(repo_id: str, local_dir: str = "<dir>") -> str:
    return f"hf download {repo_id} --repo-type dataset --local-dir {local_dir}"


def resolve_items_path(spec: str, *, dataset: str, key: str = "items") -> Path:
    """A local file/folder, or a Hub dataset id (``owner/name`` or ``hf://datasets/owner/name``) found
    in the local Hugging Face cache; a clear DatasetMissing when neither exists."""
    from lalmbench.data.adapters.common import DatasetMissing

    p = Path(os.path.expanduser(str(spec)))
    if p.exists():
        return p
    m = _HUB_ID.match(str(spec))
    if m and (str(spec).startswith("hf://") or not p.parent.exists() or str(p.parent) == m.group(1).split("/")[0]):
        repo = m.group(1)
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(repo, repo_type="dataset", local_files_only=True))
        except Exception as exc:  # LocalEntryNotFoundError, or no huggingface_hub at all
            raise DatasetMissing(
                f"dataset {dataset!r}: params.{key} {spec!r} is a Hugging Face dataset id that is not in the local "
                f"cache ({type(exc).__name__}); nothing is downloaded at run time. Run `{hub_download_command(repo)}` "
                f"and set params.{key} to that folder (or `hf download {repo} --repo-type dataset` to fill the "
                f"cache)") from None
    raise DatasetMissing(f"dataset {dataset!r}: {p} (params.{key}) not found; expected a question file or folder")


#: the key of a record that stands for a row that could not be read; its value is the counted reason
#: the reader leaves that item out with (one bad row never fails the dataset)
UNREADABLE = "_unreadable"


def load_records(path: Path, *, fmt: str = "auto", pattern: str | None = None, layout: dict | None = None) -> list[dict]:
    """Every record of a question file or folder, in file order (shards in sorted name order).
    ``layout``: the spec's layout keys, for a per-file release layout (``format: transcripts``,
    ``headerless``) or a CSV/TSV without a header (``names``) or whose quotes are text (``quoting: none``);
    :mod:`lalmbench.data.adapters.layouts`."""
    if path.is_dir():
        return _load_dir(path, pattern)
    fmt = _format_of(path) if fmt == "auto" else fmt
    layout = layout or {}
    try:
        if fmt in ("csv", "tsv") and (layout.get("names") or layout.get("quoting") == "none"):
            from lalmbench.data.adapters.layouts import read_delimited

            return read_delimited(path, sep="\t" if fmt == "tsv" else ",", names=layout.get("names"),
                                  quoting=layout.get("quoting"))
        from lalmbench.data.adapters.layouts import LAYOUTS

        if fmt in LAYOUTS and LAYOUTS[fmt].per_file:
            return LAYOUTS[fmt].read(path, layout)
        if fmt == "json":
            return _json_records(path)
        if fmt == "jsonl":
            return _jsonl_records(path)
        if fmt in ("csv", "tsv"):
            import pandas as pd

            df = pd.read_csv(path, sep="\t" if fmt == "tsv" else ",", dtype=str, keep_default_na=False)
            return df.to_dict("records")
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
        if fmt == "arrow":
            return _arrow_records(path)
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"{path}: cannot read as {fmt}: values nested too deep to read") from None
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read as {fmt}: {type(exc).__name__}: {exc}") from None
    raise InputError(f"{path}: unknown question-file format {fmt!r} (json, jsonl, csv, tsv, parquet, arrow, "
                     f"transcripts, headerless)")


def _format_of(path: Path) -> str:
    name = path.name.lower()
    for ext, fmt in ((".jsonl", "jsonl"), (".json", "json"), (".csv", "csv"), (".tsv", "tsv"),
                     (".parquet", "parquet"), (".arrow", "arrow"), (".txt", "transcripts")):
        if name.endswith(ext):
            return fmt
    raise InputError(f"{path}: cannot tell the format from the name; set params.format (json, jsonl, csv, tsv, "
                     f"parquet, arrow)")


def _json_records(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("{") and "\n{" in text:     # JSON Lines under a .json name
            return _jsonl_records(path)
        raise InputError(f"{path}: not valid JSON: {exc}") from None
    if isinstance(data, dict):                     # {id: record} or {"data": [...]}
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1 and len(data) == 1:
            data = lists[0]
        elif data and all(isinstance(v, dict) for v in data.values()):
            data = [dict(v, id=v.get("id", k)) for k, v in data.items()]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError(f"{path}: expected a JSON list of records (objects), got {type(data).__name__}")
    return data


def _jsonl_records(path: Path) -> list[dict]:
    """JSON Lines; a line whose values nest too deep to read (``[[[[...`` a hundred thousand deep)
    becomes an :data:`UNREADABLE` record, a line that is no JSON fails naming the line."""
    return read_jsonl(path, too_deep={UNREADABLE: "item:nested_too_deep"})


def unreadable_reason(rec: dict) -> str | None:
    """Why a row cannot become an item, or None: the file reader could not read it (values nested too
    deep), or it holds text that is not Unicode (a lone surrogate from a JSON ``\\ud800`` escape,
    which no file can be written with)."""
    if UNREADABLE in rec:
        return str(rec[UNREADABLE])
    stack: list[Any] = [rec]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return "item:invalid_unicode"
        elif isinstance(v, dict):
            stack += [*v.keys(), *v.values()]
        elif isinstance(v, (list, tuple)):
            stack += v
    return None


def _arrow_records(path: Path) -> list[dict]:
    import pyarrow as pa

    with pa.memory_map(str(path)) as src:
        try:
            return pa.ipc.open_stream(src).read_all().to_pylist()
        except pa.ArrowInvalid:
            src.seek(0)
            return pa.ipc.open_file(src).read_all().to_pylist()


def _load_dir(path: Path, pattern: str | None) -> list[dict]:
    """A ``save_to_disk`` folder (``state.json`` + ``data-*.arrow``) or parquet/arrow shards under it."""
    state = path / "state.json"
    if state.is_file():
        files = state_files(state)
    else:
        globs = [pattern] if pattern else ["**/*.parquet", "**/*.arrow", "**/*.jsonl"]
        files = sorted({f for g in globs for f in path.glob(g) if f.is_file()})
        files = [f for f in files if ".cache" not in f.parts]
    if not files:
        raise InputError(f"{path}: a folder with no question files (looked for {pattern or 'parquet/arrow/jsonl'} "
                         f"shards or a datasets save_to_disk state.json)")
    out: list[dict] = []
    for f in files:
        out += load_records(f)
    return out


def state_files(state: Path) -> list[Path]:
    """The data files a ``save_to_disk`` folder's ``state.json`` lists (``_data_files: [{filename}]``),
    each inside that folder: a name that leads out of it (``../other.parquet``, an absolute path, a
    symlink out) is refused, so a copied folder never reads files beside it."""
    try:
        listed = json.loads(state.read_text(encoding="utf-8")).get("_data_files", [])
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{state}: not a datasets save_to_disk state (a JSON object with _data_files): "
                         f"{type(exc).__name__}") from None
    if not isinstance(listed, list) or not all(isinstance(f, dict) and isinstance(f.get("filename"), str)
                                               for f in listed):
        raise InputError(f"{state}: _data_files must be a list of {{\"filename\": ...}} objects, as datasets' "
                         f"save_to_disk writes it")
    folder = state.parent.resolve()
    files = []
    for f in listed:
        target = (state.parent / f["filename"]).resolve()
        if not target.is_relative_to(folder):
            raise InputError(f"{state}: _data_files names {f['filename']!r}, which is outside {state.parent}; a "
                             f"save_to_disk folder lists only its own files")
        files.append(target)
    return files


def write_embedded(audio: dict, out_dir: Path) -> str:
    """Write embedded audio bytes once under ``out_dir`` named by their content hash (atomic);
    returns the file name. Re-running writes nothing new."""
    data = audio.get("bytes")
    ext = Path(str(audio.get("path") or "")).suffix.lower() or _sniff_ext(data)
    name = hashlib.sha1(data).hexdigest()[:20] + ext
    target = out_dir / name
    if not target.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            Path(tmp).write_bytes(data)
    return name


def _sniff_ext(data: bytes) -> str:
    if data[:4] == b"RIFF":
        return ".wav"
    if data[:4] == b"fLaC":
        return ".flac"
    if data[:4] == b"OggS":
        return ".ogg"
    if data[:3] == b"ID3" or data[:2] in (b"\xff\xfb", b"\xff\xf3"):
        return ".mp3"
    return ".bin"
