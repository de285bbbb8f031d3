# Rubric evaluation of captioning answers (config `rubrics:`; target `snakemake rubrics`, not part of
# rule all). One job per (task, model, condition) runs the rubric LLM in-process, in its model's env
# (like the judge); the logic is lalmbench/rubrics/. docs/rubrics.md.
from lalmbench.rubrics.plan import (code_fingerprint, rubric_nothing_to_do, rubric_path, rubric_runs,
                                    rubric_settings)

RUBRIC_RUNS = rubric_runs(config)
RUBRIC_OF = {(r.task, r.model, r.condition): r for r in RUBRIC_RUNS}
RUBRIC_LLM_ENV = model_cfg(config["rubrics"]["llm"])["env"] if RUBRIC_RUNS else "core"


def rubric_run(w):
    return RUBRIC_OF[(w.task, w.model, w.condition)]


rule rubrics:
    input:
        [rubric_path(r) for r in RUBRIC_RUNS],
        ["results/rubrics/rubrics.tsv"] if RUBRIC_RUNS else [],
    params:
        # nothing to evaluate is an error a user should see, not an empty success
        check="" if RUBRIC_RUNS else rubric_nothing_to_do(config),
    localrule: True
    shell:
        "if [ -n {params.check:q} ]; then echo {params.check:q} >&2; exit 1; fi"


rule rubric:
    input:
        env_ready(RUBRIC_LLM_ENV),
        task_items=lambda w: f"results/tasks/{task_cfg(w.task)['dataset']}/{w.task}.jsonl",
        predictions=lambda w: "results/predictions/{0.model}/{0.dataset}/{0.task}/{0.condition}/{0.prompt}.parquet".format(
            rubric_run(w)
        ),
    output:
        "results/rubrics/{task}/{model}/{condition}.json",
    log:
        f"{LOGS}/rubric/{{task}}/{{model}}/{{condition}}.log",
    wildcard_constraints:
        task=one_of(sorted({r.task for r in RUBRIC_RUNS})),
    params:
        py=env_python(RUBRIC_LLM_ENV),
        run=lambda w: canonical(
            {k: getattr(rubric_run(w), k) for k in ("task", "model", "condition", "prompt", "dataset")}
        ),
        settings=canonical(rubric_settings(config)) if RUBRIC_RUNS else "",
        code=code_fingerprint(),
    conda:
        conda_file(RUBRIC_LLM_ENV)
    threads: 2
    resources:
        mem_mb=lambda w: model_cfg(config["rubrics"]["llm"])["resources"].get("mem_mb", 8000),
        runtime=lambda w: model_cfg(config["rubrics"]["llm"])["resources"].get("runtime", 120),
        gpu=lambda w: model_cfg(config["rubrics"]["llm"])["resources"].get("gpus", 0),
    shell:
        "HF_HUB_OFFLINE=${{HF_HUB_OFFLINE:-1}} {params.py} scripts/rubric.py run --items {input.task_items} "
        "--predictions {input.predictions} --out {output} --run-json {params.run:q} "
        "--settings-json {params.settings:q} > {log} 2>&1"


rule rubric_table:
    input:
        [rubric_path(r) for r in RUBRIC_RUNS],
    output:
        "results/rubrics/rubrics.tsv",
    log:
        f"{LOGS}/rubric_table.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    localrule: True
    threads: 1
    shell:
        "{params.py} scripts/rubric.py table --out {output} {input} > {log} 2>&1"
