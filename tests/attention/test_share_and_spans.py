"""Audio share, token spans, the attention block's settings and the atomic item directory (no torch)."""
from __future__ import annotations

import numpy as np
import pytest

from lalmbench.core import io
from lalmbench.attention.capture import needed_bytes, resolve_layers
from lalmbench.attention.plan import AttentionSettings, capture_specs, item_dirname, parse_size
from lalmbench.attention.share import answer_rows, audio_share, uniform_share
from lalmbench.attention.spans import mark_spans, token_pieces
from lalmbench.workflow.config import Run

# ------------------------------------------------------------------ audio share on a constructed array
# 6 tokens: audio keys 1..2, answer tokens 4..5, so the rows that emitted the answer are 3 and 4.
SPANS = {"audio": [[1, 3]], "answer": [[4, 6]]}


def causal_uniform(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]


def constructed() -> np.ndarray:
    """layers x heads x query x key = 2 x 2 x 6 x 6, every row a distribution over the keys it sees."""
    a = np.stack([np.stack([causal_uniform(6)] * 2)] * 2)
    a[0, 0, 3] = [0.1, 0.2, 0.3, 0.4, 0, 0]   # 0.5 on audio
    a[0, 0, 4] = [0.2, 0.1, 0.1, 0.2, 0.4, 0]  # 0.2
    a[0, 1, 3] = [0, 1, 0, 0, 0, 0]            # 1.0
    a[0, 1, 4] = [0, 0, 0, 0.5, 0.5, 0]        # 0.0
    a[1, 0, 3] = [0.25, 0.25, 0.25, 0.25, 0, 0]  # 0.5
    a[1, 0, 4] = [0, 0, 0, 0, 1, 0]              # 0.0
    a[1, 1, 3] = [0, 0, 0.5, 0.5, 0, 0]          # 0.5
    a[1, 1, 4] = [0, 0.3, 0.3, 0.2, 0.2, 0]      # 0.6
    return a


def test_answer_rows_are_the_positions_that_emitted_the_answer():
    assert answer_rows(SPANS).tolist() == [3, 4]
    assert answer_rows({"audio": [], "answer": []}).tolist() == []


def test_audio_share_per_layer_equals_the_hand_computed_value():
    a = constructed()
    # layer 0: heads (0.5 + 0.2) / 2 = 0.35 and (1.0 + 0.0) / 2 = 0.5 -> 0.425; layer 1: 0.25 and 0.55 -> 0.4
    np.testing.assert_allclose(audio_share(a, SPANS["audio"], answer_rows(SPANS)), [0.425, 0.4])
    # heads: mean stores the head average: the same share (a mean of linear sums)
    np.testing.assert_allclose(audio_share(a.mean(1, keepdims=True), SPANS["audio"], answer_rows(SPANS)), [0.425, 0.4])
    # float16 as stored in attn.npy
    np.testing.assert_allclose(audio_share(a.astype(np.float16), SPANS["audio"], answer_rows(SPANS)), [0.425, 0.4],
                               atol=1e-3)


def test_audio_share_without_audio_tokens_is_zero_and_without_answer_nan():
    a = constructed()
    assert audio_share(a, [], answer_rows(SPANS)).tolist() == [0.0, 0.0]
    assert np.isnan(audio_share(a, SPANS["audio"], answer_rows({"answer": []}))).all()


def test_uniform_share_counts_the_audio_keys_each_row_can_see():
    # row 3 sees 4 keys (2 audio), row 4 sees 5 (2 audio): (0.5 + 0.4) / 2
    assert uniform_share(6, SPANS["audio"], answer_rows(SPANS)) == pytest.approx(0.45)


# ------------------------------------------------------------------ token pieces and spans
VOCAB = {0: b"<s>", 1: b"<AUDIO>", 2: b"Wh", 3: b"at?", 4: b"\n", 5: b"A. x", 6: b"\nB. y", 7: b"<a>", 8: b"B",
         9: b"\xc3", 10: b"\xa9"}  # 9 + 10 are the two UTF-8 bytes of "é"


def decode(ids):
    return b"".join(VOCAB[i] for i in ids).decode("utf-8", errors="replace")


def test_token_pieces_join_to_the_text_and_a_split_character_lands_on_its_last_token():
    ids = [0, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    pieces = token_pieces(decode, ids, audio_id=1)
    assert pieces == ["<s>", "<AUDIO>", "<AUDIO>", "<AUDIO>", "Wh", "at?", "\n", "A. x", "\nB. y", "<a>", "B", "", "é"]
    assert "".join(pieces) == decode(ids)


def test_spans_mark_audio_prompt_question_options_and_answer():
    ids = [0, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    pieces = token_pieces(decode, ids, audio_id=1)
    marked = mark_spans(pieces, ids, audio_id=1, n_prompt=10, prompt="What?\nA. x\nB. y", question="What?",
                        options="A. x\nB. y")
    assert marked["spans"] == {"audio": [[1, 4]], "prompt": [[4, 9]], "question": [[4, 6]], "options": [[7, 9]],
                               "answer": [[10, 13]]}
    assert marked["notes"] == []


def test_spans_say_when_the_prompt_is_not_in_the_tokens():
    ids = [0, 2, 3, 8]
    marked = mark_spans(token_pieces(decode, ids, audio_id=1), ids, audio_id=1, n_prompt=3, prompt="Who?",
                        question="Who?", options="")
    assert marked["spans"]["prompt"] == [] and marked["spans"]["answer"] == [[3, 4]]
    assert marked["notes"] == ["the rendered prompt was not found verbatim in the decoded prompt tokens: "
                               "prompt, question and options spans are empty"]


# ------------------------------------------------------------------ the attention block
def hf(**attention):
    return {"backend": "hf", "model_id": "x", "attention": attention}


def test_settings_defaults_and_sizes():
    s = AttentionSettings.from_cfg("m", hf())
    assert (s.layers, s.heads, s.max_items, s.tasks, s.conditions, s.max_bytes) == (None, "mean", 4, None, None,
                                                                                    512 * 10**6)
    assert AttentionSettings.from_cfg("m", {"backend": "hf"}) is None
    assert [parse_size(v, "k") for v in (1000, "2GB", "1 GiB", "1.5MB")] == [1000, 2 * 10**9, 2**30, 1_500_000]


@pytest.mark.parametrize("entry, message", [
    ({"backend": "cascade", "attention": {}},
     "models.m.attention: attention capture needs backend hf (this model's backend is 'cascade')"),
    (hf(heads="some"), "models.m.attention.heads: must be one of ['mean', 'all'], got 'some'"),
    (hf(layers=[]), "models.m.attention.layers: expected 'all' or a list of layer indices such as [0, -1], got []"),
    (hf(max_bytes="lots"), "models.m.attention.max_bytes: expected a size such as 512MB, 2GB or 1GiB, got 'lots'"),
    (hf(max_items=0), "models.m.attention.max_items: must be an integer >= 1, got 0"),
])
def test_settings_errors_name_the_key(entry, message):
    with pytest.raises(ValueError) as e:
        AttentionSettings.from_cfg("m", entry)
    assert str(e.value) == message


def test_capture_specs_first_prompt_chosen_tasks_and_conditions():
    runs = [Run("m", "d", t, c, p) for t in ("t1", "t2") for c in ("audio", "silence") for p in ("p1", "p2")]
    runs.append(Run("other", "d", "t1", "audio", "p1"))
    assert capture_specs("m", hf(tasks=["t2"]), runs) == [("d", "t2", "audio", "p1"), ("d", "t2", "silence", "p1")]
    assert capture_specs("m", hf(conditions=["silence"]), runs) == [("d", "t1", "silence", "p1"),
                                                                   ("d", "t2", "silence", "p1")]
    with pytest.raises(ValueError) as e:
        capture_specs("m", hf(conditions=["noise"]), runs)
    assert str(e.value) == "models.m.attention.conditions: ['noise'] not run by this model (it runs ['audio', 'silence'])"


def test_layers_resolve_from_the_end_and_unknown_layers_are_named():
    assert resolve_layers([0, -1], 32, "k") == [0, 31]
    assert resolve_layers(None, 3, "k") == [0, 1, 2]
    with pytest.raises(ValueError) as e:
        resolve_layers([40], 32, "models.m.attention")
    assert str(e.value) == ("models.m.attention.layers: layer 40 does not exist (the model has 32 decoder layers: "
                            "0..31 or -32..-1)")
    with pytest.raises(ValueError, match=r"layer -1 is listed twice \(as 31\)"):
        resolve_layers([31, -1], 32, "k")


def test_needed_bytes_is_layers_heads_query_key_float16():
    assert needed_bytes(2, 32, 1000) == 2 * 32 * 1000 * 1000 * 2


def test_item_dirname_keeps_ids_inside_one_path_component():
    assert item_dirname("a/b c") == "a_b_c" and item_dirname("..") == "_.." and item_dirname("x-1.2") == "x-1.2"


def test_atomic_dir_replaces_a_directory_whole_or_not_at_all(tmp_path):
    dest = tmp_path / "item"
    with io.atomic_dir(dest) as d:
        (d / "a.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with io.atomic_dir(dest) as d:
            (d / "a.txt").write_text("half")
            raise RuntimeError("killed")
    assert (dest / "a.txt").read_text() == "old"
    with io.atomic_dir(dest) as d:
        (d / "b.txt").write_text("new")
    assert sorted(p.name for p in dest.iterdir()) == ["b.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["item"]  # no temp or old directories left behind
