"""Connecting to a Ray cluster, and what every distributed command shares.

``connect(address)`` joins an existing cluster (``ray start --head`` ...; ``"auto"`` finds
the one this machine belongs to) and ships this checkout's ``engine`` package to its workers
(Ray's ``runtime_env`` ``py_modules``), so every node runs the driver's code; the other
libraries (numpy, torch, sentence-transformers, onnxruntime) must be installed on each node,
as Ray's documentation asks of a cluster's Python environment.

``Tally`` is a small actor on the driver's node (``on_driver_node``) that workers report finished work to (how
much, on which node): the driver compares it with what it received, so work done twice
after a lost node is counted and said, and which nodes took part is known.

``HeadWatch`` notices a lost head: Ray's own client ends the process about a minute after
its control store stops answering, without a word; the watch says one line and exits 2
first. Everything the driver wrote before is whole (the run folder's appends, the SQLite
caches' transactions), so a re-run with ``--ray`` or without resumes.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from engine.errors import InputError

HEAD_LOST_AFTER_S = 6.0  # the head's control port refusing connections this long: lost


def _ray():
    try:
        import ray
    except ImportError:
        raise InputError("--ray needs the ray package (pip install ray)", field="--ray") from None
    return ray


def connect(address: str) -> "ClusterSession":
    """Join the cluster at ``address`` (``host:port`` of its head, or ``auto``)."""
    if not address or not str(address).strip():
        raise InputError("give the head's HOST:PORT, or auto", field="--ray")
    return ClusterSession(str(address).strip())


def runtime_env() -> dict[str, Any]:
    """What a driver asks of the workers: this checkout's ``engine`` package shipped to them."""
    import engine

    return {"py_modules": [str(Path(engine.__file__).resolve().parent)],
            "env_vars": {"RAY_USAGE_STATS_ENABLED": "0"}}


class ClusterSession:
    """One driver's connection: ``with connect(address) as cluster: ...``."""

    def __init__(self, address: str):
        self.address = address
        self.watch: HeadWatch | None = None

    def __enter__(self) -> "ClusterSession":
        ray = _ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if ray.is_initialized():  # a test or a notebook that connected already
            self._owned = False
        else:
            try:
                ray.init(address=self.address, logging_level="ERROR", log_to_driver=False,
                         runtime_env=runtime_env())
            except ConnectionError as error:
                raise InputError(f"cannot reach a Ray cluster at {self.address} ({error})",
                                 field="--ray") from None
            except Exception as error:  # ray raises several types for an unusable address
                raise InputError(f"cannot join the Ray cluster at {self.address} "
                                 f"({type(error).__name__}: {' '.join(str(error).split())[:200]})",
                                 field="--ray") from None
            self._owned = True
        gcs = ray.get_runtime_context().gcs_address
        self.watch = HeadWatch(gcs)
        self.watch.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.watch is not None:
            self.watch.stop()
        if self._owned:
            _ray().shutdown()

    # -- what the commands ask of the cluster ---------------------------------------------
    @staticmethod
    def resources() -> dict[str, float]:
        return dict(_ray().cluster_resources())

    @staticmethod
    def alive_nodes() -> int:
        return sum(1 for node in _ray().nodes() if node.get("Alive"))

    def slots(self, cpus_per_task: float = 1.0, gpus_per_task: float = 0.0) -> int:
        """How many tasks of that size the cluster holds at once (at least 1)."""
        resources = self.resources()
        if gpus_per_task > 0:
            return max(1, int(resources.get("GPU", 0) // gpus_per_task))
        return max(1, int(resources.get("CPU", 1) // max(cpus_per_task, 1e-9)))

    @staticmethod
    def tally() -> Any:
        """A new ``Tally`` actor placed on the driver's own node (it outlives worker nodes)."""
        return on_driver_node(Tally)


def on_driver_node(cls: type, *args: Any) -> Any:
    """Start ``cls(*args)`` as a Ray actor (no CPU) on the node this driver is attached to,
    so that losing a worker node never loses it.

    The node affinity is hard (``soft=False``): Ray's scheduler sends a request of no resources
    to a random node and keeps node affinity for it only when the affinity is hard
    (``src/ray/raylet/scheduling/cluster_resource_scheduler.cc``, ray-project/ray pull request
    25344). With ``soft=True`` 4 of 6 such actors landed on the worker node of the two-node
    test cluster, and died with it. The driver's node is not lost without the driver.
    """
    ray = _ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return ray.remote(num_cpus=0)(cls).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False)).remote(*args)


class Tally:
    """Counts reported by workers: ``add(kind, amount, node)``; ``totals()`` per kind and
    the nodes seen per kind (a Ray actor; plain class so it is testable alone)."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.nodes: dict[str, set[str]] = {}

    def add(self, kind: str, amount: int, node: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + int(amount)
        self.nodes.setdefault(kind, set()).add(node)

    def totals(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "nodes": {k: sorted(v) for k, v in self.nodes.items()}}


def report(tally, kind: str, amount: int) -> None:
    """From a worker: tell ``tally`` that ``amount`` of ``kind`` finished on this node,
    waiting until it is counted (so the driver, reading the tally after the last result,
    never reads it before a report still on its way)."""
    if tally is None:
        return
    import ray

    try:
        ray.get(tally.add.remote(kind, amount, ray.get_runtime_context().get_node_id()), timeout=60)
    except Exception:  # the count is information; the work itself is done
        pass


def head_lost_message(address: str) -> str:
    return (f"error: lost the Ray head at {address} (its control port stopped answering); "
            "what finished is saved: re-run with --ray ADDRESS or without --ray to resume")


class HeadWatch(threading.Thread):
    """Polls the head's control port; after ``HEAD_LOST_AFTER_S`` of refused connections
    prints one line and ends the process with status 2 (see the module docstring)."""

    def __init__(self, gcs_address: str, *, lost_after: float = HEAD_LOST_AFTER_S, poll: float = 0.5):
        super().__init__(name="ray-head-watch", daemon=True)
        host, _, port = gcs_address.rpartition(":")
        self.host, self.port = host or "127.0.0.1", int(port)
        self.address = gcs_address
        self.lost_after, self.poll = lost_after, poll
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def _answers(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=2.0):
                return True
        except OSError:
            return False

    def run(self) -> None:
        failing_since = None
        while not self._stop.wait(self.poll):
            if self._answers():
                failing_since = None
                continue
            failing_since = failing_since or time.monotonic()
            if time.monotonic() - failing_since >= self.lost_after and not self._stop.is_set():
                print(head_lost_message(self.address), file=sys.stderr, flush=True)
                os._exit(2)
