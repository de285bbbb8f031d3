"""The hf backend under the pipeline's inference runner: task items on disk -> predictions parquet, and
k seeded samples per item (generation.samples), each cached under its own key."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import soundfile as sf

pytest.importorskip("torch", reason="the hf backend needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="the hf backend needs transformers (core env or envs/hf)")

import tiny  # noqa: E402

from lalmbench.inference import Slice, generate, run_inference  # noqa: E402
from lalmbench.inference.cache import read_rows  # noqa: E402
from lalmbench.inference.fingerprint import model_fingerprint  # noqa: E402
from lalmbench.inference.materialize import materialize  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [{"label": "A", "text": "speech", "type": "label", "meta": {}},
           {"label": "B", "text": "a pure tone", "type": "label", "meta": {}}]


@pytest.fixture(scope="module")
def items_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("items")
    rows = []
    for i, (sec, freq) in enumerate([(1.0, 300), (2.5, 900), (0.7, 1500)]):
        wav = d / f"c{i}.wav"
        sf.write(wav, tiny.tone(sec, freq, seed=i), 16000)
        rows.append({"id": f"t{i}", "task": "demo", "dataset": "demo", "clip_id": f"c{i}", "audio_path": str(wav),
                     "question": "What do you hear?", "options": OPTIONS, "answer_label": "B",
                     "answer_text": "a pure tone", "references": [], "meta": {}})
    path = d / "demo.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(items_path, out, model_dir, condition, **cfg):
    return run_inference(items_path=str(items_path), out_path=str(out), model_name="tiny-qwen2-audio",
                         model_cfg={"backend": "hf", "model_id": str(model_dir), "batch_size": 2,
                                    "generation": {"max_new_tokens": 4}, **cfg},
                         condition=condition, prompt_name="mcq-default",
                         template_path=str(ROOT / "resources" / "prompts" / "mcq-default.txt"))


@pytest.mark.slow
def test_generate_through_the_runner(items_path, qwen2_audio_dir, tmp_path):
    df = run(items_path, tmp_path / "audio.parquet", qwen2_audio_dir, "audio")
    assert list(df["id"]) == ["t0", "t1", "t2"] and df["error"].isna().all()
    assert (df["backend"] == "hf").all() and df["raw_output"].notna().all()
    assert df.loc[1, "input_tokens"] > df.loc[0, "input_tokens"] > df.loc[2, "input_tokens"]
    assert json.loads(df.loc[0, "extra"])["generation"]["do_sample"] is False
    bare = run(items_path, tmp_path / "none.parquet", qwen2_audio_dir, "no-audio")
    assert bare["error"].isna().all()
    assert (bare["input_tokens"] < df["input_tokens"]).all()  # no audio placeholder tokens at all
    assert pd.read_parquet(tmp_path / "audio.parquet")["id"].tolist() == ["t0", "t1", "t2"]
    # the audio's share of the input: the placeholders, longer clips more; the rest of what the audio adds
    # over the bare prompt is the template's fixed wrapper around them (audio_bos/eos and its label)
    audio_tokens = [json.loads(e)["input_audio_tokens"] for e in df["extra"]]
    assert len(set((df["input_tokens"] - bare["input_tokens"] - audio_tokens).tolist())) == 1
    assert audio_tokens[1] > audio_tokens[0] > audio_tokens[2] > 0
    assert [json.loads(e)["input_audio_tokens"] for e in bare["extra"]] == [0, 0, 0]


@pytest.mark.slow
def test_loglik_through_the_runner_depends_on_the_audio(items_path, qwen2_audio_dir, tmp_path):
    audio = run(items_path, tmp_path / "a.parquet", qwen2_audio_dir, "audio", scoring="loglik")
    silence = run(items_path, tmp_path / "s.parquet", qwen2_audio_dir, "silence", scoring="loglik")
    assert set(audio["raw_output"]) <= {"A", "B"} and audio["error"].isna().all()
    for a, s in zip(audio["extra"], silence["extra"]):
        a, s = json.loads(a)["options"], json.loads(s)["options"]
        assert abs(a["A"]["sum"] - s["A"]["sum"]) > 1e-4


@pytest.fixture(scope="module")
def text_items_path(tmp_path_factory):
    """Three text-only items: the sampling tests run the tiny text LM under no-audio."""
    path = tmp_path_factory.mktemp("text-items") / "demo.jsonl"
    rows = [{"id": f"t{i}", "task": "demo", "dataset": "demo", "question": f"Question {i}?", "options": OPTIONS,
             "answer_label": "B", "answer_text": "a pure tone", "references": [], "meta": {}} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def sampled_entry(model_dir, k: int | None, batch_size: int = 4) -> dict:
    gen = {"max_new_tokens": 6, "do_sample": True, "temperature": 1.0, "top_p": 1.0}
    return {"backend": "hf", "model_id": str(model_dir), "family": "text", "batch_size": batch_size, "seed": 3,
            "generation": gen if k is None else {**gen, "samples": k}}


def serve(items, cfg, cache: Path, out: Path) -> dict:
    sl = Slice(items=str(items), condition="no-audio", prompt="mcq-default",
               template=str(ROOT / "resources" / "prompts" / "mcq-default.txt"), out=str(out))
    summary = generate(model_name="tiny-text", model_cfg=cfg, slices=[sl], cache_path=cache)
    return {"summary": summary, "slice": sl}


def outputs(cache: Path) -> dict[tuple[str, int], str]:
    return {(r["id"], r["sample"]): r["raw_output"] for r in read_rows(cache).values()}


@pytest.mark.slow
def test_samples_are_cached_apart_and_raising_k_only_adds(text_items_path, text_lm_dir, tmp_path):
    cache = tmp_path / "cache.jsonl"
    first = serve(text_items_path, sampled_entry(text_lm_dir, 5), cache, tmp_path / "p.parquet")["summary"]
    assert first["slices"][0]["generated"] == 15 and first["slices"][0]["samples"] == 5
    five = outputs(cache)
    assert sorted({j for _, j in five}) == [0, 1, 2, 3, 4]
    for i in ("t0", "t1", "t2"):  # 5 distinct draws per item
        assert len({five[(i, j)] for j in range(5)}) == 5
    rerun = serve(text_items_path, sampled_entry(text_lm_dir, 5), cache, tmp_path / "p.parquet")["summary"]
    assert rerun["slices"][0]["generated"] == 0 and rerun["model_loads"] == 0
    served = serve(text_items_path, sampled_entry(text_lm_dir, 8), cache, tmp_path / "p.parquet")
    assert served["summary"]["slices"][0]["generated"] == 9  # samples 5, 6, 7 of each of 3 items
    eight = outputs(cache)
    assert len(eight) == 24 and all(eight[key] == five[key] for key in five)
    df = materialize(served["slice"], model_cfg=sampled_entry(text_lm_dir, 8), cache_path=cache)
    per_item = [json.loads(s) for s in df["samples"]]
    assert [len(s) for s in per_item] == [8, 8, 8]
    assert [s[0]["raw_output"] for s in per_item] == list(df["raw_output"])
    assert [s[6]["raw_output"] for s in per_item] == [eight[(i, 6)] for i in ("t0", "t1", "t2")]
    assert all(isinstance(x["output_tokens"], int) and x["output_tokens"] > 0 for s in per_item for x in s)


@pytest.mark.slow
def test_a_sample_does_not_depend_on_its_batch(text_items_path, text_lm_dir, tmp_path):
    serve(text_items_path, sampled_entry(text_lm_dir, 3, batch_size=4), tmp_path / "a.jsonl", tmp_path / "a.parquet")
    serve(text_items_path, sampled_entry(text_lm_dir, 3, batch_size=1), tmp_path / "b.jsonl", tmp_path / "b.parquet")
    assert outputs(tmp_path / "a.jsonl") == outputs(tmp_path / "b.jsonl")


@pytest.mark.slow
def test_one_sample_keeps_todays_keys_and_rows(text_items_path, text_lm_dir, tmp_path):
    """samples: 1 is the entry without the key: same fingerprint, same cache keys, no sample field."""
    assert model_fingerprint(sampled_entry(text_lm_dir, 1)) == model_fingerprint(sampled_entry(text_lm_dir, None)) \
        == model_fingerprint(sampled_entry(text_lm_dir, 5))
    serve(text_items_path, sampled_entry(text_lm_dir, None), tmp_path / "none.jsonl", tmp_path / "n.parquet")
    serve(text_items_path, sampled_entry(text_lm_dir, 1), tmp_path / "one.jsonl", tmp_path / "o.parquet")
    none, one = read_rows(tmp_path / "none.jsonl"), read_rows(tmp_path / "one.jsonl")
    assert set(none) == set(one) and all("sample" not in r for r in one.values())
    assert {k: r["raw_output"] for k, r in none.items()} == {k: r["raw_output"] for k, r in one.items()}


@pytest.mark.slow
def test_a_sweep_run_of_a_sampled_model_reads_one_output_per_item(text_items_path, text_lm_dir, tmp_path):
    """CircularEval and the determinism check read one output per item: their variants draw one."""
    sl = Slice(items=str(text_items_path), condition="no-audio", prompt="mcq-default",
               template=str(ROOT / "resources" / "prompts" / "mcq-default.txt"), out=str(tmp_path / "v.parquet"),
               variant={"batch_size": 2})
    cfg = sampled_entry(text_lm_dir, 4)
    summary = generate(model_name="tiny-text", model_cfg=cfg, slices=[sl], cache_path=tmp_path / "c.jsonl")
    assert summary["slices"][0]["generated"] == 3 and "samples" not in summary["slices"][0]
    df = materialize(sl, model_cfg=cfg, cache_path=tmp_path / "c.jsonl")
    assert "samples" not in df.columns and df["raw_output"].notna().all()
