"""An HTTP transport whose every socket wait ends by the request's deadline (the ``openai`` backend's).

Why: httpx has per-operation timeouts only (connect, each read, each write, the pool wait), so a
server that sends one header byte per second, each inside the read timeout, holds a request
forever; checking the clock between body chunks misses the headers, which httpx reads before it
returns. Here the deadline is enforced where httpcore touches the socket: every connect, TLS
handshake, read and write waits at most until the deadline of the request running on that thread
(:meth:`DeadlineBackend.until`), so connect, headers and body are bounded together.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import httpcore
import httpx

_WRITE_CHUNK = 1 << 16  # a write is cut in pieces so a slow reader cannot stretch one send past the deadline


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend with every wait clamped to the current thread's deadline."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()
        self._local = threading.local()

    @contextmanager
    def until(self, deadline: float) -> Iterator[None]:
        """Socket waits on this thread end by ``deadline`` (``time.monotonic()`` seconds) inside the block."""
        self._local.deadline = deadline
        try:
            yield
        finally:
            self._local.deadline = None

    def timeout(self, timeout: float | None, exc: type[Exception]) -> float | None:
        """``timeout`` shortened to what is left before the deadline; ``exc`` once nothing is left."""
        deadline = getattr(self._local, "deadline", None)
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise exc("the request's deadline has passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, self.timeout(timeout, httpcore.ConnectTimeout), local_address,
                                         socket_options)
        return _DeadlineStream(stream, self)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self.timeout(timeout, httpcore.ConnectTimeout), socket_options)
        return _DeadlineStream(stream, self)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, backend: DeadlineBackend):
        self._inner, self._backend = inner, backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._backend.timeout(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for at in range(0, len(buffer), _WRITE_CHUNK):
            self._inner.write(buffer[at:at + _WRITE_CHUNK], self._backend.timeout(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._backend.timeout(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._backend)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def deadline_transport(max_connections: int) -> tuple[httpx.HTTPTransport, DeadlineBackend]:
    """An httpx transport over :class:`DeadlineBackend` (HTTP/1.1, the system's CA bundle), and the backend."""
    backend = DeadlineBackend()
    transport = httpx.HTTPTransport(limits=httpx.Limits(max_connections=max_connections))
    # httpx takes no network backend of its own: its pool is rebuilt over ours, with the settings above
    transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), max_connections=max_connections,
                                              max_keepalive_connections=max_connections, keepalive_expiry=5.0,
                                              network_backend=backend)
    return transport, backend
