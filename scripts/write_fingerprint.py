"""Rule model_fingerprint: a model's fingerprint file (a shell job: a run: block would be a whole new
Snakemake process per model, re-reading the Snakefile and the config)."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.inference.plan import write_fingerprint

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--fingerprint", required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
write_fingerprint(a.out, model=a.model, fingerprint=a.fingerprint)
print(f"{a.out}: {a.model} fingerprint {a.fingerprint}")
