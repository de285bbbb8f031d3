"""lalmbench.workflow.job_limits: what a Snakemake inside a SLURM job constrains itself to. The real cluster
runs (both TaskPlugins) are in tests/test_slurm_cluster.py."""
from __future__ import annotations

import json

import pytest
import yaml
from snakemake.resources import ResourceScopes, Resources

from lalmbench.workflow import job_limits
from lalmbench.workflow.job_limits import CPUS_ENV, LIMITS_ENV, encode, local_limits
from tests.workflow import ROOT


def profile_limits() -> dict[str, int]:
    """local_limits of the shipped SLURM profile, read through Snakemake's own parsers."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    resources = Resources.parser_factory(allow_expressions=False)(
        [f"{k}={v}" for k, v in profile["resources"].items()])
    scopes = ResourceScopes.defaults()
    scopes.update(profile["set-resource-scopes"])
    return local_limits(resources.unwrapped_items(), scopes.is_local)


def test_the_profile_hands_its_group_slot_to_every_job():
    assert profile_limits() == {"group_slot": 1}


def test_global_and_internal_resources_stay_in_the_main_process():
    items = [("_cores", 8), ("_nodes", 50), ("gpu_budget", 4), ("group_slot", 1), ("tmpdir", "/tmp")]
    assert local_limits(items, lambda name: name != "gpu_budget") == {"group_slot": 1}


def test_inside_a_slurm_job_the_allocation_caps_the_cores():
    env = {"SLURM_JOB_ID": "7", CPUS_ENV: "2", LIMITS_ENV: encode({"group_slot": 1})}
    assert job_limits.job_limits(env) == {"group_slot": 1, "_cores": 2}


def test_outside_a_slurm_job_nothing_is_constrained():
    assert job_limits.job_limits({CPUS_ENV: "2", LIMITS_ENV: encode({"group_slot": 1})}) == {}


@pytest.mark.parametrize("env, message", [
    ({LIMITS_ENV: "{group_slot: 1"}, "not JSON"),
    ({LIMITS_ENV: json.dumps({"group_slot": "1"})}, "integers >= 0"),
    ({LIMITS_ENV: json.dumps([1])}, "integers >= 0"),
    ({CPUS_ENV: "0"}, "CPU count >= 1"),
    ({CPUS_ENV: "2(x3)"}, "CPU count >= 1"),
])
def test_a_malformed_value_is_an_error_naming_its_variable(env, message):
    with pytest.raises(ValueError, match=message) as err:
        job_limits.job_limits({"SLURM_JOB_ID": "7", **env})
    assert next(iter(env)) in str(err.value)


class _Workflow:
    """The two members of snakemake.workflow.Workflow that constrain() uses."""

    def __init__(self, cores: int):
        self.global_resources = Resources()
        self.global_resources["_cores"] = cores

    def register_resource(self, name, value):
        self.global_resources[name] = value


@pytest.mark.parametrize("cores, expected", [(2, 1), (1, 1)])
def test_constrain_only_ever_lowers_the_cores(cores, expected):
    wf = _Workflow(cores)
    applied = job_limits.constrain(wf, {"SLURM_JOB_ID": "7", CPUS_ENV: "1", LIMITS_ENV: encode({"group_slot": 1})})
    assert wf.global_resources["_cores"].value == expected
    assert wf.global_resources["group_slot"].value == 1
    assert applied == ({"group_slot": 1, "_cores": 1} if cores > 1 else {"group_slot": 1})
