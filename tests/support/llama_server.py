"""A real OpenAI-compatible server for the slow tests: ``python -m llama_cpp.server``
(llama-cpp-python's server extras) serving the bundled SmolLM2-135M GGUF on a free
loopback port, embeddings on, exactly as a user would start it before pointing
``--base-url`` at it. Started once per test session, stopped at the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass

import pytest

MODEL_ALIAS = "smollm2"


@dataclass
class RealServer:
    base_url: str
    model: str
    process: subprocess.Popen

    def post(self, path: str, payload: dict) -> dict:
        """A raw request, independent of the project's client (for expected values)."""
        request = urllib.request.Request(self.base_url + path, data=json.dumps(payload).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] not installed")
    from engine.llm.local_backend import default_gguf_path

    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf_path()),
             "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
             "--embedding", "true", "--n_ctx", "4096", "--n_threads", "1", "--verbose", "false"],
            stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({process.returncode}): "
                                   f"{log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(base_url + "/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server not ready after 120 s: {log_path.read_text()[-2000:]}")
            time.sleep(0.25)
        yield RealServer(base_url=base_url, model=MODEL_ALIAS, process=process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
