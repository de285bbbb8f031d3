"""IMPORT family: a dataset's ready-made items (TACoBeLAL MCQ, MMAU, Clotho captions) as a task.

The dataset adapter already converted the items to the contract (``results/data/{dataset}/items.jsonl``);
this builder selects and stamps them for one task without changing their meaning: option labels,
order, texts and answers are kept. ``params``:

  items_path: the adapter's items.jsonl (the rule fills it in)
  where:      {meta field: value or [values]} -- keep items whose meta matches (e.g. {category: Reasoning});
              a list-valued meta field (MMAU stores some categories as ["Reasoning"]) matches when any
              of its values does
  kind:       mcq | open | instruction -- keep items of this kind (meta.kind; the config expansion sets
              it for each task it makes from a mixed benchmark, see lalmbench.workflow.config)
  limit:      keep at most this many (a seeded sample by ``sample_seed``, kept in file order)
  shuffle_options: false -- true re-places answers at balanced positions with ``seed`` (texts unchanged)

Each item's ``audio_path`` is taken from ``clips`` by clip_id (and a multi-clip item's ``audio_paths``
by its ``clip_ids``), so the adapter's path checks apply.
"""
from __future__ import annotations

import numpy as np

from lalmbench.core.io import InputError, read_jsonl
from lalmbench.tasks import register_family
from lalmbench.core.items import balanced_positions, option_labels
from lalmbench.tasks.options import build_stats
from lalmbench.tasks.prep import check_params, param

PARAMS = frozenset(["items_path", "where", "limit", "shuffle_options", "kind"])

def _matches(meta: dict, where: dict) -> bool:
    for k, v in where.items():
        allowed = v if isinstance(v, list) else [v]
        have = meta.get(k)
        values = have if isinstance(have, list) else [have]
        if not any(x in allowed for x in values):
            return False
    return True


def item_kind(item: dict) -> str:
    """mcq | open | instruction: the adapter's ``meta.kind``, else mcq when the item has options."""
    kind = (item.get("meta") or {}).get("kind")
    return str(kind) if kind else ("mcq" if item.get("options") else "open")


def select_items(items: list[dict], clips, params: dict, *, seed: int, dataset: str, task: str,
                 source: str = "items") -> tuple[list[dict], dict]:
    where = param(params, "where", {}) or {}
    limit = param(params, "limit", None)
    dropped: dict[str, int] = {}
    path_of = dict(zip(clips["clip_id"].astype(str), clips["audio_path"].astype(str)))
    kind = param(params, "kind", None)
    if kind is not None:
        of_kind = [it for it in items if item_kind(it) == kind]
        dropped["item:other_kind"] = len(items) - len(of_kind)
    else:
        of_kind = items
    kept = [it for it in of_kind if _matches(it.get("meta") or {}, where)]
    dropped["item:filtered_out_by_where"] = len(of_kind) - len(kept)
    if limit is not None and len(kept) > int(limit):
        rng = np.random.default_rng(int(param(params, "sample_seed", 0)))
        pick = np.sort(rng.choice(len(kept), int(limit), replace=False))
        dropped["item:over_limit"] = len(kept) - int(limit)
        kept = [kept[i] for i in pick]
    out = []
    for n, it in enumerate(kept, start=1):
        cid = str(it.get("clip_id"))
        if cid not in path_of:
            raise InputError(f"{source}: item {it.get('id')!r}: clip_id {cid!r} is not in the dataset's clips table")
        rec = dict(it, task=task, dataset=dataset, audio_path=path_of[cid])
        if it.get("clip_ids"):  # a multi-clip item: every clip through the clips table, in order
            absent = [c for c in map(str, it["clip_ids"]) if c not in path_of]
            if absent:
                raise InputError(f"{source}: item {it.get('id')!r}: clip_ids {absent} are not in the dataset's clips table")
            rec["audio_paths"] = [path_of[c] for c in map(str, it["clip_ids"])]
        out.append(rec)
    if bool(param(params, "shuffle_options", False)):
        out = _reshuffle(out, np.random.default_rng(seed))
    return out, build_stats(rows_read=len(items), dropped={k: v for k, v in dropped.items() if v}, items=out,
                            params=params)


def _reshuffle(items: list[dict], rng: np.random.Generator) -> list[dict]:
    """Move each answer to a balanced position (per option count); distractor order random."""
    by_k: dict[int, list[int]] = {}
    for i, it in enumerate(items):
        if it.get("answer_label") and it.get("options"):
            by_k.setdefault(len(it["options"]), []).append(i)
    items = list(items)
    for k, idx in sorted(by_k.items()):
        pos = balanced_positions(len(idx), k, rng)
        labels = option_labels(k)
        for i, p in zip(idx, pos.tolist()):
            it = items[i]
            gold = next(o for o in it["options"] if o["label"] == it["answer_label"])
            rest = [o for o in it["options"] if o is not gold]
            rest = [rest[j] for j in rng.permutation(len(rest))]
            rest.insert(p, gold)
            opts = [dict(o, label=lab) for lab, o in zip(labels, rest)]
            items[i] = dict(it, options=opts, answer_label=labels[p],
                            meta=dict(it.get("meta") or {}, original_answer_label=it["answer_label"]))
    return items


@register_family("import")
def build(events, clips, params, *, seed: int, dataset: str, task: str):
    params = check_params(params, PARAMS, family="import", task=task)
    path = params.pop("items_path", None)
    if not path:
        raise ValueError(f"task {task}: family 'import' needs params.items_path (the adapter's items.jsonl)")
    items = read_jsonl(path)
    return select_items(items, clips, params, seed=seed, dataset=dataset, task=task, source=str(path))
