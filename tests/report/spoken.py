"""A LibriSpeech-format fixture spoken by espeak-ng: real speech for the cascade's Whisper to transcribe."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

#: (speaker, chapter, transcripts): LibriSpeech test-clean's own first lines for these chapters
UTTERANCES = (("1089", "134686", ["HE HOPED THERE WOULD BE STEW FOR DINNER TURNIPS AND CARROTS AND BRUISED POTATOES "
                                  "AND FAT MUTTON PIECES TO BE LADLED OUT IN THICK PEPPERED FLOUR FATTENED SAUCE",
                                  "STUFF IT INTO YOU HIS BELLY COUNSELLED HIM"]),
              ("121", "121726", ["ALSO A POPULAR CONTRIVANCE WHEREBY LOVE MAKING MAY BE SUSPENDED BUT NOT STOPPED "
                                 "DURING THE PICNIC SEASON"]),
              ("1284", "1180", ["HE WORE BLUE SILK STOCKINGS BLUE KNEE PANTS WITH GOLD BUCKLES A BLUE RUFFLED WAIST "
                                "AND A JACKET OF BRIGHT BLUE BRAIDED WITH GOLD"]))


def espeak() -> str:
    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.skip("espeak-ng is not installed (Debian: apt-get install -y espeak-ng); it speaks the fixture")
    return exe


def speak(text: str, dest: Path, voice: str = "en-us", fmt: str = "FLAC") -> Path:
    """``text`` as espeak-ng speaks it (``voice``, 160 words per minute), written to ``dest`` as 16 kHz
    mono in ``fmt`` (FLAC, WAV, MP3: the container the release ships)."""
    import soundfile as sf

    from lalmbench.data.audio import mono_at

    dest.parent.mkdir(parents=True, exist_ok=True)
    wav = dest.with_name(dest.name + ".espeak.wav")
    subprocess.run([espeak(), "-v", voice, "-s", "160", "-w", str(wav), text], check=True, capture_output=True)
    x, sr = sf.read(wav, dtype="float32")
    sf.write(dest, mono_at(x, sr, 16000, "espeak-ng"), 16000, format=fmt)
    wav.unlink()
    return dest


def spoken_librispeech(root: Path, subset: str = "test-clean", utterances=UTTERANCES) -> Path:
    """``root/LibriSpeech/<subset>/<speaker>/<chapter>/`` with a ``*.trans.txt`` and one flac per line, each the
    line as espeak-ng speaks it (en-us), as 16 kHz mono FLAC like the release's."""
    ls = root / "LibriSpeech"
    for spk, chap, lines in utterances:
        d = ls / subset / spk / chap
        d.mkdir(parents=True)
        ids = [f"{spk}-{chap}-{i:04d}" for i in range(len(lines))]
        (d / f"{spk}-{chap}.trans.txt").write_text("".join(f"{i} {t}\n" for i, t in zip(ids, lines)))
        for utt, text in zip(ids, lines):
            speak(text.lower(), d / f"{utt}.flac")
    return ls
