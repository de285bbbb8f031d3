"""Rule analysis_reference_agreement: pairwise cosine similarity of each clip's reference captions
(10 pairs for 5), per-clip table, outliers (|z| >= threshold) and a summary JSON.
Standalone: `python scripts/analysis_reference_agreement.py --csv clotho_captions_evaluation.csv --out-dir out/`."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.analysis.files import reference_agreement_files
from lalmbench.core.progress import setup_logging

p = argparse.ArgumentParser(description=__doc__)
src = p.add_mutually_exclusive_group(required=True)
src.add_argument("--csv", help="Clotho-style captions CSV (file_name, caption_1..caption_5)")
src.add_argument("--items", help="task items JSONL whose items carry references")
p.add_argument("--out-dir", required=True)
p.add_argument("--model", default="default")
p.add_argument("--z", type=float, default=2.0)
p.add_argument("--batch-size", type=int, default=64)
a = p.parse_args()
setup_logging()
reference_agreement_files(out_dir=a.out_dir, csv=a.csv, items=a.items, model=a.model, z_threshold=a.z,
                          batch_size=a.batch_size)
