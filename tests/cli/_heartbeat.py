"""Shared by the tests of the progress lines ``fit`` and ``synth fit`` print off a terminal."""

from __future__ import annotations

import time
from typing import Any


def slow_fit_with_fast_beats(monkeypatch: Any, module: Any, cls: Any) -> None:
    """``cls.fit`` sleeps 0.5 s first, and ``module``'s heartbeat beats every 0.1 s."""
    real_fit = cls.fit

    def slow(self: Any, *a: Any, **k: Any) -> Any:
        time.sleep(0.5)
        return real_fit(self, *a, **k)

    monkeypatch.setattr(module, "_HEARTBEAT_SECONDS", 0.1)
    monkeypatch.setattr(cls, "fit", slow)


def beats(stderr: str, prefix: str) -> list[str]:
    """The progress lines on ``stderr``; each must start with ``prefix`` (AssertionError)."""
    lines = [ln for ln in stderr.splitlines() if ln.endswith(" s elapsed")]
    assert all(ln.startswith(prefix) for ln in lines), stderr
    return lines
