"""Registries of named objects, open to plugins: features, discussion methods, model backends.

One ``Registry`` per kind of object. The project registers its own objects when their
module is imported; a researcher's installed package adds more through a Python entry
point in the registry's group (the way pytest and simonw/llm find plugins), with no edit
to this project::

    # the plugin's pyproject.toml
    [project.entry-points."creativity_lab.features"]
    my_measure = "my_package.measures:MY_MEASURE"     # one object, or a list of them

Entry points are read the first time a registry is asked what it holds, so a command that
never looks at features never imports a feature plugin. A plugin that fails to import, or
whose object is not of the registry's kind, is one line in ``failures`` (``python -m engine
plugins`` prints it) and the rest runs. Every registered object remembers where it came
from (``Source``): the project itself, or the plugin's distribution name and version, which
run manifests record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, TypeVar

T = TypeVar("T")

GROUPS = {
    "features": "creativity_lab.features",
    "methods": "creativity_lab.methods",
    "backends": "creativity_lab.backends",
}


@dataclass(frozen=True)
class Source:
    """Where a registered object came from: this project (``plugin`` None) or a plugin."""

    plugin: str | None = None  # the distribution's name
    version: str | None = None
    entry_point: str | None = None  # "name = module:attr"

    @property
    def label(self) -> str:
        if self.plugin is None:
            return "built in"
        return f"{self.plugin} {self.version or '(no version)'}"

    def record(self) -> dict[str, str | None]:
        """What a manifest keeps of it."""
        return {"plugin": self.plugin, "version": self.version, "entry_point": self.entry_point}


BUILT_IN = Source()


class Registry(Generic[T]):
    """Named objects of one kind, built-in first, then the entry points of ``group``.

    ``kind`` checks an object before it is registered (an ``isinstance`` type, or a
    callable returning an error text or None); ``key`` gives its name.
    """

    def __init__(self, kind: str, group: str, *, accepts: type | Callable[[object], str | None],
                 key: Callable[[T], str] = lambda obj: obj.name):  # type: ignore[attr-defined]
        self.kind = kind
        self.group = group
        self._accepts = accepts
        self._key = key
        self._objects: dict[str, T] = {}
        self._sources: dict[str, Source] = {}
        self._failures: list[str] = []
        self._loaded = False
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ registering
    def register(self, obj: T, *, source: Source = BUILT_IN) -> T:
        problem = self._problem(obj)
        if problem:
            raise TypeError(f"{self.kind} {obj!r}: {problem}")
        name = self._key(obj)
        with self._lock:
            if name in self._objects and self._sources[name] != source:
                raise ValueError(f"{self.kind} {name!r} is already registered by "
                                 f"{self._sources[name].label}")
            self._objects[name] = obj
            self._sources[name] = source
        return obj

    def unregister(self, name: str) -> None:
        """Forget one object (a test's, or a plugin's being reloaded)."""
        with self._lock:
            self._objects.pop(name, None)
            self._sources.pop(name, None)

    def forget_plugins(self) -> None:
        """Drop what plugins registered and read the entry points again on next use (a
        process whose ``sys.path`` gained a package since, such as a test's)."""
        with self._lock:
            for name in [n for n, s in self._sources.items() if s.plugin is not None]:
                self.unregister(name)
            self._failures.clear()
            self._loaded = False

    def _problem(self, obj) -> str | None:
        if isinstance(self._accepts, type):
            return None if isinstance(obj, self._accepts) else f"expected a {self._accepts.__name__}"
        return self._accepts(obj)

    # ------------------------------------------------------------------ reading
    def names(self) -> tuple[str, ...]:
        self.load_plugins()
        return tuple(self._objects)

    def values(self) -> tuple[T, ...]:
        self.load_plugins()
        return tuple(self._objects.values())

    def get(self, name: str) -> T:
        self.load_plugins()
        try:
            return self._objects[name]
        except KeyError:
            known = ", ".join(self._objects) or "none"
            raise KeyError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def __contains__(self, name: object) -> bool:
        self.load_plugins()
        return name in self._objects

    def source(self, name: str) -> Source:
        self.load_plugins()
        return self._sources[name]

    def from_plugins(self) -> dict[str, Source]:
        """``{name: source}`` of the objects plugins registered."""
        self.load_plugins()
        return {name: s for name, s in self._sources.items() if s.plugin is not None}

    @property
    def failures(self) -> tuple[str, ...]:
        self.load_plugins()
        return tuple(self._failures)

    # ------------------------------------------------------------------ plugins
    def load_plugins(self) -> None:
        """Register what the group's entry points name; once per process (thread-safe)."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for entry_point in _entry_points(self.group):
                self._load_one(entry_point)

    def _load_one(self, entry_point) -> None:
        dist = getattr(entry_point, "dist", None)
        source = Source(plugin=getattr(dist, "name", None) or entry_point.value.split(":")[0],
                        version=getattr(dist, "version", None),
                        entry_point=f"{entry_point.name} = {entry_point.value}")
        where = f"plugin {source.plugin} ({source.entry_point})"
        try:
            loaded = entry_point.load()
        except Exception as error:  # a broken plugin is reported, never fatal
            self._failures.append(f"{where}: failed to import: {type(error).__name__}: {error}")
            return
        objects = loaded if isinstance(loaded, (list, tuple)) else [loaded]
        for obj in objects:
            try:
                self.register(obj, source=source)
            except (TypeError, ValueError) as error:
                self._failures.append(f"{where}: not registered: {error}")


def _entry_points(group: str) -> Iterable:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=group), key=lambda e: (e.name, e.value))
