"""Shared by the tests of the progress lines ``fit`` and ``synth fit`` print off a terminal."""

from __future__ import annotations

import threading
from typing import Any

import typer

#: The fit waits for this many progress lines before it runs (the tests assert at least it).
BEATS = 3


def slow_fit_with_fast_beats(monkeypatch: Any, module: Any, cls: Any) -> None:
    """``module``'s heartbeat beats every 0.1 s, and ``cls.fit`` waits until it has printed
    :data:`BEATS` progress lines (at most 60 s) before it runs: the outcome does not depend
    on how fast a loaded machine runs the fit."""
    real_fit, real_echo = cls.fit, typer.echo
    seen, enough = [0], threading.Event()

    def echo(message: Any = None, *a: Any, **k: Any) -> Any:
        if isinstance(message, str) and message.endswith(" s elapsed"):
            seen[0] += 1
            if seen[0] >= BEATS:
                enough.set()
        return real_echo(message, *a, **k)

    def slow(self: Any, *a: Any, **k: Any) -> Any:
        enough.wait(60.0)
        return real_fit(self, *a, **k)

    monkeypatch.setattr(module, "_HEARTBEAT_SECONDS", 0.1)
    monkeypatch.setattr(typer, "echo", echo)
    monkeypatch.setattr(cls, "fit", slow)


def beats(stderr: str, prefix: str) -> list[str]:
    """The progress lines on ``stderr``; each must start with ``prefix`` (AssertionError)."""
    lines = [ln for ln in stderr.splitlines() if ln.endswith(" s elapsed")]
    assert all(ln.startswith(prefix) for ln in lines), stderr
    return lines
