import inspect

import snakemake.common as common
import snakemake.rules as rules

from lalmbench.workflow.snakemake_signatures import cache_function_signatures


def test_each_function_signature_is_read_once(monkeypatch):
    calls = []
    real = inspect.signature
    monkeypatch.setattr(inspect, "signature", lambda f: calls.append(f) or real(f))
    assert cache_function_signatures()

    def param(wildcards, input, threads):
        return wildcards.task

    def other(wildcards):
        return 1

    assert list(rules.get_function_params(param)) == ["wildcards", "input", "threads"]
    assert list(common.get_function_params(param)) == ["wildcards", "input", "threads"]
    assert list(rules.get_function_params(other)) == ["wildcards"]
    assert calls == [param, other]


def test_twice_is_the_same_as_once():
    assert cache_function_signatures() and cache_function_signatures()
    assert common.get_function_params.__wrapped__.__module__ == "snakemake.common"
    assert rules.get_function_params is common.get_function_params


def test_an_unhashable_callable_is_still_read():
    cache_function_signatures()

    class Param(dict):  # dicts are unhashable
        def __call__(self, wildcards, threads):
            return threads

    assert list(rules.get_function_params(Param())) == ["wildcards", "threads"]
