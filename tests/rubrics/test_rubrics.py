"""Rubric generation: reading replies, merging criteria, scoring arithmetic, the cache and the two modes."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.rubrics.files import make_llm, run_rubric, write_table
from lalmbench.rubrics.merge import merge_criteria, read_merge
from lalmbench.rubrics.propose import read_criteria
from lalmbench.rubrics.score import read_verdicts, weighted_score
from tests.rubrics.scripted import Scripted, stage

SETTINGS = {"mode": "deterministic", "repeats": 3, "seed": 0, "temperature": 0.7, "top_p": 0.95,
            "max_new_tokens": 64, "merge_threshold": 0.75, "max_answers": 20, "answers_per_prompt": 2,
            "max_criteria": 8, "embedding_model": "default"}
LLM_CFG = {"backend": "scripted", "model_id": "scripted"}
RUN = {"task": "clotho-caption", "model": "m", "condition": "audio", "prompt": "caption", "dataset": "clotho"}


@pytest.fixture(scope="module")
def embed():
    from lalmbench.analysis.embed import load_encoder

    return load_encoder()[0]


# --- proposals ---------------------------------------------------------------------------------------

def test_proposal_json_inside_chatter_and_fence():
    raw = ('Sure! Here is the rubric:\n```json\n{"criteria": [{"criterion": "Names the main sound source.", '
           '"weight": 4}, {"criterion": "Mentions the setting", "weight": "2"}]}\n```')
    assert read_criteria(raw) == ([{"criterion": "Names the main sound source", "weight": 4.0},
                                   {"criterion": "Mentions the setting", "weight": 2.0}], "json")


def test_proposal_fallback_reads_lines_that_end_in_a_weight():
    raw = "1. Names the main sound source (weight 4)\n2. Mentions the setting: 2\nHope this helps!"
    assert read_criteria(raw) == ([{"criterion": "Names the main sound source", "weight": 4.0},
                                   {"criterion": "Mentions the setting", "weight": 2.0}], "fallback")


def test_a_reply_cut_by_the_token_budget_keeps_its_closed_criteria():
    # the offline Qwen2.5-Coder-1.5B's reply at max_new_tokens 120, on 4 Clotho clips
    raw = ('```json\n{\n  "criteria": [\n    {"criterion": "The caption accurately describes the main sound source '
           'mentioned in the references.", "weight": 3},\n    {"criterion": "The caption uses appropriate vocabulary '
           'and grammar.", "weight": 2},\n    {"criterion": "The caption is consistent with the tone and style of the')
    assert read_criteria(raw) == ([
        {"criterion": "The caption accurately describes the main sound source mentioned in the references",
         "weight": 3.0},
        {"criterion": "The caption uses appropriate vocabulary and grammar", "weight": 2.0}], "fallback")


def test_proposal_without_criteria_is_unreadable_and_a_failed_call_is_an_error():
    assert read_criteria("I cannot grade audio.") == ([], "unreadable")
    assert read_criteria('{"criteria": [{"criterion": "x", "weight": 0}]}') == ([], "unreadable")
    assert read_criteria(None) == ([], "error")


# --- merge -------------------------------------------------------------------------------------------

def test_merge_reply_forms():
    assert read_merge('{"same": true, "criterion": "Names the source"}') == (True, "Names the source", "json")
    assert read_merge('{"same": false}') == (False, None, "json")
    assert read_merge("No, they check different things.") == (False, None, "fallback")
    assert read_merge("Yes: Names the main sound source") == (True, "Names the main sound source", "fallback")
    assert read_merge('{"same": true}') == (None, None, "unreadable")  # merged, but into what?
    assert read_merge("maybe") == (None, None, "unreadable")


CANDIDATES = [{"criterion": "Names the main sound source", "weight": 3.0},
              {"criterion": "Mentions whether it is raining", "weight": 2.0},
              {"criterion": "Identifies the main source of the sound", "weight": 1.0}]


def test_near_duplicates_merge_with_summed_normalised_weights(embed):
    asked = []

    def ask(records):
        asked.extend(records)
        return [{"raw": '{"same": true, "criterion": "Names the main sound source"}', "error": None, "cached": False}]

    rubric, log = merge_criteria(CANDIDATES, embed, ask, threshold=0.75, max_criteria=8)
    assert asked == [{"criteria": "- Names the main sound source\n- Identifies the main source of the sound"}]
    assert [(c["criterion"], c["weight"]) for c in rubric] == [("Names the main sound source", pytest.approx(4 / 6)),
                                                               ("Mentions whether it is raining", pytest.approx(2 / 6))]
    assert rubric[0]["merged_from"] == ["Names the main sound source", "Identifies the main source of the sound"]
    assert [e["decision"] for e in log] == ["merged"]
    assert log[0]["min_similarity"] >= 0.75


def test_a_refused_or_unreadable_merge_keeps_the_criteria_apart(embed):
    for raw, decision in [('{"same": false}', "kept apart"), ("hmm", "kept apart (reply not read)")]:
        rubric, log = merge_criteria(CANDIDATES, embed, lambda r: [{"raw": raw, "error": None}], threshold=0.75,
                                     max_criteria=8)
        assert [c["weight"] for c in rubric] == pytest.approx([3 / 6, 1 / 6, 2 / 6])
        assert [e["decision"] for e in log] == [decision]


def test_max_criteria_keeps_the_heaviest_and_logs_the_rest(embed):
    rubric, log = merge_criteria(CANDIDATES, embed, lambda r: [{"raw": '{"same": false}', "error": None}],
                                 threshold=0.75, max_criteria=2)
    assert [(c["criterion"], c["weight"]) for c in rubric] == [("Names the main sound source", pytest.approx(0.6)),
                                                               ("Mentions whether it is raining", pytest.approx(0.4))]
    assert log[-1] == {"decision": "dropped (max_criteria)", "members": ["Identifies the main source of the sound"],
                       "criterion": "Identifies the main source of the sound", "weight": 1.0}


# --- scoring -----------------------------------------------------------------------------------------

RUBRIC = [{"id": 1, "criterion": "a", "weight": 0.5}, {"id": 2, "criterion": "b", "weight": 0.3},
          {"id": 3, "criterion": "c", "weight": 0.2}]


def test_weighted_score_sums_the_weights_of_the_criteria_met():
    verdicts, status = read_verdicts('{"1": "yes", "2": "no", "3": "Yes"}', [1, 2, 3])
    assert (verdicts, status) == ({1: True, 2: False, 3: True}, "json")
    assert weighted_score(RUBRIC, verdicts) == pytest.approx(0.7)
    verdicts, status = read_verdicts("Verdicts:\n1: yes\n2. No - it names a dog\nCriterion 3 - no", [1, 2, 3])
    assert (weighted_score(RUBRIC, verdicts), status) == (pytest.approx(0.5), "fallback")
    verdicts, _ = read_verdicts('[{"criterion": 1, "verdict": "no"}, {"criterion": 2, "verdict": "yes"}, '
                                '{"criterion": 3, "met": true}]', [1, 2, 3])
    assert weighted_score(RUBRIC, verdicts) == pytest.approx(0.5)


def test_an_answer_with_an_unread_criterion_has_no_score():
    verdicts, status = read_verdicts('{"1": "yes", "2": "maybe"}', [1, 2, 3])
    assert (verdicts, status, weighted_score(RUBRIC, verdicts)) == ({1: True, 2: None, 3: None}, "incomplete", None)
    assert read_verdicts("The caption is fine.", [1, 2, 3])[1] == "unreadable"


# --- whole runs with a scripted LLM ------------------------------------------------------------------

def write_run(tmp_path, n=4):
    items = [{"id": f"c{i}", "references": [f"a dog barks {i}", f"a dog is barking {i}"]} for i in range(n)]
    io.write_jsonl(tmp_path / "items.jsonl", items)
    preds = pd.DataFrame({"id": [f"c{i}" for i in range(n)], "raw_output": ["a dog barks"] * (n - 1) + [None],
                          "error": [None] * (n - 1) + ["timeout"]})
    io.write_parquet(tmp_path / "pred.parquet", preds)
    return tmp_path / "items.jsonl", tmp_path / "pred.parquet"


def good_reply(prompt: str, seed: int) -> str:
    s = stage(prompt)
    if s == "propose":
        return json.dumps({"criteria": [{"criterion": "Names the main sound source", "weight": 3},
                                        {"criterion": "Identifies the main source of the sound", "weight": 1},
                                        {"criterion": "Mentions whether it is raining", "weight": 2}]})
    if s == "merge":
        name = "Mentions whether it is raining" if "raining" in prompt else "Names the main sound source"
        return json.dumps({"same": True, "criterion": name})
    return '{"1": "yes", "2": "no"}'


def test_run_writes_rubric_scores_and_table(tmp_path, embed):
    items, preds = write_run(tmp_path)
    llm = make_llm("scripted", LLM_CFG, SETTINGS, model=Scripted(good_reply))
    doc = run_rubric(items=items, predictions=preds, out=tmp_path / "r.json", run=RUN, llm=llm, embed=embed,
                     embedding_model="minilm", settings=SETTINGS)
    assert doc["answers"] == {"items": 4, "no_prediction": 0, "failed_or_empty": 1, "beyond_max_answers": 0,
                              "used": 3}
    (one,) = doc["runs"]
    # 2 proposal prompts (2 + 1 answers) x 3 criteria: the four "source" criteria merge into one (3+1+3+1),
    # the two identical "raining" ones into another (2+2)
    assert [(c["criterion"], c["weight"]) for c in one["criteria"]] == [
        ("Names the main sound source", pytest.approx(8 / 12)), ("Mentions whether it is raining", pytest.approx(4 / 12))]
    assert [e["decision"] for e in one["merge_log"]] == ["merged", "merged"]
    assert [s["score"] for s in one["scores"]] == pytest.approx([8 / 12] * 3)  # verdicts: 1 yes, 2 no
    assert doc["summary"]["mean"] == pytest.approx(8 / 12) and doc["summary"]["std"] is None
    assert doc["llm_calls"] == 2 + 2 + 3  # proposals, merges, answers
    assert io.read_json(tmp_path / "r.json")["llm"]["fingerprint"] == llm.fingerprint
    df = write_table([tmp_path / "r.json"], tmp_path / "rubrics.tsv")
    back = pd.read_csv(tmp_path / "rubrics.tsv", sep="\t")
    assert back.loc[0, ["task", "model", "condition", "n_answers", "n_scored", "scores_unreadable"]].tolist() == \
        ["clotho-caption", "m", "audio", 3, 3, 0]
    assert back.loc[0, "score_mean"] == pytest.approx(df.loc[0, "score_mean"], abs=1e-6)


def test_unreadable_replies_are_counted_in_the_table(tmp_path, embed):
    items, preds = write_run(tmp_path)

    def reply(prompt, seed):
        return "no idea" if stage(prompt) == "score" and "a dog barks 2" in prompt else good_reply(prompt, seed)

    llm = make_llm("scripted", LLM_CFG, SETTINGS, model=Scripted(reply))
    doc = run_rubric(items=items, predictions=preds, out=tmp_path / "r.json", run=RUN, llm=llm, embed=embed,
                     embedding_model="minilm", settings=SETTINGS)
    assert [s["status"] for s in doc["runs"][0]["scores"]] == ["json", "json", "unreadable"]
    row = write_table([tmp_path / "r.json"], tmp_path / "t.tsv").iloc[0]
    assert (row["n_scored"], row["n_unscored"], row["scores_unreadable"]) == (2, 1, 1)


def test_rerun_reads_every_reply_from_the_cache(tmp_path, embed):
    items, preds = write_run(tmp_path)
    settings = {**SETTINGS, "cache_dir": str(tmp_path / "cache")}
    first = Scripted(good_reply)
    doc1 = run_rubric(items=items, predictions=preds, out=tmp_path / "a.json", run=RUN, embed=embed,
                      llm=make_llm("scripted", LLM_CFG, settings, model=first), embedding_model="m", settings=settings)
    assert len(first.prompts) == doc1["llm_calls"] == 7
    second = Scripted(lambda p, s: pytest.fail("the LLM was called again"))
    doc2 = run_rubric(items=items, predictions=preds, out=tmp_path / "b.json", run=RUN, embed=embed,
                      llm=make_llm("scripted", LLM_CFG, settings, model=second), embedding_model="m", settings=settings)
    assert second.prompts == [] and doc2["llm_calls"] == 0
    assert doc2["runs"][0]["criteria"] == doc1["runs"][0]["criteria"]
    assert [s["score"] for s in doc2["runs"][0]["scores"]] == [s["score"] for s in doc1["runs"][0]["scores"]]
    # another seed or other sampling settings is another key: asked again
    third = Scripted(good_reply)
    run_rubric(items=items, predictions=preds, out=tmp_path / "c.json", run=RUN, embed=embed, embedding_model="m",
               llm=make_llm("scripted", LLM_CFG, {**settings, "seed": 1}, model=third), settings={**settings, "seed": 1})
    assert len(third.prompts) == 7


def seeded_reply(prompt: str, seed: int) -> str:
    """A sampler stand-in: verdicts drawn from the seed and the prompt."""
    if stage(prompt) != "score":
        return good_reply(prompt, seed)
    rng = np.random.default_rng([seed, sum(map(ord, prompt))])
    return json.dumps({str(i): "yes" if rng.random() < 0.5 else "no" for i in (1, 2)})


def test_stochastic_mode_repeats_with_seeds_and_reports_spread(tmp_path, embed):
    items, preds = write_run(tmp_path, n=9)
    settings = {**SETTINGS, "mode": "stochastic", "repeats": 3, "seed": 5}

    def run(seed):
        s = {**settings, "seed": seed}
        return run_rubric(items=items, predictions=preds, out=tmp_path / f"{seed}.json", run=RUN, embed=embed,
                          llm=make_llm("scripted", LLM_CFG, s, model=Scripted(seeded_reply)), embedding_model="m",
                          settings=s)

    a, again, other = run(5), run(5), run(6)
    assert [r["seed"] for r in a["runs"]] == [5, 6, 7]
    assert a["llm"]["sampling"] == {"do_sample": True, "temperature": 0.7, "top_p": 0.95, "max_new_tokens": 64}
    assert a["summary"]["per_run"] == again["summary"]["per_run"]
    assert a["summary"]["per_run"] != other["summary"]["per_run"]
    per_run = a["summary"]["per_run"]
    assert a["summary"]["mean"] == pytest.approx(np.mean(per_run))
    assert a["summary"]["std"] == pytest.approx(np.std(per_run, ddof=1))
    assert (a["summary"]["min"], a["summary"]["max"]) == (min(per_run), max(per_run))


def test_no_usable_answer_is_an_error_naming_the_file(tmp_path, embed):
    io.write_jsonl(tmp_path / "items.jsonl", [{"id": "c0", "references": ["a dog"]}])
    io.write_parquet(tmp_path / "p.parquet", pd.DataFrame({"id": ["c0"], "raw_output": [" "], "error": [None]}))
    with pytest.raises(io.InputError, match=r"p.parquet: no usable answer .*'failed_or_empty': 1"):
        run_rubric(items=tmp_path / "items.jsonl", predictions=tmp_path / "p.parquet", out=tmp_path / "r.json",
                   run=RUN, llm=make_llm("s", LLM_CFG, SETTINGS, model=Scripted(good_reply)), embed=embed,
                   embedding_model="m", settings=SETTINGS)
    assert not (tmp_path / "r.json").exists()


def test_an_entry_that_scores_by_loglik_generates_for_rubrics():
    llm = make_llm("x", {"backend": "hf", "model_id": "m", "scoring": "loglik"}, SETTINGS, model=Scripted(good_reply))
    assert llm.cfg["scoring"] == "generate"
    assert llm.cfg["generation"] == {"temperature": 0.0, "do_sample": False, "max_new_tokens": 64}
