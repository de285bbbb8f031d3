"""The inference runner: resume after kill -9, per-item retries, error budget, provenance columns."""
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.inference import partial_path, run_inference
from lalmbench.models.base import Model, ModelOutput
from lalmbench.data.synth.trivial import generate_family

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "resources" / "prompts" / "mcq-default.txt"


@pytest.fixture(scope="module")
def items_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("items")
    items, *_ = generate_family("pitch_order", 30, d, seed=0, dataset="synth", task="po")
    io.write_jsonl(d / "po.jsonl", items)
    return d / "po.jsonl"


def test_predictions_have_contract_columns_and_provenance(items_path, tmp_path):
    out = tmp_path / "p.parquet"
    df = run_inference(items_path=str(items_path), out_path=str(out), model_name="random",
                       model_cfg={"backend": "random", "seed": 1, "batch_size": 7}, condition="audio",
                       prompt_name="mcq-default", template_path=str(TEMPLATE))
    for col in ["id", "raw_output", "error", "latency_s", "input_tokens", "output_tokens", "batch_size", "seed",
                "model_id", "model_revision", "backend", "versions"]:
        assert col in df.columns
    assert list(df.id) == [it["id"] for it in io.read_jsonl(items_path)]
    assert set(df.raw_output) <= {"A", "B"} and df.error.isna().all()
    assert (df.backend == "random").all() and (df.batch_size == 7).all()
    assert "numpy" in json.loads(df.versions[0])
    assert not partial_path(out).exists()


def test_outputs_do_not_depend_on_batch_size(items_path, tmp_path):
    runs = [run_inference(items_path=str(items_path), out_path=str(tmp_path / f"{b}.parquet"), model_name="r",
                          model_cfg={"backend": "random", "seed": 3, "batch_size": b}, condition="silence",
                          prompt_name="p", template_path=str(TEMPLATE)) for b in (1, 8)]
    assert list(runs[0].raw_output) == list(runs[1].raw_output)


def test_kill_9_resumes_without_loss_or_duplicates(items_path, tmp_path):
    out = tmp_path / "pred.parquet"
    cfg = {"backend": "random", "seed": 0, "batch_size": 2, "delay_s": 0.15}

    def cmd(model_cfg):
        return [sys.executable, "-m", "lalmbench.inference", "--items", str(items_path), "--out", str(out),
                "--model", "random", "--model-json", json.dumps(model_cfg), "--condition", "audio",
                "--prompt", "mcq-default", "--template", str(TEMPLATE)]

    proc = subprocess.Popen(cmd(cfg), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    part = partial_path(out)
    deadline = time.time() + 60
    while time.time() < deadline and (not part.exists() or len(part.read_text().splitlines()) < 6):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(part.read_text().splitlines())
    assert 6 <= done_before < 30 and not out.exists()
    log = tmp_path / "resume.log"
    with open(log, "w") as fh:
        subprocess.run(cmd(cfg), check=True, stderr=fh)
    df = pd.read_parquet(out)
    assert len(df) == 30 and df.id.is_unique
    assert f"30 items, {done_before} in the cache" in log.read_text()
    fresh = run_inference(items_path=str(items_path), out_path=str(tmp_path / "fresh.parquet"), model_name="random",
                          model_cfg={**cfg, "delay_s": 0}, condition="audio", prompt_name="mcq-default",
                          template_path=str(TEMPLATE))
    assert list(df.raw_output) == list(fresh.raw_output)


class FlakyInBatch(Model):
    """Fails item 'po-00003' whenever it shares a batch (like an OOM on a long clip), works alone."""

    backend = "flaky"
    calls: list[int] = []

    def generate(self, batch):
        self.calls.append(len(batch))
        return [ModelOutput(raw_output=None, error="CUDA out of memory") if x.id == "po-00003" and len(batch) > 1
                else ModelOutput(raw_output="A") for x in batch]


def test_failed_item_is_retried_alone(items_path, tmp_path):
    df = run_inference(items_path=str(items_path), out_path=str(tmp_path / "f.parquet"), model_name="flaky",
                       model_cfg={"batch_size": 4}, condition="audio", prompt_name="p",
                       template_path=str(TEMPLATE), model=FlakyInBatch("flaky", {"batch_size": 4}))
    assert df.error.isna().all() and (df.raw_output == "A").all()
    assert 1 in FlakyInBatch.calls


class AlwaysFails(Model):
    backend = "broken"

    def generate(self, batch):
        return [ModelOutput(raw_output=None, error="decoding failed") if x.id in {"po-00001", "po-00002"}
                else ModelOutput(raw_output="B") for x in batch]


def test_error_budget(items_path, tmp_path):
    out = tmp_path / "e.parquet"
    kw = dict(items_path=str(items_path), out_path=str(out), model_name="broken", model_cfg={"batch_size": 5},
              condition="audio", prompt_name="p", template_path=str(TEMPLATE))
    with pytest.raises(RuntimeError, match=r"max_error_rate=0.0 exceeded in 1 slice\(s\): po \| audio \| p: 2/30 items failed"):
        run_inference(**kw, model=AlwaysFails("broken", {}))
    assert not out.exists() and partial_path(out).exists()  # finished items kept for the rerun
    df = run_inference(**kw, max_error_rate=0.1, model=AlwaysFails("broken", {}))
    assert df.error.notna().sum() == 2 and (df.loc[df.error.notna(), "raw_output"].isna()).all()


def test_missing_audio_is_an_item_error_naming_the_file(tmp_path):
    items, *_ = generate_family("gap_length", 3, tmp_path, seed=0, dataset="d", task="g")
    items[1]["audio_path"] = str(tmp_path / "nope.wav")
    io.write_jsonl(tmp_path / "g.jsonl", items)
    with pytest.raises(RuntimeError, match="1/3 items failed"):
        run_inference(items_path=str(tmp_path / "g.jsonl"), out_path=str(tmp_path / "g.parquet"), model_name="r",
                      model_cfg={"backend": "random"}, condition="audio", prompt_name="p", template_path=str(TEMPLATE))
    rows = [json.loads(l) for l in partial_path(tmp_path / "g.parquet").read_text().splitlines()]
    assert any("nope.wav: audio file not found" in (r["error"] or "") for r in rows)


def test_duplicate_item_ids_are_named(tmp_path):
    items, *_ = generate_family("gap_length", 3, tmp_path, seed=0, dataset="d", task="g")
    io.write_jsonl(tmp_path / "g.jsonl", items + [items[1]])
    with pytest.raises(io.InputError, match=r"g.jsonl: duplicate item ids \['g-00001'\]"):
        run_inference(items_path=str(tmp_path / "g.jsonl"), out_path=str(tmp_path / "g.parquet"), model_name="r",
                      model_cfg={"backend": "random"}, condition="audio", prompt_name="p", template_path=str(TEMPLATE))


def test_torn_last_line_is_cut_before_appending(items_path, tmp_path, caplog):
    cache = tmp_path / "c.jsonl"
    kw = dict(items_path=str(items_path), model_name="random", model_cfg={"backend": "random", "seed": 2},
              condition="audio", prompt_name="p", template_path=str(TEMPLATE), cache_path=cache)
    first = run_inference(**kw, out_path=str(tmp_path / "a.parquet"))
    lines = cache.read_text().splitlines(keepends=True)
    cache.write_text("".join(lines[:10]) + lines[10][:37])  # disk full / kill -9 mid-write
    df = run_inference(**kw, out_path=str(tmp_path / "b.parquet"))
    assert "dropped a torn last line (37 bytes)" in caplog.text
    assert list(df.raw_output) == list(first.raw_output) and df.id.is_unique
    assert len(cache.read_text().splitlines()) == 30  # 10 kept + 20 regenerated, no fragment


def test_rows_from_another_config_are_never_mixed_in(items_path, tmp_path):
    cache = tmp_path / "c.jsonl"
    kw = dict(items_path=str(items_path), out_path=str(tmp_path / "p.parquet"), model_name="random",
              condition="audio", prompt_name="p", template_path=str(TEMPLATE), cache_path=cache)
    run_inference(**kw, model_cfg={"backend": "random", "seed": 0})
    df = run_inference(**kw, model_cfg={"backend": "random", "seed": 5})
    assert (df.seed == 5).all() and df.model_fingerprint.nunique() == 1
    fresh = run_inference(**{**kw, "cache_path": tmp_path / "fresh.jsonl"}, model_cfg={"backend": "random", "seed": 5})
    assert list(df.raw_output) == list(fresh.raw_output)


def test_batch_size_is_not_part_of_the_key(items_path, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="lalmbench")
    kw = dict(items_path=str(items_path), out_path=str(tmp_path / "p.parquet"), model_name="random",
              condition="audio", prompt_name="p", template_path=str(TEMPLATE), cache_path=tmp_path / "c.jsonl")
    run_inference(**kw, model_cfg={"backend": "random", "batch_size": 4})
    caplog.clear()
    df = run_inference(**kw, model_cfg={"backend": "random", "batch_size": 16})
    assert "30 items, 30 in the cache" in caplog.text and "loading model" not in caplog.text
    assert (df.batch_size == 4).all()  # the size the rows were really made with


class Surrogates(Model):
    backend = "surrogates"

    def generate(self, batch):
        return [ModelOutput(raw_output="bad \ud83d end" if x.id == "po-00004" else b"\xff\xfeA" if x.id == "po-00005"
                            else "A") for x in batch]


def test_unencodable_outputs_are_stored_escaped_and_flagged(items_path, tmp_path):
    df = run_inference(items_path=str(items_path), out_path=str(tmp_path / "s.parquet"), model_name="s",
                       model_cfg={"batch_size": 8}, condition="audio", prompt_name="p", template_path=str(TEMPLATE),
                       model=Surrogates("s", {}))
    back = pd.read_parquet(tmp_path / "s.parquet").set_index("id")
    assert back.loc["po-00004", "raw_output"] == "bad \\ud83d end"
    assert back.loc["po-00005", "raw_output"] == "\\xff\\xfeA"
    assert json.loads(back.loc["po-00004", "extra"])["output_repaired"] == "unencodable code points escaped"
    assert df.error.isna().all() and (back.drop(["po-00004", "po-00005"]).raw_output == "A").all()


def test_one_model_load_serves_every_slice(items_path, tmp_path, monkeypatch):
    from lalmbench.inference import Slice, generate
    from lalmbench.models import base

    loads = []
    real = base.load_model
    monkeypatch.setattr("lalmbench.inference.model_job.load_model", lambda *a: loads.append(a) or real(*a))
    slices = [Slice(items=str(items_path), condition=c, prompt="p", template=str(TEMPLATE),
                    out=str(tmp_path / f"{c}.parquet")) for c in ("audio", "silence", "noise", "no-audio")]
    summary = generate(model_name="random", model_cfg={"backend": "random"}, slices=slices,
                       cache_path=tmp_path / "c.jsonl")
    assert len(loads) == 1 and summary["model_loads"] == 1
    assert [s["generated"] for s in summary["slices"]] == [30, 30, 30, 30]
    again = generate(model_name="random", model_cfg={"backend": "random"}, slices=slices, cache_path=tmp_path / "c.jsonl")
    assert len(loads) == 1 and again["model_loads"] == 0 and {s["cached"] for s in again["slices"]} == {30}


def test_a_template_edited_while_generate_runs_fails_the_job_so_it_reruns(items_path, tmp_path, monkeypatch):
    from lalmbench.inference import Slice, generate, materialize
    from lalmbench.inference.model_job import InputsChanged
    from lalmbench.models import base

    template = tmp_path / "p.txt"
    template.write_text(TEMPLATE.read_text())
    real = base.load_model

    def load_then_edit(*a):  # the user saves the template while the model loads
        template.write_text(TEMPLATE.read_text() + "\nAnswer with the letter only.")
        return real(*a)

    monkeypatch.setattr("lalmbench.inference.model_job.load_model", load_then_edit)
    sl = Slice(items=str(items_path), condition="audio", prompt="p", template=str(template),
               out=str(tmp_path / "p.parquet"))
    with pytest.raises(InputsChanged, match=r"p.txt changed while this job ran; .* Run again: this job reruns"):
        generate(model_name="random", model_cfg={"backend": "random"}, slices=[sl], cache_path=tmp_path / "c.jsonl")
    monkeypatch.setattr("lalmbench.inference.model_job.load_model", real)
    # the rerun Snakemake makes (no summary was written) generates for the new text, and infer finds it
    assert generate(model_name="random", model_cfg={"backend": "random"}, slices=[sl],
                    cache_path=tmp_path / "c.jsonl")["slices"][0]["generated"] == 30
    assert len(materialize(sl, model_cfg={"backend": "random"}, cache_path=tmp_path / "c.jsonl")) == 30


def test_a_file_missing_from_the_cache_is_an_error_not_a_short_file(items_path, tmp_path):
    from lalmbench.inference import Slice, materialize

    sl = Slice(items=str(items_path), condition="audio", prompt="p", template=str(TEMPLATE), out=str(tmp_path / "x.parquet"))
    with pytest.raises(io.InputError, match=r"gone.jsonl: no prediction for 30 of 30 items .*generate/ summaries so those jobs"):
        materialize(sl, model_cfg={"backend": "random"}, cache_path=tmp_path / "gone.jsonl")
    assert not (tmp_path / "x.parquet").exists()


def test_reading_some_keys_parses_only_their_rows(tmp_path):
    from lalmbench.inference.cache import PredictionCache, read_rows

    cache = PredictionCache(tmp_path / "c.jsonl")
    cache.append([{"key": f"k{i}", "raw_output": f'the "key": "k{9 - i}" trap', "error": None} for i in range(10)])
    cache.close()
    rows = read_rows(tmp_path / "c.jsonl", {"k2", "k7"})
    assert sorted(rows) == ["k2", "k7"] and rows["k2"]["raw_output"] == 'the "key": "k7" trap'
    assert len(read_rows(tmp_path / "c.jsonl")) == 10


def test_a_response_field_holding_a_key_never_shadows_the_rows_own_key(tmp_path):
    from lalmbench.inference.cache import PredictionCache, read_rows

    cache = PredictionCache(tmp_path / "c.jsonl")
    cache.append([{"key": "real", "error": None, "extra": {"key": "decoy"}, "raw_output": "A"}])
    cache.close()
    assert read_rows(tmp_path / "c.jsonl", {"real"})["real"]["raw_output"] == "A"
    # a line written with sorted keys (an older cache) is parsed whole, never skipped by the decoy
    (tmp_path / "old.jsonl").write_text(json.dumps({"error": None, "extra": {"key": "decoy"}, "key": "real"},
                                                   sort_keys=True) + "\n")
    assert list(read_rows(tmp_path / "old.jsonl", {"real"})) == ["real"]


def test_a_truncated_predictions_file_names_itself_and_the_way_out(items_path, tmp_path):
    out = tmp_path / "p.parquet"
    run_inference(items_path=str(items_path), out_path=str(out), model_name="random", model_cfg={"backend": "random"},
                  condition="audio", prompt_name="p", template_path=str(TEMPLATE))
    out.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    with pytest.raises(io.InputError, match=r"p.parquet: not a readable parquet file .*delete it so the rule that writes it"):
        io.read_parquet(out)


def _made_slice(items_path, tmp_path):
    """A slice whose file was just made from a copy of the items and of the template."""
    from lalmbench.inference import Slice, generate, materialize

    items, template = tmp_path / "items.jsonl", tmp_path / "t.txt"
    items.write_bytes(items_path.read_bytes())
    template.write_text(TEMPLATE.read_text())
    sl = Slice(items=str(items), condition="audio", prompt="p", template=str(template), out=str(tmp_path / "p.parquet"))
    generate(model_name="random", model_cfg={"backend": "random"}, slices=[sl], cache_path=tmp_path / "c.jsonl")
    os.utime(items, ns=(1, 1))
    os.utime(template, ns=(1, 1))
    materialize(sl, model_cfg={"backend": "random"}, cache_path=tmp_path / "c.jsonl")
    return sl


def test_a_file_is_current_until_an_input_changes(items_path, tmp_path):
    from lalmbench.inference.plan import file_is_current

    sl = _made_slice(items_path, tmp_path)
    assert file_is_current(sl)
    # touched but byte-identical: still current (the digests the file recorded match)
    Path(sl.template).write_text(Path(sl.template).read_text())
    assert file_is_current(sl)
    Path(sl.template).write_text(Path(sl.template).read_text() + "Think step by step.\n")
    assert not file_is_current(sl)


def test_a_missing_or_older_file_is_not_current(items_path, tmp_path):
    from lalmbench.inference.plan import file_is_current

    sl = _made_slice(items_path, tmp_path)
    lines = Path(sl.items).read_text().splitlines(keepends=True)
    Path(sl.items).write_text("".join(lines[:-1]))  # one item fewer
    assert not file_is_current(sl)
    Path(sl.out).unlink()
    assert not file_is_current(sl)


def _frame_bytes(df: pd.DataFrame) -> bytes:
    """A predictions frame as bytes, sorted by id, without the timing column (wall clock, not output)."""
    return df.drop(columns=["latency_s"]).sort_values("id").to_csv(index=False).encode()


def test_two_shards_give_the_same_predictions_as_one(items_path, tmp_path):
    from lalmbench.inference import Slice, generate, materialize
    from lalmbench.inference.cache import cache_file, cache_files

    cfg = {"backend": "random", "seed": 5, "batch_size": 4}
    sl = Slice(items=str(items_path), condition="audio", prompt="p", template=str(TEMPLATE), out=str(tmp_path / "p.parquet"))
    one = run_inference(items_path=str(items_path), out_path=str(tmp_path / "one.parquet"), model_name="m",
                        model_cfg=cfg, condition="audio", prompt_name="p", template_path=str(TEMPLATE))
    root = tmp_path / "cache"
    summaries = [generate(model_name="m", model_cfg=cfg, slices=[sl], cache_path=cache_file(root, "m", "fp", f"d.s{i}of2"),
                          shard=(i, 2)) for i in (1, 2)]
    shares = [s["slices"][0]["generated"] for s in summaries]
    assert sum(shares) == 30 and min(shares) > 0  # each shard made its own share, none twice
    two = materialize(sl, model_cfg=cfg, cache_path=cache_files(root, "m", "fp"))
    assert _frame_bytes(two) == _frame_bytes(one)


def test_resharding_and_a_killed_shard_regenerate_nothing_finished(items_path, tmp_path):
    from lalmbench.inference import Slice, generate
    from lalmbench.inference.cache import cache_file, cache_files

    cfg = {"backend": "random", "seed": 5}
    sl = Slice(items=str(items_path), condition="audio", prompt="p", template=str(TEMPLATE), out=str(tmp_path / "p.parquet"))
    root = tmp_path / "cache"
    first = generate(model_name="m", model_cfg=cfg, slices=[sl], cache_path=cache_file(root, "m", "fp", "d.s1of2"),
                     shard=(1, 2))
    # shard 2 was killed after one batch: its file holds a torn half line, which is cut before appending
    torn = cache_file(root, "m", "fp", "d.s2of2")
    torn.write_text('{"key": "half')
    second = generate(model_name="m", model_cfg=cfg, slices=[sl], cache_path=torn, shard=(2, 2),
                      other_cache_files=cache_files(root, "m", "fp"))
    assert first["slices"][0]["generated"] + second["slices"][0]["generated"] == 30
    # three shards now, or none: every item is already in one of the files
    for unit, shard in [("d.s1of3", (1, 3)), ("d", (1, 1))]:
        again = generate(model_name="m", model_cfg=cfg, slices=[sl], cache_path=cache_file(root, "m", "fp", unit),
                         shard=shard, other_cache_files=cache_files(root, "m", "fp"))
        assert again["model_loads"] == 0 and again["slices"][0]["generated"] == 0
