"""DP-SGD's function API: defaults, checks, :class:`DPSGDResult` and :func:`dpsgd_logistic`.

:func:`dpsgd_logistic` validates everything before any randomness, calibrates the noise
multiplier with the Renyi accountant of :mod:`oracledp.privacy._rdp` (replace-one, by group
privacy of size 2), runs the optimizer of :mod:`oracledp.baselines._dpsgd_core` (the
algorithm of :mod:`oracledp.baselines._dpsgd`: Bassily, Smith, Thakurta 2014; Abadi et al.
2016) and states the (epsilon, delta) guarantee of the release.  Also here: the fixed,
documented defaults and the hyper-parameter / schedule checks shared with the estimator and
the paper protocol.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, check_diagnostics_flag, release_diagnostics
from oracledp._validation import (
    RandomLike,
    check_delta,
    check_epsilon,
    check_finite_matrix,
    check_positive,
    check_rng,
    check_signed_labels,
)
from oracledp.baselines._dpsgd_core import _dpsgd_core, auto_learning_rate
from oracledp.privacy._guarantees import REPLACE_ONE, PrivacyGuarantee
from oracledp.privacy._rdp import calibrate_noise_multiplier, dpsgd_epsilon

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CLIP",
    "DEFAULT_EPOCHS",
    "SOURCE",
    "DPSGDResult",
    "dpsgd_logistic",
]

SOURCE = "Abadi et al. 2016 DP-SGD; RDP accountant (dp_accounting)"

# ---- honest defaults (fixed once, from public reasoning; never tuned per epsilon) -------------
DEFAULT_CLIP = 1.0
"""Clip norm C.  Adult features lie in [0, 1] with four one-hot blocks, so ||x|| <= sqrt(8)
(with the intercept) and logistic gradients have norm <= ||x||; C = 1 keeps most of the signal
while bounding the noise scale sigma * C."""
DEFAULT_BATCH_SIZE = 256
"""Expected batch size q n (capped at n).  Large batches are generally preferable for DP-SGD
(the noise per averaged gradient is sigma C / (q n)); 256 keeps T in the thousands."""
DEFAULT_EPOCHS = 20.0
"""Passes over the data: T = ceil(epochs * n / batch_size) steps."""


@dataclass(frozen=True)
class DPSGDResult:
    """Output of :func:`dpsgd_logistic` (or of :func:`dpsgd_paper_protocol`).

    Attributes
    ----------
    coef : ndarray of shape (d,)
        Average of the T iterates, feature weights.
    intercept : float
        Average intercept (0.0 with ``fit_intercept=False``).
    guarantee : PrivacyGuarantee
        (epsilon, delta)-DP, replace-one neighbours, ``requires_exact_oracle=False``.
    sigma : float
        Noise multiplier (noise std on the clipped-gradient sum is ``sigma * clip``).
    steps : int
        Number of steps T.
    q : float
        Poisson sampling probability.
    epsilon_spent : float
        The accountant's replace-one epsilon for (sigma, q, T, delta); ``<= guarantee.epsilon``.
    clip, batch_size, lr, epochs, l2, fit_intercept :
        The hyper-parameters actually used (``lr`` is the numeric step size).
    accounted : bool
        False when the hyper-parameters were selected on the data without accounting for it
        (:func:`dpsgd_paper_protocol`); then ``guarantee.holds`` is False too.
    history : ndarray of shape (T + 1, d + fit_intercept) or None
        Iterates ``w_0 .. w_T`` (last column: intercept) when requested; covered by the same
        guarantee (they are post-processing of the noisy gradients the accountant counts).
    diagnostics : NonPrivateDiagnostics or None
        None unless requested (``return_diagnostics=True``): then ``timings`` (wall-clock
        seconds of calibration and optimisation).  :func:`dpsgd_paper_protocol` always
        attaches its grid-search table as ``search`` (one row per grid point with its
        validation accuracy), besides the best run's ``timings``.  NOT private.
    """

    coef: NDArray[np.float64]
    intercept: float
    guarantee: PrivacyGuarantee
    sigma: float
    steps: int
    q: float
    epsilon_spent: float
    clip: float
    batch_size: float
    lr: float
    epochs: float
    l2: float
    fit_intercept: bool
    accounted: bool = True
    history: NDArray[np.float64] | None = None
    diagnostics: NonPrivateDiagnostics | None = field(default=None, repr=False)

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, coef> + intercept``; > 0 means label +1."""
        return np.asarray(X, dtype=np.float64) @ self.coef + self.intercept

    def predict(self, X: ArrayLike) -> NDArray[np.int8]:
        """Labels in {-1, +1} (a score of exactly 0 goes to -1)."""
        return np.where(self.decision_function(X) > 0, 1, -1).astype(np.int8)


def _dpsgd_guarantee(
    epsilon: float, delta: float, spent: float, sigma: float, q: float, steps: int
) -> PrivacyGuarantee:
    return PrivacyGuarantee.approximate(
        epsilon,
        delta,
        source=SOURCE,
        neighbouring=REPLACE_ONE,
        notes=(
            f"Poisson-subsampled Gaussian, noise multiplier sigma={sigma:.6g}, q={q:.6g}, "
            f"T={steps}; dp_accounting RdpAccountant (add/remove-one) converted to replace-one "
            f"by group privacy of size 2: add/remove (e0, delta/(1+e^c)) with e0 <= c gives "
            f"replace-one (2 e0, delta); accountant epsilon {spent:.6g} <= {epsilon:g}. "
            "Public: n, d, q, T and all hyper-parameters (fixed, not tuned on the data)"
        ),
    )


def _check_int_positive(value: object, name: str) -> int:
    return int(check_positive(value, name, integer=True))


def _check_hyper(
    clip: object, lr: object, epochs: object, l2: object, fit_intercept: object
) -> tuple[float, float | None, float, float, bool]:
    c = check_positive(clip, "clip")
    if isinstance(lr, str):
        if lr != "auto":
            raise ValueError(f"lr must be a positive number or 'auto', got {lr!r}")
        step: float | None = None
    else:
        step = check_positive(lr, "lr")
    ep = check_positive(epochs, "epochs")
    if isinstance(l2, bool) or not isinstance(l2, numbers.Real):
        raise TypeError(f"l2 must be a number, got {type(l2).__name__}")
    reg = float(l2)
    if not (math.isfinite(reg) and reg >= 0):
        raise ValueError(f"l2 must be a finite number >= 0, got {l2!r}")
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise TypeError(f"fit_intercept must be a bool, got {type(fit_intercept).__name__}")
    return c, step, ep, reg, bool(fit_intercept)


def _batch_and_steps(batch_size: object, epochs: float, n: int) -> tuple[float, float, int]:
    if batch_size is None:
        b = float(min(DEFAULT_BATCH_SIZE, n))
    else:
        b = float(_check_int_positive(batch_size, "batch_size"))
        if b > n:
            raise ValueError(
                f"batch_size={batch_size} exceeds the number of records n={n}; the expected "
                "batch size q*n must be <= n (use batch_size=None for min(256, n))"
            )
    q = b / n
    steps = max(1, math.ceil(epochs * n / b - 1e-9))
    return b, q, steps


def dpsgd_logistic(
    X: ArrayLike,
    y: ArrayLike,
    epsilon: float,
    delta: float | None = None,
    *,
    clip: float = DEFAULT_CLIP,
    batch_size: int | None = None,
    lr: float | str = "auto",
    epochs: float = DEFAULT_EPOCHS,
    l2: float = 0.0,
    fit_intercept: bool = True,
    random_state: RandomLike = None,
    return_history: bool = False,
    return_diagnostics: bool = False,
    sample_weight: ArrayLike | None = None,
) -> DPSGDResult:
    """(epsilon, delta)-DP logistic regression by DP-SGD (replace-one neighbours).

    The noise multiplier is calibrated with :func:`calibrate_noise_multiplier` so that the
    replace-one epsilon certified by the accountant is ``<= epsilon`` (:mod:`oracledp.privacy._rdp`).

    Parameters
    ----------
    X : array-like of shape (n, d)
        Finite features.  No bound on X is needed: per-example gradients are clipped.
    y : array-like of shape (n,)
        Labels exactly -1 or +1 (other values raise BoundsViolation; no silent mapping).
    epsilon : float
        Target epsilon > 0.
    delta : float or None
        Target delta in (0, 1); ``None`` means ``1 / n**2`` (n treated as public).
    clip : float, default=1.0
        Per-example gradient clip norm C.
    batch_size : int or None, default=None
        Expected batch size; ``q = batch_size / n``.  ``None`` means ``min(256, n)``.
    lr : float or "auto", default="auto"
        Step size; ``"auto"`` is :func:`auto_learning_rate` (public quantities only).
    epochs : float, default=20
        ``T = ceil(epochs * n / batch_size)`` steps.
    l2 : float, default=0
        Coefficient of ``(l2 / 2) ||w||^2`` (intercept not penalised); free of privacy cost.
    fit_intercept : bool, default=True
        Append a constant feature 1 whose weight is the intercept.
    random_state : None, int, SeedSequence or Generator
        The only source of randomness (Poisson batches and noise).  The old spelling
    return_history : bool, default=False
        Also return all iterates (covered by the same guarantee).
    return_diagnostics : bool, default=False
        Attach :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (``timings``).  For
        research only: issues a :class:`~oracledp._errors.DiagnosticsWarning` and sets
        ``guarantee.diagnostics_released``.
    sample_weight : array-like of shape (n_rows,) or None, default=None
        Record counts: row ``i`` stands for ``sample_weight[i]`` identical records (e.g. the
        distinct rows of a large table, :meth:`oracledp.tabular.AggregatedTable.weighted_rows`).
        The release is exactly, bit for bit, that on ``np.repeat(X, sample_weight, axis=0)``
        and ``np.repeat(y, sample_weight)`` for the same ``random_state``: the same Poisson
        batches over the ``n = sample_weight.sum()`` records (``n`` sets ``q``, ``T``, the
        normaliser and ``delta = 1/n**2``), drawn without building the repeated table (see
        :func:`oracledp.baselines._dpsgd_core._dpsgd_core`).  Whole numbers >= 0 (a float
        array of whole numbers is accepted; a row with count 0 is absent, its label is not
        read); anything else raises one ValueError before any randomness.  ``None`` counts
        every row once.  The guarantee is about records: the counts must be the true
        multiplicities (a record given weight 5 is protected only as a group of 5).

    Returns
    -------
    DPSGDResult

    Privacy
    -------
    (epsilon, delta)-DP for replace-one neighbours (datasets of the same n differing in one
    record), provided the hyper-parameters do not depend on the data.  Everything is validated
    before the first random number is drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.baselines import dpsgd_logistic
    >>> gen = np.random.default_rng(0)
    >>> X = gen.normal(size=(200, 2)) / 3
    >>> y = np.where(X[:, 0] - X[:, 1] > 0, 1, -1)
    >>> res = dpsgd_logistic(X, y, 1.0, epochs=2, random_state=0)  # delta = 1/n^2
    >>> str(res.guarantee.kind), res.guarantee.epsilon, res.guarantee.delta
    ('approximate', 1.0, 2.5e-05)
    >>> res.epsilon_spent <= 1.0, res.steps
    (True, 2)
    """
    # 1. Parameters and data, before any randomness.
    eps = check_epsilon(epsilon)
    c, step, ep, reg, intercept = _check_hyper(clip, lr, epochs, l2, fit_intercept)
    if not isinstance(return_history, (bool, np.bool_)):
        raise TypeError("return_history must be a bool")
    want_diag = check_diagnostics_flag(return_diagnostics)
    gen = check_rng(random_state)  # type check only
    X_arr = check_finite_matrix(X)
    n_rows, d = X_arr.shape
    counts = None
    if sample_weight is not None:  # record counts: n is their sum; rows of count 0 are absent
        from oracledp.estimators._base import check_record_counts

        counts = check_record_counts(sample_weight, n_rows)
        y_arr = np.asarray(y)
        if not counts.all() and y_arr.shape == (n_rows,):
            kept = counts > 0
            X_arr, y, counts = X_arr[kept], y_arr[kept], counts[kept]
            n_rows = X_arr.shape[0]
    y_pm = check_signed_labels(y, n_rows).astype(np.float64)
    n = n_rows if counts is None else int(counts.sum())
    dlt = check_delta(1.0 / n**2 if delta is None else delta)
    b, q, steps = _batch_and_steps(batch_size, ep, n)
    X1 = np.hstack([X_arr, np.ones((n_rows, 1))]) if intercept else X_arr
    dim = X1.shape[1]
    penalized = np.ones(dim, dtype=bool)
    if intercept:
        penalized[-1] = False

    # 2. Calibration (deterministic, public).
    t0 = time.perf_counter()
    sigma = calibrate_noise_multiplier(eps, dlt, q, steps)
    spent = dpsgd_epsilon(sigma, q, steps, dlt)
    if not spent <= eps:  # pragma: no cover - guarded by the calibration invariant
        raise RuntimeError(f"calibration failed: epsilon {spent} > target {eps}")
    t1 = time.perf_counter()
    eta = step if step is not None else auto_learning_rate(c, steps, dim, sigma, b)

    # 3. The mechanism: the only place randomness is used.
    avg, history = _dpsgd_core(
        X1,
        y_pm,
        sigma=sigma,
        clip=c,
        q=q,
        steps=steps,
        lr=eta,
        l2=reg,
        penalized=penalized,
        rng=gen,
        return_history=bool(return_history),
        counts=counts,
    )
    t2 = time.perf_counter()
    coef = avg[:d].copy()
    b0 = float(avg[d]) if intercept else 0.0
    guarantee = _dpsgd_guarantee(eps, dlt, spent, sigma, q, steps)
    diagnostics = None
    if want_diag:
        # stacklevel: dpsgd_logistic <- the caller
        guarantee = release_diagnostics(guarantee, "DP-SGD", stacklevel=2)
        diagnostics = NonPrivateDiagnostics(
            "dpsgd_logistic", {"timings": {"calibration": t1 - t0, "optimization": t2 - t1}})
    return DPSGDResult(
        coef=coef,
        intercept=b0,
        guarantee=guarantee,
        sigma=sigma,
        steps=steps,
        q=q,
        epsilon_spent=spent,
        clip=c,
        batch_size=b,
        lr=eta,
        epochs=ep,
        l2=reg,
        fit_intercept=intercept,
        history=history,
        diagnostics=diagnostics,
    )
