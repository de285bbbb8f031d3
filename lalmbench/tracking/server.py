"""A throwaway local MLflow tracking server (SQLite store, artifacts in a folder), for the MLflow
test and the tracking benchmark. Full mlflow lives in its own env (``.venvs/mlflow-server``)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def free_port() -> int:
    """A loopback port free right now (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def local_server(mlflow: str | Path, folder: str | Path, timeout_s: float = 180) -> Iterator[str]:
    """Run ``mlflow server`` on 127.0.0.1 with its store under ``folder``; yield its URI once
    /health answers, stop it (and its workers) on exit. Its log is ``folder/server.log``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    uri = f"http://127.0.0.1:{free_port()}"
    with open(folder / "server.log", "w") as log:
        # its env's python -m mlflow, not the `mlflow` script: a venv built in another checkout keeps a stale shebang
        proc = subprocess.Popen([str(Path(mlflow).parent / "python"), "-m", "mlflow", "server", "--host", "127.0.0.1",
                                 "--port", uri.rsplit(":", 1)[1], "--workers", "1", "--backend-store-uri", f"sqlite:///{folder.resolve() / 'mlflow.db'}",
                                 "--artifacts-destination", str(folder.resolve() / "artifacts")],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if urllib.request.urlopen(f"{uri}/health", timeout=2).status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server did not come up:\n{(folder / 'server.log').read_text()[-3000:]}")
            time.sleep(1)
        yield uri
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
