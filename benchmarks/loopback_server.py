"""A loopback OpenAI-compatible chat server for benchmarks and fault tests (not a model).

It answers ``POST /v1/chat/completions`` after a fixed delay with a short reply shaped to
what the prompt asks for (an idea, 'Idea N: score' lines, 'Response N', 'Novelty: x'...),
so protocols can run end to end against real HTTP. Faults can be injected: a scripted list
for the first requests, or random rates per fault. It counts every request by outcome.

Faults (``FAULTS``): ``429`` (Retry-After in seconds), ``429ms`` (``retry-after-ms``),
``429date`` (Retry-After as an HTTP-date), ``500``, ``503``, ``timeout``/``hang`` (answers
only after ``timeout_sleep`` s), ``drip`` (the reply one byte every ``drip_interval`` s),
``empty`` (empty content), ``null_content``, ``empty_choices``, ``malformed`` (cut JSON),
``reset`` (half the body, then a TCP reset), ``html`` (status 200 with an HTML page).
``POST /v1/embeddings`` answers with ``embedding_of(text)`` for every input (faults apply
the same way), listed in reverse order with each item's ``index``, so a client must put
them back in input order. Reply variants that are not errors: ``separators`` (U+2028, U+2029, U+0085 inside the
reply) and ``surrogate`` (a lone surrogate, ``\\ud800``, inside the reply).

``redirect`` answers 307 with ``Location: redirect_to`` (a client must not follow it). Broken
embedding replies (``EMBEDDING_FAULTS``, for ``/v1/embeddings`` only): NaN or infinite values,
one vector too few or too many, empty vectors, strings instead of numbers, vectors of two
sizes in one reply, a size other than ``dim``, all-zero vectors, no ``data`` list. A server
stops by itself after ``lifetime`` seconds (when given), even if its owner never closes it.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import multiprocessing
import random
import re
import socket
import struct
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("429", "500", "timeout", "empty", "malformed", "429ms", "429date", "503", "hang", "drip",
          "null_content", "empty_choices", "reset", "html", "separators", "surrogate")
NOT_ERRORS = ("separators", "surrogate")  # replies that a client must accept as they are
EMBEDDING_FAULTS = ("emb_nan", "emb_inf", "emb_few", "emb_many", "emb_empty", "emb_strings",
                    "emb_ragged", "emb_resized", "emb_zero", "emb_no_data", "emb_nested_strings")
SEPARATORS = " \u2028 \u2029 \u0085 "


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


def embedding_of(text: str, dim: int = 8) -> list[float]:
    """A fixed vector per text, from its SHA-256: what the fake server answers."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [digest[i] / 255.0 - 0.5 for i in range(dim)]


def embeddings_reply(texts: list[str], fault: str | None, dim: int = 8, model: str = "loopback") -> bytes:
    """The body of an embeddings reply (in reverse order, with indexes), broken as ``fault`` says."""
    vectors = [embedding_of(t, dim) for t in texts]
    if not vectors:  # nothing asked, nothing to break
        pass
    elif fault == "emb_nan":
        vectors[-1][0] = float("nan")
    elif fault == "emb_inf":
        vectors[0][-1] = float("inf")
    elif fault == "emb_few":
        vectors = vectors[:-1]
    elif fault == "emb_many":
        vectors = vectors + [embedding_of("extra", dim)]
    elif fault == "emb_empty":
        vectors = [[] for _ in vectors]
    elif fault == "emb_strings":
        vectors = [[str(x) for x in v] for v in vectors]
    elif fault == "emb_nested_strings":
        vectors = ["not a vector" for _ in vectors]
    elif fault == "emb_ragged":
        vectors = [v if i % 2 == 0 else v + [0.25] for i, v in enumerate(vectors)]
        if len(vectors) == 1:
            vectors = [vectors[0] + [0.25]]
    elif fault == "emb_resized":
        vectors = [embedding_of(t, dim + 3) for t in texts]
    elif fault == "emb_zero":
        vectors = [[0.0] * dim for _ in vectors]
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)][::-1]
    reply = {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 0, "total_tokens": 0}}
    if fault == "emb_no_data":
        reply.pop("data")
    # NaN and Infinity as JavaScript literals, as a careless server writes them
    return json.dumps(reply).encode()


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # hundreds of clients connect at once; the default backlog is 5
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that went away (timed out, killed) is expected here; anything else is not."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class LoopbackServer:
    """``with LoopbackServer(delay=0.05) as server: server.base_url`` ..."""

    def __init__(self, *, delay: float = 0.0, script: list[str] | None = None,
                 fault_rates: dict[str, float] | None = None, seed: int = 0,
                 timeout_sleep: float = 5.0, retry_after: float = 0.05,
                 retry_after_date: float = 1.0, drip_interval: float = 0.5,
                 redirect_to: str | None = None, dim: int = 8, lifetime: float | None = None):
        self.delay = delay
        self.redirect_to = redirect_to
        self.dim = dim
        self.lifetime = lifetime
        self._stopper: threading.Timer | None = None
        self.retry_after_date = retry_after_date
        self.drip_interval = drip_interval
        self.script = list(script or [])
        self.fault_rates = fault_rates or {}
        self.rng = random.Random(seed)
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after
        self.requests = 0
        self.by_outcome: dict[str, int] = {}
        self.bodies: list[dict] = []
        self.paths: list[str] = []  # request paths, query included
        self.lock = threading.Lock()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "LoopbackServer":
        self.thread.start()
        if self.lifetime is not None:  # stops by itself, whatever its owner does
            self._stopper = threading.Timer(self.lifetime, self.server.shutdown)
            self._stopper.daemon = True
            self._stopper.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._stopper is not None:
            self._stopper.cancel()
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

            def _drip(self, body: bytes):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for position in range(len(body)):
                        self.wfile.write(body[position:position + 1])
                        time.sleep(server.drip_interval)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True

            def _reset(self, body: bytes):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body[: len(body) // 2])
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))  # close sends RST
                    self.connection.close()
                except OSError:
                    pass
                self.close_connection = True

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client went away mid-request (closed its connection)
                    self.close_connection = True
                    return None
                body = json.loads(raw or b"{}")
                with server.lock:
                    server.bodies.append(body)
                    server.paths.append(self.path)
                fault = server._choose_fault()
                server._count(fault or "ok")  # on arrival: a client may give up before the answer
                time.sleep(server.delay)
                if fault in ("timeout", "hang"):
                    time.sleep(server.timeout_sleep)
                if fault == "429":
                    return self._send(429, b'{"error": {"message": "rate limited"}}',
                                      {"Retry-After": str(server.retry_after)})
                if fault == "429ms":
                    return self._send(429, b'{"error": {"message": "rate limited"}}',
                                      {"retry-after-ms": str(int(server.retry_after * 1000))})
                if fault == "429date":
                    when = email.utils.formatdate(time.time() + server.retry_after_date, usegmt=True)
                    return self._send(429, b'{"error": {"message": "rate limited"}}',
                                      {"Retry-After": when})
                if fault in ("500", "503"):
                    return self._send(int(fault), b'{"error": {"message": "server error"}}')
                if fault == "malformed":
                    return self._send(200, b'{"choices": [ {"message": ')
                if fault == "html":
                    page = b"<html><body><h1>Gateway</h1>upstream unavailable</body></html>"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return None
                if fault == "redirect":
                    return self._send(307, b'{"error": {"message": "moved"}}',
                                      {"Location": str(server.redirect_to or "http://127.0.0.1:9/v1")
                                       + self.path.split("/v1", 1)[-1]})
                if self.path.split("?", 1)[0].rstrip("/").endswith("/embeddings"):
                    texts = body.get("input", [])
                    texts = [texts] if isinstance(texts, str) else texts
                    return self._send(200, embeddings_reply(texts, fault, server.dim,
                                                            body.get("model", "loopback")))
                text = shaped_reply(body.get("messages", []), body.get("seed"))
                if fault == "empty":
                    text = ""
                elif fault == "separators":
                    text = text[:20] + SEPARATORS + text[20:]
                elif fault == "surrogate":
                    text = text[:20] + " \ud800 " + text[20:]
                message = {"role": "assistant", "content": None if fault == "null_content" else text}
                choices = [] if fault == "empty_choices" else [{"index": 0, "finish_reason": "stop",
                                                                "message": message}]
                reply = {"id": "loop", "object": "chat.completion", "created": int(time.time()),
                         "model": body.get("model", "loopback"), "choices": choices,
                         "usage": {"prompt_tokens": sum(len(m.get("content", "").split())
                                                        for m in body.get("messages", [])),
                                   "completion_tokens": len(text.split()),
                                   "total_tokens": 0}}
                payload = json.dumps(reply).encode()  # ASCII: the surrogate goes as a \\ud800 escape
                if fault == "drip":
                    return self._drip(payload)
                if fault == "reset":
                    return self._reset(payload)
                self._send(200, payload)

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
