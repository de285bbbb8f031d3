"""Freed memory handed back to the OS between the heavy parts of a step.

Arrow's memory pool (mimalloc or jemalloc) and glibc's malloc both keep freed pages for reuse, and
neither reuses the other's: after reading a 1M-row parquet and the string work on it, a few
hundred MB of freed Arrow buffers and numpy temporaries stay in the process and add to the peak of
whatever comes next (the items a builder makes). Releasing them costs milliseconds.
"""
from __future__ import annotations

import ctypes
import ctypes.util


def release_freed() -> None:
    """Return the pages Arrow's pool and the C heap hold only for reuse (no live data is touched)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TRIM: list = []


def _malloc_trim():
    """glibc's ``malloc_trim`` (None on other C libraries: musl, macOS)."""
    if not _TRIM:
        try:
            _TRIM.append(ctypes.CDLL(ctypes.util.find_library("c") or None).malloc_trim)
        except (OSError, AttributeError):
            _TRIM.append(None)
    return _TRIM[0]
