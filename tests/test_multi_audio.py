"""Items with several clips (MMAU-Pro): what each kind of model receives, what is recorded, and
what keys the prediction cache and the audio cache."""
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from lalmbench.core import io
from lalmbench.data.audio_cache import cache_task_audio
from lalmbench.inference import run_inference
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.model_job import build_input
from lalmbench.inference.slices import Slice, prepare
from lalmbench.models.base import Model, ModelOutput, register_backend

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "resources" / "prompts" / "mcq-default.txt"
SR = 16000
RECEIVED: list = []


@register_backend("fake-multi-audio-test")
class FakeMultiAudio(Model):
    """Records what it receives; ``params.multi`` says whether it takes several audio entries."""

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        self.multi_audio = bool(cfg.get("params", {}).get("multi"))

    def generate(self, batch):
        RECEIVED.extend(batch)
        return [ModelOutput(raw_output="A") for _ in batch]


def tone(path, seconds, value):
    sf.write(path, np.full(int(seconds * SR), value, dtype=np.float32), SR, subtype="FLOAT")
    return str(path)


@pytest.fixture
def task(tmp_path):
    a, b, c = tone(tmp_path / "a.wav", 0.5, 0.1), tone(tmp_path / "b.wav", 0.25, 0.2), tone(tmp_path / "c.wav", 1, 0.3)
    opts = [{"label": "A", "text": "first"}, {"label": "B", "text": "second"}]
    items = [{"id": "two", "question": "Which clip is louder?", "options": opts, "answer_label": "B",
              "audio_path": a, "clip_id": "a", "audio_paths": [a, b], "clip_ids": ["a", "b"], "meta": {}},
             {"id": "one", "question": "Is it loud?", "options": opts, "answer_label": "A", "audio_path": c,
              "clip_id": "c", "meta": {}}]
    path = tmp_path / "items.jsonl"
    io.write_jsonl(path, items)
    return path, items


def keys(items_path, condition="audio", manifest=None):
    sl = Slice(items=str(items_path), condition=condition, prompt="p", template=str(TEMPLATE), out="x.parquet",
               manifest=manifest)
    return prepare(sl, model_fp="fp", seed=0, sample_rate=SR).keys


def test_a_multi_audio_model_receives_every_clip_in_order(task, tmp_path):
    RECEIVED.clear()
    df = run_inference(items_path=str(task[0]), out_path=str(tmp_path / "p.parquet"), model_name="m",
                       model_cfg={"backend": "fake-multi-audio-test", "params": {"multi": True}}, condition="audio",
                       prompt_name="p", template_path=str(TEMPLATE))
    got = {x.id: x for x in RECEIVED}
    assert [len(a) for a in got["two"].audios] == [SR // 2, SR // 4]
    assert [float(a[0]) for a in got["two"].audios] == pytest.approx([0.1, 0.2])
    assert got["two"].audio is got["two"].audios[0] and got["one"].audios is None
    assert json.loads(df.set_index("id").loc["two", "extra"]) == {"multi_audio": {"clips": 2, "rendering": "separate"}}
    assert df.set_index("id")["extra"].isna()["one"]


def test_other_models_hear_the_clips_joined_by_the_configured_gap(task, tmp_path):
    RECEIVED.clear()
    df = run_inference(items_path=str(task[0]), out_path=str(tmp_path / "p.parquet"), model_name="m",
                       model_cfg={"backend": "fake-multi-audio-test", "multi_audio_gap_s": 0.5}, condition="audio",
                       prompt_name="p", template_path=str(TEMPLATE))
    x = next(x for x in RECEIVED if x.id == "two")
    assert x.audios is None and len(x.audio) == SR // 2 + SR // 2 + SR // 4  # clip + gap + clip
    assert x.audio[SR // 2:SR].max() == 0.0 and float(x.audio[-1]) == pytest.approx(0.2)
    extra = json.loads(df.set_index("id").loc["two", "extra"])
    assert extra == {"multi_audio": {"clips": 2, "rendering": "concatenated", "gap_s": 0.5}}


def test_default_gap_is_one_second_and_conditions_apply_to_every_clip(task):
    it = task[1][0]
    x = build_input(it, condition="audio", template="{question}", sample_rate=SR, seed=0)
    assert len(x.audio) == SR // 2 + SR + SR // 4
    s = build_input(it, condition="silence", template="{question}", sample_rate=SR, seed=0, multi_audio=True)
    assert [len(a) for a in s.audios] == [SR // 2, SR // 4] and all(not a.any() for a in s.audios)
    n = build_input(it, condition="noise", template="{question}", sample_rate=SR, seed=0, multi_audio=True)
    rms = [float(np.sqrt(np.mean(a ** 2))) for a in n.audios]
    assert rms == pytest.approx([0.1, 0.2], rel=0.1)  # each clip's noise at its own level
    assert build_input(it, condition="no-audio", template="{question}", sample_rate=SR, seed=0).audio is None


def test_shuffled_replaces_every_clip_by_another_clip(task):
    sl = Slice(items=str(task[0]), condition="shuffled", prompt="p", template=str(TEMPLATE), out="x.parquet")
    p = prepare(sl, model_fp="fp", seed=0, sample_rate=SR)
    two = p.audio_source["two"]
    assert isinstance(two, list) and len(two) == 2
    assert two[0] != task[1][0]["audio_paths"][0] and two[1] != task[1][0]["audio_paths"][1]
    assert isinstance(p.audio_source["one"], str) and p.audio_source["one"] != task[1][1]["audio_path"]


def test_item_key_changes_when_the_second_clip_changes(task, tmp_path):
    before = keys(task[0])
    tone(tmp_path / "b.wav", 0.25, 0.7)  # same path, other content
    after = keys(task[0])
    assert after[0] != before[0] and after[1] == before[1]


def test_audio_manifest_lists_every_clip_and_keys_follow_it(task, tmp_path):
    manifest = tmp_path / "manifest.json"
    files = cache_task_audio(str(task[0]), str(tmp_path / "cache"), str(manifest), SR)
    assert set(files) == {str(tmp_path / n) for n in ("a.wav", "b.wav", "c.wav")}
    sl = Slice(items=str(task[0]), condition="audio", prompt="p", template=str(TEMPLATE), out="x.parquet",
               manifest=str(manifest))
    p = prepare(sl, model_fp=model_fingerprint({"backend": "random"}), seed=0, sample_rate=SR)
    assert p.items[0]["audio_paths"] == [files[str(tmp_path / "a.wav")], files[str(tmp_path / "b.wav")]]
    assert keys(task[0], manifest=str(manifest))[0] != keys(task[0], condition="silence", manifest=str(manifest))[0]


def test_import_family_takes_every_clip_from_the_clips_table():
    import pandas as pd

    from lalmbench.core.io import InputError
    from lalmbench.tasks.imported import select_items

    clips = pd.DataFrame({"clip_id": ["a", "b"], "audio_path": ["/data/a.wav", "/data/b.wav"]})
    item = {"id": "x", "question": "q", "options": [], "clip_id": "a", "audio_path": "a.wav",
            "clip_ids": ["a", "b"], "audio_paths": ["a.wav", "b.wav"], "meta": {}}
    out, _ = select_items([item], clips, {}, seed=0, dataset="d", task="t")
    assert out[0]["audio_path"] == "/data/a.wav" and out[0]["audio_paths"] == ["/data/a.wav", "/data/b.wav"]
    with pytest.raises(InputError, match=r"clip_ids \['c'\] are not in the dataset's clips table"):
        select_items([dict(item, clip_ids=["a", "c"])], clips, {}, seed=0, dataset="d", task="t")
