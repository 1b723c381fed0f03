"""Checks run on a real two-node Ray cluster on 127.0.0.1, inside a network namespace that
has only loopback (started by ``tests/engine/cluster/test_ray_cluster.py``; not collected on its own).

The cluster (``benchmarks.loopback_cluster``: two ``ray start`` processes, one CPU and a
bounded object store each, their own temp folders) is started once for the module and
stopped by process id; the last check kills the worker node mid-job. Its token, temp folders
and logs live in one folder of its own (``engine.cluster.connection.private_cluster_env``),
while another cluster, started as a user would by hand (``ray start --head``, with a token of
its own in ``~/.ray/auth_token``), runs beside it under the same home
(``CDL_HAND_CLUSTER_HOME``, set by the outer test); neither the home's ``.ray`` nor
``/tmp/ray`` gains anything from the project's clusters, ``--ray local`` included. Every expected value
comes from the same computation on one machine in this process: ``engine.embedding.embedder.Embedder``,
``engine.measures.compute.features_for_corpus`` and ``engine.runs.runner.run_grid`` without ``--ray``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.loopback_cluster import LoopbackCluster, NAMESPACE_ENV, interfaces
from engine.cli import main
from engine.corpus import Corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "cached_runs" / "local_smollm2" / "corpus.parquet"

if not os.environ.get(NAMESPACE_ENV):
    pytest.skip("runs inside the loopback namespace, started by tests/engine/cluster/test_ray_cluster.py",
                allow_module_level=True)


HOME_ENV = "CDL_HAND_CLUSTER_HOME"


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path below ``folder`` with a file's bytes (None for a folder or socket)."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def hand_cluster(tmp_path_factory):
    """A Ray head started as a user would (``ray start --head``), with a token the user made
    in the home folder (``ray get-auth-token --generate`` writes ``~/.ray/auth_token``), so
    token authentication is on for it; its temp folder is the test's (Ray's default, /tmp/ray,
    would be the machine's). Yields (address, home, what ~/.ray and /tmp/ray held)."""
    import secrets
    import subprocess

    from benchmarks.loopback_cluster import descendants, ray_executable

    home = Path(os.environ.get(HOME_ENV) or tmp_path_factory.mktemp("home"))
    assert Path.home() == home, "the outer test runs these checks with HOME set to the test's home"
    (home / ".ray").mkdir(parents=True, exist_ok=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    temp = Path(tempfile.mkdtemp(prefix="cdlhand", dir="/tmp"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    log = open(temp / "ray_start.log", "wb")
    process = subprocess.Popen([ray_executable(), "start", "--head", "--block", f"--port={port}",
                                "--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0",
                                f"--object-store-memory={80 * 1024 * 1024}", f"--temp-dir={temp}",
                                "--include-dashboard=false", "--disable-usage-stats"],
                               stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    address = f"127.0.0.1:{port}"
    from engine.cluster.connection import check_reachable

    deadline = time.monotonic() + 120
    while True:
        try:
            check_reachable(address, limit=2)
            break
        except Exception:
            assert process.poll() is None, (temp / "ray_start.log").read_text()[-2000:]
            assert time.monotonic() < deadline, (temp / "ray_start.log").read_text()[-2000:]
            time.sleep(0.5)
    before = {"home": tree(home / ".ray"), "tmp_ray": tree(Path("/tmp/ray"))}
    try:
        yield address, home, before
    finally:
        pids = [process.pid, *descendants(process.pid)]
        for pid in [*pids[1:], pids[0]]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.wait(timeout=30)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(hand_cluster):
    import ray

    from engine.cluster.connection import private_cluster_env, runtime_env

    assert interfaces() == ["lo"]  # nothing the cluster sends can leave this machine
    # the cluster's token, temp folders and logs in one folder of its own (the environment
    # its nodes and this driver share), whatever token the home folder holds
    with private_cluster_env(one_machine=False) as folder, \
            LoopbackCluster(nodes=2, cpus=1, object_store_mb=100, root=folder) as nodes:
        ray.init(address=nodes.address, _temp_dir=nodes.head_temp_dir, logging_level="ERROR",
                 log_to_driver=False,
                 runtime_env=runtime_env())
        try:
            nodes.wait_for_nodes(2)
            yield nodes
        finally:
            ray.shutdown()


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    corpus = Corpus.from_parquet(CORPUS).trajectory_view()
    path = tmp_path_factory.mktemp("corpus") / "corpus.jsonl"
    by_length: dict[int, list] = {}
    for conversation in corpus:  # several lengths: one machine computes them in several chunks
        if len(conversation.turns) >= 4 and len(by_length.setdefault(len(conversation.turns), [])) < 4:
            by_length[len(conversation.turns)].append(conversation)
    chosen = [c for length in sorted(by_length) for c in by_length[length]][:20]
    assert len({len(c.turns) for c in chosen}) >= 4
    Corpus(chosen, name="ray-check").to_jsonl(path)
    return path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


_MODEL = {}


def reference_vectors(texts: list[str]) -> np.ndarray:
    """One machine's vectors: the bundled model in this process, no cache."""
    from engine.embedding.embedder import encode_with, load_sentence_model

    if "model" not in _MODEL:
        _MODEL["model"] = load_sentence_model("all-MiniLM-L6-v2", progress=False)
    return encode_with(_MODEL["model"], texts, batch_size=64)


@pytest.fixture(scope="module")
def embedded(cluster, small_corpus, tmp_path_factory):
    """``embed --ray`` of the small corpus: (folder, stdout, stderr)."""
    folder = tmp_path_factory.mktemp("embedded")
    code, out, err = cli("embed", str(small_corpus), str(folder / "e.npy"), "--cache",
                         str(folder / "cache.sqlite"), "--ray", cluster.address, "--ray-batch-size", "8",
                         "--no-progress")
    assert code == 0, err
    return folder, out, err


def test_embed_on_two_nodes_equals_one_machine_and_fills_the_same_cache(cluster, small_corpus, embedded,
                                                                        tmp_path):
    from engine.embedding.embedder import Embedder, text_key

    folder, out, err = embedded
    cache = folder / "cache.sqlite"
    assert "on 2 node(s)" in err  # both nodes embedded
    texts = [t.text for c in Corpus.from_jsonl(small_corpus).trajectory_view() for t in c.turns]
    vectors = np.load(folder / "e.npy")
    expected = reference_vectors(texts)
    assert vectors.shape == expected.shape
    assert float(np.abs(vectors - expected).max()) <= 1e-6
    # the driver wrote the cache under one machine's keys: one machine now makes no call
    one_machine = Embedder(cache=cache, progress=False)
    assert np.array_equal(one_machine.encode(texts), vectors)
    assert one_machine.model_calls == 0
    rows = sqlite3.connect(cache).execute("SELECT model, key FROM vectors").fetchall()
    assert sorted(key for _, key in rows) == sorted({text_key(t) for t in texts})
    assert {model for model, _ in rows} == {one_machine.model_name}
    # and a second pass on the cluster sends nothing to it
    code, out, err = cli("embed", str(small_corpus), str(tmp_path / "e2.npy"), "--cache", str(cache),
                         "--ray", cluster.address, "--no-progress")
    assert code == 0, err
    assert "model calls 0" in out and np.array_equal(np.load(tmp_path / "e2.npy"), vectors)


def test_features_on_two_nodes_are_bit_identical_in_input_order(cluster, embedded, tmp_path):
    from engine.embedding.turn_blocks import load_embeddings
    from engine.measures.compute import features_for_corpus
    from engine.measures.registry import feature_names

    folder = embedded[0]
    code, _, err = cli("features", str(folder / "e.npy"), "-o", str(tmp_path / "f.parquet"),
                       "--ray", cluster.address, "--ray-shard-turns", "20", "--no-progress")
    assert code == 0, err
    assert " node(s)" in err  # which nodes: Ray's choice (tiny shards often all go to the head)
    got = pd.read_parquet(tmp_path / "f.parquet")  # every bit kept
    ids, blocks = load_embeddings(folder / "e.npy", None)
    expected = features_for_corpus(blocks, speakers=blocks.speakers)  # embed wrote the speakers
    # every registered feature an .npy with speakers can give (it holds no turn text)
    assert list(expected.columns) == list(feature_names(given=("speaker",)))
    assert got["conversation_id"].tolist() == ids  # input order
    assert np.array_equal(got[list(expected.columns)].to_numpy(), expected.to_numpy(), equal_nan=True)
    shards = int(re.search(r"conversations in (\d+) shards", err).group(1))
    assert shards > 2  # 20-turn shards: the corpus went out in several pieces


KEY = "sk-loopback-test-key"
os.environ["OPENAI_API_KEY"] = KEY  # set before the nodes start: their workers inherit it


def grid_file(tmp_path: Path, base_url: str) -> Path:
    import yaml

    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ray-check", "model": "loop-model", "base_url": base_url, "concurrency": 3,
        "tasks": ["plastic_waste", "supply_chain"],
        "conditions": [{"method": "homo_mad", "agents": 2, "rounds": 1, "replicates": 3}]}))
    return path


def run_folder(folder: Path) -> tuple[dict, dict]:
    corpus = Corpus.from_jsonl(folder / "corpus.jsonl")
    sessions = {c.conversation_id: (c.final_idea, [t.text for t in c.turns]) for c in corpus}
    assert len(sessions) == len(corpus)  # each session once
    return sessions, json.loads((folder / "manifest.json").read_text())


def test_a_grid_on_two_nodes_gives_one_machines_sessions_usage_and_cache(cluster, tmp_path):
    from benchmarks.loopback_server import LoopbackServer

    with LoopbackServer(delay=0.02) as server:
        grid = grid_file(tmp_path, server.base_url)
        code, _, err = cli("run", "--grid", str(grid), "--out", str(tmp_path / "one"), "--no-progress")
        assert code == 0, err
        one_machine_requests = server.requests
        code, out, err = cli("run", "--grid", str(grid), "--out", str(tmp_path / "two"), "--no-progress",
                             "--ray", cluster.address)
        assert code == 0, err
        cluster_requests = server.requests - one_machine_requests
        assert "on 2 node(s)" in err and "made again after a lost node: 0" in err
        cluster_run = json.loads((tmp_path / "two" / "manifest.json").read_text())
        # a re-run on the cluster: everything done, not one request
        code, out, _ = cli("run", "--grid", str(grid), "--out", str(tmp_path / "two"), "--no-progress",
                           "--ray", cluster.address)
        assert code == 0 and json.loads(out)["skipped_done"] == 6
        assert server.requests - one_machine_requests == cluster_requests
        # the cache the driver wrote answers one machine: a fresh folder, zero requests
        before = server.requests
        code, _, err = cli("run", "--grid", str(grid), "--out", str(tmp_path / "three"), "--no-progress",
                           "--cache", str(tmp_path / "two" / "llm_cache.sqlite"))
        assert code == 0, err
        assert server.requests == before
    one, one_manifest = run_folder(tmp_path / "one")
    two, two_manifest = run_folder(tmp_path / "two")
    three, _ = run_folder(tmp_path / "three")
    assert len(one) == 6 and one == two == three  # the same sessions, turn for turn
    assert cluster_requests == one_machine_requests == one_manifest["usage_total"]["calls"]
    assert two_manifest["usage_total"] == one_manifest["usage_total"]
    assert two_manifest["cost_usd_last_run"] == one_manifest["cost_usd_last_run"]
    assert len(cluster_run["ray_last_run"]["nodes"]) == 2
    assert cluster_run["ray_last_run"]["calls"] == cluster_requests  # every call came back to the driver
    assert not (tmp_path / "two" / "failed.jsonl").exists() or \
        not (tmp_path / "two" / "failed.jsonl").read_text().strip()
    for path in (tmp_path / "two").iterdir():
        assert KEY.encode() not in path.read_bytes()


def test_what_the_driver_keeps_in_actors_lives_on_its_node(cluster):
    """The tally of work done and the grid's reply broker. With a soft node affinity these
    actors of no CPU went to a random node (4 of 6 on the worker node), to be lost with it;
    three tallies would all land on the driver's node by chance 1 time in 8."""
    import ray

    from engine.cluster.connection import connect, on_driver_node
    from engine.cluster.sessions import ResponseBroker

    def node_of(actor) -> str:
        return ray.get(actor.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))

    here = ray.get_runtime_context().get_node_id()
    with connect(cluster.address) as session:
        actors = [session.tally() for _ in range(3)] + [on_driver_node(ResponseBroker, None)]
        try:
            assert [node_of(actor) for actor in actors] == [here] * len(actors)
        finally:
            for actor in actors:
                ray.kill(actor)


def test_a_placement_the_cluster_cannot_hold_is_refused_at_once(cluster, small_corpus, tmp_path):
    """``--ray-gpus 1`` on this cluster of no GPU, and more actors than its 2 CPUs: refused
    at once naming the option and what the cluster has (Ray waited 900 s for the actors)."""
    for option, words in ((["--ray-gpus", "1"], ["--ray-gpus", "0 GPU in all"]),
                          (["--ray-actors", "3"], ["--ray-actors", "2 CPU in all"])):
        started = time.monotonic()
        code, _, err = cli("embed", str(small_corpus), str(tmp_path / "e.npy"), "--cache",
                           str(tmp_path / "cache.sqlite"), "--ray", cluster.address, *option, "--no-progress")
        assert code == 2 and time.monotonic() - started < 30, err
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and all(word in lines[0] for word in words), err
    assert not (tmp_path / "e.npy").exists()


def test_ray_local_keeps_to_its_own_folder_beside_a_cluster_started_by_hand(hand_cluster, small_corpus,
                                                                           tmp_path):
    """``embed --ray local`` (a private cluster for one command, in a process of its own) gives
    one machine's vectors; the home's ``.ray`` and ``/tmp/ray`` are as they were, its folder
    is gone, and the cluster started by hand still answers."""
    from engine.cluster.connection import check_reachable

    address, home, before = hand_cluster
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    made_before = set(Path("/tmp").glob("cdlray*"))
    result = subprocess.run([sys.executable, "-m", "engine", "embed", str(small_corpus), str(tmp_path / "e.npy"),
                             "--cache", str(tmp_path / "cache.sqlite"), "--ray", "local", "--no-progress"],
                            env=env, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    texts = [t.text for c in Corpus.from_jsonl(small_corpus).trajectory_view() for t in c.turns]
    assert float(np.abs(np.load(tmp_path / "e.npy") - reference_vectors(texts)).max()) <= 1e-6
    assert "on 1 node(s)" in result.stderr
    assert set(Path("/tmp").glob("cdlray*")) == made_before  # its own folder removed
    assert tree(home / ".ray") == before["home"]  # the user's token untouched, nothing added
    assert tree(Path("/tmp/ray")) == before["tmp_ray"]
    check_reachable(address)  # the hand-started head still answers


def test_a_worker_node_killed_mid_embed_leaves_the_job_to_the_head(cluster, small_corpus, tmp_path):
    """Runs last: it kills the worker node (every one of its processes, by id)."""
    from engine.embedding.embedder import text_key
    from engine.cluster.connection import connect
    from engine.cluster.embedding import RayEmbedder

    corpus = Corpus.from_parquet(CORPUS).trajectory_view()
    texts = [t.text for c in list(corpus)[-20:] for t in c.turns]
    cache = tmp_path / "cache.sqlite"
    result: dict = {}
    with connect(cluster.address) as session:
        embedder = RayEmbedder(session, "all-MiniLM-L6-v2", cache=cache, ray_batch=8, progress=False)

        def job():
            try:
                result["vectors"] = embedder.encode(texts)
            except BaseException as error:  # reported below
                result["error"] = error

        worker = threading.Thread(target=job)
        worker.start()
        stored = 0
        deadline = time.monotonic() + 240
        while stored < 16 and worker.is_alive() and time.monotonic() < deadline:
            time.sleep(0.2)
            if cache.exists():
                with contextlib.suppress(sqlite3.OperationalError):
                    stored = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        assert worker.is_alive(), "the job ended before the node could be killed"
        # the driver is attached to the head (its object store, the tally): node 1 is the
        # worker node to lose
        import ray

        assert cluster.node_index(ray.get_runtime_context().get_node_id()) == 0
        killed = cluster.kill_node(1)
        assert len(killed) >= 2  # its ray start and raylet at least
        worker.join(timeout=240)
        assert not worker.is_alive(), "the job did not finish on the remaining node"
    assert "error" not in result, f"the job stopped: {result.get('error')!r}"
    distinct = {text_key(t) for t in texts}
    expected = reference_vectors(texts)
    assert float(np.abs(result["vectors"] - expected).max()) <= 1e-6
    keys = [k for (k,) in sqlite3.connect(cache).execute("SELECT key FROM vectors")]
    assert len(keys) == len(set(keys)) == len(distinct)  # nothing duplicated in the cache
    # work redone: at most the batches in flight on the lost node (one actor, 8 texts, plus the
    # batch queued behind it) when Ray Data runs them again itself; should it give up on the
    # lost actor instead (ActorDiedError), the texts not yet returned go out again, and what was
    # in flight on both actors (2 x 2 batches of 8) may be made twice
    assert embedder.lost_passes <= 1
    assert embedder.repeated <= (2 * 8 if embedder.lost_passes == 0 else 4 * 8)
    assert len(embedder.nodes) == 2  # both nodes embedded before the loss


def test_zz_the_project_clusters_left_nothing_in_the_home_or_tmp_ray(hand_cluster, cluster):
    """After every check (the loopback cluster, ``--ray local``): the home's ``.ray`` holds the
    user's token alone, and ``/tmp/ray`` nothing new."""
    _, home, before = hand_cluster
    assert tree(home / ".ray") == before["home"] and list(before["home"]) == ["auth_token"]
    assert tree(Path("/tmp/ray")) == before["tmp_ray"]
