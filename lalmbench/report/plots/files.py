"""File edges of the figure families: read the result tables, draw, write PNG + SVG + the table drawn.

Each ``*_files`` function is what one ``scripts/plot_<family>.py`` runs; the figures and tables
are pure functions of their inputs (see the family modules).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import pandas as pd

from lalmbench.core import io
from lalmbench.report.plots.style import save

log = logging.getLogger("lalmbench.report.plots")


def read_decisions(path: str) -> pd.DataFrame:
    return pd.read_parquet(path)


def read_table(path: str | None) -> pd.DataFrame | None:
    """A TSV result table, or None when the path is not given or the file does not exist (optional input)."""
    if not path or not Path(path).exists():
        return None
    return pd.read_csv(path, sep="\t")


def _write(fig, table: pd.DataFrame, png: str, svg: str, tsv: str) -> None:
    save(fig, png, svg)
    io.write_tsv(tsv, table)
    log.info("%s: %d table rows -> %s", png, len(table), tsv)


def collect_files(paths: Sequence[str], out: str) -> None:
    from lalmbench.report.plots.common import collect_decisions

    df = collect_decisions(paths)
    io.write_parquet(out, df)
    log.info("%d decisions files -> %s (%d rows)", len(paths), out, len(df))


def reliance_files(decisions: str, *, png: str, svg: str, tsv: str, prompts: Sequence[str] = ()) -> None:
    from lalmbench.report.plots.reliance import plot_reliance, reliance_table

    d = read_decisions(decisions)
    _write(plot_reliance(d, prompts), reliance_table(d, prompts), png, svg, tsv)


def robustness_files(all_tsv: str, decisions: str, *, circular: str | None, png: str, svg: str, tsv_spread: str,
                     tsv_position: str, tsv_circular: str, prompts: Sequence[str] = ()) -> None:
    from lalmbench.report.plots.robustness import circular_table, plot_robustness, position_table, spread_table

    table = pd.read_csv(all_tsv, sep="\t")
    d = read_decisions(decisions)
    circ = read_table(circular)
    save(plot_robustness(table, d, circ, prompts), png, svg)
    io.write_tsv(tsv_spread, spread_table(table))
    io.write_tsv(tsv_position, position_table(d, prompts))
    io.write_tsv(tsv_circular, circular_table(circ))


def temporal_files(decisions: str, *, png: str, svg: str, tsv: str, tsv_iou: str, prompts: Sequence[str] = ()) -> None:
    from lalmbench.report.plots.temporal import iou_table, plot_temporal, temporal_table

    d = read_decisions(decisions)
    _write(plot_temporal(d, prompts=prompts), temporal_table(d, prompts=prompts), png, svg, tsv)
    io.write_tsv(tsv_iou, iou_table(d, prompts))


def parsing_files(decisions: str, *, confusion_png: str, confusion_svg: str, confusion_tsv: str, stages_png: str,
                  stages_svg: str, stages_tsv: str, prompts: Sequence[str] = ()) -> None:
    from lalmbench.report.plots.parsing import confusion_table, parse_stage_table, plot_confusion, plot_parse_stages

    d = read_decisions(decisions)
    _write(plot_confusion(d, prompts), confusion_table(d, prompts), confusion_png, confusion_svg, confusion_tsv)
    _write(plot_parse_stages(d, prompts), parse_stage_table(d, prompts), stages_png, stages_svg, stages_tsv)


def paired_files(decisions: str, *, png: str, svg: str, tsv: str, prompts: Sequence[str] = ()) -> None:
    from lalmbench.report.plots.paired import paired_table, plot_paired

    d = read_decisions(decisions)
    _write(plot_paired(d, prompts), paired_table(d, prompts), png, svg, tsv)
