"""Small copies of the report benchmarks' releases, laid out where a report config's datasets point.

:func:`lay_out` reads a config's ``datasets:`` (after :func:`point_at` moved its ``/data/...`` paths
under a fixture root) and writes, for each dataset, the files its preset reads in the release's own
layout: LibriSpeech's ``*.trans.txt`` beside flac, Common Voice's ``test.tsv`` over ``clips/*.mp3``,
FLEURS' header-less TSV, AISHELL's transcript files, CoVoST 2's TSVs over Common Voice 4 clips,
Kimi-Audio-Evalkit's WenetSpeech.jsonl, MMAU's JSON, Clotho-AQA's CSVs, MELD's test CSV,
VocalSound's ``te.json``, Nonspeech7k's metadata CSV, TUT2017's ``meta.txt``, CochlScene's split
folders and GiantSteps' ``.bpm`` files. Speech is espeak-ng speaking the reference in the clip's
language, so a real ASR model has something to transcribe; other clips are seeded tones over noise
(GiantSteps: a click track at the file's tempo)."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Callable

import numpy as np

from tests.report.spoken import UTTERANCES, speak

ROOT = Path(__file__).resolve().parents[2]
#: two sentences per language: spoken as the clips, and the references the presets read
SENTENCES = {
    "en": ["the birch canoe slid on the smooth planks", "glue the sheet to the dark blue background"],
    "zh": ["今天天气很好", "我们一起去公园散步"],
    "yue": ["今日天氣好好", "我哋一齊去公園"],
    "fr": ["le chat dort sur le canapé", "il fait beau aujourd'hui"],
    "de": ["der hund spielt im garten", "heute ist das wetter schön"],
    "es": ["el perro juega en el jardín", "hoy hace buen tiempo"],
    "it": ["il gatto dorme sul divano", "oggi fa bel tempo"],
}
#: SENTENCES[lang][i] in English, German and Chinese: CoVoST 2's translations
TRANSLATIONS = {
    "en": {"de": ["der birkenkanu glitt über die glatten planken", "klebe das blatt auf den dunkelblauen hintergrund"],
           "zh": ["桦树皮独木舟在光滑的木板上滑行", "把纸粘在深蓝色的背景上"]},
    "x": {"en": ["the dog plays in the garden", "the weather is nice today"]},
}
VOICES = {"en": "en-us", "zh": "cmn", "yue": "yue", "fr": "fr-fr", "de": "de", "es": "es", "it": "it"}
#: Common Voice / CoVoST 2 locale folder -> SENTENCES key
LOCALES = {"en": "en", "zh-CN": "zh", "yue": "yue", "fr": "fr", "de": "de", "es": "es", "it": "it"}
RATE = 16000


def point_at(config: dict, root: Path) -> dict:
    """``config`` with every ``/data/...`` string under ``datasets:`` moved to ``root/...``."""
    def move(v):
        if isinstance(v, str) and v.startswith("/data/"):
            return str(root / v[len("/data/"):])
        if isinstance(v, dict):
            return {k: move(x) for k, x in v.items()}
        return v

    return {**config, "datasets": {k: move(d) for k, d in config["datasets"].items()}}


def tone(dest: Path, seed: int, seconds: float = 1.5, fmt: str = "WAV") -> Path:
    """A seeded chord of two tones over faint noise: a clip that is not speech."""
    import soundfile as sf

    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    f1, f2 = rng.uniform(200, 2000, size=2)
    x = 0.3 * np.sin(2 * np.pi * f1 * t) + 0.2 * np.sin(2 * np.pi * f2 * t) + 0.02 * rng.standard_normal(t.size)
    dest.parent.mkdir(parents=True, exist_ok=True)
    sf.write(dest, x.astype(np.float32), RATE, format=fmt)
    return dest


def clicks(dest: Path, bpm: float, seconds: float = 6.0) -> Path:
    """A click track at ``bpm`` (an MP3, as GiantSteps' audio_dl.sh fetches)."""
    import soundfile as sf

    x = np.zeros(int(seconds * RATE), np.float32)
    for onset in np.arange(0, seconds, 60.0 / bpm):
        i = int(onset * RATE)
        x[i:i + 400] = 0.8 * np.hanning(800)[400:]
    dest.parent.mkdir(parents=True, exist_ok=True)
    sf.write(dest, x, RATE, format="MP3")
    return dest


def _tsv(rows: list[list[str]], header: list[str] | None = None) -> str:
    return "".join("\t".join(r) + "\n" for r in ([header] if header else []) + rows)


def librispeech(p: dict) -> None:
    if not (Path(p["items"]) / p["subset"]).exists():
        from tests.report.spoken import spoken_librispeech

        spoken_librispeech(Path(p["items"]).parent, p["subset"], UTTERANCES[:2])


CV_HEADER = ["client_id", "path", "sentence", "up_votes", "down_votes", "age", "gender", "accents", "variant",
             "locale", "segment"]


def common_voice(p: dict) -> None:
    """cv-corpus-15.0/<locale>/test.tsv over clips/common_voice_<locale>_<n>.mp3."""
    items, locale = Path(p["items"]), Path(p["items"]).parent.name
    lang = LOCALES[locale]
    rows = [[f"client{i}", f"common_voice_{locale}_{i}.mp3", s, "2", "0", "", "female" if i else "male", "", "",
             locale, ""] for i, s in enumerate(SENTENCES[lang])]
    for r in rows:
        speak(r[2], Path(p["audio_root"]) / "clips" / r[1], VOICES[lang], "MP3")
    items.write_text(_tsv(rows, CV_HEADER), encoding="utf-8")


def fleurs(p: dict) -> None:
    """fleurs/data/<lang>/test.tsv (no header: id, file, raw text, normalised text, phonemes, samples,
    gender) over audio/test/<file>.wav."""
    items = Path(p["items"])
    if items.exists():
        return
    lang = "zh" if items.parent.name.startswith("cmn") else "en"
    rows = []
    for i, s in enumerate(SENTENCES[lang]):
        name = f"{1000 + i}{lang}.wav"
        speak(s, Path(p["audio_root"]) / "audio" / "test" / name, VOICES[lang], "WAV")
        raw = s[0].upper() + s[1:] + ("。" if lang == "zh" else ".")
        rows.append([str(1843 + i), name, raw, s, " ".join(s), "32000", "MALE"])
    items.write_text(_tsv(rows), encoding="utf-8")


def aishell2(p: dict) -> None:
    """AISHELL-DEV-TEST-SET/<device>/test/trans.txt over wav/<speaker>/<utt>.wav."""
    items = Path(p["items"])
    device = items.parent.parent.name[0].upper()
    ids = [f"{device}T0011W000{i}" for i in range(len(SENTENCES["zh"]))]
    for i, s in zip(ids, SENTENCES["zh"]):
        speak(s, Path(p["audio_root"]) / "wav" / "T0011" / f"{i}.wav", "cmn", "WAV")
    items.write_text(_tsv([[i, s] for i, s in zip(ids, SENTENCES["zh"])]), encoding="utf-8")


def aishell1(p: dict) -> None:
    """data_aishell/transcript/aishell_transcript_v0.8.txt (words split by spaces) over wav/test/<S>/<utt>.wav."""
    ids = [f"BAC009S0764W012{i}" for i in range(len(SENTENCES["zh"]))]
    for i, s in zip(ids, SENTENCES["zh"]):
        speak(s, Path(p["audio_root"]) / "S0764" / f"{i}.wav", "cmn", "WAV")
    lines = [f"{i} {' '.join(s)}\n" for i, s in zip(ids, SENTENCES["zh"])]
    Path(p["items"]).parent.mkdir(parents=True, exist_ok=True)
    Path(p["items"]).write_text("".join(lines), encoding="utf-8")


def covost2(p: dict) -> None:
    """covost_v2.<src>_<tgt>.tsv (path, sentence, translation, client_id, split) over the Common Voice 4
    clips of the source language; one train row the preset leaves out."""
    items = Path(p["items"])
    src, tgt = re.match(r"covost_v2\.([^_]+)_(.+)\.tsv$", items.name).groups()
    lang = LOCALES[src]
    refs = TRANSLATIONS["en"][LOCALES[tgt]] if src == "en" else TRANSLATIONS["x"]["en"]
    rows = []
    for i, (s, t) in enumerate(zip(SENTENCES[lang], refs)):
        name = f"common_voice_{src}_{tgt}_{i}.mp3"
        speak(s, Path(p["audio_root"]) / "clips" / name, VOICES[lang], "MP3")
        rows.append([name, s, t, f"client{i}", "test"])
    rows.append([f"common_voice_{src}_train.mp3", "train row", "train row", "client9", "train"])
    items.parent.mkdir(parents=True, exist_ok=True)
    items.write_text(_tsv(rows, ["path", "sentence", "translation", "client_id", "split"]), encoding="utf-8")


def kimi_audio_asr(p: dict) -> None:
    """Kimi-Audio-Evalkit's WenetSpeech.jsonl: absolute audio paths under the download folder, test_net
    and test_meeting."""
    items = Path(p["items"])
    if items.exists():
        return
    rows = []
    for n, (subset, s) in enumerate((("test_net", SENTENCES["zh"][0]), ("test_net", SENTENCES["zh"][1]),
                                     ("test_meeting", SENTENCES["zh"][1]), ("test_meeting", SENTENCES["zh"][0]))):
        name = f"{subset.upper()}_Y{n:010d}_S0000{n}.wav"
        a = speak(s, Path(p["audio_root"]) / "wenetspeech" / "audios" / f"cuts_{subset.upper()}" / name, "cmn", "WAV")
        rows.append({"index": n, "audio_path": str(a), "question": "请把这段语音转录成文本。", "answer": s,
                     "subset": subset, "task_type": "understanding"})
    items.parent.mkdir(parents=True, exist_ok=True)
    items.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def mmau(p: dict) -> None:
    """mmau-test-mini.json: two real test-mini items per task (tests/data/datasets/mmau), over
    test-mini-audios/<id>.wav."""
    items = Path(p["items"])
    if items.exists():
        return
    sample = json.loads((ROOT / "tests" / "data" / "datasets" / "mmau" / "mmau-test-mini-sample.json").read_text())
    keep = [r for task in ("sound", "music", "speech") for r in [x for x in sample if x["task"] == task][:2]]
    for n, r in enumerate(keep):
        tone(Path(p["audio_root"]) / r["audio_id"], n)
    items.parent.mkdir(parents=True, exist_ok=True)
    items.write_text(json.dumps(keep, indent=1), encoding="utf-8")


def clotho_aqa(p: dict) -> None:
    """clotho_aqa_<split>.csv: three annotators' rows per yes/no question over audio_files/<file>."""
    qs = [("birds_morning.wav", "Are there birds chirping?", ["yes", "yes", "no"]),
          ("rain_roof.wav", "Is it raining?", ["no", "no", "no"]),
          ("rain_roof.wav", "Is there music?", ["no", "yes", "no"])]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["file_name", "QuestionText", "answer", "confidence"])
    for n, (f, q, answers) in enumerate(qs):
        tone(Path(p["audio_root"]) / f, n)
        w.writerows([f, q, a, "yes"] for a in answers)
    Path(p["items"]).parent.mkdir(parents=True, exist_ok=True)
    Path(p["items"]).write_text(buf.getvalue(), encoding="utf-8")


def meld(p: dict) -> None:
    """MELD.Raw/test_sent_emo.csv over output_repeated_splits_test/dia<D>_utt<U>.wav, each the line spoken."""
    rows = [("Oh my God, he is lost it.", "Phoebe", "surprise", "negative", 0, 0),
            ("Okay.", "Monica", "neutral", "neutral", 0, 1), ("Yay, that is great!", "Rachel", "joy", "positive", 1, 0)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Sr No.", "Utterance", "Speaker", "Emotion", "Sentiment", "Dialogue_ID", "Utterance_ID", "Season",
                "Episode", "StartTime", "EndTime"])
    for n, (text, who, emo, sent, dia, utt) in enumerate(rows):
        speak(text, Path(p["audio_root"]) / f"dia{dia}_utt{utt}.wav", "en-us", "WAV")
        w.writerow([n + 1, text, who, emo, sent, dia, utt, 4, 7, "00:20:57,256", "00:21:00,049"])
    Path(p["items"]).parent.mkdir(parents=True, exist_ok=True)
    Path(p["items"]).write_text(buf.getvalue(), encoding="utf-8")


def vocalsound(p: dict) -> None:
    """vocalsound/data/datafiles/te.json ({"data": [{wav: the authors' absolute path, labels: an AudioSet
    id}]}) over audio_16k/<file>."""
    far = "/data/sls/scratch/yuangong/vocalsound/data/audio_16k/"
    recs = [("f0003_0_cough.wav", "/m/01b_21"), ("m0083_0_sneeze.wav", "/m/01hsr_"),
            ("f0101_0_throatclearing.wav", "/m/0dl9sf8")]
    for n, (f, _) in enumerate(recs):
        tone(Path(p["audio_root"]) / f, 10 + n)
    Path(p["items"]).parent.mkdir(parents=True, exist_ok=True)
    Path(p["items"]).write_text(json.dumps({"data": [{"wav": far + f, "labels": lab} for f, lab in recs]}),
                                encoding="utf-8")


def nonspeech7k(p: dict) -> None:
    """'metadata of test set.csv' (Filename, ..., Classname, ...) over test/<file>."""
    rows = [("111_4_0.wav", "111", "4", "screaming"), ("c_0_0.wav", "5", "0", "breath")]
    head = "Filename,File ID,Duration in ms,Class ID,Classname,Augment id,Augmentation type,source\n"
    for n, r in enumerate(rows):
        tone(Path(p["audio_root"]) / r[0], 20 + n)
    Path(p["items"]).parent.mkdir(parents=True, exist_ok=True)
    Path(p["items"]).write_text(head + "".join(f"{f},{i},1500,{c},{name},0,Original,https://freesound.org/\n"
                                               for f, i, c, name in rows), encoding="utf-8")


def tut2017(p: dict) -> None:
    """TUT-acoustic-scenes-2017-evaluation/meta.txt (file, scene, tab-separated) over audio/<n>.wav."""
    rows = [("audio/1.wav", "beach"), ("audio/2.wav", "cafe/restaurant")]
    for n, (f, _) in enumerate(rows):
        tone(Path(p["audio_root"]) / f, 30 + n)
    Path(p["items"]).parent.mkdir(parents=True, exist_ok=True)
    Path(p["items"]).write_text(_tsv([list(r) for r in rows]), encoding="utf-8")


def cochlscene(p: dict) -> None:
    """CochlScene/<Test|Val>/<Scene>/<file>.wav: the scene is the folder."""
    root = Path(p["items"])
    if root.exists():
        return
    for n, f in enumerate(("Test/Bus/Bus_01.wav", "Test/CrowdedIndoor/CI_02.wav", "Val/SubwayStation/SS_03.wav",
                           "Val/Bus/Bus_04.wav")):
        tone(root / f, 40 + n)


def giantsteps_tempo(p: dict) -> None:
    """giantsteps-tempo-dataset/annotations/tempo/<track>.LOFI.bpm over audio/<track>.LOFI.mp3 (click tracks)."""
    root = Path(p["items"])
    for track, bpm in (("1030011.LOFI", 126), ("1114156.LOFI", 86)):
        (root / "annotations" / "tempo").mkdir(parents=True, exist_ok=True)
        (root / "annotations" / "tempo" / f"{track}.bpm").write_text(str(bpm), encoding="utf-8")
        clicks(root / "audio" / f"{track}.mp3", bpm)


BUILDERS: dict[str, Callable[[dict], None]] = {
    "librispeech": librispeech, "common_voice": common_voice, "fleurs": fleurs, "aishell1": aishell1,
    "aishell2": aishell2, "covost2": covost2, "kimi_audio_asr": kimi_audio_asr, "mmau": mmau,
    "clotho_aqa": clotho_aqa, "meld": meld, "vocalsound": vocalsound, "nonspeech7k": nonspeech7k,
    "tut2017": tut2017, "cochlscene": cochlscene, "giantsteps_tempo": giantsteps_tempo,
}


def lay_out(datasets: dict) -> None:
    """Write each dataset's release files where its params point (datasets sharing files: once)."""
    for name, d in datasets.items():
        if d["adapter"] not in BUILDERS:
            raise KeyError(f"dataset {name!r}: no release fixture for preset {d['adapter']!r}")
        BUILDERS[d["adapter"]](d["params"])
