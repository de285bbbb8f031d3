"""Token strings of a captured sequence and the spans a reader needs: audio, prompt, options, answer.

Spans are half-open token index ranges ``[start, end)``. Audio spans are the runs of the
model's audio placeholder id (what the processor expanded and the model replaces with audio
embeddings); the answer span is the generated tokens; prompt, question and options are found as
text: the sequence is decoded piece by piece, so every token gets the characters it adds, and a
character range maps to the tokens that overlap it.
"""
from __future__ import annotations

from typing import Callable, Sequence

Span = list[int]  # [start, end)


def token_pieces(decode: Callable[[list[int]], str], ids: Sequence[int], audio_id: int | None) -> list[str]:
    """The text each token adds, so ``"".join(pieces)`` is the decoded sequence.

    Runs of audio placeholders are decoded as one token each (they are thousands long and all the
    same); every other run incrementally (``decode(run[:k+1])`` minus ``decode(run[:k])``), which
    is exact for byte-level and metaspace tokenizers. A token ending inside a multi-byte character
    adds nothing; the token that completes the character adds all of it.
    """
    pieces: list[str] = []
    audio_piece = decode([audio_id]) if audio_id is not None else ""
    run: list[int] = []

    def flush() -> None:
        stable = ""
        for k in range(len(run)):
            text = decode(run[:k + 1])
            if text.endswith("\ufffd") or not text.startswith(stable):
                pieces.append("")  # an unfinished character: its token adds it once complete
                continue
            pieces.append(text[len(stable):])
            stable = text
        run.clear()

    for t in ids:
        if audio_id is not None and t == audio_id:
            flush()
            pieces.append(audio_piece)
        else:
            run.append(int(t))
    flush()
    return pieces


def runs_of(ids: Sequence[int], token_id: int | None, end: int | None = None) -> list[Span]:
    """Maximal runs of ``token_id`` in ``ids[:end]``."""
    out: list[Span] = []
    if token_id is None:
        return out
    n = len(ids) if end is None else end
    i = 0
    while i < n:
        if ids[i] == token_id:
            j = i
            while j < n and ids[j] == token_id:
                j += 1
            out.append([i, j])
            i = j
        else:
            i += 1
    return out


def char_starts(pieces: Sequence[str]) -> list[int]:
    """Start offset of each piece in the joined text, plus the total length at the end."""
    out = [0]
    for p in pieces:
        out.append(out[-1] + len(p))
    return out


def tokens_covering(starts: Sequence[int], a: int, b: int) -> Span | None:
    """Token span overlapping characters [a, b) (tokens adding no text inside it are included)."""
    hit = [i for i in range(len(starts) - 1) if starts[i] < b and starts[i + 1] > a]
    return [hit[0], hit[-1] + 1] if hit else None


def mark_spans(pieces: Sequence[str], ids: Sequence[int], *, audio_id: int | None, n_prompt: int, prompt: str,
               question: str, options: str) -> dict:
    """``{"spans": {...}, "notes": [...]}`` for a sequence of ``n_prompt`` prompt tokens then the answer.

    ``prompt`` is the rendered user text, ``question`` and ``options`` the parts of it the template
    filled in. The prompt is looked up (last occurrence) in the decoded prompt tokens; when a
    tokenizer does not give it back verbatim, those spans stay empty and ``notes`` says so.
    """
    spans: dict[str, list[Span]] = {"audio": runs_of(ids, audio_id, n_prompt), "prompt": [], "question": [],
                                    "options": [], "answer": [[n_prompt, len(ids)]] if len(ids) > n_prompt else []}
    notes: list[str] = []
    starts = char_starts(pieces)
    text = "".join(pieces[:n_prompt])
    at = text.rfind(prompt) if prompt else -1
    if at < 0:
        notes.append("the rendered prompt was not found verbatim in the decoded prompt tokens: "
                     "prompt, question and options spans are empty")
        return {"spans": spans, "notes": notes}
    for name, part, offset in (("prompt", prompt, 0), ("question", question, prompt.find(question) if question else -1),
                               ("options", options, prompt.find(options) if options else -1)):
        if offset < 0 or not part:
            if part:
                notes.append(f"{name} text not found in the rendered prompt")
            continue
        span = tokens_covering(starts, at + offset, at + offset + len(part))
        if span:
            spans[name].append(span)
    return {"spans": spans, "notes": notes}
