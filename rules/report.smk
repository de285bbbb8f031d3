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
