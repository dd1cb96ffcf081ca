"""Oracle backends by name.

Solver packages are imported lazily, inside the backend that needs them, so
``import oracledp`` loads no solver (highspy and ortools can clash when both
are loaded in one process in the wrong order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oracledp.oracles._base import Oracle


def _brute(**options: Any) -> Oracle:
    from oracledp.oracles._brute import BruteForceOracle

    return BruteForceOracle(**options)


def _highs(**options: Any) -> Oracle:
    from oracledp.oracles._dispatch import AutoOracle

    return AutoOracle(solver="highs", **options)


def _cpsat(**options: Any) -> Oracle:
    from oracledp.oracles._monolithic import MonolithicMIPOracle

    return MonolithicMIPOracle(solver="cpsat", **options)


def _highs_monolithic(**options: Any) -> Oracle:
    from oracledp.oracles._monolithic import MonolithicMIPOracle

    return MonolithicMIPOracle(solver="highs", **options)


_REGISTRY: dict[str, tuple[Callable[..., Oracle], str]] = {
    "highs": (_highs, "HiGHS; exact tabular decomposition when the data allow it, else the exact branch and bound (default)"),
    "highs-monolithic": (_highs_monolithic, "HiGHS on the monolithic big-M MIP (baseline)"),
    "cpsat": (_cpsat, "OR-Tools CP-SAT on the monolithic MIP (optional extra 'ortools')"),
    "brute": (_brute, "enumerates W exactly (tests, tiny d)"),
}


def available_oracles() -> dict[str, str]:
    """Registered oracle names and what they are."""
    return {name: desc for name, (_, desc) in _REGISTRY.items()}


def make_oracle(name: str | Oracle = "highs", **options: Any) -> Oracle:
    """Build an oracle by name (or pass an Oracle instance through).

    Raises ValueError listing the valid names for an unknown one.
    """
    check_solver_name(name)
    if isinstance(name, Oracle):
        return name
    factory, _ = _REGISTRY[name]
    return factory(**options)


def check_solver_name(name: object, param: str = "solver") -> None:
    """Validate a solver argument without building anything: a registered name or an
    :class:`Oracle` instance (the one rule for the estimators' ``oracle=``, the command
    line's ``--solver`` and :func:`make_oracle`); ``param`` is the name the messages use."""
    if isinstance(name, str):
        if name not in _REGISTRY:
            raise ValueError(
                f"unknown {param} {name!r}; valid names are: {', '.join(sorted(_REGISTRY))}"
            )
    elif not isinstance(name, Oracle):
        raise TypeError(f"{param} must be a name or an Oracle, got {type(name).__name__}")
