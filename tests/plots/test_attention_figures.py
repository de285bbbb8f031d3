"""Attention figures from constructed item directories: the plotted values are the hand-computed ones."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.attention.capture import write_item
from lalmbench.report.plots.attention import model_files, plot_heatmaps, plot_share, share_files, share_summary
from tests.attention.test_share_and_spans import SPANS, constructed


def write(root: Path, condition: str, item: str, attn: np.ndarray, spans: dict, layers=(3, 7)) -> dict:
    d = root / "m" / "ds" / "tk" / condition / item
    tokens = {"tokens": ["t"] * attn.shape[-1], "spans": {"prompt": [], "question": [], "options": [], **spans}}
    meta = {"model": "m", "dataset": "ds", "task": "tk", "condition": condition, "item_id": item,
            "layers": list(layers)}
    write_item(d, attn, tokens, meta)
    return {"dataset": "ds", "task": "tk", "condition": condition, "prompt": "p", "item": item, "dir": str(d)}


@pytest.fixture
def captured(tmp_path):
    a = constructed()
    b = constructed()
    b[:, :, 3] = [0.7, 0.1, 0.1, 0.1, 0, 0]  # rows 3 and 4 of every head: 0.2 and 0.0 on audio -> 0.1
    b[:, :, 4] = [0.5, 0, 0, 0, 0.5, 0]
    items = [write(tmp_path / "att", "audio", "i1", a, SPANS), write(tmp_path / "att", "silence", "i1", b, SPANS),
             write(tmp_path / "att", "no-audio", "i1", a, {"audio": [], "answer": [[4, 6]]})]
    manifest = tmp_path / "capture.json"
    io.write_json(manifest, {"model": "m", "items": items})
    return tmp_path, manifest


def test_per_item_table_and_summary_hold_the_hand_computed_shares(captured):
    tmp, manifest = captured
    df = model_files(str(manifest), heatmaps=str(tmp / "figs"), tsv=str(tmp / "m.tsv"))
    got = {(r.condition, r.layer): r.audio_share for r in pd.read_csv(tmp / "m.tsv", sep="\t").itertuples()}
    assert got == pytest.approx({("audio", 3): 0.425, ("audio", 7): 0.4, ("silence", 3): 0.1, ("silence", 7): 0.1,
                                 ("no-audio", 3): 0.0, ("no-audio", 7): 0.0}, abs=1e-3)  # float16 on disk
    assert set(df["uniform_share"].round(6)) == {0.45, 0.0}
    assert sorted(p.name for p in (tmp / "figs" / "ds" / "tk").iterdir()) == ["audio", "no-audio", "silence"]
    summary = share_files([str(tmp / "m.tsv")], png=str(tmp / "s.png"), svg=str(tmp / "s.svg"), tsv=str(tmp / "s.tsv"))
    assert list(summary["condition"][:3]) == ["audio", "no-audio", "silence"]  # audio first, then CONDITIONS order
    assert (tmp / "s.png").stat().st_size > 0 and (tmp / "s.svg").stat().st_size > 0


def test_share_figure_bars_are_the_table_values_conditions_side_by_side():
    df = pd.DataFrame({"model": "m", "dataset": "d", "task": "t", "prompt": "p", "item": ["a", "b"] * 4,
                       "condition": ["audio"] * 4 + ["silence"] * 4, "layer": [0, 0, 5, 5] * 2,
                       "audio_share": [0.2, 0.4, 0.6, 0.8, 0.1, 0.1, 0.05, 0.15], "uniform_share": 0.3})
    summary = share_summary(df)
    assert [(r.condition, r.layer, round(r.audio_share, 9), r.n_items) for r in summary.itertuples()] == [
        ("audio", 0, 0.3, 2), ("silence", 0, 0.1, 2), ("audio", 5, 0.7, 2), ("silence", 5, 0.1, 2)]
    fig = plot_share(summary)
    ax = fig.axes[0]
    bars = {c.get_label(): [round(p.get_height(), 6) for p in c.patches] for c in ax.containers}
    assert bars == {"audio": [0.3, 0.7], "silence": [0.1, 0.1]}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "5"]
    # the silence bar sits right of the audio bar of the same layer
    audio_x, silence_x = (c.patches[0].get_x() for c in ax.containers)
    assert audio_x < silence_x < 1


def test_heatmap_shows_the_head_mean_and_outlines_the_audio_columns():
    a = constructed()
    fig = plot_heatmaps(a, {"spans": SPANS}, {"model": "m", "dataset": "d", "task": "t", "condition": "audio",
                                              "item_id": "i", "layers": [3, 7]})
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.images[0].get_array(), a[0].mean(0), rtol=1e-6)
    audio = [p for p in ax.patches if p.get_label() == "audio"]
    assert [(p.get_x(), p.get_width(), p.get_height()) for p in audio] == [(0.5, 2, 6)]  # key columns 1..2, every row
    answer = [p for p in ax.patches if p.get_label() == "answer"]
    assert [(p.get_y(), p.get_height()) for p in answer] == [(2.5, 2)]  # rows 3..4
    assert [x.get_title() for x in fig.axes[:2]] == ["layer 3", "layer 7"]


def test_long_sequences_are_block_averaged_for_display():
    n = 1100
    a = np.tile(np.tril(np.ones((n, n), np.float16)) / np.arange(1, n + 1, dtype=np.float16)[:, None], (1, 1, 1, 1))
    fig = plot_heatmaps(a, {"spans": {"audio": [[100, 700]], "answer": [[1090, 1100]]}},
                        {"model": "m", "dataset": "d", "task": "t", "condition": "audio", "item_id": "i", "layers": [0]})
    ax = fig.axes[0]
    assert ax.images[0].get_array().shape == (367, 367)  # ceil(1100 / 512) = 3 per block
    (audio,) = [p for p in ax.patches if p.get_label() == "audio"]
    assert (audio.get_x(), audio.get_width()) == pytest.approx((100 / 3 - 0.5, 200))
