"""A real two-node Ray cluster on loopback: ``embed``, ``features`` and ``run`` with ``--ray``
give one machine's results, and a worker node killed mid-job leaves the job to the head.

The checks themselves are ``tests/support/ray_cluster_checks.py``; this test runs them in a child
pytest inside new network and PID namespaces (``unshare``, as root: CI is) where only
loopback is up, because Ray puts the machine's network address in place of 127.0.0.1 when
there is one. The PID namespace ends whatever the child started, should a stop by process
id miss something. Where namespaces cannot be made, it is skipped, saying why.

The child runs with a home folder of its own (``HOME``), where the checks start a second
cluster as a user would by hand (``ray start --head``, a token in ``~/.ray/auth_token``) beside
the project's: the project's clusters, ``--ray local`` included, keep their tokens, temp
folders and logs in folders of their own, so neither that home's ``.ray`` nor ``/tmp/ray``
gains anything (before, ``--ray local`` wrote ``~/.ray/auth_token`` and ``/tmp/ray/session_*``,
and a cluster test under that home then failed with ``InvalidAuthToken``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.loopback_cluster import NAMESPACE_ENV, in_loopback_namespace, unshare_problem

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_two_node_loopback_cluster(tmp_path):
    pytest.importorskip("ray", reason="ray is installed by `make test` (pyproject.toml)")
    problem = unshare_problem()
    if problem:
        pytest.skip(f"no loopback-only namespace here: {problem}")
    home = tmp_path / "home"
    home.mkdir()
    try:
        result = in_loopback_namespace(
            [sys.executable, "-m", "pytest", str(ROOT / "tests" / "support" / "ray_cluster_checks.py"), "-x", "-q",
             "-p", "no:cacheprovider", "-p", "no:logging", "-o", "addopts=", "-rA", "--durations=0", f"--basetemp={tmp_path / 'inner'}"],
            env={NAMESPACE_ENV: "1", "HOME": str(home), "CDL_HAND_CLUSTER_HOME": str(home)}, cwd=ROOT, capture_output=True, text=True, timeout=840)
    except subprocess.TimeoutExpired as stop:
        pytest.fail(f"the cluster checks did not finish in {stop.timeout:.0f} s:\n"
                    f"{(stop.stdout or b'')[-4000:]!s}")
    output = result.stdout + result.stderr
    (tmp_path / "cluster_checks.log").write_text(output)
    failures = output.split("= FAILURES =")[-1].split("warnings summary")[0] if "= FAILURES =" in output else ""
    assert result.returncode == 0, (failures[:8000] or output[-6000:])
    assert " passed" in output and "skipped" not in output.split("short test summary")[-1], output[-3000:]
