# lalm-bench: audio + annotations -> task items -> predictions -> scores -> results/all.tsv + figures.
# Quick start: `make run` (or `snakemake --cores 2 results/all.tsv`); on SLURM:
# `snakemake --profile profiles/slurm results/all.tsv`. See README.md.
import sys

from snakemake.utils import min_version

min_version("9.0")


# The embedded default, unless the user names their own (--configfile cluster.yaml): a user's
# config replaces the default instead of being merged into it (no synthetic tasks sneak in). It is
# checked before Snakemake reads it (an alias bomb or a huge value; --configfile files are checked
# by lalmbench.workflow.config_guard, which the Makefile installs into .venv).
if not workflow.config_settings.configfiles:
    sys.path.insert(0, workflow.basedir)
    from lalmbench.workflow.config import check_config_file

    check_config_file("config/config.yaml")

    configfile: "config/config.yaml"


include: "rules/common.smk"


wildcard_constraints:
    dataset=NAME,
    task=NAME,
    model=NAME,
    condition=NAME,
    prompt=NAME,
    env=NAME,


include: "rules/envs.smk"
include: "rules/data.smk"
include: "rules/tasks.smk"
include: "rules/adapters.smk"
include: "rules/inference.smk"
include: "rules/scoring.smk"
include: "rules/runs.smk"
include: "rules/sweeps.smk"
include: "rules/open_metrics.smk"
include: "rules/report.smk"
include: "rules/figures_common.smk"
include: "rules/figures.smk"
include: "rules/browser.smk"
include: "rules/analysis.smk"
include: "rules/rubrics.smk"
include: "rules/attention.smk"
include: "rules/tracking.smk"


rule all:
    default_target: True
    input:
        "results/all.tsv",
        run_results(),
        expand("results/figures/accuracy.{ext}", ext=["png", "svg"]),
        figure_targets(),
        sampling_targets(),
        "results/browser/index.html",
        "results/browser/data.js",
        analysis_targets(),
        agreement_targets(),
        SWEEP_TARGETS,
        tracking_targets(),
        published_targets(),
        report_targets(),
