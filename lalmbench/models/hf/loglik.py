"""Option log-likelihood scoring: which option's tokens does the model find most likely as its answer?

For an item with options A..D, the prompt (audio + question, rendered exactly as for generation,
ending with the assistant turn) is followed by each option's answer text in turn; the summed and
mean log-probability of those answer tokens is computed in one forward pass over K right-padded
rows (right padding keeps every row's positions 0..n, as in an unpadded pass). The chosen option is
the argmax of the configured normalisation (``mean`` by default, so long options are not penalised
for their length). No text is generated, so there is nothing to parse: ``raw_output`` is the chosen
label and the per-option scores go to ``extra``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import ModelInput, ModelOutput

if TYPE_CHECKING:
    from .backend import HFModel

PER_TOKEN_KEYS = ("input_ids", "attention_mask", "token_type_ids", "mm_token_type_ids")


def option_target(option: dict, target: str) -> str:
    """The answer string scored for one option."""
    label, text = str(option.get("label", "")), str(option.get("text", ""))
    if target == "label":
        return label
    if target == "label_text":
        return f"{label}. {text}"
    return text


def build_option_rows(prompt_enc: dict[str, Any], option_ids: list[list[int]], pad_id: int) -> dict[str, Any]:
    """K rows = the one-item prompt encoding followed by each option's ids, right-padded.

    Per-token tensors are extended (option tokens are plain text: token type 0, attention 1);
    every other tensor (audio features and their masks) is repeated K times along the batch axis,
    which keeps the processor's own ordering of audio windows per row.
    """
    import torch

    ids = prompt_enc["input_ids"]
    if ids.shape[0] != 1:
        raise ValueError("build_option_rows expects the encoding of exactly one item")
    n_prompt, k = ids.shape[1], len(option_ids)
    width = n_prompt + max(len(o) for o in option_ids)
    rows: dict[str, Any] = {}
    for key, val in prompt_enc.items():
        if key in PER_TOKEN_KEYS:
            fill = pad_id if key == "input_ids" else 0
            out = torch.full((k, width), fill, dtype=val.dtype, device=val.device)
            out[:, :n_prompt] = val[0]
            for r, opt in enumerate(option_ids):
                if key == "input_ids":
                    out[r, n_prompt:n_prompt + len(opt)] = torch.tensor(opt, dtype=val.dtype)
                elif key == "attention_mask":
                    out[r, n_prompt:n_prompt + len(opt)] = 1
            rows[key] = out
        else:
            rows[key] = torch.cat([val] * k, dim=0)
    return rows


def option_logprobs(logits: Any, rows: dict[str, Any], n_prompt: int, option_ids: list[list[int]]) -> list[dict]:
    """Sum/mean log-prob of each row's option tokens (token t is predicted by the logits at t-1)."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    scores = []
    for r, opt in enumerate(option_ids):
        pos = torch.arange(n_prompt - 1, n_prompt - 1 + len(opt), device=logp.device)
        tok = rows["input_ids"][r, n_prompt:n_prompt + len(opt)].to(logp.device)
        lp = logp[r, pos, tok]
        total = float(lp.sum())
        scores.append({"sum": total, "mean": total / len(opt), "n_tokens": len(opt)})
    return scores


def single_token_logprobs(model: "HFModel", enc: dict[str, Any], option_ids: list[list[int]]) -> list[dict]:
    """Every option is one token (``loglik_target: label``): its log-prob is read off the logits at the
    prompt's last position, so one forward pass over the prompt alone gives all K scores (the K-row pass
    would compute the same numbers K times; on CPU that is most of an item's cost)."""
    import inspect

    import torch

    # only the last position's logits are needed; models whose forward takes logits_to_keep skip the rest
    keep = {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(model.model.forward).parameters else {}
    with torch.inference_mode():
        logits = model.model(**enc, **keep).logits
    logp = torch.log_softmax(logits[0, -1].float(), dim=-1)
    return [{"sum": float(logp[ids[0]]), "mean": float(logp[ids[0]]), "n_tokens": 1} for ids in option_ids]


def score_item(model: "HFModel", item: ModelInput) -> ModelOutput:
    """Score every option of one item and return the most likely label."""
    import torch

    s = model.settings
    if not item.options:
        raise ValueError(f"item {item.id!r}: scoring 'loglik' needs options, the item has none")
    labels = [str(o.get("label", "")) for o in item.options]
    targets = [option_target(o, s.loglik_target) for o in item.options]
    option_ids = [model.tokenizer(t, add_special_tokens=False)["input_ids"] for t in targets]
    empty = [lab for lab, ids in zip(labels, option_ids) if not ids]
    if empty:
        raise ValueError(f"item {item.id!r}: option(s) {empty} have no text to score")
    enc = model.encode([item], padding_side="right")
    n_prompt = enc["input_ids"].shape[1]
    if all(len(ids) == 1 for ids in option_ids):
        scores = single_token_logprobs(model, enc, option_ids)
    else:
        pad = model.tokenizer.pad_token_id if model.tokenizer.pad_token_id is not None else 0
        rows = build_option_rows(enc, option_ids, pad)
        with torch.inference_mode():
            logits = model.model(**rows).logits
        scores = option_logprobs(logits, rows, n_prompt, option_ids)
    best = max(range(len(labels)), key=lambda r: (scores[r][s.loglik_norm], -r))
    return ModelOutput(
        raw_output=labels[best], input_tokens=int(enc["attention_mask"].sum()), output_tokens=0,
        extra={"scoring": "loglik", "norm": s.loglik_norm, "target": s.loglik_target, "chosen": labels[best],
               "options": {lab: sc for lab, sc in zip(labels, scores)}, **model.audio_note(item)})
