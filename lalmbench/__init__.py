"""lalm-bench: benchmark Large Audio Language Models with a reproducible Snakemake pipeline.

The public API, for scoring outputs produced by another harness from Python. These names stay
stable when modules move inside the package (docs/api.md):

- :func:`parse_answer` - one raw output -> the option it chooses (or None, with the reason);
- :func:`score_mcq` - items + predictions -> per-item decisions and the accuracy metrics;
- :func:`score_official` - items + predictions -> the benchmark's own rule (``value_official``), per item
  and per group of the paper's table;
- :func:`read_items` - the items a dataset adapter or benchmark preset yields from local files.

The heavy modules (pandas, the parser tables) load on first use, so ``import lalmbench`` stays cheap.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from lalmbench.scoring.parse import ParseResult

__version__ = "0.1.0"
__all__ = ["parse_answer", "score_mcq", "score_official", "read_items", "__version__"]


def _options(options: Sequence[Mapping[str, Any] | str]) -> list[dict]:
    """``[{label, text}]`` as the pipeline stores options; plain strings get labels A, B, C, ..."""
    from lalmbench.core.items import LABELS

    out = []
    for i, o in enumerate(options):
        if isinstance(o, str):
            if i >= len(LABELS):
                raise ValueError(f"option {i + 1}: at most {len(LABELS)} plain-string options (labels A-Z)")
            out.append({"label": LABELS[i], "text": o})
        elif isinstance(o, Mapping) and "label" in o:
            out.append({"label": str(o["label"]), "text": str(o.get("text", "") or "")})
        else:
            raise ValueError(f"option {i + 1}: expected a string or a mapping with 'label' (and 'text'), got {o!r}")
    return out


def parse_answer(raw: str | None, options: Sequence[Mapping[str, Any] | str], *,
                 stages: Sequence[str] | None = None, labels_shown: bool = True) -> "ParseResult":
    """The option label ``raw`` chooses, with the parser stage that decided and why.

    ``options``: ``[{"label": "A", "text": "dog"}, ...]`` or plain option texts (labelled A, B, ...).
    ``labels_shown=False`` when the prompt showed no letters (outputs from another benchmark's
    prompt): label stages are off. Never guesses: ``label`` is None unless one option is chosen."""
    from lalmbench.scoring.parse import parse_answer as _parse

    return _parse(raw, _options(options), stages, labels_shown=labels_shown)


def score_mcq(items: Sequence[Mapping[str, Any]], predictions: "pd.DataFrame | Iterable[Mapping[str, Any]]", *,
              parser: Mapping[str, Any] | None = None) -> tuple["pd.DataFrame", dict]:
    """Decisions (one row per item: parsed label, parse stage, correct) and accuracy metrics.

    ``items`` are task items (``id``, ``options`` [{label, text}], ``answer_label``; see
    :func:`read_items`); ``predictions`` rows with ``id`` and ``raw_output`` (a DataFrame or dicts),
    optionally ``error``. ``parser``: ``{"stages": [...], "labels": "shown"}`` as in the config;
    ``labels`` defaults to ``hidden`` (a bare letter is no choice), as for an imported model, so the
    same file gives the same value here and in the workflow."""
    import pandas as pd

    from lalmbench.scoring.mcq import score_mcq as _score

    preds = predictions if isinstance(predictions, pd.DataFrame) else pd.DataFrame(list(predictions))
    _without_prediction(items, preds)
    return _score([dict(it) for it in items], preds, _parser(parser))


def _without_prediction(items: Sequence[Mapping[str, Any]], preds: "pd.DataFrame") -> None:
    """An error naming the first item without a prediction, and what the workflow does with such items
    of a released file (left out), so a caller can score the same items."""
    from lalmbench.core.io import InputError
    from lalmbench.scoring.official_preset import LEAVE_OUT_HINT

    have = set(preds["id"].astype(str)) if "id" in preds.columns else set()
    missing = [str(it.get("id")) for it in items if str(it.get("id")) not in have]
    if missing and "id" in preds.columns:
        raise InputError(f"predictions: no prediction for item {missing[0]!r} ({len(missing)} of {len(items)} items "
                         f"without one); {LEAVE_OUT_HINT}")


def _parser(parser: Mapping[str, Any] | None) -> dict:
    """The parser settings of an API call: ``labels`` defaults to the reading an imported model gets
    (:data:`lalmbench.core.items.OUTSIDE_LABELS`), since the prompt behind outside outputs is unknown."""
    from lalmbench.core.items import OUTSIDE_LABELS

    cfg = dict(parser or {})
    if cfg.get("labels", "auto") == "auto":
        cfg["labels"] = OUTSIDE_LABELS
    return cfg


def score_official(preset: str, items: Sequence[Mapping[str, Any]],
                   predictions: "pd.DataFrame | Iterable[Mapping[str, Any]]", *, kind: str | None = None,
                   settings: Mapping[str, Any] | None = None, rule: str | None = None,
                   parser: Mapping[str, Any] | None = None, embed: Any = None,
                   ask: Any = None) -> tuple["pd.DataFrame", dict]:
    """The benchmark's own scoring rule on these outputs, as ``results/all.tsv`` reports it.

    ``preset``: a benchmark preset (``mmau``, ``mmar``, ``mmsu``, ``air_bench``, ``mmau_pro``, ...);
    ``items`` as :func:`read_items` gives them, in the benchmark file's order (the order its script
    reads); ``predictions`` rows with ``id``, ``raw_output``, optional ``error``. ``kind`` picks MCQ,
    instruction or open items where a preset holds several; ``settings`` adds the rule's keys
    (``carry_letter``, ``embedder``); ``rule`` picks another report's rule the preset names under
    ``official_also`` (MELD, VocalSound: ``kimi_audio_judge`` beside Qwen2-Audio's exact match;
    LibriSpeech: ``kimi_audio_wer`` beside ``qwen2_audio_wer``).
    ``embed`` / ``ask``: the sentence embedder or judge a rule needs.

    Returns ``(decisions, summary)``: per item ``official_score`` (None: left out by the script),
    ``official_pred``, ``official_reason``, ``official_disagrees`` beside our own verdict; the summary
    holds ``value_official``, ``n_official``, ``official_excluded``, ``breakdown`` (ours and official
    per group of the paper's table) and our ``value`` where the kind has a rule of ours. ``parser`` as
    for :func:`score_mcq` (``labels`` defaults to ``hidden``)."""
    from lalmbench.scoring.official_preset import score_preset

    return score_preset(preset, items, predictions, kind=kind, settings=settings, rule=rule, parser=_parser(parser),
                        embed=embed, ask=ask)


def read_items(adapter: str, params: Mapping[str, Any], *, dataset: str = "dataset",
               audio_needed: bool = True) -> list[dict]:
    """The ready items a dataset adapter or benchmark preset reads from local files (same checks
    and drops as the workflow's adapter step; drop counts are in the step's stats).

    ``audio_needed=False`` reads a benchmark preset's items without their audio, for released outputs
    (whose audio is usually not on disk): ``audio_root`` may be unset or absent and audio paths are kept
    as written, unchecked, as the workflow reads a dataset only imported outputs are scored on."""
    from lalmbench.data.adapters import adapt
    from lalmbench.data.adapters.benchmarks import is_preset

    params = dict(params)
    if not audio_needed:
        if not is_preset(adapter):
            raise ValueError(f"read_items: audio_needed=False reads a benchmark preset's items without their "
                             f"audio; {adapter!r} is a dataset adapter, whose items are built from the audio")
        params["audio_needed"] = False
    return adapt(adapter, params, dataset=dataset).items
