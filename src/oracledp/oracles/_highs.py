"""One way to create a HiGHS model: silent unless ``verbose=True``.

highspy >= 1.16 prints a licence banner ("Running HiGHS ...") from C++ straight
to file descriptor 1 the first time a ``Highs`` object is created in a process,
before any option can be set, so ``output_flag=False`` cannot stop it.  The
banner would reach a user's terminal, a CLI's machine-readable stdout and tests
that parse stdout.  :func:`new_highs` therefore creates the first object of the
process with file descriptors 1 and 2 pointed at ``/dev/null`` (Python's own
buffers are flushed first, so nothing of ours is lost), then sets
``output_flag`` before any other call, which keeps every later log quiet.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

_LOCK = threading.Lock()
_BANNER_DONE = False


@contextlib.contextmanager
def _silenced_fds() -> Iterator[None]:
    """Point fds 1 and 2 at /dev/null for the duration (C-level output included)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def new_highs(verbose: bool = False) -> Any:
    """A ``highspy.Highs`` with ``output_flag = verbose`` set before anything else.

    With ``verbose=False`` no byte reaches stdout or stderr, the process's first
    construction (which prints HiGHS's banner) included.
    """
    global _BANNER_DONE
    import highspy

    if verbose or _BANNER_DONE:
        h = highspy.Highs()
    else:
        with _LOCK:
            if _BANNER_DONE:
                h = highspy.Highs()
            else:
                with _silenced_fds():
                    h = highspy.Highs()
                _BANNER_DONE = True
    h.setOptionValue("output_flag", bool(verbose))
    return h
