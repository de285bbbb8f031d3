"""Rule request: one predictions file's request JSON (a shell job: a run: block would be a whole new
Snakemake process per file, re-reading the Snakefile and the config)."""
import argparse

import _bootstrap  # noqa: F401

from lalmbench.inference.plan import write_request

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--model", required=True)
p.add_argument("--spec-json", required=True)
p.add_argument("--fingerprint", required=True)
p.add_argument("--out", required=True)
a = p.parse_args()
write_request(a.out, model=a.model, spec=a.spec_json, fingerprint=a.fingerprint)
print(f"{a.out}: {a.model} {a.spec_json} fingerprint {a.fingerprint}")
