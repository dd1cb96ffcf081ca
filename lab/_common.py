"""Small checks and the provenance line the lab's experiments share (not part of oracledp)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import oracledp


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """``epsilon`` as a float: a finite real number > 0 (TypeError / ValueError otherwise)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    value = float(epsilon)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {epsilon!r}")
    return value


def environment_line(env: dict[str, Any] | None = None) -> str:
    """:func:`oracledp.environment` (or a recorded one) as one line: date, versions, load."""
    env = oracledp.environment() if env is None else env
    versions = " ".join(f"{k}={v}" for k, v in env["versions"].items())
    return (f"# {env['date_utc']} UTC, Python {env['python']} on {env['machine']}, "
            f"{env['cpus']} CPUs, load {env['load_avg_1_5_15']}; {versions}")
