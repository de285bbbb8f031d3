# Figures drawn from results/all.tsv.


rule plot_accuracy:
    input:
        env_ready("core"),
        table="results/all.tsv",
    output:
        png=report("results/figures/accuracy.png", category="Accuracy",
                   caption="../docs/captions/accuracy.rst"),
        svg="results/figures/accuracy.svg",
    log:
        f"{LOGS}/plot_accuracy.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/plot_accuracy.py --table {input.table} --png {output.png} --svg {output.svg} "
        "> {log} 2>&1"


rule plot_sampling:
    input:
        env_ready("core"),
        table="results/all.tsv",
        cost="results/tables/cost.tsv",
        metrics=lambda w: [f"results/scores/{r.key}/metrics.json" for r in RUNS],
    output:
        png=in_report("results/figures/sampling.png", "Results", "Sampling", "sampling"),
        svg="results/figures/sampling.svg",
        tsv=in_report("results/tables/sampling.tsv", "Results", "Sampling", "sampling"),
        curve=in_report("results/tables/sampling_curve.tsv", "Results", "Sampling", "sampling"),
    log:
        f"{LOGS}/plot_sampling.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/plot_sampling.py --table {input.table} --cost {input.cost} --tsv {output.tsv} "
        "--curve-tsv {output.curve} --png {output.png} --svg {output.svg} --metrics {input.metrics} > {log} 2>&1"


rule report_table:
    input:
        env_ready("core"),
        table="results/all.tsv",
        ledger=f"{REPORT_DIR}/{{report}}.yaml",
        decisions=report_decisions,
        task_items=report_items,
    output:
        tsv=in_report("results/tables/report_{report}.tsv", "Published", "Table", "model_report"),
        png=in_report("results/figures/report_{report}.png", "Published", "Figure", "model_report"),
        svg="results/figures/report_{report}.svg",
    wildcard_constraints:
        report=one_of(REPORTS),
    log:
        f"{LOGS}/report_table/{{report}}.log",
    params:
        py=env_python("core"),
        model=lambda w: REPORTS[w.report],
        datasets=lambda w: json.dumps({k: {"adapter": d["adapter"]} for k, d in config["datasets"].items()}),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/report_table.py --table {input.table} --report {wildcards.report} "
        "--model {params.model:q} --datasets-json {params.datasets:q} --tsv {output.tsv} --png {output.png} "
        "--svg {output.svg} --decisions {input.decisions} --items {input.task_items} > {log} 2>&1"


rule published_table:
    input:
        env_ready("core"),
        table="results/all.tsv",
        ledger=f"{LEDGER_DIR}/{{benchmark}}.yaml",
    output:
        tsv=in_report("results/tables/published_{benchmark}.tsv", "Published", "Table", "published"),
        png=in_report("results/figures/published_{benchmark}.png", "Published", "Figure", "published"),
        svg="results/figures/published_{benchmark}.svg",
    wildcard_constraints:
        benchmark=one_of(PUBLISHED),
    log:
        f"{LOGS}/published_table/{{benchmark}}.log",
    params:
        py=env_python("core"),
        datasets=lambda w: " ".join(PUBLISHED[w.benchmark]),
        files=lambda w: canonical(ledger_files_scored(w.benchmark)),
    conda:
        conda_file("core")
    shell:
        "{params.py:q} scripts/published_table.py --table {input.table} --ledger {input.ledger} "
        "--datasets {params.datasets} --files-json {params.files:q} --tsv {output.tsv} --png {output.png} "
        "--svg {output.svg} > {log} 2>&1"
