"""The limits a job group runs under inside its SLURM job: its own allocation's CPUs and the run's local-scope
``--resources``.

Snakemake sizes an sbatch job from the group's jobs under the main process's constraints: with the profile's
``resources: {group_slot: 1}`` (scope ``local``) every job of a group takes the one slot, so the sbatch asks for
the heaviest job's CPUs. Inside the job Snakemake starts again twice (the executor plugin's job step, then the
``srun`` step it launches), with ``--cores all`` and without the main process's ``--resources``: the group's
width there is the sum of the jobs it could run side by side, capped by the CPUs the process sees. Where the
cluster binds jobs to their CPUs (task/affinity, cgroups) that is the allocation; where it binds nothing
(Slurm's default ``TaskPlugin=task/none``) it is the whole node, and the step asks srun for more CPUs than the
job holds ("More processors requested than permitted").

So the main process hands its local-scope limits to its jobs in the environment (sbatch's ``--export=ALL``
and the job step's srun pass it on), and each Snakemake inside a SLURM job constrains itself to them and to
``SLURM_CPUS_ON_NODE``: a local-scope limit holds per submitted group, as Snakemake's resource scopes
define it, and the step never asks for more CPUs than the sbatch was given.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping

#: the main process's local-scope ``--resources``, as JSON {name: int}
LIMITS_ENV = "LALMBENCH_GROUP_LIMITS"
#: CPUs of the SLURM allocation on this node (batch step and srun steps alike)
CPUS_ENV = "SLURM_CPUS_ON_NODE"


def local_limits(resources: Iterable[tuple[str, object]], is_local: Callable[[str], bool]) -> dict[str, int]:
    """The integer limits among ``resources`` (name, value) whose scope is local; Snakemake's own ``_cores``
    and ``_nodes`` are not among them (a job's cores are its allocation's)."""
    return {name: value for name, value in resources
            if not name.startswith("_") and isinstance(value, int) and not isinstance(value, bool)
            and is_local(name)}


def encode(limits: Mapping[str, int]) -> str:
    return json.dumps(dict(sorted(limits.items())), separators=(",", ":"))


def job_limits(environ: Mapping[str, str]) -> dict[str, int]:
    """The constraints a Snakemake inside a SLURM job takes: the main process's local-scope limits and
    ``_cores`` = the allocation's CPUs on this node. Empty outside a SLURM job. A malformed value is an
    error naming its variable, never ignored: ignoring it would let the step outgrow its allocation."""
    if "SLURM_JOB_ID" not in environ:
        return {}
    limits: dict[str, int] = {}
    raw = environ.get(LIMITS_ENV)
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as err:
            raise ValueError(f"{LIMITS_ENV}={raw!r}: not JSON ({err})") from None
        if not isinstance(parsed, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for k, v in parsed.items()):
            raise ValueError(f"{LIMITS_ENV}={raw!r}: expected a mapping of resource names to integers >= 0")
        limits.update(parsed)
    cpus = environ.get(CPUS_ENV)
    if cpus is not None:
        if not cpus.strip().isdigit() or int(cpus) < 1:
            raise ValueError(f"{CPUS_ENV}={cpus!r}: expected a CPU count >= 1")
        limits["_cores"] = int(cpus)
    return limits


def constrain(workflow, environ: Mapping[str, str]) -> dict[str, int]:
    """Apply :func:`job_limits` to this Snakemake's global resources (``_cores`` only ever lowered) and
    return what was applied."""
    applied = {}
    for name, value in job_limits(environ).items():
        if name == "_cores":
            current = workflow.global_resources["_cores"].value
            if current is not None and current <= value:
                continue
        workflow.register_resource(name, value)
        applied[name] = value
    return applied
