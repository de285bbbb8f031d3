"""File I/O at the edges of the pipeline: atomic writes and strict readers.

Every writer goes through a temp file in the target directory followed by ``os.replace``, so a
crashed job never leaves a half-written output that Snakemake (or a later rule) would trust.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd


_UMASK = os.umask(0)
os.umask(_UMASK)


class InputError(ValueError):
    """Bad user input: the message names the file, the row/line/item and what was expected."""


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "", mode: int | None = None) -> Iterator[Path]:
    """Yield a temp path beside ``path``; rename it over ``path`` only if the block succeeds.

    ``mode``: the file's permissions (default: what the umask gives a new file); a model cache shared
    by several users passes 0o644 so a restrictive umask cannot hide the weights from the others."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK if mode is None else mode)  # mkstemp makes 0600
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp directory beside ``path``; on success it replaces ``path`` (an old one included)
    by renames, so a reader sees the old directory or the complete new one, never a partial one."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    old = None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp makes 0700
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / "d")
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, old):
            if leftover is not None and leftover.exists():
                shutil.rmtree(leftover, ignore_errors=True)


def dumps_json(obj: Any) -> str:
    """Canonical JSON (sorted keys) so equal content gives byte-identical files."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, default=json_default)


def json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False,
                                default=json_default) + "\n")


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(dumps_json(rec) + "\n")


def read_jsonl(path: str | os.PathLike, *, too_deep: dict | None = None) -> list[dict]:
    """Read JSONL; a broken line raises InputError naming the file and line number. A line whose
    values nest too deep to read raises the same, or stands as a copy of ``too_deep`` when given
    (a reader that leaves such rows out, counted)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
            except RecursionError:
                if too_deep is None:
                    raise InputError(f"{path}:{lineno}: values nested too deep to read") from None
                rec = dict(too_deep)
            if not isinstance(rec, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
            out.append(rec)
    return out


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as fh:
        try:
            return json.load(fh)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None


def read_parquet(path: str | os.PathLike, *, categories: Iterable[str] = (), **kwargs: Any) -> pd.DataFrame:
    """Read a pipeline parquet; a truncated or corrupt file (copied half, disk full on another
    tool's write) names itself and the way out instead of pyarrow's bare 'magic bytes not found'.

    ``categories``: string columns to return as pandas categoricals (integer codes and the distinct
    strings, no Python string per row), read from the file's own dictionary pages where the column
    is stored dictionary-encoded, else encoded by Arrow while it reads; a column whose row groups end
    up with different dictionaries comes as strings, as do the other columns (what
    ``pd.read_parquet`` gives)."""
    import pyarrow

    try:
        if categories:
            return _read_parquet_categories(path, list(categories), kwargs.pop("columns", None), **kwargs)
        return pd.read_parquet(path, **kwargs)
    except (pyarrow.ArrowInvalid, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise InputError(f"{path}: not a readable parquet file ({exc}); delete it so the rule that writes it "
                         f"runs again") from None


def _read_parquet_categories(path, categories: list[str], columns: list[str] | None, **kwargs: Any) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    names = list(columns) if columns is not None else list(schema.names)
    want = [c for c in categories if c in names and schema.field(c).type in (pa.string(), pa.large_string())]
    cats = {}
    if want:
        table = pq.read_table(path, columns=want, read_dictionary=want)
        cats = {c: cat for c in want if (cat := _categorical(table[c])) is not None}
    df = pd.read_parquet(path, columns=[c for c in names if c not in cats], **kwargs)
    for c, cat in cats.items():
        df.insert(names.index(c), c, cat)
    return df


def _categorical(col) -> pd.Categorical | None:
    """A dictionary-encoded Arrow column as a pandas categorical, or None when its chunks do not share
    one dictionary of distinct strings."""
    import numpy as np
    import pyarrow as pa

    chunks = col.chunks
    if not chunks:
        return None
    d = chunks[0].dictionary
    key = [b.address if b is not None else 0 for b in d.buffers()]
    if any(len(c.dictionary) != len(d) or [b.address if b is not None else 0 for b in c.dictionary.buffers()] != key
           for c in chunks[1:]):
        return None
    codes = np.concatenate([c.indices.fill_null(-1).to_numpy(zero_copy_only=False) for c in chunks])
    try:
        dtype = pd.CategoricalDtype(pd.Index(pd.arrays.ArrowStringArray(d.cast(pa.large_string()))))
    except ValueError:                       # repeated values in the dictionary
        return None
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def read_parquet_with_copy(path: str | os.PathLike, column: str, *, of: str, categories: Iterable[str] = ()
                           ) -> pd.DataFrame:
    """:func:`read_parquet`, except that ``column`` is not decoded when the file stores it byte for
    byte as column ``of`` (captions that are the labels, as TACoBeLAL's): it is then the same array
    as ``of`` (one decode and one copy in memory instead of two). Equal stored bytes
    decode to equal values, so the frame is what ``read_parquet`` gives (``categories``: as there)."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
        i, j = names.index(column), names.index(of)
        same = pf.schema_arrow.field(i).type == pf.schema_arrow.field(j).type
        with open(path, "rb") as fh:
            for rg in range(pf.metadata.num_row_groups):
                a, b = pf.metadata.row_group(rg).column(i), pf.metadata.row_group(rg).column(j)
                if not same or a.total_compressed_size != b.total_compressed_size:
                    same = False
                    break
                chunks = []
                for c in (a, b):
                    fh.seek(c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset)
                    chunks.append(fh.read(c.total_compressed_size))
                same = chunks[0] == chunks[1]
                if not same:
                    break
    except (ValueError, OSError):       # not a readable parquet, or no such columns: the plain read says why
        same = False
    if not same:
        return read_parquet(path, categories=categories)
    df = read_parquet(path, columns=[c for c in names if c != column], categories=categories)
    df.insert(names.index(column), column, df[of])
    return df


def write_parquet(path: str | os.PathLike, df: pd.DataFrame, *, metadata: dict[str, str] | None = None) -> None:
    """``df`` as parquet (atomic); ``metadata`` is added to the file's key-value metadata."""
    with atomic_path(path, suffix=".parquet") as tmp:
        if not metadata:
            df.to_parquet(tmp, index=False)
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               **{k.encode(): v.encode() for k, v in metadata.items()}})
        pq.write_table(table, tmp)


@contextlib.contextmanager
def parquet_written_meanwhile(path: str | os.PathLike, df: pd.DataFrame, *,
                              metadata: dict[str, str] | None = None) -> Iterator[None]:
    """Encode ``df`` to a temp parquet in a background thread while the block runs (Arrow's writer
    releases the GIL, so checks made in the block overlap with it); the file replaces ``path`` only
    when the block succeeds, else the temp file is removed: as atomic as :func:`write_parquet`."""
    from concurrent.futures import ThreadPoolExecutor

    with atomic_path(path, suffix=".parquet") as tmp:
        with ThreadPoolExecutor(1, thread_name_prefix="parquet") as pool:
            job = pool.submit(write_parquet, tmp, df, metadata=metadata)
            try:
                yield
            finally:
                err = job.exception()        # waits; the temp file is complete (or failed) from here
        if err is not None:
            raise err


def parquet_metadata(path: str | os.PathLike) -> dict[str, str]:
    """A parquet file's key-value metadata (read from the footer only)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()}


def write_tsv(path: str | os.PathLike, df: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, sep="\t", index=False, lineterminator="\n", float_format="%.6g")
