"""The TACoBeLAL adapter + `next` builder, end to end through both rule entries, give exactly the
pinned items on a fixed strong-label CSV (176 rows, 20 clips: generated captions plus hand-written
caption variants, equal and near onsets, non-ASCII and padded fields, short events).

The pin guards the speed work on the adapter and the builders: a faster path must produce the same
items. A deliberate change of the items (a new filter, a new meta field) regenerates the pin:

    PYTHONPATH=. python tests/tasks/test_next_pinned.py
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lalmbench.data.adapters.run import adapt_dataset_files
from lalmbench.core.io import read_jsonl
from lalmbench.tasks.run import build_task_files

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data" / "datasets" / "tacobelal" / "next_pinned"
PARAMS = {"min_event_s": 0.5, "max_items_per_clip": 3}


def build(work: Path) -> tuple[list[dict], dict]:
    """Adapter rule entry, then the task rule entry, in ``work`` (audio paths relative to it)."""
    csv = DATA / "annotations_strong.csv"
    names = {line.split(",")[0].strip() for line in csv.read_text(encoding="utf-8").splitlines()[1:]}
    cwd = os.getcwd()
    os.chdir(work)
    try:
        os.makedirs("audio", exist_ok=True)
        for n in names:
            Path("audio", n).touch()
        adapt_dataset_files({"adapter": "tacobelal", "params": {"annotations": str(csv), "audio_root": "audio"}},
                            dataset="pinned", clips_path="clips.parquet", events_path="events.parquet",
                            items_path="adapter_items.jsonl", stats_path="adapter_stats.json")
        build_task_files({"task": {"family": "next", "params": PARAMS}, "seed": 3}, dataset="pinned", task="next",
                         clips_path="clips.parquet", events_path="events.parquet", items_path="next.jsonl",
                         stats_path="next.stats.json")
        stats = json.loads(Path("next.stats.json").read_text())
        return read_jsonl("next.jsonl"), {"dropped": stats["dropped"], "items_written": stats["items_written"]}
    finally:
        os.chdir(cwd)


def test_adapter_and_next_give_the_pinned_items(tmp_path):
    items, stats = build(tmp_path)
    assert stats == json.loads((DATA / "next_stats.json").read_text())
    pinned = read_jsonl(DATA / "next_items.jsonl")
    assert [it["id"] for it in items] == [it["id"] for it in pinned]
    for got, want in zip(items, pinned):
        assert got == want, got["id"]


def test_a_stamped_events_table_edited_afterwards_is_checked_again(tmp_path):
    """The adapter stamps the tables it validated, so the task skips the checks it made; a table
    changed after that (here by pyarrow, which keeps the stamp) is validated in full again."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pytest

    from lalmbench.data.annotations import VALIDATED_KEY, validated_stamp
    from lalmbench.core.io import InputError, parquet_metadata, read_parquet

    build(tmp_path)
    stamp = parquet_metadata(tmp_path / "events.parquet")[VALIDATED_KEY]
    assert stamp == validated_stamp(read_parquet(tmp_path / "clips.parquet"), read_parquet(tmp_path / "events.parquet"))
    table = pq.read_table(tmp_path / "events.parquet")
    onset = table["onset_s"].to_numpy().copy()
    onset[4] = -1.0
    pq.write_table(table.set_column(1, "onset_s", pa.array(onset)), tmp_path / "events.parquet")
    assert VALIDATED_KEY in parquet_metadata(tmp_path / "events.parquet")
    with pytest.raises(InputError, match=r"events.parquet: row 5: onset_s is negative"):
        build_task_files({"task": {"family": "next", "params": PARAMS}, "seed": 3}, dataset="pinned", task="next",
                         clips_path=str(tmp_path / "clips.parquet"), events_path=str(tmp_path / "events.parquet"),
                         items_path=str(tmp_path / "next.jsonl"), stats_path=str(tmp_path / "next.stats.json"))


if __name__ == "__main__":                     # regenerate the pin (see the module docstring)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        items, stats = build(Path(tmp))
    (DATA / "next_stats.json").write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n")
    (DATA / "next_items.jsonl").write_text("".join(json.dumps(it, sort_keys=True, ensure_ascii=False) + "\n"
                                                   for it in items), encoding="utf-8")
    print(f"pinned {len(items)} items, dropped {stats['dropped']}", file=sys.stderr)
