"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 (no network), scripted per test."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeServer:
    """Chat-completions server whose behaviour each test scripts: failures first, delay, key echo."""

    def __init__(self):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.fail_first: list[tuple[int, dict] | None] = []  # (status, extra headers) served first; None: a success
        self.fail_body = None  # optional: Authorization header -> raw error body text
        self.answer = None  # optional: Authorization header -> the answer text of a success
        self.answer_body = None  # optional: request body -> the answer text of a success (scripted per prompt)
        self.fail_if = None  # optional: request body -> (status, extra headers) to fail it, or None
        self.respond = None  # optional: Authorization header -> the whole JSON object of a success
        self.drip_s = None  # optional: send a success one byte every drip_s seconds (a hanging server)
        self.header_drip_s = None  # optional: send the status line, then one header byte every header_drip_s s
        self.endless = False  # optional: a chunked success body that never ends (until the client leaves)
        self.delay_s = 0.0
        self.usage_extra = {}  # merged into every success's usage (e.g. completion_tokens_details)
        self.first_token_s = 0.0  # a streamed answer: the wait before its first text chunk (after its role chunk)
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep pytest output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    failure = server.fail_first.pop(0) if server.fail_first else None
                    if failure is None and server.fail_if:
                        failure = server.fail_if(body)
                try:
                    time.sleep(server.delay_s)
                    if self.path != "/v1/chat/completions":
                        return self._send(404, {"error": f"no route {self.path}"})
                    if failure:
                        status, hdrs = failure
                        # real servers echo the presented key in auth errors: the backend must redact it
                        auth = self.headers.get("Authorization", "")
                        if server.fail_body:
                            return self._send(status, server.fail_body(auth), hdrs)
                        return self._send(status, {"error": {"message": f"failure for key {auth[7:]}"}}, hdrs)
                    if server.header_drip_s is not None:
                        return self._drip_headers(server.header_drip_s)
                    if server.drip_s is not None:
                        return self._drip(server.drip_s)
                    if server.endless:
                        return self._endless()
                    if server.respond:
                        return self._send(200, server.respond(self.headers.get("Authorization", "")))
                    user = body["messages"][-1]["content"]
                    n_audio = sum(p["type"] == "input_audio" for p in user)
                    text = next(p["text"] for p in user if p["type"] == "text")
                    answer = (server.answer_body(body) if server.answer_body
                              else server.answer(self.headers.get("Authorization", "")) if server.answer
                              else f"B audio={n_audio} q={text[:20]}")
                    usage = {"prompt_tokens": 11, "completion_tokens": 1, **server.usage_extra}
                    if body.get("stream"):
                        return self._stream(body, answer, usage)
                    self._send(200, {"model": body["model"], "usage": usage,
                                     "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                         "role": "assistant", "content": answer}}]})
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _stream(self, body, answer, usage):
                """OpenAI's server-sent events: a role chunk, the answer in word pieces (the first after
                ``first_token_s``), a finish chunk, the usage chunk when stream_options asks, ``[DONE]``."""
                def chunk(choices, **more):
                    event = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": body["model"],
                             "choices": choices, **more}
                    self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                    self.wfile.flush()

                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()  # no length: the body ends when the connection closes (HTTP/1.0)
                chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
                time.sleep(server.first_token_s)
                for i, word in enumerate(answer.split(" ")):
                    chunk([{"index": 0, "delta": {"content": word if i == 0 else " " + word}, "finish_reason": None}])
                chunk([{"index": 0, "delta": {}, "finish_reason": "stop"}])
                if (body.get("stream_options") or {}).get("include_usage"):
                    chunk([], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")

            def _drip(self, every_s, limit=200):
                """A body of ``limit`` bytes, one every ``every_s`` s: each read is quick, the whole is not."""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(limit))
                self.end_headers()
                try:
                    for _ in range(limit):  # bounded: stops at limit or when the client hangs up
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(every_s)
                except OSError:
                    pass

            def _drip_headers(self, every_s, limit=15):
                """The status line, then a header one byte every ``every_s`` s: the headers never end (the
                server gives up after ``limit`` bytes, so a client without a whole-request deadline waits that long)."""
                try:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    for byte in b"X-Slow-Header-That-Never-Ends"[:limit]:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(every_s)
                except OSError:
                    pass
                self.close_connection = True

            def _endless(self, chunk=b"x" * 65536, limit=4096):
                """A chunked body that goes on until the client hangs up (at most limit x 64 KiB = 256 MiB)."""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for _ in range(limit):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                except OSError:
                    pass

            def _send(self, status, obj, hdrs=None):
                data = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (hdrs or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
