# software=venv: build each env once from its lock (envs/<env>/requirements.lock, every file checked by sha256), locally.
# The project itself is not installed into the env: scripts/ put the repo root on sys.path.


rule build_venv:
    input:
        "envs/{env}/requirements.lock",
    output:
        touch(f"{VENV_ROOT}/{{env}}/.ready"),
    log:
        f"{LOGS}/build_venv/{{env}}.log",
    params:
        venv=lambda w: f"{VENV_ROOT}/{w.env}",
        python=sys.executable,
    conda:
        conda_file("core")  # only software=venv uses this rule; the directive keeps --lint meaningful
    localrule: True
    shell:
        "({params.python:q} -m venv {params.venv:q} && "
        "{params.venv:q}/bin/python -m lalmbench.workflow.lock_install {input:q} && "
        "{params.venv:q}/bin/python -m pip check && "
        "PYTHONPATH=. {params.venv:q}/bin/python -m lalmbench.core.jit_cache) > {log} 2>&1"
