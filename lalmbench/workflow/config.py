"""Config validation and the questions rules ask of the config (which runs exist, what each depends on).

Validation fills schema defaults, then checks cross-references the schema cannot express
(a task's dataset exists, a prompt template exists, a model's task list names real tasks).
Every error names the config key path, e.g. ``models.random.resources.gpuz: unknown key 'gpuz' for
backend 'random'; did you mean 'gpus'? (allowed: ...)`` (model entries: lalmbench.workflow.model_entries).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import difflib

import yaml

from lalmbench.workflow.model_entries import (check_families, check_model_entries, check_reasoners, family_warnings,
                                              resolve_reasoners)
from lalmbench.core.provenance import config_hash
from lalmbench.core.runs import Run
from lalmbench.inference.gpu_plan import resolve_gpus


class ConfigError(ValueError):
    pass


#: values a config may hold once YAML aliases are expanded: real configs hold a few thousand; an alias
#: bomb (9 anchors of 9 aliases each) holds 9^9 and would take minutes and gigabytes to walk
MAX_CONFIG_VALUES = 200_000
#: bytes a config file may hold: a real study config is a few KB (config/examples/cluster.yaml: 8 KB),
#: and Snakemake reads YAML in pure Python (about 1 s per MB)
MAX_CONFIG_FILE_BYTES = 1 << 20
#: a study estimated above these is refused unless ``confirm_large_study: true``
MAX_PREDICTIONS = 2_000_000
MAX_SYNTH_AUDIO_BYTES = 50 * 10**9
_BOUND_VALIDATORS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}


def check_config_size(cfg: Any, limit: int = MAX_CONFIG_VALUES) -> None:
    """Refuse a config with more than ``limit`` values, counting every alias expansion, before anything
    walks it (the schema check, the run grid, hashing). Stops counting at the limit, so a bomb costs
    milliseconds."""
    stack, seen = [cfg], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > limit:
            raise ConfigError(f"the config holds more than {limit} values once YAML aliases (*name) are expanded; "
                              "is it an alias bomb? A real study config holds a few thousand")
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def check_config_file(path: str | Path, *, max_bytes: int = MAX_CONFIG_FILE_BYTES,
                      limit: int = MAX_CONFIG_VALUES) -> None:
    """Refuse a config file too large to read, or one holding more than ``limit`` values once its YAML
    aliases are expanded, *before* it is loaded: Snakemake's loader and its merge of config files
    expand every alias (a bomb of nested mappings: gigabytes), so :func:`check_config_size` on the
    loaded config comes too late. The file's YAML node graph is composed by libyaml, where an alias is
    the node it names, and its expanded size counted with each node's size computed once."""
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise ConfigError(f"{path}: {size:,} bytes; a config file may hold at most {max_bytes:,} (a study config is "
                          "a few KB): is it the right file, or a text pasted into a value?")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(path.read_bytes(), Loader=loader)
    except (yaml.YAMLError, RecursionError):
        return  # not YAML (JSON is read by Snakemake's own loader, which names the problem), or nested too deep
    if root is not None and _expanded_values(root, limit) > limit:
        raise ConfigError(f"{path}: holds more than {limit} values once YAML aliases (*name) are expanded; is it "
                          "an alias bomb? A real study config holds a few thousand. Refused before Snakemake reads it")


def _expanded_values(root: yaml.Node, limit: int) -> int:
    """Values under ``root`` with every alias expanded (mapping keys aside, as :func:`check_config_size`
    counts), stopping past ``limit``; each distinct node is visited once, without recursion. A node
    that contains itself (``&a [*a]``) expands without end: more than ``limit``."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        kids = ([v for _, v in node.value] if isinstance(node, yaml.MappingNode)
                else node.value if isinstance(node, yaml.SequenceNode) else [])
        if children_done or not kids:
            sizes[id(node)] = min(limit + 1, 1 + sum(sizes[id(k)] for k in kids))
            open_nodes.discard(id(node))
            continue
        if any(id(k) in open_nodes or k is node for k in kids):
            return limit + 1
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in sizes)
    return sizes[id(root)]


def validate_config(cfg: dict, schema_path: str | Path, base_dir: str | Path, source: str = "config") -> dict:
    """Validate in place (filling defaults) and return cfg; raise ConfigError naming the bad key."""
    import jsonschema
    from snakemake.utils import validate

    from lalmbench.inference.sampling import sampling_problems
    from lalmbench.models.secrets import config_secret_problems

    # before the schema, whose messages may quote a whole model entry (and a key in it)
    check_config_size(cfg)
    leaks = config_secret_problems(cfg.get("models") if isinstance(cfg, dict) else None)
    if leaks:
        raise ConfigError(f"invalid {source}:\n  " + "\n  ".join(leaks))
    schema = yaml.safe_load(Path(schema_path).read_text())
    models = cfg.get("models") if isinstance(cfg.get("models"), dict) else {}
    # a backend that cannot sample is told why before the schema calls samples an unknown key
    sampling = sampling_problems(models)
    said = {p.split(":", 1)[0] for p in sampling}
    entry_problems = sampling + [p for p in check_model_entries(models, schema) if p.split(":", 1)[0] not in said]
    # the schema rejects the same unknown keys and backends, less readably: keep only its other errors
    explained = {p.split(":", 1)[0] for p in entry_problems}
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg), key=lambda e: list(e.absolute_path))
    lines = entry_problems + [
        f"{'.'.join(map(str, e.absolute_path)) or '<top level>'}: {e.message}{_reason(e)}" for e in errors
        if not _explained(e, explained)]
    if lines:
        raise ConfigError(f"invalid {source}:\n  " + "\n  ".join(lines[:10]))
    validate(cfg, str(schema_path), set_default=True)
    expand_import_tasks(cfg)
    _check_references(cfg, Path(base_dir), source)
    return cfg


#: task-name suffix of each item kind a mixed benchmark's import task is split into (MCQ keeps the name)
KIND_SUFFIX = {"mcq": "", "open": "-open", "instruction": "-if"}


def expand_import_tasks(cfg: dict) -> dict:
    """A task of family ``import`` over a benchmark preset whose items are of several kinds (MMAU-Pro:
    MCQ, open, instruction following; Clotho-AQA: yes/no and open) becomes one task per kind:
    ``<task>`` (MCQ), ``<task>-open``, ``<task>-if``, each with ``params.kind`` set, so MCQ accuracy
    is only ever computed over MCQ items. The task's ``scoring:`` goes to its open task only; the
    instruction task is scored by its items' checks (``scoring: {kind: instruction}``). A task that
    sets ``params.kind`` itself is kept as it is; a single-kind preset's task gets that kind. A preset
    dataset without ``official:`` gets its preset's. Done in place; returns cfg."""
    from lalmbench.data.adapters.benchmarks import is_preset, official_protocol

    for d in cfg["datasets"].values():
        if is_preset(d["adapter"]) and "official" not in d:
            official = _preset_official(official_protocol(d), judge=bool(cfg.get("judge")))
            if official:
                d["official"] = official
        elif is_preset(d["adapter"]) and d.get("official"):
            d["official"] = _with_preset_settings(d["official"], official_protocol(d))
    tasks, problems = {}, []
    for name, t in cfg["tasks"].items():
        d = cfg["datasets"].get(t.get("dataset"))
        params = dict(t.get("params") or {})
        if t.get("family") != "import" or d is None or not is_preset(d["adapter"]):
            tasks[name] = t
            continue
        kinds = [params["kind"]] if "kind" in params else official_protocol(d)["kinds"]
        for kind in kinds:
            new = name if len(kinds) == 1 else name + KIND_SUFFIX[kind]
            if new in cfg["tasks"] and new != name:
                raise ConfigError(f"tasks.{name}: its {kind} items would become task {new!r}, which the config "
                                  f"already names; set params.kind on {name!r} to choose its kind yourself")
            task = dict(t, params=dict(params, kind=kind))
            if kind == "mcq":
                task.pop("scoring", None)
            elif kind == "instruction":
                task["scoring"] = {"kind": "instruction"}
            elif not t.get("scoring"):
                problems.append(f"tasks.{name}: its open items (task {new!r}) need a scoring block: set "
                                f"tasks.{name}.scoring, e.g. {{kind: judge, judge_model: <a models entry>}} "
                                f"({'used by its open task only; ' if len(kinds) > 1 else ''}captioning for "
                                f"captions), or params.kind: mcq to import only its multiple-choice items")
            tasks[new] = task
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
    cfg["tasks"] = tasks
    return cfg


def _preset_official(protocol: dict, *, judge: bool) -> list[dict]:
    """A preset's official rule(s) as ``official:`` entries with its paper-table breakdown fields (a
    preset entry may be ``{scorer, <its settings>}``: a speech rule's language, Kimi-Audio's judge
    question). A rule that asks an LLM judge (SAKURA, AIR-Bench Chat) is filled in only when the config has a
    top-level ``judge:`` block; otherwise the user names one in ``datasets.<name>.official``."""
    from lalmbench.scoring.official import SCORERS, preset_rules

    return [e for e in preset_rules(protocol["official"], protocol["breakdowns"])
            if judge or SCORERS[e["scorer"]].needs != "ask"]


def _with_preset_settings(official: Any, protocol: dict) -> Any:
    """A dataset's own ``official:`` with the settings its preset gives the same rule under ``official``
    or ``official_also`` filled in beneath the user's (``official: kimi_audio_judge`` on TUT2017 gets
    the preset's judge question)."""
    listed = protocol["official"] if isinstance(protocol["official"], list) else [protocol["official"]]
    known = {e["scorer"]: {k: v for k, v in e.items() if k != "scorer"}
             for e in listed + protocol.get("official_also", []) if isinstance(e, dict)}
    entries = official if isinstance(official, list) else [official]
    out = []
    for e in entries:
        name = e if isinstance(e, str) else (e or {}).get("scorer") if isinstance(e, dict) else None
        if not known.get(name):
            out.append(e)
            continue
        out.append({**known[name], **({"scorer": e} if isinstance(e, str) else e)})
    return out if isinstance(official, list) else out[0]


def task_kind(cfg: dict, task: str) -> str:
    """mcq | open | instruction: what a task's items ask for (open-ended families by scoring.kind)."""
    t = cfg["tasks"][task]
    if t.get("family") == "import" and (t.get("params") or {}).get("kind"):
        return str(t["params"]["kind"])
    return "open" if t.get("scoring") else "mcq"


#: backends that only choose among the options, so have nothing to answer on open items
_OPTION_PICKERS = {"random": "picks an option at random", "text-overlap": "picks the option most like the question"}
def check_model_task_kinds(cfg: dict) -> list[str]:
    """Models that cannot answer a task's items, found at config time (``snakemake -n``) instead of as a
    failing job: an option-picking floor on open / instruction items. Each message says what to
    change. (Multi-clip items reach every model: several audio entries where the backend takes them,
    else the clips joined with silence, see docs/inference.md.)"""
    problems = []
    for run in {(r.model, r.task) for r in iter_runs(cfg)}:
        model, task = run
        m = cfg["models"][model]
        backend = m.get("backend")
        kind = task_kind(cfg, task)
        fix = (f"list the tasks it should run in models.{model}.tasks, or add models: [...] without "
               f"{model!r} to tasks.{task}")
        if kind != "mcq" and backend in _OPTION_PICKERS:
            problems.append(f"models.{model}: cannot answer task {task!r}, whose items are {kind} (no options); "
                            f"backend {backend!r} {_OPTION_PICKERS[backend]}; {fix}")
    return sorted(problems)


def check_audio_roots(cfg: dict) -> list[str]:
    """A benchmark preset whose items name audio files needs ``params.audio_root`` as soon as a model
    that hears audio runs one of its tasks; imported outputs are scored without it (no job of theirs
    reads audio)."""
    from lalmbench.data.adapters.benchmarks import is_preset, preset
    from lalmbench.models.imported import needs_audio

    problems = []
    for name, d in cfg["datasets"].items():
        params = d.get("params") or {}
        if not is_preset(d["adapter"]) or d["adapter"] == "questions" or params.get("audio_root"):
            continue
        if preset(d["adapter"], params).get("embedded_audio"):
            continue
        hearing = sorted({r.model for r in iter_runs(cfg) if r.dataset == name and needs_audio(cfg["models"][r.model])})
        if hearing:
            problems.append(f"datasets.{name}.params: 'audio_root' is required: model(s) {', '.join(hearing)} hear its "
                            f"audio (only imported outputs, backend: imported, are scored without it)")
    return problems


def _reason(error: Any) -> str:
    """A bound's reason (the key's schema description) after an out-of-bounds message."""
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    return f" ({' '.join(description.split())})" if error.validator in _BOUND_VALIDATORS and description else ""


def _explained(error: Any, explained: set[str]) -> bool:
    """Whether check_model_entries already said what this jsonschema error says (unknown model keys and
    backends). jsonschema also reports keys it merely could not evaluate because a sibling failed."""
    path = list(map(str, error.absolute_path))
    unexpected = error.validator in ("unevaluatedProperties", "additionalProperties")
    if unexpected and path[:1] == ["models"] and len(path) > 1:
        return True
    return ".".join(path) in explained


def _check_judge(cfg: dict, base_dir: Path) -> list[str]:
    """The top-level ``judge:`` block (MCQ LLM-judge fallback) names a model, MCQ tasks and a label prompt."""
    j = cfg.get("judge")
    if not j:
        return []
    problems = []
    if j["judge_model"] not in cfg["models"]:
        problems.append(f"judge.judge_model: unknown model {j['judge_model']!r} (known: {', '.join(sorted(cfg['models']))})")
    for t in j.get("tasks", []):
        if t not in cfg["tasks"]:
            problems.append(f"judge.tasks: unknown task {t!r}")
        elif cfg["tasks"][t].get("scoring"):
            problems.append(f"judge.tasks: {t!r} is an open-ended task (scoring.kind), not multiple choice")
    prompt = j.get("prompt", "mcq")
    path = base_dir / "resources" / "prompts" / "judge" / f"{prompt}.yaml"
    if not path.is_file():
        problems.append(f"judge.prompt: judge prompt {prompt!r} not found (expected {path.relative_to(base_dir)})")
    else:
        import yaml

        verdict = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("verdict")
        if verdict != "option_label":
            problems.append(f"judge.prompt: {prompt!r} answers {verdict!r}; the MCQ fallback needs a prompt whose "
                            f"verdict is option_label (e.g. mcq)")
    return problems


def _check_fetched_model(name: str, backend: str, model_id: str) -> list[str]:
    """A ``lalmbench:`` model id names a model lalmbench fetches itself: refuse an unknown one. Whether it
    was fetched is checked when it loads (the error says ``make offline-llm``), so that validating or
    dry-running a config never depends on a 1.1 GB file."""
    from lalmbench.models import offline_llm

    if model_id.startswith("lalmbench:") and (model_id != offline_llm.MODEL_ID or backend != "hf"):
        return [f"models.{name}.model_id: {model_id!r} is not a model lalmbench fetches (known: "
                f"{offline_llm.MODEL_ID!r}, with backend hf)"]
    return []


def _check_rubrics(cfg: dict) -> list[str]:
    """The ``rubrics:`` block names an existing models entry that can run it, and captioning tasks."""
    r = cfg.get("rubrics")
    if r is None:
        return []
    problems = []
    llm = r.get("llm", "offline-llm")
    entry = cfg["models"].get(llm)
    if entry is None:
        problems.append(f"rubrics.llm: unknown model {llm!r} (known: {', '.join(sorted(cfg['models']))}); add the "
                        f"entry (config/examples/offline-llm.yaml has the offline LLM) or name another")
    elif entry.get("env") == "vllm":
        problems.append(f"rubrics.llm: model {llm!r} runs in env vllm, which has no sentence-transformers for the "
                        "merge step; use an hf, core or openai entry (a vLLM server works through backend openai)")
    for t in r.get("tasks", []):
        if t not in cfg["tasks"]:
            problems.append(f"rubrics.tasks: unknown task {t!r}")
        elif (cfg["tasks"][t].get("scoring") or {}).get("kind") != "captioning":
            problems.append(f"rubrics.tasks: {t!r} is not a captioning task (scoring.kind: captioning)")
    return problems


def _check_reports(cfg: dict) -> list[str]:
    from lalmbench.report.model_report import report_names

    problems, known = [], report_names()
    for name, r in (cfg.get("reports") or {}).items():
        if name not in known:
            problems.append(f"reports.{name}: no report ledger lalmbench/data/reports/{name}.yaml "
                            f"(known: {', '.join(known)}){_did_you_mean(name, known)}")
        if r["model"] not in cfg["models"]:
            problems.append(f"reports.{name}.model: unknown model {r['model']!r}")
    return problems


def _check_references(cfg: dict, base_dir: Path, source: str) -> None:
    problems = []
    for name, t in cfg["tasks"].items():
        if t["dataset"] not in cfg["datasets"]:
            problems.append(f"tasks.{name}.dataset: unknown dataset {t['dataset']!r} "
                            f"(known: {', '.join(sorted(cfg['datasets']))})")
    problems += check_task_params(cfg["tasks"])
    for name, d in cfg["datasets"].items():
        src = d.get("params", {}).get("from")
        if d["adapter"] == "mix" and src not in cfg["datasets"]:
            problems.append(f"datasets.{name}.params.from: unknown dataset {src!r} (known: {', '.join(sorted(cfg['datasets']))})")
    for name, t in cfg["tasks"].items():
        for m in t.get("models", []):
            if m not in cfg["models"]:
                problems.append(f"tasks.{name}.models: unknown model {m!r}")
    problems += check_families(cfg["models"])
    for note in family_warnings(cfg["models"]):
        print(f"lalmbench: warning: {note}", file=sys.stderr)
    problems += check_reasoners(cfg["models"])
    problems += resolve_gpus(cfg["models"])
    for name, m in cfg["models"].items():
        mid = str(m.get("model_id", ""))
        problems += _check_fetched_model(name, m["backend"], mid)
        if m["backend"] in ("hf", "vllm") and mid.startswith(("/", "./", "../", "~")) \
                and not (base_dir / Path(mid).expanduser()).is_dir():
            # caught here, before a GPU job is queued (and re-queued) only to fail on it
            problems.append(f"models.{name}.model_id: local checkpoint directory {mid!r} does not exist "
                            f"(download it with `hf download <hub id> --local-dir {mid}`, or use the hub id)")
        for t in m.get("tasks", []):
            if t not in cfg["tasks"]:
                problems.append(f"models.{name}.tasks: unknown task {t!r}")
    for k, pair in enumerate(cfg.get("checks", {}).get("agreement", [])):
        for side in ("a", "b"):
            if pair[side] not in cfg["models"]:
                problems.append(f"checks.agreement.{k}.{side}: unknown model {pair[side]!r}")
    problems += _check_judge(cfg, base_dir)
    problems += _check_rubrics(cfg)
    problems += _check_reports(cfg)
    named = {p for x in list(cfg["models"].values()) + list(cfg["tasks"].values()) for p in x.get("prompts", [])}
    for p in sorted(named | set(cfg["prompts"])):
        if not (base_dir / "resources" / "prompts" / f"{p}.txt").is_file():
            problems.append(f"prompts: template {p!r} not found (expected resources/prompts/{p}.txt)")
    for name in list(cfg["datasets"]) + list(cfg["tasks"]) + list(cfg["models"]):
        if "/" in name or not name.strip():
            problems.append(f"{name!r}: names may not contain '/' (they become path components)")
    if not problems:        # the runs are only known once every name resolves
        problems += check_model_task_kinds(cfg)
        problems += check_audio_roots(cfg)
    if problems:
        raise ConfigError(f"invalid {source}:\n  " + "\n  ".join(problems))
    resolve_reasoners(cfg["models"])


def _did_you_mean(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(str(word), known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def task_families() -> dict[str, frozenset[str]]:
    """Every task family the config may name -> the params it accepts: the builder families
    (lalmbench.tasks.FAMILY_MODULES) and the synthetic ones (lalmbench.data.synth.trivial.FAMILIES)."""
    from lalmbench.data.synth import trivial
    from lalmbench.tasks import FAMILY_MODULES, family_params

    return {**{f: family_params(f) for f in FAMILY_MODULES}, **{f: trivial.PARAMS for f in trivial.FAMILIES}}


def check_task_params(tasks: dict) -> list[str]:
    """A task's family and params checked against the family's declaration, so that a typo fails the
    dry run (``snakemake -n``) instead of the job that builds the items."""
    families = task_families()
    problems = []
    for name, t in tasks.items():
        fam = t.get("family")
        if fam not in families:
            problems.append(f"tasks.{name}.family: unknown task family {fam!r}{_did_you_mean(fam, sorted(families))} "
                            f"(known: {', '.join(sorted(families))})")
            continue
        allowed = sorted(families[fam])
        for key in sorted(t.get("params") or {}):
            if key not in families[fam]:
                problems.append(f"tasks.{name}.params.{key}: unknown param {key!r} for family {fam!r}"
                                f"{_did_you_mean(key, allowed)} (allowed: {', '.join(allowed)})")
    return problems


def study_size(cfg: dict) -> dict[str, int]:
    """An estimate of a validated config's size before any job runs: synthetic items and clips (their
    counts are in the config), predictions (items x conditions x prompts of every run) and the bytes
    of synthetic 16-bit audio. Real datasets' items are counted from their files at adapt time, not here."""
    scale, sr = float(cfg.get("scale", 1)), int(cfg.get("sample_rate", 16000))
    clips: dict[str, tuple[int, float]] = {}  # synth_scenes dataset -> (clips, seconds each)
    for name, d in cfg["datasets"].items():
        if d["adapter"] == "synth_scenes":
            p = d.get("params") or {}
            clips[name] = (max(1, round(int(p.get("n_clips", 40)) * scale)), float(p.get("clip_s", 6.0)))
    items: dict[str, int] = {}
    audio = sum(n * s * sr * 2 for n, s in clips.values())
    for name, t in cfg["tasks"].items():
        p = t.get("params") or {}
        if cfg["datasets"].get(t["dataset"], {}).get("adapter") == "synth_trivial":
            items[name] = max(1, round(int(p.get("n_items", 24)) * scale))
            audio += items[name] * 4.0 * sr * 2  # a trivial item is a few seconds of tones
        elif t["dataset"] in clips:
            items[name] = clips[t["dataset"]][0] * int(p.get("max_items_per_clip", 1))
    predictions = sum(items.get(r.task, 0) for r in iter_runs(cfg))
    return {"items": sum(items.values()), "predictions": predictions, "synth_audio_bytes": int(audio)}


def check_study_size(cfg: dict) -> dict[str, int]:
    """The study-size estimate, or a ConfigError when it passes the limits and the user has not said
    ``confirm_large_study: true`` (a typo such as n_items: 1e6 would otherwise run for days)."""
    size = study_size(cfg)
    over = []
    if size["predictions"] > MAX_PREDICTIONS:
        over.append(f"~{size['predictions']:,} predictions (limit {MAX_PREDICTIONS:,})")
    if size["synth_audio_bytes"] > MAX_SYNTH_AUDIO_BYTES:
        over.append(f"~{size['synth_audio_bytes'] / 1e9:,.0f} GB of synthetic audio (limit {MAX_SYNTH_AUDIO_BYTES / 1e9:.0f} GB)")
    if over and not cfg.get("confirm_large_study"):
        raise ConfigError(f"this config asks for {' and '.join(over)}, estimated from its item and clip counts "
                          f"(n_items, n_clips, scale) x conditions x prompts; check them for a typo, or set "
                          f"confirm_large_study: true to run it")
    return size


#: conditions that change the audio a model hears: imported outputs were made without them
ALTERED_AUDIO = ("silence", "noise", "shuffled")


def _conditions(cfg: dict, model: str) -> list[str]:
    m = cfg["models"][model]
    return list(m.get("conditions") or cfg["conditions"])


def iter_runs(cfg: dict) -> Iterator[Run]:
    """Every (model, task, condition, prompt) the config asks for, in a stable order. Prompts: the
    task's list, else the model's, else the top-level one. Imported outputs run under no condition
    that alters audio (:func:`imported_skips` says so)."""
    from lalmbench.models.imported import needs_audio

    for model in sorted(cfg["models"]):
        m = cfg["models"][model]
        tasks = m.get("tasks") or sorted(cfg["tasks"])
        for task in sorted(tasks):
            if model not in cfg["tasks"][task].get("models", [model]):
                continue
            for cond in _conditions(cfg, model):
                if cond in ALTERED_AUDIO and not needs_audio(m):
                    continue
                for prompt in cfg["tasks"][task].get("prompts") or m.get("prompts") or cfg["prompts"]:
                    yield Run(model, cfg["tasks"][task]["dataset"], task, cond, prompt)


def imported_skips(cfg: dict) -> dict[str, str]:
    """model -> the note that says what the config asks of an imported model that is not done: the
    conditions that alter audio, the listening check and the sweeps that re-ask the model (each needs
    new outputs; a published answer cannot change). Printed when the workflow plans and carried in
    results/all.tsv ``flags``; only what the config actually asked for is named."""
    from lalmbench.models.imported import needs_audio

    checks = (cfg.get("checks") or {}).get("listening") or {}
    sweeps = cfg.get("sweeps") or {}
    out = {}
    for model in sorted(cfg["models"]):
        if needs_audio(cfg["models"][model]):
            continue
        conds = _conditions(cfg, model)
        skipped = []
        if altered := [c for c in conds if c in ALTERED_AUDIO]:
            skipped.append(("condition " if len(altered) == 1 else "conditions ") + " and ".join(altered))
        if checks.get("enabled", True) and checks.get("reference", "audio") in conds and \
                any(c != checks.get("reference", "audio") for c in conds):
            skipped.append("the listening check")
        for name in ("circular", "determinism"):
            spec = sweeps.get(name) or {}
            if spec and (not spec.get("models") or model in spec["models"]):
                skipped.append(f"the {name} sweep")
        if skipped:
            out[model] = ("imported outputs: not run (each needs new outputs made on this run's audio or options): "
                          + ", ".join(skipped))
    return out


def run_hash(cfg: dict, run: Run, prompt_text: str) -> str:
    """Hash of everything that determines one run's scores (recorded in metrics.json and all.tsv): the
    model enters by its fingerprint, so batch size and resources never change it."""
    from lalmbench.inference.fingerprint import model_fingerprint

    task = cfg["tasks"][run.task]
    return config_hash({
        "seed": cfg["seed"], "scale": cfg["scale"], "sample_rate": cfg["sample_rate"],
        "dataset": cfg["datasets"][task["dataset"]], "task": task,
        "model": model_fingerprint(cfg["models"][run.model]), "condition": run.condition, "prompt": prompt_text,
    })


def model_max_error_rate(cfg: dict, model: str) -> float:
    """Share of a predictions file's items that may fail before the model's generate job fails: the
    model entry's own ``max_error_rate`` (an API model with flaky calls), else the top-level one."""
    return float(cfg["models"][model].get("max_error_rate", cfg["max_error_rate"]))


def canonical(obj: Any) -> str:
    """Stable string for Snakemake params: a change in it (and only it) reruns the job."""
    import json

    return json.dumps(obj, sort_keys=True, separators=(",", ":"))
