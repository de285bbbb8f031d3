# Static results browser (issue 6): open results/browser/index.html from disk or serve results/.
# Audio is linked relative to the page (config `browser: {bundle_audio: true}` copies it beside the page).


rule build_browser:
    input:
        env_ready("core"),
        decisions="results/tables/decisions.parquet",
        flags="results/tables/flags.tsv",
        tasks=browser_tasks(),
    output:
        html="results/browser/index.html",
        data="results/browser/data.js",
    log:
        f"{LOGS}/build_browser.log",
    params:
        py=env_python("core"),
        options=browser_cfg(),
    conda:
        conda_file("core")
    resources:
        mem_mb=4000,
    shell:
        "{params.py:q} scripts/browser_build.py --decisions {input.decisions} --flags {input.flags} --html {output.html} "
        "--data {output.data} --options-json {params.options:q} {input.tasks} > {log} 2>&1"
