"""Discussion structures of paper A and debate methods of paper B, one module each.

Each method is described once (``engine.protocols.method.Method``: paper, traits, options,
defaults, call count, label, code and colour), in one light module per family beside the
protocols (``methods_paper_a``, ``methods_paper_b``, ``methods_beyond``), and registered in
``engine.protocols.registry`` with the methods plugins add. ``run_session``
(``engine.protocols.dispatch``) runs one session of any method and returns a Conversation;
``expected_calls`` gives the number of chat calls a session makes (exact for paper B, an
upper bound for paper A's stopping rules).

This package's names are loaded on first use, so reading a method's description (the
CLI's ``--help``) imports neither numpy nor pydantic.
"""

from __future__ import annotations

import importlib

_WHERE = {"ProtocolConfig": "engine.protocols.config", "make_config": "engine.protocols.config",
          "Session": "engine.protocols.session", "run_session": "engine.protocols.dispatch",
          "session_model": "engine.protocols.dispatch", "expected_calls": "engine.protocols.registry",
          "consensus_calls": "engine.protocols.method", "Method": "engine.protocols.method",
          "METHODS": "engine.names", "PAPER_A": "engine.names", "PAPER_B": "engine.names"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'engine.protocols' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
