"""Every discussion method: the built-ins (paper A, paper B, beyond) and plugins' methods.

``METHODS_REGISTRY`` holds one ``engine.protocols.method.Method`` per name: the built-ins,
registered here in the order the command line and the pages list them (paper A's five
structures, paper B's six methods, the steered discussion), then the methods that installed
packages declare under the entry-point group ``creativity_lab.methods``::

    [project.entry-points."creativity_lab.methods"]
    mine = "my_package.methods:MY_METHOD"      # a Method, or a list of them

Plugins are read the first time a helper is called, so importing this module (as the CLI's
parser does) loads no plugin and no protocol code. The helpers replace the name tuples that
used to list each trait by hand: ``paper_a_methods()``, ``debate_methods()``... A name
registered twice from two sources (a plugin reusing a built-in's name) is refused.
"""

from __future__ import annotations

from typing import Iterator

from engine.protocols import methods_beyond, methods_paper_a, methods_paper_b
from engine.protocols.method import Method
from engine.registry import GROUPS, Registry

METHODS_REGISTRY: Registry[Method] = Registry("method", GROUPS["methods"], accepts=Method)
BUILT_IN_METHODS: tuple[Method, ...] = (*methods_paper_a.METHODS, *methods_paper_b.METHODS,
                                        *methods_beyond.METHODS)
for _built_in in BUILT_IN_METHODS:
    METHODS_REGISTRY.register(_built_in)


def method(name: str) -> Method:
    """The description of one method (a KeyError naming the known ones if there is none)."""
    return METHODS_REGISTRY.get(name)


def method_names() -> tuple[str, ...]:
    """Every method's name: the built-ins in their papers' order, then plugins'."""
    return METHODS_REGISTRY.names()


def is_method(name: object) -> bool:
    return isinstance(name, str) and name in METHODS_REGISTRY


def _where(test) -> tuple[str, ...]:
    return tuple(m.name for m in METHODS_REGISTRY.values() if test(m))


def paper_a_methods() -> tuple[str, ...]:
    """Paper A's discussion structures (appendix A.1.2)."""
    return _where(lambda m: m.paper == "A")


def paper_b_methods() -> tuple[str, ...]:
    """Paper B's methods (section 6)."""
    return _where(lambda m: m.paper == "B")


def debate_methods() -> tuple[str, ...]:
    """Multi-agent debates (paper B, section 3.1): lenses, peers and k apply."""
    return _where(lambda m: m.debate)


def consensus_methods() -> tuple[str, ...]:
    """Methods that always end with a consensus step (the debates and Voting)."""
    return _where(lambda m: m.consensus)


def turn_limited_methods() -> tuple[str, ...]:
    """Methods run for discussion turns with paper A's team factors (not debate rounds)."""
    return _where(lambda m: m.turn_limited)


def single_agent_methods() -> tuple[str, ...]:
    return _where(lambda m: m.single_agent)


def hand_raising_methods() -> tuple[str, ...]:
    return _where(lambda m: m.hand_raising)


def methods_taking(option: str) -> tuple[str, ...]:
    """The methods a ``ProtocolConfig`` option applies to."""
    return _where(lambda m: m.takes(option))


def own_design(name: str) -> tuple[bool, str]:
    """The lens and peer design a method has by itself (paper B: Creative-MAD = Cognitive
    Lens Assignment + distant peers; every other method, and a name not registered such as an
    uploaded debate: no lenses, all peers)."""
    if is_method(name):
        found = method(name)
        return found.lenses, found.peers
    return False, "all"


def expected_calls(config, *, with_retries: bool = False) -> int:
    """Chat calls of one session (its method's ``calls``): exact for paper B, the maximum for
    paper A's stopping rules; ``with_retries`` adds the most that asking again can add (the
    consensus judge's retries of an unreadable pick; an instructed turn's unreadable replies,
    ``config.attempts`` asks in all)."""
    return int(method(config.method).calls(config, with_retries))


class MethodChoices:
    """The method names as a live container (argparse ``choices``, a page's options): the
    registry, plugins included, is read only when a name is checked or the list is shown."""

    def __contains__(self, name: object) -> bool:
        return is_method(name)

    def __iter__(self) -> Iterator[str]:
        return iter(method_names())

    def __len__(self) -> int:
        return len(method_names())

    def __repr__(self) -> str:
        return f"MethodChoices({', '.join(self)})"
