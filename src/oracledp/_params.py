"""Constructor arguments stored the scikit-learn way, for every estimator and synthesizer.

A module of its own with no imports, so that :mod:`oracledp.synth` stores its arguments the
way the estimators do without importing them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["store_init_arguments"]


def store_init_arguments(est: Any, arguments: dict[str, Any]) -> None:
    """Store every constructor argument unchanged under its own name (scikit-learn's rule).

    Called first in ``__init__`` as ``store_init_arguments(self, locals())``: the
    arguments, in the order of the signature that :meth:`~sklearn.base.BaseEstimator.get_params`
    reads back; no logic, no validation (``fit`` validates).
    """
    for name, value in arguments.items():
        if name != "self" and not name.startswith("__"):
            setattr(est, name, value)
