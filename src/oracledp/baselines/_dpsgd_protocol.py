"""The ICML 2020 DP-SGD baseline protocol: a grid search on the data, NOT accounted.

Neel, Roth, Vietri, Wu (ICML 2020, Section 5) run DP-SGD once per hyper-parameter triplet
(clip norm, mini-batch size, learning rate) and keep the most accurate run.  Each run is
(epsilon, delta)-DP (:func:`oracledp.baselines._dpsgd.dpsgd_logistic`), but the selection on
validation data is not: :func:`dpsgd_paper_protocol` reproduces the paper's curve and marks
its result ``accounted=False`` with a guarantee that does not hold.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from oracledp._diagnostics import NonPrivateDiagnostics
from oracledp._errors import DiagnosticsWarning, PrivacyWarning
from oracledp._validation import (
    RandomLike,
    check_epsilon,
    check_finite_matrix,
    check_rng,
    check_signed_labels,
)
from oracledp.baselines._dpsgd_logistic import (
    DEFAULT_CLIP,
    DEFAULT_EPOCHS,
    DPSGDResult,
    _batch_and_steps,
    _check_hyper,
    dpsgd_logistic,
)

__all__ = ["DEFAULT_PAPER_GRID", "dpsgd_paper_protocol"]

DEFAULT_PAPER_GRID: dict[str, tuple[Any, ...]] = {
    "clip": (0.5, 1.0, 2.0),
    "batch_size": (64, 256, 1024),
    "lr": (0.01, 0.1, 1.0),
}
"""Grid of :func:`dpsgd_paper_protocol`.  The paper names the three searched parameters
(clip norm, mini-batch size, learning rate) but not their values; these are ours."""

_GRID_KEYS = ("clip", "batch_size", "lr", "epochs", "l2")


def dpsgd_paper_protocol(
    X: ArrayLike,
    y: ArrayLike,
    X_val: ArrayLike,
    y_val: ArrayLike,
    epsilon: float,
    delta: float | None = None,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    fit_intercept: bool = True,
    random_state: RandomLike = None,
) -> DPSGDResult:
    """The ICML 2020 baseline protocol: one DP-SGD run per grid point, keep the best.

    "For each target privacy parameters (epsilon, delta), we run a grid search to identify
    the triplet of parameters that give the highest accuracy" (Neel et al., Section 5).
    Every run is (epsilon, delta)-DP on its own, but choosing the best by accuracy on
    ``(X_val, y_val)`` is **not accounted**: with ``K`` grid points the released model can
    leak up to the whole selection (and ``(X_val, y_val)`` is often the test set).  The
    returned result therefore has ``accounted=False`` and a guarantee with ``holds=False``,
    and a :class:`~oracledp._errors.PrivacyWarning` is issued.  Use it only to reproduce the
    paper's curve, never as a private release.

    Parameters
    ----------
    grid : mapping, default=DEFAULT_PAPER_GRID
        Values per hyper-parameter among ``clip``, ``batch_size``, ``lr``, ``epochs``, ``l2``;
        the Cartesian product is searched, in order, ties going to the first.
    random_state : None, int, SeedSequence or Generator
        The only source of randomness, shared by the runs in grid order.  The old spelling

    Returns
    -------
    DPSGDResult
        The best run; its ``diagnostics`` (always attached: the whole result is a
        non-private reference, ``guarantee.diagnostics_released`` is True) hold
        ``search``, one row per grid point (hyper-parameters, ``val_accuracy``, ``sigma``,
        ``steps``), and the best run's ``timings``.
    """
    eps = check_epsilon(epsilon)
    g = dict(DEFAULT_PAPER_GRID if grid is None else grid)
    if not g:
        raise ValueError("grid is empty")
    for key, values in g.items():
        if key not in _GRID_KEYS:
            raise ValueError(f"unknown grid key {key!r}; valid keys: {', '.join(_GRID_KEYS)}")
        if isinstance(values, str) or len(values) == 0:
            raise ValueError(f"grid[{key!r}] must be a non-empty sequence of values")
    gen = check_rng(random_state)
    X_arr = check_finite_matrix(X)
    n = X_arr.shape[0]
    check_signed_labels(y, n)
    Xv = check_finite_matrix(X_val, "X_val")
    if Xv.shape[1] != X_arr.shape[1]:
        raise ValueError(f"X_val has {Xv.shape[1]} features, X has {X_arr.shape[1]}")
    yv = check_signed_labels(y_val, Xv.shape[0], "y_val")
    keys = list(g)
    configs = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*g.values())]
    # Validate every configuration before the first run draws noise.
    for cfg in configs:
        _check_hyper(
            cfg.get("clip", DEFAULT_CLIP),
            cfg.get("lr", "auto"),
            cfg.get("epochs", DEFAULT_EPOCHS),
            cfg.get("l2", 0.0),
            fit_intercept,
        )
        _batch_and_steps(cfg.get("batch_size"), float(cfg.get("epochs", DEFAULT_EPOCHS)), n)

    rows: list[dict[str, Any]] = []
    best: DPSGDResult | None = None
    best_acc = -1.0
    for cfg in configs:
        with warnings.catch_warnings():  # one PrivacyWarning for the whole protocol, below
            warnings.simplefilter("ignore", DiagnosticsWarning)
            res = dpsgd_logistic(X_arr, y, eps, delta, fit_intercept=fit_intercept,
                                 random_state=gen, return_diagnostics=True, **cfg)
        acc = float(np.mean(res.predict(Xv) == yv))
        rows.append({**cfg, "val_accuracy": acc, "sigma": res.sigma, "steps": res.steps})
        if acc > best_acc:
            best, best_acc = res, acc
    assert best is not None
    reason = (
        f"hyper-parameters chosen by validation accuracy among {len(configs)} DP-SGD runs; "
        "the selection is not accounted (paper protocol, not a private release)"
    )
    warnings.warn(
        f"dpsgd_paper_protocol: {reason}; the result carries NO differential privacy guarantee.",
        PrivacyWarning,
        stacklevel=2,  # dpsgd_paper_protocol <- the caller
    )
    assert best.diagnostics is not None
    diagnostics = NonPrivateDiagnostics(
        "dpsgd_paper_protocol", {"search": tuple(rows), "timings": best.diagnostics["timings"]})
    return replace(best, guarantee=best.guarantee.not_holding(reason), accounted=False,
                   diagnostics=diagnostics)
