"""One heap for Arrow and numpy in the heavy rule entries.

Arrow's bundled memory pool (mimalloc or jemalloc) and glibc's malloc each keep freed pages for
their own reuse, so Arrow buffers freed by one part of a step are not reused by the numpy arrays of
the next. Making Arrow allocate with malloc lets both draw on one heap.

Freed pages are not handed back to the OS between the parts of a step (``malloc_trim``): faulting
them back in costs more time than the lower peak is worth.

A process-level setting, kept because it earns its place on a user-visible figure: the peak RSS of
``bench/bench_tacobelal_next.py`` (the task step on a 1M-row table, docs/benchmarks-measured.md)
is more than a fifth lower with it. Only the heavy task entries (``lalmbench.tasks.run``) call it.
"""
from __future__ import annotations


def use_system_pool() -> None:
    """Make Arrow allocate with the C library's malloc, as numpy does, for the rest of the process.

    Arrow's bundled mimalloc hands freed pages back to the OS eagerly and faults them in again on the
    next allocation; one heap shared with numpy reuses them instead (less system time, lower peak).
    Called at the start of the heavy rule entries (each runs in its own process)."""
    import pyarrow as pa

    pool = pa.system_memory_pool()
    if pa.default_memory_pool().backend_name != pool.backend_name:
        pa.set_memory_pool(pool)
    one_malloc_arena()


def one_malloc_arena() -> None:
    """Make the threads this process starts from now on allocate from glibc's main heap too.

    glibc gives each thread that allocates while another holds the heap's lock an arena of its own,
    and memory freed in one arena is not reused by another: the steps' helper threads (parquet
    reads and writes, text normalisation, the JSON Lines chunks) each kept their own freed pages.
    With one arena (``mallopt(M_ARENA_MAX, 1)``, as ``MALLOC_ARENA_MAX=1`` sets it) those pages are
    reused across threads: a lower peak at the same wall time. A no-op where the C library has no ``mallopt`` (not glibc)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(ctypes.c_int(-8), ctypes.c_int(1))        # M_ARENA_MAX (malloc.h), 1
