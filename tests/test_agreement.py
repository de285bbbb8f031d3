import pandas as pd
import pytest

from lalmbench.checks.agreement import agreement_table
from lalmbench.workflow.config import Run
from lalmbench.checks.agreement import shared_runs


def _dec(path, labels, gold):
    pd.DataFrame({"id": [f"i{k}" for k in range(len(labels))], "pred_label": labels,
                  "correct": [p == g for p, g in zip(labels, gold)]}).to_parquet(path)
    return str(path)


def test_agreement_per_run_and_pooled(tmp_path):
    gold = list("ABAB")
    runs = [{"dataset": "d", "task": t, "condition": "audio", "prompt": "p",
             "file_a": _dec(tmp_path / f"a{t}.parquet", list("ABAB"), gold),
             "file_b": _dec(tmp_path / f"b{t}.parquet", b, gold)}
            for t, b in (("t1", list("ABBB")), ("t2", [None, "B", "A", "B"]))]
    df = agreement_table({"hf-vs-vllm": {"a": "hf", "b": "vllm", "runs": runs}})
    assert list(df.task) == ["t1", "t2", "(all)"]
    assert list(df.n_agree) == [3, 3, 6] and list(df.n_compared) == [4, 4, 8]
    assert df.agreement.iloc[2] == pytest.approx(0.75)
    assert df.agreement_parsed.iloc[1] == pytest.approx(1.0)  # the unparsed answer is the only difference
    assert df.accuracy_a.iloc[0] == 1.0 and df.accuracy_b.iloc[0] == 0.75


def test_shared_runs_only_pairs_runs_both_models_have():
    runs = [Run("a", "d", "t", "audio", "p"), Run("a", "d", "t", "silence", "p"), Run("b", "d", "t", "audio", "p")]
    shared = shared_runs(runs, "a", "b")
    assert [(r["task"], r["condition"]) for r in shared] == [("t", "audio")]
    assert shared[0]["file_b"] == "results/scores/b/d/t/audio/p/decisions.parquet"
