"""Audio/annotation consistency check: flags, and the warn / drop / fail policies."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from lalmbench.data.consistency import check_consistency
from lalmbench.core.io import InputError

SR = 16000


def _clip(path, bursts, seconds=4.0):
    x = 0.001 * np.random.default_rng(1).standard_normal(int(SR * seconds))
    for on, off in bursts:
        a, b = int(round(on * SR)), int(round(off * SR))
        x[a:b] += 0.5 * np.sin(2 * np.pi * 500 * np.arange(b - a) / SR)
    sf.write(path, x.astype(np.float32), SR)


@pytest.fixture
def data(tmp_path):
    _clip(tmp_path / "good.wav", [(1.0, 2.0)])
    _clip(tmp_path / "shifted.wav", [(3.0, 3.8)])        # annotation below says 1-2 s: labels silence
    _clip(tmp_path / "short.wav", [(0.5, 1.0)], seconds=2.0)
    clips = pd.DataFrame({"clip_id": ["good", "shifted", "short"],
                          "audio_path": [str(tmp_path / f"{c}.wav") for c in ("good", "shifted", "short")],
                          "duration_s": [4.0, 4.0, 4.0], "sample_rate": SR, "split": "", "source": "t"})
    events = pd.DataFrame({"clip_id": ["good", "shifted", "short", "short"], "onset_s": [1.0, 1.0, 0.5, 2.5],
                           "offset_s": [2.0, 2.0, 1.0, 3.0], "label": "beep", "caption": None, "source": "t"})
    return clips, events


def test_flags_and_warn_keeps_everything(data):
    clips, events = data
    c, e, report, summary = check_consistency(clips, events, {"policy": "warn"})
    flags = dict(zip(report["clip_id"], report["flags"]))
    assert flags["good"] == ""
    assert "quiet_annotations" in flags["shifted"]
    assert set(flags["short"].split(",")) == {"duration_mismatch", "offset_beyond_audio"}
    assert report.set_index("clip_id").loc["good", "inside_minus_outside_db"] > 30
    assert len(c) == 3 and len(e) == 4 and summary["clips_flagged"] == 2


def test_drop_removes_flagged_clips_and_counts(data):
    clips, events = data
    c, e, _, summary = check_consistency(clips, events, {"policy": "drop"})
    assert c["clip_id"].tolist() == ["good"] and e["clip_id"].tolist() == ["good"]
    assert summary["dropped"] == {"clip:inconsistent": 2, "event:clip_inconsistent": 3}


def test_fail_names_the_clip(data):
    clips, events = data
    with pytest.raises(InputError, match=r"clip 'shifted' fails the audio/annotation consistency check"):
        check_consistency(clips, events, {"policy": "fail"}, source="toy")
