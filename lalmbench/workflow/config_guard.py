"""Every config file Snakemake loads is checked first (size, YAML alias expansion: check_config_file).

Why here and not in the Snakefile: Snakemake reads each ``--configfile`` and merges them into one
dict while it parses its command line, before the Snakefile runs, and the merge expands every YAML
alias: a bomb of nested mappings (9 levels x 9 keys) grew to 8 GB in two minutes, and a 200 MB
value kept ``snakemake -n`` in its pure-Python YAML reader for minutes. No workflow code runs that
early, so the check is hooked into Snakemake's own loader (``snakemake.common.configfile``, which
loads --configfile, ``configfile:`` and profiles) when that module is imported: the project's
``.venv`` runs :func:`install` at interpreter start through a ``.pth`` file that
``python -m lalmbench.workflow.config_guard install`` writes (the Makefile does, when it builds
``.venv``). A Snakemake installed elsewhere still gets the check of config/config.yaml in the
Snakefile, and of the merged config in :func:`lalmbench.workflow.config.validate_config`.

This file is loaded by every Python started in ``.venv`` (by its path: the ``lalmbench`` package is imported only
when a config file is checked): it imports nothing heavy itself.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType
from typing import Any

LOADER_MODULE = "snakemake.common.configfile"
PTH_NAME = "lalmbench_config_guard.pth"
#: the .pth line: this file loaded by its path, not as ``lalmbench.workflow.config_guard``, so no Python of .venv
#: imports the ``lalmbench`` package at start (a workflow copy run from its own folder must import its own copy)
PTH_LINE = ("import importlib.util as _u; _s = _u.spec_from_file_location('lalmbench_config_guard', {path!r}); "
            "_m = _u.module_from_spec(_s); _s.loader.exec_module(_m); _m.install()\n")


def guard(module: ModuleType) -> None:
    """Wrap ``module._load_configfile`` (which ``load_configfile`` calls) with the file check."""
    original = getattr(module, "_load_configfile", None)
    if original is None or getattr(original, "lalmbench_guarded", False):
        return

    def _load_configfile(configpath_or_obj: Any, filetype: str = "Config") -> Any:
        if isinstance(configpath_or_obj, (str, os.PathLike)) and os.path.isfile(configpath_or_obj):
            from lalmbench.workflow.config import ConfigError, check_config_file

            try:
                check_config_file(configpath_or_obj)
            except ConfigError as exc:
                from snakemake_interface_common.exceptions import WorkflowError

                raise WorkflowError(f"{filetype} file refused: {exc}") from None
        return original(configpath_or_obj, filetype)

    _load_configfile.lalmbench_guarded = True  # type: ignore[attr-defined]
    module._load_configfile = _load_configfile


class _GuardOnImport(importlib.abc.MetaPathFinder):
    """Finds Snakemake's config loader as usual and guards it as soon as it has run."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != LOADER_MODULE:
            return None
        sys.meta_path.remove(self)  # the real finders from here on
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            exec_module = spec.loader.exec_module

            def exec_and_guard(module: ModuleType) -> None:
                exec_module(module)
                guard(module)

            spec.loader.exec_module = exec_and_guard  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Guard Snakemake's config loader in this process (now, or when it is first imported)."""
    if LOADER_MODULE in sys.modules:
        guard(sys.modules[LOADER_MODULE])
    elif not any(isinstance(f, _GuardOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _GuardOnImport())


def write_pth(site_packages: str | Path | None = None) -> Path:
    """The ``.pth`` file that runs :func:`install` at the start of every Python of this environment."""
    target = Path(site_packages or sysconfig.get_paths()["purelib"]) / PTH_NAME
    target.write_text(PTH_LINE.format(path=str(Path(__file__).resolve())), encoding="utf-8")
    return target


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python -m lalmbench.workflow.config_guard install")
    print(f"config guard: {write_pth()}")
