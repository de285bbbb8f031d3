"""Released AISHELL-1 transcripts of a Qwen model (arkel23/QuantizedASR) scored by the report rules and ours,
beside Kimi-Audio's README row for Qwen2-Audio-base (1.52). The excerpt test runs everywhere; the full-file test
needs a local mirror (LALMBENCH_GIT_DIR_TEMPLATE, e.g. '/work/.mirror/{owner}+{name}/repo') and skips without it."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from lalmbench.core.io import InputError
from lalmbench.report.released_asr import read_pairs, read_pairs_file, score_released_asr

EXCERPT = Path(__file__).parent / "data" / "published" / "released" / "qwen_aishell1_excerpt.jsonl"
FIELDS = {"id_field": "audio_filepath", "ref_field": "text", "hyp_field": "pred_text"}
SOURCE = ("arkel23/QuantizedASR", "3a8cb9fe55839c34f4942a8fc88a8ee8a3e07c13", "assets/transcript_qwen_aishell1.jsonl",
          "792bdea1f7b6886bb4ce0307ab19ad1ed5532820be22017f89f5c6ee207ad51f")
# MoonshotAI/Kimi-Audio@2607d515 README.md, ASR table, AISHELL-1, row Qwen2-Audio-base (scored by Kimi-Audio-Evalkit)
PUBLISHED_QWEN2_AUDIO_BASE = 1.52


def test_excerpt_rules_disagree_on_latin_tokens_only() -> None:
    """12 real items: the two rules differ only where the hypothesis has Latin letters (the Qwen2-Audio rule
    counts each letter as a character, Kimi-Audio's a run of letters as one token); ours counts letters too."""
    res = score_released_asr(read_pairs_file(EXCERPT, **FIELDS), language="zh")
    assert res["n"] == 12
    assert res["rules"]["qwen2_audio_wer"]["errors"] == 15 and res["rules"]["qwen2_audio_wer"]["ref_units"] == 184
    assert res["rules"]["kimi_audio_wer"]["errors"] == 5 and res["rules"]["kimi_audio_wer"]["ref_units"] == 184
    assert res["ours"]["errors"] == 16 and res["ours"]["ref_units"] == 184
    assert sorted(res["disagree"]) == ["sample_1381", "sample_916"]
    # '...美国PLACE NAME和...': 9 inserted letters; both rules drop blanks for Chinese first, so Kimi-Audio's
    # rule sees one inserted token 'placename'; ours keeps the blank and counts it (10)
    assert res["per_item"]["sample_916"] == {"qwen2_audio_wer": 9, "kimi_audio_wer": 1, "ours": 10}
    assert res["per_item"]["sample_1381"] == {"qwen2_audio_wer": 5, "kimi_audio_wer": 3, "ours": 5}


def test_missing_field_names_the_line() -> None:
    with pytest.raises(InputError, match="line 2"):
        read_pairs(['{"audio_filepath": "a", "text": "x", "pred_text": "x"}', '{"audio_filepath": "b", "text": "y"}'],
                   **FIELDS)


def _released_file() -> bytes:
    template = os.environ.get("LALMBENCH_GIT_DIR_TEMPLATE")
    repo, commit, path, sha = SOURCE
    owner, name = repo.split("/")
    if not template or not Path(template.format(owner=owner, name=name)).exists():
        pytest.skip(f"no local mirror of {repo} (LALMBENCH_GIT_DIR_TEMPLATE)")
    data = subprocess.run(["git", "--git-dir", template.format(owner=owner, name=name), "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout
    assert hashlib.sha256(data).hexdigest() == sha
    return data


def test_full_release_lands_on_the_published_row(tmp_path: Path) -> None:
    """All 7,176 AISHELL-1 test items: the Qwen2-Audio rule gives 1.52% CER (1,594 / 104,765 characters), the
    published Qwen2-Audio-base figure; Kimi-Audio's rule, which made that figure, gives 1.51% (1,584 errors;
    the 10 fewer are in the two items with Latin letters); ours 1.52% with a bootstrap interval around it."""
    f = tmp_path / "released.jsonl"
    f.write_bytes(_released_file())
    res = score_released_asr(read_pairs_file(f, **FIELDS), language="zh")
    assert res["n"] == 7176
    q, k = res["rules"]["qwen2_audio_wer"], res["rules"]["kimi_audio_wer"]
    assert (q["errors"], q["ref_units"]) == (1594, 104765) and round(q["value"], 2) == PUBLISHED_QWEN2_AUDIO_BASE
    assert (k["errors"], k["ref_units"]) == (1584, 104765) and round(k["value"], 2) == 1.51
    assert res["ours"]["errors"] == 1595 and round(res["ours"]["value"], 2) == 1.52
    assert res["ours"]["ci_low"] < PUBLISHED_QWEN2_AUDIO_BASE < res["ours"]["ci_high"]
    assert sorted(res["disagree"]) == ["sample_1381", "sample_916"]
