"""Which conda env file each job of a DAG gets (run as a script: `python tests/conda_jobs.py CONFIG`).

Snakemake lists conda envs (--list-conda-envs) but not which job gets which; this builds the DAG
through Snakemake's API exactly like --list-conda-envs does and prints `rule<TAB>wildcards<TAB>env
file` per job. Needs a `conda` on PATH (tests/data/conda/bin has a stand-in)."""
import sys
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.settings.types import (ConfigSettings, DAGSettings, DeploymentSettings, OutputSettings,
                                      ResourceSettings, StorageSettings)
from snakemake_interface_executor_plugins.settings import DeploymentMethod


def main(configfile: str) -> None:
    with SnakemakeApi(OutputSettings()) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=1),
                          config_settings=ConfigSettings(configfiles=[Path(configfile)], config={"software": "conda"}),
                          deployment_settings=DeploymentSettings(deployment_method={DeploymentMethod.CONDA}),
                          storage_settings=StorageSettings(), snakefile=Path("Snakefile"), workdir=Path("."))
        workflow = wf.dag(DAGSettings(targets={"results/all.tsv"}, forceall=True)).workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=False, lock_warn_only=False)
        workflow._build_dag()
        workflow.dag.create_conda_envs(dryrun=True, quiet=True)
        for job in sorted(workflow.dag.jobs, key=lambda j: (j.rule.name, str(j.wildcards_dict))):
            env = job.conda_env.file.simplify_path() if job.conda_env else ""
            wc = ",".join(f"{k}={v}" for k, v in sorted(job.wildcards_dict.items()))
            print(job.rule.name, wc, env, sep="\t")


if __name__ == "__main__":
    main(sys.argv[1])
