"""Installing a lock: pip reads the lock's remote page for a non-PyPI wheel (core's torch CPU build) unless its own
configuration already has that wheel, since a page it cannot reach costs retries for every package."""
import hashlib
import zipfile

import pytest

from lalmbench.workflow.lock_install import local_label_pins, lock_for_this_machine

PAGE = "--find-links https://download.invalid/whl/cpu/demo/"


def make_wheel(folder, version="1.0+cpu"):
    """A minimal wheel pip can read the metadata of (what `pip install --dry-run` needs)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"demo-{version}-py3-none-any.whl"
    info = f"demo-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/__init__.py", "")
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: demo\nVersion: {version}\n")
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
