"""Connecting to a Ray cluster, and what every distributed command shares.

``connect(address)`` joins an existing cluster (``ray start --head`` ...; ``"auto"`` finds
the one this machine belongs to) and ships this checkout's ``engine`` package to its workers
(Ray's ``runtime_env`` ``py_modules``), so every node runs the driver's code; the other
libraries (numpy, torch, sentence-transformers, onnxruntime) must be installed on each node,
as Ray's documentation asks of a cluster's Python environment.

``Tally`` is a small actor on the driver's node (``on_driver_node``) that workers report finished work to (how
much, on which node): the driver compares it with what it received, so work done twice
after a lost node is counted and said, and which nodes took part is known.

``check_reachable`` asks the head's control port once, within ``CONNECT_LIMIT_S``, before
anything else happens: Ray's own client retries an address where nothing listens, or where an
HTTP server answers, for minutes. ``needs`` refuses at once a placement the cluster's
resources can never satisfy (Ray would wait for it without end).

``--ray local`` starts a private one-node cluster on 127.0.0.1 for this command alone
(``private_cluster_env``): its authentication token, temp folder, sockets and logs live in
one folder of its own (Ray's ``RAY_AUTH_TOKEN_PATH``, ``RAY_TMPDIR`` and ``_temp_dir``), never
in ``~/.ray`` or ``/tmp/ray``, and the folder is removed when the command ends.

``HeadWatch`` notices a lost head: Ray's own client ends the process about a minute after
its control store stops answering, without a word; the watch says one line and exits 2
first. Everything the driver wrote before is whole (the run folder's appends, the SQLite
caches' transactions), so a re-run with ``--ray`` or without resumes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from engine.errors import InputError

HEAD_LOST_AFTER_S = 6.0  # the head's control port refusing connections this long: lost
CONNECT_LIMIT_S = 10.0  # the head's control port must answer within this, or --ray is refused
# HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113, 3.4 and 6.5): a
# Ray head's control port (GCS) is a gRPC server, which answers with a SETTINGS frame of its own
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_SETTINGS_FRAME = 4
LOCAL = "local"  # --ray local: a private cluster on this machine, for one command


def _ray():
    try:
        import ray
    except ImportError:
        raise InputError("--ray needs the ray package (pip install ray)", field="--ray") from None
    return ray


def connect(address: str, *, needs: dict[str, float] | None = None) -> "ClusterSession":
    """Join the cluster at ``address`` (``host:port`` of its head, ``auto``, or ``local``).

    ``needs``: ``{option: (resource, amount, count)}`` placements checked once connected (see
    ``check_placement``)."""
    if not address or not str(address).strip():
        raise InputError("give the head's HOST:PORT, auto or local", field="--ray")
    address = str(address).strip()
    check_reachable(address)
    return ClusterSession(address, needs=needs)


def check_reachable(address: str, *, limit: float = CONNECT_LIMIT_S) -> None:
    """Refuse, within ``limit`` seconds, a ``HOST:PORT`` where no Ray head answers: nothing
    listening, no answer at all, or a server that does not speak gRPC (an HTTP port, say).
    ``auto``, ``local`` and Ray Client's ``ray://`` addresses are left to Ray."""
    if address in ("auto", LOCAL) or address.startswith("ray://"):
        return
    host, sep, port = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"{address!r}: expected the head's HOST:PORT (e.g. 127.0.0.1:6379), auto or "
                         "local", field="--ray")
    answer = b""
    try:
        with socket.create_connection((host, int(port)), timeout=limit) as connection:
            connection.settimeout(limit)
            connection.sendall(_HTTP2_PREFACE)
            deadline = time.monotonic() + limit
            while len(answer) < 9 and time.monotonic() < deadline:
                chunk = connection.recv(9 - len(answer))
                if not chunk:
                    break
                answer += chunk
    except socket.timeout:
        raise InputError(f"no Ray head answered at {address} within the {limit:.0f} s time limit",
                         field="--ray") from None
    except OSError as error:
        raise InputError(f"cannot reach a Ray head at {address} "
                         f"({error.strerror or type(error).__name__}; tried for at most {limit:.0f} s)",
                         field="--ray") from None
    if len(answer) < 9 or answer[3] != _SETTINGS_FRAME:
        raise InputError(f"{address} answers, but not as a Ray head's control port (gRPC): give the "
                         "port of `ray start --head --port`, 6379 by default", field="--ray")


def check_placement(needs: dict[str, tuple[str, float, int]], nodes: list[dict], address: str) -> None:
    """Refuse a placement the cluster can never satisfy, naming the option and what the
    cluster has: ``needs`` maps an option to ``(resource, per task, tasks at once)``; each
    task must fit on one alive node, and all of them in the cluster at once (an actor pool
    of fixed size waits for every actor)."""
    alive = [node.get("Resources", {}) for node in nodes if node.get("Alive")]
    for option, (resource, amount, count) in needs.items():
        if amount <= 0:
            continue
        per_node = [float(r.get(resource, 0)) for r in alive]
        has = (f"the cluster at {address} has {_amount(sum(per_node))} {resource} in all "
               f"({', '.join(_amount(x) for x in per_node) or 'no'} on its {len(per_node)} node(s))")
        if not any(x >= amount for x in per_node):
            raise InputError(f"each actor asks for {_amount(amount)} {resource} on one node, but {has}",
                             field=option)
        slots = sum(int(x // amount) for x in per_node)
        if count > slots:
            raise InputError(f"{count} actors of {_amount(amount)} {resource} each cannot all be placed: "
                             f"{has}", field=option)


def _amount(value: float) -> str:
    return f"{value:g}"


@contextlib.contextmanager
def private_cluster_env(*, one_machine: bool = True):
    """A folder of its own for a cluster started by this process, and the environment that
    points Ray there: the token (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN_PATH``), the temp
    folder (``RAY_TMPDIR``). Yields the folder; the environment is restored and the folder
    removed on the way out. The folder is short (AF_UNIX socket paths below it are limited
    to 107 bytes). ``one_machine``: Ray's one-machine mode too, which keeps 127.0.0.1 as the
    node's address (a cluster of several nodes, as the loopback test cluster, cannot use it:
    ``ray start --address`` refuses to join then)."""
    folder = Path(tempfile.mkdtemp(prefix="cdlray", dir="/tmp"))
    token = folder / "auth_token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o600)
    # RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: Ray's one-machine mode, in which it keeps 127.0.0.1
    # rather than putting the machine's network address in its place (ray._private.services)
    values = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_TMPDIR": str(folder),
              "RAY_USAGE_STATS_ENABLED": "0",
              **({"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"} if one_machine else {})}
    before = {name: os.environ.get(name) for name in (*values, "RAY_AUTH_TOKEN",
                                                      "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")}
    os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    os.environ.pop("RAY_AUTH_TOKEN", None)  # a token in the environment comes before the file
    os.environ.update(values)
    _reread_auth_settings()
    try:
        yield folder
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _reread_auth_settings()
        shutil.rmtree(folder, ignore_errors=True)


def _reread_auth_settings() -> None:
    """Where Ray is imported already, have it read the authentication mode and token again:
    it reads them once (its config at import, the token at first use), so a process that
    imported ray before ``private_cluster_env`` would otherwise connect without the token
    (``InvalidAuthToken``). The same two calls Ray makes itself when it turns token
    authentication on (``ray._private.authentication.authentication_token_setup``)."""
    if "ray._raylet" not in sys.modules:
        return
    raylet = sys.modules["ray._raylet"]
    with contextlib.suppress(Exception):
        raylet.Config.initialize("")
    with contextlib.suppress(Exception):
        raylet.AuthenticationTokenLoader.instance().reset_cache()


def runtime_env() -> dict[str, Any]:
    """What a driver asks of the workers: this checkout's ``engine`` package shipped to them."""
    import engine

    return {"py_modules": [str(Path(engine.__file__).resolve().parent)],
            "env_vars": {"RAY_USAGE_STATS_ENABLED": "0"}}


class ClusterSession:
    """One driver's connection: ``with connect(address) as cluster: ...``."""

    def __init__(self, address: str, *, needs: dict[str, tuple[str, float, int]] | None = None):
        self.address = address
        self.needs = needs or {}
        self.watch: HeadWatch | None = None
        self._private: contextlib.ExitStack | None = None
        self._owned = False

    def __enter__(self) -> "ClusterSession":
        already = "ray" in sys.modules and sys.modules["ray"].is_initialized()
        if self.address == LOCAL and not already:
            # before ray is imported: its constants read the environment once, at import
            self._private = contextlib.ExitStack()
            folder = self._private.enter_context(private_cluster_env())
        ray = _ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if already:  # a test or a notebook that connected already
            self._owned = False
        else:
            try:
                if self.address == LOCAL:
                    ray.init(address="local", logging_level="ERROR", log_to_driver=False,
                             runtime_env=runtime_env(), _temp_dir=str(folder),
                             _node_ip_address="127.0.0.1", include_dashboard=False)
                else:
                    ray.init(address=self.address, logging_level="ERROR", log_to_driver=False,
                             runtime_env=runtime_env())
            except ConnectionError as error:
                self._close_private()
                raise InputError(f"cannot reach a Ray cluster at {self.address} ({error})",
                                 field="--ray") from None
            except Exception as error:  # ray raises several types for an unusable address
                self._close_private()
                raise InputError(f"cannot join the Ray cluster at {self.address} "
                                 f"({type(error).__name__}: {' '.join(str(error).split())[:200]})",
                                 field="--ray") from None
            except BaseException:
                self._close_private()
                raise
            self._owned = True
        try:
            check_placement(self.needs, ray.nodes(), self.address)
        except InputError:
            self.__exit__()
            raise
        gcs = ray.get_runtime_context().gcs_address
        self.watch = HeadWatch(gcs)
        self.watch.start()
        return self

    def _close_private(self) -> None:
        if self._private is not None:
            self._private.close()
            self._private = None

    def __exit__(self, *exc) -> None:
        if self.watch is not None:
            self.watch.stop()
        try:
            if self._owned:
                _ray().shutdown()
        finally:
            self._close_private()

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
