# Helpers for rules/figures.smk, rules/browser.smk and rules/analysis.smk (functions only; the rule
# files hold rules only, as snakemake --lint asks).

FIGURE_PROMPTS = list(config.get("prompts") or [])  # each figure shows a model's first configured prompt
FIGURE_FAMILIES = ["reliance", "robustness", "temporal", "confusion", "parse_stages", "paired"]


def figure_targets():
    """Every figure (PNG + SVG) the figure rules make; add to a target list to get them all."""
    return [f"results/figures/{name}.{ext}" for name in FIGURE_FAMILIES for ext in ("png", "svg")]


def sampling_targets():
    """The sampling figure, where some model draws k > 1 samples per item (else nothing to draw)."""
    if not any(samples_of(c) > 1 for c in config["models"].values()):
        return []
    return [f"results/figures/sampling.{ext}" for ext in ("png", "svg")] + ["results/tables/sampling.tsv"]


def all_decisions():
    return [f"results/scores/{r.key}/decisions.parquet" for r in RUNS]


def run_results():
    """Every run's decisions and metrics: rule all's inputs, so a plain run rebuilds one that is missing
    (Snakemake rebuilds a missing intermediate file only for a job that must run anyway, and what was
    built from it is up to date: a per-dataset job's run that failed would stay missing)."""
    return all_decisions() + [f"results/scores/{r.key}/metrics.json" for r in RUNS]


def circular_table_input(wildcards):
    """results/sweeps/circular.tsv when the CircularEval sweep is configured and its rules are loaded."""
    sweeps = config.get("sweeps") or {}
    if sweeps.get("circular") and hasattr(rules, "sweep_circular_table"):
        return ["results/sweeps/circular.tsv"]
    return []


def circular_arg(wildcards, input):
    return f"--circular {input.circular}" if input.circular else ""


def prompts_arg():
    return " ".join(FIGURE_PROMPTS)


def browser_tasks():
    """Task item files of every task some run uses (question, options, audio for the browser)."""
    return sorted({f"results/tasks/{r.dataset}/{r.task}.jsonl" for r in RUNS})


def browser_cfg():
    return canonical(config.get("browser") or {})


# --- analyses (config key `analyses:`) -----------------------------------------------------
ANALYSES = config.get("analyses") or {}
SIMILARITY = ANALYSES.get("similarity") or {}
REFERENCE_AGREEMENT = ANALYSES.get("reference_agreement") or {}


def similarity_runs():
    """(model, dataset, task, prompt, a, b) for each configured condition pair that the runs cover."""
    out = []
    have = {(r.model, r.dataset, r.task, r.condition, r.prompt) for r in RUNS}
    for a, b in SIMILARITY.get("pairs", []):
        for r in RUNS:
            if r.condition != a:
                continue
            if SIMILARITY.get("models") and r.model not in SIMILARITY["models"]:
                continue
            if SIMILARITY.get("tasks") and r.task not in SIMILARITY["tasks"]:
                continue
            if (r.model, r.dataset, r.task, b, r.prompt) in have:
                out.append((r.model, r.dataset, r.task, r.prompt, a, b))
    return out


def similarity_targets():
    return [f"results/analysis/similarity/{m}/{d}/{t}/{p}/{a}-vs-{b}.json" for m, d, t, p, a, b in similarity_runs()]


def reference_agreement_targets():
    return [f"results/analysis/reference_agreement/{task_cfg(t)['dataset']}/{t}/summary.json"
            for t in REFERENCE_AGREEMENT.get("tasks", [])]


def analysis_targets():
    out = similarity_targets() + reference_agreement_targets()
    if similarity_runs():
        out.append("results/analysis/similarity.tsv")
    return out


def embedding_model(section):
    return (section.get("model") or ANALYSES.get("model") or "default")
