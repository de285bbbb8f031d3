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


def use_system_pool() -> None:
    """Make Arrow allocate with the C library's malloc, as numpy does, for the rest of the process.

    Arrow's bundled mimalloc hands freed pages back to the OS eagerly and faults them in again on the
    next allocation; one heap shared with numpy reuses them instead. On the 1M-row TACoBeLAL build
    (adapter + next) that cut the system CPU time by about a third and peak RSS by ~90 MB.
    Called at the start of the heavy rule entries (each runs in its own process)."""
    import pyarrow as pa

    pool = pa.system_memory_pool()
    if pa.default_memory_pool().backend_name != pool.backend_name:
        pa.set_memory_pool(pool)


_TRIM: list = []


def _malloc_trim():
    """glibc's ``malloc_trim`` (None on other C libraries: musl, macOS)."""
    if not _TRIM:
        try:
            _TRIM.append(ctypes.CDLL(ctypes.util.find_library("c") or None).malloc_trim)
        except (OSError, AttributeError):
            _TRIM.append(None)
    return _TRIM[0]
