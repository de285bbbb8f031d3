"""The hf backend under the pipeline's inference runner: task items on disk -> predictions parquet."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import soundfile as sf

pytest.importorskip("torch", reason="the hf backend needs torch (core env or envs/hf)")
pytest.importorskip("transformers", reason="the hf backend needs transformers (core env or envs/hf)")

import tiny  # noqa: E402

from lalmbench.inference import run_inference  # noqa: E402

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
