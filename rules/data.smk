# Datasets -> results/data/{dataset}/clips.parquet + events.parquet (the strong-annotation contract).
# Real-data adapters live in rules/adapters.smk; this file has the embedded synthetic scenes.


rule synth_scenes:
    output:
        clips="results/data/{dataset}/clips.parquet",
        events="results/data/{dataset}/events.parquet",
        audio=directory("results/data/{dataset}/audio"),
    log:
        f"{LOGS}/synth_scenes/{{dataset}}.log",
    wildcard_constraints:
        dataset=one_of(SYNTH_SCENE_DATASETS),
    params:
        py=lambda w: env_python("core"),
        cfg=lambda w: canonical(
            {
                "params": dataset_cfg(w.dataset)["params"],
                "seed": config["seed"],
                "scale": config["scale"],
                "sample_rate": config["sample_rate"],
            }
        ),
    input:
        env_ready("core"),
    conda:
        conda_file("core")
    group:
        DATA_GROUP
    resources:
        runtime=30,
    shell:
        "{params.py:q} scripts/synth_scenes.py --config-json {params.cfg:q} --dataset {wildcards.dataset} "
        "--clips {output.clips} --events {output.events} --audio-dir {output.audio} > {log} 2>&1"
