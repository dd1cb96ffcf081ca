"""Persistent daemon worker threads for :class:`~oracledp.oracles._structured.StructuredOracle`.

The structured oracle solves several inner problems at once (``workers``), each in its own
thread with its own HiGHS model (HiGHS releases the GIL); :class:`_DaemonPool` holds those
threads for the oracle's lifetime.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any


class _DaemonPool:
    """Persistent daemon worker threads (HiGHS keeps one task scheduler per thread).

    Daemon threads, unlike ``concurrent.futures``' workers, are not joined at interpreter
    exit: a fit stopped by Ctrl-C (``oracledp fit``) exits at once even while a worker is
    inside a HiGHS solve, whose answer is then never used."""

    def __init__(self, n: int) -> None:
        self._tasks: queue.SimpleQueue[tuple[Any, Any, Future[Any]]] = queue.SimpleQueue()
        for i in range(n):
            threading.Thread(target=self._work, name=f"oracledp-highs-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            fn, arg, fut = self._tasks.get()
            try:
                fut.set_result(fn(arg))
            except BaseException as exc:  # re-raised in the caller
                fut.set_exception(exc)

    def map(self, fn: Any, items: list[Any]) -> list[Any]:
        futures: list[Future[Any]] = []
        for x in items:
            fut: Future[Any] = Future()
            self._tasks.put((fn, x, fut))
            futures.append(fut)
        return [f.result() for f in futures]
