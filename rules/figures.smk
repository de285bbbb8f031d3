# Figures over items (issue 6): audio reliance, robustness, temporal breakdowns, confusion and parse
# stages, paired comparisons. Each draws from a table it also writes (results/tables/*.tsv), so
# every picture can be checked number by number. Helpers live in rules/figures_common.smk.
# Report: `snakemake --report results/report.html` after a run (or `--report-after-run`).


report: "../docs/captions/workflow.rst"


rule collect_decisions:
    input:
        env_ready("core"),
        decisions=all_decisions(),
    output:
        "results/tables/decisions.parquet",
    log:
        f"{LOGS}/collect_decisions.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    resources:
        mem_mb=4000,
    shell:
        "{params.py:q} scripts/plot_decisions.py --out {output} {input.decisions} > {log} 2>&1"


rule plot_robustness:
    input:
        env_ready("core"),
        table="results/all.tsv",
        decisions="results/tables/decisions.parquet",
        circular=circular_table_input,
    output:
        png=in_report("results/figures/robustness.png", "Robustness", "Figure", "robustness"),
        svg="results/figures/robustness.svg",
        spread=in_report("results/tables/prompt_spread.tsv", "Robustness", "Prompt spread", "robustness"),
        position=in_report("results/tables/position_bias.tsv", "Robustness", "Position bias", "robustness"),
        circular=in_report("results/tables/circular.tsv", "Robustness", "CircularEval", "robustness"),
    log:
        f"{LOGS}/plot_robustness.log",
    params:
        py=env_python("core"),
        prompts=prompts_arg(),
        circular=circular_arg,
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/plot_robustness.py --table {input.table} --decisions {input.decisions} "
        "{params.circular} --prompts {params.prompts} --png {output.png} --svg {output.svg} "
        "--tsv-spread {output.spread} --tsv-position {output.position} --tsv-circular {output.circular} "
        "> {log} 2>&1"


rule plot_parsing:
    input:
        env_ready("core"),
        decisions="results/tables/decisions.parquet",
    output:
        confusion_png=in_report("results/figures/confusion.png", "Parsing", "Confusion", "confusion"),
        confusion_svg="results/figures/confusion.svg",
        confusion_tsv=in_report("results/tables/confusion.tsv", "Parsing", "Confusion", "confusion"),
        stages_png=in_report("results/figures/parse_stages.png", "Parsing", "Parse stages", "parse_stages"),
        stages_svg="results/figures/parse_stages.svg",
        stages_tsv=in_report("results/tables/parse_stages.tsv", "Parsing", "Parse stages", "parse_stages"),
    log:
        f"{LOGS}/plot_parsing.log",
    params:
        py=env_python("core"),
        prompts=prompts_arg(),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/plot_parsing.py --decisions {input.decisions} --prompts {params.prompts} "
        "--confusion-png {output.confusion_png} --confusion-svg {output.confusion_svg} "
        "--confusion-tsv {output.confusion_tsv} --stages-png {output.stages_png} --stages-svg {output.stages_svg} "
        "--stages-tsv {output.stages_tsv} > {log} 2>&1"


# Figures drawn from the decisions table alone, one rule each (plot_<name>): name -> (report category,
# extra outputs as {output name: (path, the script's flag)}). scripts/plot_<name>.py takes --decisions,
# --prompts, --png, --svg and --tsv.
DECISION_FIGURES = {
    "reliance": ("Audio reliance", {}),
    "temporal": ("Temporal", {"iou": ("results/tables/iou.tsv", "--tsv-iou")}),
    "paired": ("Model comparisons", {}),
}

for _fig, (_category, _extra) in DECISION_FIGURES.items():

    rule:
        name:
            f"plot_{_fig}"
        input:
            env_ready("core"),
            decisions="results/tables/decisions.parquet",
        output:
            png=in_report(f"results/figures/{_fig}.png", _category, "Figure", f"{_fig}"),
            svg=f"results/figures/{_fig}.svg",
            tsv=in_report(f"results/tables/{_fig}.tsv", _category, "Table", f"{_fig}"),
            **{name: path for name, (path, _) in _extra.items()},
        log:
            f"{LOGS}/plot_{_fig}.log",
        params:
            py=env_python("core"),
            prompts=prompts_arg(),
            # the loop's values go in as params: Snakemake evaluates a rule's shell string again when the
            # job runs, by then with the loop's last values
            script=f"scripts/plot_{_fig}.py",
            extra=" ".join(f"{flag} {path}" for path, flag in _extra.values()),
        conda:
            conda_file("core")
        shell:
            "{params.py:q} {params.script} --decisions {input.decisions} --prompts {params.prompts} "
            "--png {output.png} --svg {output.svg} --tsv {output.tsv} {params.extra} > {log} 2>&1"


rule figures:
    input:
        figure_targets(),
