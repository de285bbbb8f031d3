"""Optional downloads for users with a network (never run by the tests or the default workflow).

    python -m lalmbench.data.adapters.download tacobelal --out resources/datasets/tacobelal
    python -m lalmbench.data.adapters.download clotho --out resources/datasets/clotho --split evaluation
    python -m lalmbench.data.adapters.download mmau-pro --out resources/datasets/mmau-pro
    python -m lalmbench.data.adapters.download audioset-strong --out resources/datasets/audioset

Each prints the ``datasets:`` config entry to paste. Zenodo files are fetched with their MD5
checked; Hugging Face datasets go through ``huggingface_hub.snapshot_download`` (install it
yourself; it is not a dependency). AudioSet audio itself comes from YouTube and is not fetched.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import urllib.request
import zipfile
from pathlib import Path

ZENODO_API = "https://zenodo.org/api/records/{record}"
TACOS_RECORD = "15379789"            # TACOS: annotations_strong.csv, audio.zip, splits (used by TACoBeLAL)
CLOTHO_RECORD = "4783391"            # Clotho v2.1
AUDIOSET_STRONG = {
    "audioset_eval_strong.tsv": "http://storage.googleapis.com/us_audioset/youtube_corpus/strong/audioset_eval_strong.tsv",
    "mid_to_display_name.tsv": "http://storage.googleapis.com/us_audioset/youtube_corpus/strong/mid_to_display_name.tsv",
}


def _fetch(url: str, dest: Path, md5: str | None = None) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    h = hashlib.md5()
    with urllib.request.urlopen(url) as r, open(tmp, "wb") as fh:  # noqa: S310 (user-invoked download)
        while chunk := r.read(1 << 20):
            fh.write(chunk)
            h.update(chunk)
    if md5 and h.hexdigest() != md5:
        tmp.unlink()
        raise RuntimeError(f"{url}: MD5 {h.hexdigest()} != expected {md5}")
    tmp.replace(dest)
    return dest


def zenodo(record: str, out: Path, names: list[str] | None = None) -> list[Path]:
    with urllib.request.urlopen(ZENODO_API.format(record=record)) as r:  # noqa: S310
        meta = json.load(r)
    got = []
    for f in meta["files"]:
        key = f["key"]
        if names and key not in names:
            continue
        md5 = f.get("checksum", "").split(":", 1)[-1] or None
        dest = out / key
        if dest.exists() and dest.stat().st_size == f.get("size"):
            got.append(dest)
            continue
        print(f"fetching {key} ({f.get('size', 0) / 1e6:.1f} MB)", file=sys.stderr)
        got.append(_fetch(f["links"]["self"], dest, md5))
    return got


def tacobelal(out: Path) -> dict:
    zenodo(TACOS_RECORD, out, ["annotations_strong.csv", "audio.zip", "development_split.csv", "test_split.csv"])
    if not (out / "audio").exists():
        with zipfile.ZipFile(out / "audio.zip") as z:
            z.extractall(out)
    return {"adapter": "tacobelal", "params": {"annotations": str(out / "annotations_strong.csv"),
                                               "audio_root": str(out / "audio"),
                                               "split_files": {"development": str(out / "development_split.csv"),
                                                               "test": str(out / "test_split.csv")}}}


def clotho(out: Path, split: str) -> dict:
    zenodo(CLOTHO_RECORD, out, [f"clotho_captions_{split}.csv", f"clotho_audio_{split}.7z"])
    if shutil.which("7z") is None:
        raise RuntimeError(f"extract {out}/clotho_audio_{split}.7z with 7z (p7zip) into {out}")
    import subprocess

    subprocess.run(["7z", "x", "-y", f"-o{out}", str(out / f"clotho_audio_{split}.7z")], check=True)
    return {"adapter": "clotho", "params": {"captions": str(out / f"clotho_captions_{split}.csv"),
                                            "audio_root": str(out / split)}}


def mmau_pro(out: Path) -> dict:
    from huggingface_hub import snapshot_download  # optional, user-installed

    snapshot_download("gamma-lab-umd/MMAU-Pro", repo_type="dataset", local_dir=str(out))
    return {"adapter": "mmau", "params": {"items": str(out / "test.parquet"), "audio_root": str(out)}}


def audioset_strong(out: Path) -> dict:
    for name, url in AUDIOSET_STRONG.items():
        if not (out / name).exists():
            _fetch(url, out / name)
    return {"adapter": "audioset_strong", "params": {
        "annotations": str(out / "audioset_eval_strong.tsv"), "labels": str(out / "mid_to_display_name.tsv"),
        "audio_root": str(out / "audio"), "audio_pattern": "{segment_id}.wav"},
        "note": "audio is not downloadable here: put one file per segment under audio_root"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", choices=["tacobelal", "clotho", "mmau-pro", "audioset-strong"])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--split", default="evaluation", help="Clotho split")
    a = ap.parse_args(argv)
    fn = {"tacobelal": lambda: tacobelal(a.out), "clotho": lambda: clotho(a.out, a.split),
          "mmau-pro": lambda: mmau_pro(a.out), "audioset-strong": lambda: audioset_strong(a.out)}[a.dataset]
    print(json.dumps({a.dataset: fn()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
