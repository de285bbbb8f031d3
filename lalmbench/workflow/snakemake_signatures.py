"""Planning speed: Snakemake reads the signature of a rule's input/params/resources function every
time it calls one (``inspect.signature``, twice per call), and a large study calls them hundreds of
thousands of times (63 models x 45 tasks: ~1/6 of ``snakemake -n``). A function's signature never
changes, so it is read once per function and kept."""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping


def cache_function_signatures() -> bool:
    """Make Snakemake's ``get_function_params`` remember each function's parameters; idempotent.
    Returns False (and changes nothing) on a Snakemake without that helper: only speed is at stake."""
    import snakemake.common as common

    original = getattr(common, "get_function_params", None)
    if original is None:
        return False
    if getattr(original, "__wrapped__", None) is not None:
        return True
    remembered = functools.lru_cache(maxsize=None)(original)

    @functools.wraps(original)
    def get_function_params(func: Callable) -> Mapping[str, Any]:
        try:
            return remembered(func)
        except TypeError:  # an unhashable callable: read it every time, as Snakemake does
            return original(func)

    import snakemake.jobs as jobs
    import snakemake.rules as rules

    # the modules that imported the name by value get the remembering one too
    for module in (common, jobs, rules):
        if getattr(module, "get_function_params", None) is original:
            module.get_function_params = get_function_params
    return True
