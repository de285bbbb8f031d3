"""generation.samples with the hf backend: k seeded outputs per item, each cached under its own key."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the hf backend needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="the hf backend needs transformers (core env or envs/hf)")

from lalmbench.inference import Slice, generate  # noqa: E402
from lalmbench.inference.cache import read_rows  # noqa: E402
from lalmbench.inference.fingerprint import model_fingerprint  # noqa: E402
from lalmbench.inference.materialize import materialize  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [{"label": "A", "text": "speech", "type": "label", "meta": {}},
           {"label": "B", "text": "a pure tone", "type": "label", "meta": {}}]


@pytest.fixture(scope="module")
def items_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("items") / "demo.jsonl"
    rows = [{"id": f"t{i}", "task": "demo", "dataset": "demo", "question": f"Question {i}?", "options": OPTIONS,
             "answer_label": "B", "answer_text": "a pure tone", "references": [], "meta": {}} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def entry(model_dir, k: int | None, batch_size: int = 4) -> dict:
    gen = {"max_new_tokens": 6, "do_sample": True, "temperature": 1.0, "top_p": 1.0}
    return {"backend": "hf", "model_id": str(model_dir), "family": "text", "batch_size": batch_size, "seed": 3,
            "generation": gen if k is None else {**gen, "samples": k}}


def serve(items_path, cfg, cache: Path, out: Path) -> dict:
    sl = Slice(items=str(items_path), condition="no-audio", prompt="mcq-default",
               template=str(ROOT / "resources" / "prompts" / "mcq-default.txt"), out=str(out))
    summary = generate(model_name="tiny-text", model_cfg=cfg, slices=[sl], cache_path=cache)
    return {"summary": summary, "slice": sl}


def outputs(cache: Path) -> dict[tuple[str, int], str]:
    return {(r["id"], r["sample"]): r["raw_output"] for r in read_rows(cache).values()}


@pytest.mark.slow
def test_samples_are_cached_apart_and_raising_k_only_adds(items_path, text_lm_dir, tmp_path):
    cache = tmp_path / "cache.jsonl"
    first = serve(items_path, entry(text_lm_dir, 5), cache, tmp_path / "p.parquet")["summary"]
    assert first["slices"][0]["generated"] == 15 and first["slices"][0]["samples"] == 5
    five = outputs(cache)
    assert sorted({j for _, j in five}) == [0, 1, 2, 3, 4]
    for i in ("t0", "t1", "t2"):  # 5 distinct draws per item
        assert len({five[(i, j)] for j in range(5)}) == 5
    rerun = serve(items_path, entry(text_lm_dir, 5), cache, tmp_path / "p.parquet")["summary"]
    assert rerun["slices"][0]["generated"] == 0 and rerun["model_loads"] == 0
    served = serve(items_path, entry(text_lm_dir, 8), cache, tmp_path / "p.parquet")
    assert served["summary"]["slices"][0]["generated"] == 9  # samples 5, 6, 7 of each of 3 items
    eight = outputs(cache)
    assert len(eight) == 24 and all(eight[key] == five[key] for key in five)
    df = materialize(served["slice"], model_cfg=entry(text_lm_dir, 8), cache_path=cache)
    per_item = [json.loads(s) for s in df["samples"]]
    assert [len(s) for s in per_item] == [8, 8, 8]
    assert [s[0]["raw_output"] for s in per_item] == list(df["raw_output"])
    assert [s[6]["raw_output"] for s in per_item] == [eight[(i, 6)] for i in ("t0", "t1", "t2")]
    assert all(isinstance(x["output_tokens"], int) and x["output_tokens"] > 0 for s in per_item for x in s)


@pytest.mark.slow
def test_a_sample_does_not_depend_on_its_batch(items_path, text_lm_dir, tmp_path):
    serve(items_path, entry(text_lm_dir, 3, batch_size=4), tmp_path / "a.jsonl", tmp_path / "a.parquet")
    serve(items_path, entry(text_lm_dir, 3, batch_size=1), tmp_path / "b.jsonl", tmp_path / "b.parquet")
    assert outputs(tmp_path / "a.jsonl") == outputs(tmp_path / "b.jsonl")


@pytest.mark.slow
def test_one_sample_keeps_todays_keys_and_rows(items_path, text_lm_dir, tmp_path):
    """samples: 1 is the entry without the key: same fingerprint, same cache keys, no sample field."""
    assert model_fingerprint(entry(text_lm_dir, 1)) == model_fingerprint(entry(text_lm_dir, None)) \
        == model_fingerprint(entry(text_lm_dir, 5))
    serve(items_path, entry(text_lm_dir, None), tmp_path / "none.jsonl", tmp_path / "n.parquet")
    serve(items_path, entry(text_lm_dir, 1), tmp_path / "one.jsonl", tmp_path / "o.parquet")
    none, one = read_rows(tmp_path / "none.jsonl"), read_rows(tmp_path / "one.jsonl")
    assert set(none) == set(one) and all("sample" not in r for r in one.values())
    assert {k: r["raw_output"] for k, r in none.items()} == {k: r["raw_output"] for k, r in one.items()}
