"""A real Ray cluster of a few nodes on 127.0.0.1, for the cluster tests and ``bench_scale --ray``.

Each node is one ``ray start --block`` process (the head first, then workers joining it)
with its own temporary folder, ``--num-cpus`` CPUs and a bounded ``--object-store-memory``
(Ray's default reserves about 7 GB a node). Everything is stopped by process id: the node's
``ray start`` process and every process below it (``/proc``); ``ray stop`` is never called,
since it ends every Ray process on the machine, not only these.

Ray replaces ``--node-ip-address=127.0.0.1`` by the machine's network address when it has
one, so the cluster's traffic could leave loopback: run it, and its driver, inside a network
namespace that has only loopback (``in_loopback_namespace`` re-executes a command there:
``unshare`` as root, with a PID namespace too, so nothing it started outlives it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAMESPACE_ENV = "CDL_LOOPBACK_NAMESPACE"
# The head declares a node dead after this many failed health checks, one a second (Ray's
# defaults: every 3 s, 5 failures, 10 s timeout, so about 25 s after a node is killed). A
# killed node refuses at once; a slow one still has 5 checks of 4 s each to answer.
FAST_FAILURE_DETECTION = {"RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "4000",
                          "RAY_health_check_failure_threshold": "5"}


def ray_executable() -> str:
    candidate = Path(sys.executable).with_name("ray")
    return str(candidate) if candidate.exists() else (shutil.which("ray") or "ray")


def unshare_problem() -> str | None:
    """Why a loopback-only namespace cannot be made here, or None when it can."""
    if os.environ.get(NAMESPACE_ENV):
        return None
    if not shutil.which("unshare"):
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-n", "-p", "-f", "--mount-proc", sys.executable, __file__, "true"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"cannot make a network namespace (unshare needs root): {probe.stderr.strip()[:200]}"
    return None


def in_loopback_namespace(argv: list[str], *, env: dict | None = None, timeout: float | None = None,
                          **kwargs) -> subprocess.CompletedProcess:
    """Run ``argv`` inside new network and PID namespaces with only loopback up (this file,
    run as a script there, brings ``lo`` up and then becomes ``argv``)."""
    environment = {**os.environ, **(env or {}), NAMESPACE_ENV: "1"}
    return subprocess.run(["unshare", "-n", "-p", "-f", "--mount-proc", sys.executable, __file__, *argv],
                          env=environment, timeout=timeout, **kwargs)


def loopback_up() -> None:
    """Bring the loopback interface of this network namespace up, as ``ip link set lo up``
    does (the SIOCGIFFLAGS/SIOCSIFFLAGS ioctls of netdevice(7)), without needing iproute2."""
    import fcntl
    import struct

    get_flags, set_flags, up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as handle:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(handle, get_flags, request))[1]
        fcntl.ioctl(handle, set_flags, struct.pack("16sh", b"lo", flags | up))


def interfaces() -> list[str]:
    """The network interfaces of this process's network namespace (``/proc/net/dev``)."""
    with open("/proc/net/dev") as handle:
        return sorted(line.split(":", 1)[0].strip() for line in handle.readlines()[2:])


def only_loopback() -> bool:
    """True when ``lo`` is the only interface (inside the namespace)."""
    return interfaces() == ["lo"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first found, from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, ended but not yet reaped, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class LoopbackCluster:
    """``with LoopbackCluster(nodes=2) as cluster: cluster.address`` ..."""

    def __init__(self, nodes: int = 2, *, cpus: int = 1, object_store_mb: int = 120,
                 root: str | Path | None = None, start_timeout: float = 180.0):
        self.n_nodes, self.cpus, self.object_store_mb = nodes, cpus, object_store_mb
        # short: Ray's socket paths under it must stay within AF_UNIX's 107 bytes
        self._own_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="cdlray", dir="/tmp"))
        self.port = _free_port()
        self.start_timeout = start_timeout
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def head_temp_dir(self) -> str:
        """The head's temp folder: ``ray.init(address, _temp_dir=...)`` with it attaches a
        driver to the head (all nodes share 127.0.0.1, and Ray otherwise may pick any)."""
        return str(self.root / "node0")

    def _start_node(self, head: bool) -> subprocess.Popen:
        index = len(self.processes)
        folder = self.root / f"node{index}"
        folder.mkdir(parents=True, exist_ok=True)
        command = [ray_executable(), "start", "--block", "--node-ip-address=127.0.0.1",
                   f"--num-cpus={self.cpus}", "--num-gpus=0",
                   f"--object-store-memory={self.object_store_mb * 1024 * 1024}",
                   f"--temp-dir={folder}", "--disable-usage-stats"]
        command += ([f"--head", f"--port={self.port}", "--include-dashboard=false"] if head
                    else [f"--address={self.address}"])
        log = folder / "ray_start.log"
        self.logs.append(log)
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **FAST_FAILURE_DETECTION}
        process = subprocess.Popen(command, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                                   env=env, start_new_session=True)
        self.processes.append(process)
        return process

    def start(self) -> "LoopbackCluster":
        """Start every node at once (a worker's ``ray start`` waits for the head's port,
        so their slow starts overlap) and wait for the head's port."""
        self._start_node(head=True)
        for _ in range(self.n_nodes - 1):
            self._start_node(head=False)
        deadline = time.monotonic() + self.start_timeout
        while not self._port_open():
            for index in range(len(self.processes)):
                self._check_alive(index)
            if time.monotonic() > deadline:
                raise RuntimeError(f"the head did not open {self.address}: {self.log_tail(0)}")
            time.sleep(0.2)
        return self

    def wait_for_nodes(self, count: int | None = None, timeout: float | None = None) -> None:
        """From a driver connected to the cluster: wait until ``count`` nodes are alive."""
        import ray

        count = self.n_nodes if count is None else count
        deadline = time.monotonic() + (timeout or self.start_timeout)
        while sum(1 for n in ray.nodes() if n.get("Alive")) < count:
            for index in range(len(self.processes)):
                self._check_alive(index)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{count} nodes not up: {self.log_tail(len(self.processes) - 1)}")
            time.sleep(0.3)

    def _port_open(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def _check_alive(self, index: int) -> None:
        process = self.processes[index]
        if process.poll() is not None and not getattr(process, "killed_on_purpose", False):
            raise RuntimeError(f"node {index} ended ({process.returncode}): {self.log_tail(index)}")

    def log_tail(self, index: int) -> str:
        try:
            return " | ".join(self.logs[index].read_text(errors="replace").splitlines()[-8:])
        except OSError:
            return "(no log)"

    def node_pids(self, index: int) -> list[int]:
        """The node's ``ray start`` process and everything below it."""
        root = self.processes[index].pid
        return [root, *descendants(root)]

    def kill_node(self, index: int) -> list[int]:
        """End node ``index`` at once (SIGKILL to each of its processes, by id): a lost node."""
        process = self.processes[index]
        process.killed_on_purpose = True
        pids = self.node_pids(index)
        for pid in [*pids[1:], pids[0]]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait(timeout=30)
        return pids

    def node_index(self, node_id: str) -> int:
        """Which of this cluster's nodes has Ray node id ``node_id`` (from a connected
        driver: each node's object store socket lies under its own temp folder)."""
        import ray

        for node in ray.nodes():
            if node.get("NodeID") == node_id:
                socket_path = Path(node.get("ObjectStoreSocketName", ""))
                for index in range(len(self.logs)):
                    if (self.root / f"node{index}") in socket_path.parents:
                        return index
        raise LookupError(f"node {node_id} is not one of this cluster's")

    def stop(self, grace: float = 5.0) -> None:
        """Stop every node: SIGTERM to each node's ``ray start`` and every process below
        it, then, after ``grace`` seconds, SIGKILL to whatever is left (``ray start
        --block`` itself can take 20 s and more to end on SIGTERM)."""
        pids = [pid for index in reversed(range(len(self.processes)))
                if self.processes[index].poll() is None for pid in self.node_pids(index)]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            for process in self.processes:
                process.poll()  # reap the ray start processes as they end
            time.sleep(0.1)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.processes.clear()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "LoopbackCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":  # inside the namespace: loopback up, then become the command
    loopback_up()
    os.execvp(sys.argv[1], sys.argv[1:])
