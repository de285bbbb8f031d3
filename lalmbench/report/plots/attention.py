"""Attention figures: per-layer heatmaps of one item with the audio span outlined, and the share of
the answer's attention that lands on audio tokens, per model and layer, conditions side by side.

Everything streams: items are read one at a time from their memory-mapped ``attn.npy`` and only
per-layer numbers are kept, so the figure job never holds more than one item's array.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from lalmbench.core import io
from lalmbench.attention.share import answer_rows, audio_share, uniform_share
from lalmbench.inference.conditions import CONDITIONS

log = logging.getLogger("lalmbench.report.plots")

ITEM_KEYS = ["model", "dataset", "task", "condition", "prompt", "item"]
SHARE_COLUMNS = ITEM_KEYS + ["layer", "audio_share", "uniform_share", "n_audio_tokens", "n_answer_tokens", "seq_len"]
SUMMARY_COLUMNS = ["model", "condition", "layer", "audio_share", "sd", "n_items", "uniform_share"]
MAX_PX = 512  # heatmaps of longer sequences are block-averaged to at most this many pixels a side


def read_item(path: str | Path) -> tuple[np.ndarray, dict, dict]:
    """(attn, memory-mapped; tokens.json; meta.json) of one captured item directory."""
    path = Path(path)
    return (np.load(path / "attn.npy", mmap_mode="r"), io.read_json(path / "tokens.json"),
            io.read_json(path / "meta.json"))


def item_share_rows(model: str, entry: dict, attn: np.ndarray, tokens: dict, meta: dict) -> list[dict]:
    """One row per captured layer of one item: its audio share and the uniform baseline."""
    spans = tokens["spans"]
    rows = answer_rows(spans)
    shares = audio_share(attn, spans["audio"], rows)
    base = uniform_share(attn.shape[-1], spans["audio"], rows)
    n_audio = sum(e - s for s, e in spans["audio"])
    return [{"model": model, **{k: entry[k] for k in ITEM_KEYS[1:]}, "layer": int(layer), "audio_share": float(v),
             "uniform_share": base, "n_audio_tokens": n_audio, "n_answer_tokens": len(rows),
             "seq_len": int(attn.shape[-1])} for layer, v in zip(meta["layers"], shares)]


def condition_order(conditions: Sequence[str]) -> list[str]:
    known = [c for c in CONDITIONS if c in set(conditions)]
    return known + sorted(set(conditions) - set(known))


def share_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per model, condition and layer: mean audio share over items (sd, n) and the uniform baseline."""
    if df.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    g = df.groupby(["model", "condition", "layer"], sort=False)
    out = g.agg(audio_share=("audio_share", "mean"), sd=("audio_share", "std"), n_items=("audio_share", "count"),
                uniform_share=("uniform_share", "mean")).reset_index()
    order = {c: i for i, c in enumerate(condition_order(out["condition"].unique()))}
    out = out.assign(_c=out["condition"].map(order)).sort_values(["model", "layer", "_c"]).drop(columns="_c")
    return out[SUMMARY_COLUMNS].reset_index(drop=True)


def plot_share(summary: pd.DataFrame):
    """One panel per model: bars per layer, one bar per condition (audio, then the ablations)."""
    from lalmbench.report.plots.common import placeholder
    from lalmbench.report.plots.style import plt

    if summary.empty:
        return placeholder("no attention captured (set attention: in a model entry)",
                           title="Attention on audio tokens")
    models = sorted(summary["model"].unique())
    fig, axes = plt.subplots(len(models), 1, figsize=(max(5.0, 0.6 * summary["layer"].nunique() + 3), 2.8 * len(models)),
                             squeeze=False)
    cmap = plt.get_cmap("tab10")
    for ax, model in zip(axes[:, 0], models):
        d = summary[summary["model"] == model]
        layers = sorted(d["layer"].unique())
        conds = condition_order(d["condition"].unique())
        width = 0.8 / len(conds)
        x = np.arange(len(layers))
        uniform_label = "uniform over visible keys"
        for k, cond in enumerate(conds):
            c = d[d["condition"] == cond].set_index("layer").reindex(layers)
            pos = x + (k - (len(conds) - 1) / 2) * width
            no_audio = bool((c["uniform_share"].fillna(0) == 0).all())  # no audio tokens at all: 0 by definition
            ax.bar(pos, c["audio_share"].to_numpy(dtype=float), width, color=cmap(CONDITIONS.index(cond) if cond in
                   CONDITIONS else k), label=cond + (" (no audio tokens)" if no_audio else ""))
            if not no_audio:  # the share a row attending uniformly to the keys it sees would give
                ax.hlines(c["uniform_share"].to_numpy(dtype=float), pos - width / 2, pos + width / 2, colors="black",
                          linestyles=":", linewidth=1, label=uniform_label)
                uniform_label = None
        ax.set_xticks(x, [str(layer) for layer in layers])
        ax.set_xlabel("decoder layer")
        ax.set_ylabel("answer attention\non audio tokens")
        ax.set_ylim(0, 1)
        ax.set_title(model)
        ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def pool(mat: np.ndarray, factor: int) -> np.ndarray:
    """Block means of ``factor x factor`` cells (edge blocks average what they have)."""
    if factor <= 1:
        return np.asarray(mat, dtype=np.float32)
    n0, n1 = mat.shape
    p0, p1 = -(-n0 // factor) * factor, -(-n1 // factor) * factor
    padded = np.full((p0, p1), np.nan, dtype=np.float32)
    padded[:n0, :n1] = mat
    return np.nanmean(padded.reshape(p0 // factor, factor, p1 // factor, factor), axis=(1, 3))


def plot_heatmaps(attn: np.ndarray, tokens: dict, meta: dict, max_px: int = MAX_PX):
    """One heatmap per captured layer (head mean), audio key columns outlined, answer rows dashed."""
    from matplotlib.colors import PowerNorm
    from matplotlib.patches import Rectangle

    from lalmbench.report.plots.style import plt

    n_layers, seq = attn.shape[0], attn.shape[-1]
    factor = max(1, -(-seq // max_px))
    cols = min(4, n_layers)
    rows_n = -(-n_layers // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(3.2 * cols, 3.2 * rows_n), squeeze=False)
    spans = tokens["spans"]
    rows = answer_rows(spans)
    for i, ax in enumerate(axes.flat):
        if i >= n_layers:
            ax.axis("off")
            continue
        img = pool(np.asarray(attn[i], dtype=np.float32).mean(0), factor)
        ax.imshow(img, cmap="viridis", norm=PowerNorm(0.5, vmin=0, vmax=max(float(img.max()), 1e-6)),
                  interpolation="nearest")
        n_px = img.shape[0]
        for s, e in spans["audio"]:
            ax.add_patch(Rectangle((s / factor - 0.5, -0.5), (e - s) / factor, n_px, fill=False, edgecolor="red",
                                   linewidth=1.2, label="audio"))
        if len(rows):
            ax.add_patch(Rectangle((-0.5, rows[0] / factor - 0.5), n_px, len(rows) / factor, fill=False,
                                   edgecolor="white", linestyle="--", linewidth=0.8, label="answer"))
        ax.set_title(f"layer {meta['layers'][i]}", fontsize=9)
        ax.set_xlabel("key", fontsize=8)
        ax.set_ylabel("query", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{meta['model']} | {meta['dataset']}/{meta['task']} | {meta['condition']} | {meta['item_id']}"
                 f"\nred: audio tokens, dashed: rows that emitted the answer"
                 + (f" ({factor}x{factor} blocks averaged)" if factor > 1 else ""), fontsize=9)
    fig.tight_layout()
    return fig


def model_files(manifest: str, *, heatmaps: str, tsv: str) -> pd.DataFrame:
    """Rule attention_model_figures: a heatmap per captured item and the per-item, per-layer table."""
    from lalmbench.report.plots.style import plt

    man = io.read_json(manifest)
    out_rows = []
    root = Path(heatmaps)
    root.mkdir(parents=True, exist_ok=True)
    for entry in man["items"]:
        attn, tokens, meta = read_item(entry["dir"])
        out_rows += item_share_rows(man["model"], entry, attn, tokens, meta)
        fig = plot_heatmaps(attn, tokens, meta)
        dest = root / entry["dataset"] / entry["task"] / entry["condition"] / f"{Path(entry['dir']).name}.png"
        dest.parent.mkdir(parents=True, exist_ok=True)
        with io.atomic_path(dest, suffix=".png") as tmp:
            fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        del attn
    df = pd.DataFrame(out_rows, columns=SHARE_COLUMNS)
    io.write_tsv(tsv, df)
    log.info("%s: %d items -> %s, heatmaps in %s", man["model"], len(man["items"]), tsv, heatmaps)
    return df


def share_files(tables: Sequence[str], *, png: str, svg: str, tsv: str) -> pd.DataFrame:
    """Rule attention_share: every model's per-item table -> the summary table and figure."""
    from lalmbench.report.plots.style import save

    frames = [pd.read_csv(t, sep="\t") for t in tables]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SHARE_COLUMNS)
    summary = share_summary(df)
    save(plot_share(summary), png, svg)
    io.write_tsv(tsv, summary)
    return summary
