"""Content digests of the user's source files, so an edit reruns what depends on it whatever its mtime.

Snakemake reruns a job when an input is *newer* than its outputs; ``tar -x``, ``rsync -a``,
``cp -p`` and ``touch -r`` put a file's old mtime back, so an edited annotation file restored that
way looked unchanged ("Nothing to be done", the old accuracy kept). A rule that reads such files
takes :func:`files_digest` of them as a param: Snakemake records params and reruns a job whose
params changed. Hashing every file at every DAG build would cost seconds per GB, so each file's
digest is kept in a small cache under ``.snakemake/`` keyed by what no restore can put back: its
size, mtime and *ctime* (the kernel sets ctime on every write and every metadata change; no tool
can set it back), inode and device. A file whose key is unchanged is not read again.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable

CACHE = Path(".snakemake") / "lalmbench" / "file_digests.json"
_CHUNK = 1 << 20


def _stat_key(path: str) -> list[int]:
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def files_digest(paths: Iterable[str], cache: str | os.PathLike = CACHE) -> str:
    """A short digest of the contents of ``paths`` (and their names), reading only the files whose
    size, mtime, ctime or inode changed since the cache last saw them."""
    paths = sorted(set(map(str, paths)))
    if not paths:
        return ""
    cache = Path(cache)
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    changed = False
    whole = hashlib.sha256()
    for path in paths:
        key = os.path.realpath(path)
        stat = _stat_key(path)
        entry = known.get(key)
        if not (isinstance(entry, list) and entry[:-1] == stat):
            entry = known[key] = [*stat, _sha256(path)]
            changed = True
        whole.update(f"{path}\0{entry[-1]}\0".encode())
    if changed:
        from lalmbench.core.io import write_json

        try:
            write_json(cache, known)
        except OSError:  # a read-only working copy: digests are recomputed next time, nothing else changes
            pass
    return whole.hexdigest()[:16]
