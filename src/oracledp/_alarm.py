"""A wall-clock limit on a block of code (main thread, SIGALRM): the CLI's ``--time-limit``
and the tests' deadlines share it."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["alarm"]


@contextlib.contextmanager
def alarm(seconds: float | None, fire: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``fire()`` inside the block when it runs longer than ``seconds`` (wall clock).

    Nothing happens with ``seconds=None`` or where SIGALRM is missing (Windows); the previous
    handler is restored on exit.  Main thread only, as every signal handler.
    """
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise fire()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
