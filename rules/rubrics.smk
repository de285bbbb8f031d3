# Rubric evaluation of captioning answers (config `rubrics:`; target `snakemake rubrics`, not part of
# rule all). One job per (task, model, condition) runs the rubric LLM in-process, in its model's env
# (like the judge); the logic is lalmbench/rubrics/. docs/rubrics.md.
from lalmbench.rubrics.plan import (code_fingerprint, llm_fingerprint, rubric_jobs, rubric_nothing_to_do,
                                    rubric_settings)

RUBRIC_JOBS = rubric_jobs(config)  # output path -> items, predictions, run
RUBRIC_LLM = model_cfg(config["rubrics"]["llm"]) if RUBRIC_JOBS else {"env": "core", "resources": {}}
RUBRIC_LLM_ENV = RUBRIC_LLM["env"]
RUBRIC_OUT = "results/rubrics/{task}/{model}/{condition}.json"  # lalmbench.rubrics.plan.rubric_path


if RUBRIC_JOBS:

    rule rubrics:
        input:
            sorted(RUBRIC_JOBS),
            "results/rubrics/rubrics.tsv",

else:

    rule rubrics:  # nothing to evaluate is an error a user should see, not an empty success
        log:
            f"{LOGS}/rubrics.log",
        params:
            why=rubric_nothing_to_do(config),
        conda:
            conda_file("core")
        localrule: True
        shell:
            "echo {params.why:q} | tee {log} >&2; exit 1"


rule rubric:
    input:
        env_ready(RUBRIC_LLM_ENV),
        task_items=lambda w: RUBRIC_JOBS[RUBRIC_OUT.format(**w)]["items"],
        predictions=lambda w: RUBRIC_JOBS[RUBRIC_OUT.format(**w)]["predictions"],
    output:
        RUBRIC_OUT,
    log:
        f"{LOGS}/rubric/{{task}}/{{model}}/{{condition}}.log",
    wildcard_constraints:
        task=one_of({p.split("/")[2] for p in RUBRIC_JOBS}),
    params:
        py=env_python(RUBRIC_LLM_ENV),
        run=lambda w: RUBRIC_JOBS[RUBRIC_OUT.format(**w)]["run"],
        settings=canonical(rubric_settings(config)) if RUBRIC_JOBS else "",
        llm_fp=llm_fingerprint(config) if RUBRIC_JOBS else "",
        llm=Untracked(canonical(RUBRIC_LLM)),
        code=code_fingerprint(),
    conda:
        conda_file(RUBRIC_LLM_ENV)
    threads: 2
    resources:
        mem_mb=RUBRIC_LLM["resources"].get("mem_mb", 8000),
        runtime=RUBRIC_LLM["resources"].get("runtime", 120),
        gpu=RUBRIC_LLM["resources"].get("gpus", 0),
    shell:
        "HF_HUB_OFFLINE=${{HF_HUB_OFFLINE:-1}} {params.py:q} scripts/rubric.py run --items {input.task_items} "
        "--predictions {input.predictions} --out {output} --run-json {params.run:q} "
        "--settings-json {params.settings:q} --llm-json {params.llm:q} > {log} 2>&1"


rule rubric_table:
    input:
        sorted(RUBRIC_JOBS),
    output:
        "results/rubrics/rubrics.tsv",
    log:
        f"{LOGS}/rubric_table.log",
    params:
        py=env_python("core"),
    conda:
        conda_file("core")
    localrule: True
    shell:
        "{params.py:q} scripts/rubric.py table --out {output} {input} > {log} 2>&1"
