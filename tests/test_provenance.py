"""What provenance records about the machine: the lock an env was installed from, the CPU, the GPUs."""
from __future__ import annotations

import hashlib
import os
import sys
import stat

from lalmbench.core import provenance


def test_the_lock_is_recorded_where_there_is_one_else_the_requirements(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "ENVS_DIR", tmp_path)
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "requirements.txt").write_text("torch==2.13.0\n")
    assert provenance.lock_digest("hf") == {
        "env": "hf", "file": "envs/hf/requirements.txt", "kind": "requirements",
        "sha256": hashlib.sha256(b"torch==2.13.0\n").hexdigest()}
    (tmp_path / "hf" / "requirements.lock").write_text("torch==2.13.0 --hash=sha256:00\n")
    lock = provenance.lock_digest("hf")
    assert lock["kind"] == "lock" and lock["file"] == "envs/hf/requirements.lock"
    assert provenance.lock_digest("vllm") is None


def test_gpus_and_driver_come_from_nvidia_smi(tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 550.54.15'\necho 'NVIDIA H100 80GB HBM3, 550.54.15'\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    gpus = provenance.gpu_info()
    assert gpus == [{"name": "NVIDIA H100 80GB HBM3", "driver": "550.54.15"}] * 2
    fields = provenance.environment_fields({"gpu": gpus, "cpu": {"model": "AMD EPYC", "flags": ["avx2"]}})
    assert fields["gpu"] == "NVIDIA H100 80GB HBM3 (driver 550.54.15); NVIDIA H100 80GB HBM3 (driver 550.54.15)"
    assert fields["cpu.model"] == "AMD EPYC" and fields["cpu.flag.avx2"] == "yes"


def test_no_gpu_is_an_empty_list(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert provenance.gpu_info() == []


def test_cpu_flags_one_machine_lacks_are_named_one_by_one():
    a = {"cpu": {"model": "AMD EPYC", "flags": ["avx2", "avx512f", "avx512_vnni"]}, "packages": {"numpy": "2.4.6"}}
    b = {"cpu": {"model": "AMD EPYC", "flags": ["avx2"]}, "packages": {"numpy": "2.4.6", "soxr": "1.1.0"}}
    assert provenance.environment_differences([a], [b]) == [
        {"field": "cpu.flag.avx512f", "a": "yes", "b": "-"}, {"field": "cpu.flag.avx512_vnni", "a": "yes", "b": "-"},
        {"field": "package.soxr", "a": "-", "b": "1.1.0"}]
    # a side that recorded only a few packages is compared on those
    assert provenance.environment_differences([{"packages": {"numpy": "2.4.6"}}], [b], common_only=True) == []


def test_the_environment_is_computed_once_per_process(monkeypatch):
    provenance._environment.cache_clear()
    calls = []
    real = provenance.installed_packages
    monkeypatch.setattr(provenance, "installed_packages", lambda: calls.append(1) or real())
    try:
        d1, r1 = provenance.environment("core")
        d2, r2 = provenance.environment("core")
        r2["packages"].clear()  # callers get copies
        assert d1 == d2 and len(calls) == 1 and provenance.environment("core")[1]["packages"]
        assert d1 == provenance.config_hash(r1)
    finally:
        provenance._environment.cache_clear()
