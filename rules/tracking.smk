# Experiment tracking: upload the runs the jobs spooled (tracking on only; see lalmbench.tracking.spool).


rule tracking_sync:
    input:
        env_ready("core"),
        table="results/all.tsv",
    output:
        TRACKING_SYNC,
    log:
        f"{LOGS}/tracking_sync.log",
    params:
        py=env_python("core"),
        tracking=TRACKING,
    conda:
        conda_file("core")
    localrule: True
    shell:
        "{params.py:q} -m lalmbench.tracking.sync --tracking-json {params.tracking:q} --report {output:q} > {log} 2>&1"
