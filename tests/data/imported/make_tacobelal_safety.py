"""Regenerate the TACoBeLAL presence-check fixture from ../shared/reference-data/tacobelal/mcq-safety
(run from the repo root: `python tests/data/imported/make_tacobelal_safety.py`). Frozen and committed,
so a clone without ../shared still runs tests/models/test_imported.py.

- tacobelal_safety_items.jsonl: the 100 items as MCQ items (id, question, options, answer_label);
  options come from the option list printed in Audio Flamingo 3's prompt for the same example id,
  the gold label from Qwen2-Audio's decisions.jsonl (the suite is shared across models).
- qwen2_audio_raw_model_outputs.jsonl / qwen2_audio_metrics.json: TACoBeLAL's published files, verbatim.
"""
import json
import re
import shutil
from pathlib import Path

# ../shared next to the checkout (a worktree may sit one level deeper than the main tree)
SHARED = next(p / "shared" for p in Path(__file__).resolve().parents if (p / "shared" / "reference-data").is_dir())
SRC = SHARED / "reference-data" / "tacobelal" / "mcq-safety"
OUT = Path(__file__).parent


def main() -> None:
    af3 = [json.loads(line) for line in open(SRC / "audio-flamingo-3" / "raw_model_outputs.jsonl")]
    options = {re.fullmatch(r"\d{6}_(.*)\.mp3", r["id"].rsplit("/", 1)[-1]).group(1):
               [{"label": lab, "text": txt} for lab, txt in re.findall(r"^([A-Z])\. (.*)$", r["question"], re.M)]
               for r in af3}
    qwen = SRC / "qwen2-audio-7b-instruct"
    with open(OUT / "tacobelal_safety_items.jsonl", "w") as fh:
        for d in map(json.loads, open(qwen / "decisions.jsonl")):
            item = {"id": d["example_id"], "task": "tacobelal-safety", "kind": "mcq", "question": d["question"],
                    "options": options[d["example_id"]], "answer_label": d["answer_label"]}
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    shutil.copyfile(qwen / "raw_model_outputs.jsonl", OUT / "qwen2_audio_raw_model_outputs.jsonl")
    shutil.copyfile(qwen / "metrics.json", OUT / "qwen2_audio_metrics.json")


if __name__ == "__main__":
    main()
