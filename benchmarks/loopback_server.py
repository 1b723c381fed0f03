"""A loopback OpenAI-compatible chat server for benchmarks and fault tests (not a model).

It answers ``POST /v1/chat/completions`` after a fixed delay with a short reply shaped to
what the prompt asks for (an idea, 'Idea N: score' lines, 'Response N', 'Novelty: x'...),
so protocols can run end to end against real HTTP. Faults can be injected: a scripted list
for the first requests, or random rates of 429 (with Retry-After), 500, slow replies
(client timeouts), empty content and malformed JSON. It counts every request.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import random
import re
import socket
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("429", "500", "timeout", "empty", "malformed")


def shaped_reply(messages: list[dict], seed: int | None) -> str:
    prompt = messages[-1]["content"] if messages else ""
    digest = hashlib.sha256(f"{prompt}|{seed}".encode()).hexdigest()
    number = int(digest[:6], 16)
    if "'Idea N: score'" in prompt:
        count = len(re.findall(r"^Idea \d+:", prompt, re.M))
        return "\n".join(f"Idea {i + 1}: {(number >> i) % 10 + 1}" for i in range(count))
    if "Answer only 'Response N'" in prompt:
        count = len(re.findall(r"^Response \d+:", prompt, re.M))
        return f"Response {number % max(count, 1) + 1}"
    if "Novelty: <number>" in prompt:
        return f"Novelty: {number % 10 + 1}\nUsefulness: {(number // 10) % 10 + 1}"
    if "'Score: <number>'" in prompt:
        return f"Score: {number % 10 + 1}"
    if "Answer 'A', 'B' or 'tie'" in prompt:
        return "AB"[number % 2]
    if "Answer with a single number" in prompt:
        return str(number % 7 + 1)
    if "Choose one action" in prompt:
        if number % 3 == 0:
            return "Agree: No changes needed"
        return f"Modify: a refined plan number {digest[:8]} using shared depots - Reason: stronger"
    words = ["idea", digest[:8], "community", "refill", "network", "rewards", "sensors", "schools"]
    return " ".join(words[(number + i) % len(words)] for i in range(24))


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # hundreds of clients connect at once; the default backlog is 5
    daemon_threads = True


class LoopbackServer:
    """``with LoopbackServer(delay=0.05) as server: server.base_url`` ..."""

    def __init__(self, *, delay: float = 0.0, script: list[str] | None = None,
                 fault_rates: dict[str, float] | None = None, seed: int = 0,
                 timeout_sleep: float = 5.0, retry_after: float = 0.05):
        self.delay = delay
        self.script = list(script or [])
        self.fault_rates = fault_rates or {}
        self.rng = random.Random(seed)
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after
        self.requests = 0
        self.by_outcome: dict[str, int] = {}
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "LoopbackServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


    def _choose_fault(self) -> str | None:
        with self.lock:
            self.requests += 1
            if self.script:
                fault = self.script.pop(0)
                return None if fault == "ok" else fault
            draw = self.rng.random()
            for fault in FAULTS:
                rate = self.fault_rates.get(fault, 0.0)
                if draw < rate:
                    return fault
                draw -= rate
        return None

    def _count(self, outcome: str) -> None:
        with self.lock:
            self.by_outcome[outcome] = self.by_outcome.get(outcome, 0) + 1

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def setup(self):
                super().setup()  # no Nagle: headers and body must not wait for a delayed ACK
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self):
                with server.lock:
                    stats = {"requests": server.requests, "by_outcome": dict(server.by_outcome)}
                self._send(200, json.dumps(stats).encode())

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.bodies.append(body)
                fault = server._choose_fault()
                time.sleep(server.delay)
                if fault == "timeout":
                    time.sleep(server.timeout_sleep)
                server._count(fault or "ok")
                if fault == "429":
                    return self._send(429, b'{"error": {"message": "rate limited"}}',
                                      {"Retry-After": str(server.retry_after)})
                if fault == "500":
                    return self._send(500, b'{"error": {"message": "server error"}}')
                if fault == "malformed":
                    return self._send(200, b'{"choices": [ {"message": ')
                text = "" if fault == "empty" else shaped_reply(body.get("messages", []), body.get("seed"))
                reply = {"id": "loop", "object": "chat.completion", "created": int(time.time()),
                         "model": body.get("model", "loopback"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": text}}],
                         "usage": {"prompt_tokens": sum(len(m.get("content", "").split())
                                                        for m in body.get("messages", [])),
                                   "completion_tokens": len(text.split()),
                                   "total_tokens": 0}}
                self._send(200, json.dumps(reply).encode())

        return Handler


def _serve_forever(options: dict, port_queue) -> None:
    server = LoopbackServer(**options)
    port_queue.put(server.server.server_address[1])
    server.server.serve_forever(poll_interval=0.05)


class LoopbackProcess:
    """The same server in a child process, so it does not share the client's GIL (benchmarks).

    ``requests`` and ``by_outcome`` are read from the server's ``GET /stats``.
    """

    def __init__(self, **options):
        context = multiprocessing.get_context("spawn")
        self._queue = context.Queue()
        self._process = context.Process(target=_serve_forever, args=(options, self._queue), daemon=True)
        self.port = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as response:
            return json.loads(response.read())

    @property
    def requests(self) -> int:
        return self._stats()["requests"]

    @property
    def by_outcome(self) -> dict:
        return self._stats()["by_outcome"]

    def __enter__(self) -> "LoopbackProcess":
        self._process.start()
        self.port = self._queue.get(timeout=60)
        return self

    def __exit__(self, *exc) -> None:
        self._process.terminate()
        self._process.join(timeout=10)
