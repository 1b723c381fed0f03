"""A pilot run in a background thread, so the page can show turns as they arrive.

The page starts a :class:`PilotJob` and polls it; a rerun of the page (any click) finds the
same job in ``st.session_state`` and keeps polling. The job keeps every turn received, so a
backend that fails mid-run loses nothing: the sessions it finished and the turns of the one
that broke come back as a Corpus (failed sessions marked ``status="failed"``).

``cancel()`` stops the run between two model calls: the backend is wrapped by
:class:`CancellableBackend`, whose next call raises, so every session still running ends as
"failed" with the turns it had (nothing received is dropped).

The API key is never stored here: the backend object holds it in memory, ``settings`` (which
go into the saved manifest) hold only the backend kind, model and base URL, and every error
text goes through ``engine.llm.secrets.scrub``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from engine.corpus import Conversation, Corpus, Turn
from engine.llm.base import Backend, BackendError

CANCELLED = "cancelled by the user"


class CancellableBackend(Backend):
    """A backend whose calls raise once ``cancelled()`` is true (checked before and after each
    call, so a slow local call finishes but nothing after it starts). Everything else is the
    wrapped backend's (it is a Backend, so code that checks the type accepts it)."""

    def __init__(self, inner, cancelled: Callable[[], bool]):  # no Backend.__init__: all state is inner's
        self._inner = inner
        self._cancelled = cancelled

    def __getattr__(self, name):
        return getattr(self._inner, name)

    @property
    def kind(self) -> str:
        return self._inner.kind

    @property
    def identity(self) -> str:
        return self._inner.identity

    def describe(self):
        return self._inner.describe()

    async def achat(self, messages, **options):
        if self._cancelled():
            raise BackendError(CANCELLED)
        result = await self._inner.achat(messages, **options)
        if self._cancelled():
            raise BackendError(CANCELLED)
        return result

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass
class PilotJob:
    settings: dict[str, Any]
    turns: list[tuple[str, Turn]] = field(default_factory=list)
    sessions: list[Conversation] = field(default_factory=list)
    corpus: Corpus | None = None
    error: str | None = None
    started: float = field(default_factory=time.time)
    finished: float | None = None
    _thread: threading.Thread | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the run to stop before its next model call (the turns received are kept)."""
        self._cancel.set()

    def guard(self, backend):
        """``backend`` wrapped so that :meth:`cancel` stops it (pass this one to the runner)."""
        return CancellableBackend(backend, self._cancel.is_set)

    def on_turn(self, conversation_id: str, turn: Turn) -> None:
        with self._lock:
            self.turns.append((conversation_id, turn))

    def on_session(self, conversation: Conversation) -> None:
        with self._lock:
            self.sessions.append(conversation)

    def snapshot(self) -> tuple[list[tuple[str, Turn]], int]:
        with self._lock:
            return list(self.turns), len(self.sessions)

    def start(self, run: Callable[["PilotJob"], Corpus]) -> "PilotJob":
        """Run ``run(job)`` (which calls ``engine.runs.runner.run_pilot`` with our callbacks)."""
        def target():
            try:
                self.corpus = run(self)
            except Exception as error:  # shown on the page; the received turns are kept
                from engine.llm.secrets import scrub

                self.error = scrub(f"{type(error).__name__}: {error}")
                self.corpus = self.salvage()
            finally:
                self.finished = time.time()

        self._thread = threading.Thread(target=target, name="cdl-pilot", daemon=True)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def salvage(self) -> Corpus:
        """Finished sessions plus the turns of unfinished ones, as failed conversations."""
        turns, _ = self.snapshot()
        with self._lock:
            done = {c.conversation_id: c for c in self.sessions}
        partial: dict[str, list[Turn]] = {}
        for conversation_id, turn in turns:
            if conversation_id not in done:
                partial.setdefault(conversation_id, []).append(turn)
        conversations = list(done.values())
        for conversation_id, received in partial.items():
            conversations.append(Conversation(
                conversation_id=conversation_id, turns=received, source="llm",
                task=self.settings.get("task"), model=self.settings.get("model"),
                protocol=self.settings.get("method"), status="failed", error=self.error))
        return Corpus(conversations, name=f"pilot-{self.settings.get('method')}-{self.settings.get('task')}",
                      meta={"pilot": True, "salvaged": True})
