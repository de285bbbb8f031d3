"""``python -m lalmbench.data.presets list``: every benchmark preset with what it measures, the item
kinds it gives, the official rule(s) its reports score it by, and its size, read from the preset
files themselves (lalmbench/data/adapters/presets/*.yaml), so the list cannot drift from them."""
from __future__ import annotations

import sys

import yaml

from lalmbench.data.adapters.benchmarks import PRESET_DIR, preset_names

COLUMNS = ("preset", "task_family", "kinds", "official", "official_also", "size")


def _rules(entry) -> str:
    entries = entry if isinstance(entry, list) else [entry]
    return ", ".join(e["scorer"] if isinstance(e, dict) else str(e) for e in entries if e) or "-"


def rows() -> list[dict]:
    """One row per preset, as its file states it (a ``by_param`` choice such as AIR-Bench's chat split
    is not applied: the row shows the preset's default form)."""
    out = []
    for name in preset_names():
        spec = yaml.safe_load((PRESET_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
        out.append({"preset": name, "task_family": spec.get("task_family", "-"),
                    "kinds": ",".join(spec.get("kinds") or ["mcq"]), "official": _rules(spec.get("official")),
                    "official_also": _rules(spec.get("official_also")), "size": spec.get("size") or "-"})
    return out


def main(argv: list[str]) -> int:
    if argv[:1] != ["list"]:
        print("usage: python -m lalmbench.data.presets list", file=sys.stderr)
        return 2
    table = rows()
    print("\t".join(COLUMNS))
    for r in table:
        print("\t".join(str(r[c]) for c in COLUMNS))
    print(f"{len(table)} presets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
