"""Private logistic regression by DP-SGD: the baseline of Neel, Roth, Vietri, Wu (ICML 2020).

Algorithm (Bassily, Smith, Thakurta 2014; Abadi et al. 2016)
-------------------------------------------------------------
Start at ``w_0 = 0`` and, for ``t = 1..T``:

1. *Poisson subsampling*: every record joins the batch ``B_t`` independently
   with probability ``q`` (so the batch size is random, ``Binomial(n, q)``).
2. *Per-example gradients* of the logistic loss
   ``l(w; x, y) = log(1 + exp(-y <w, x>))``, i.e. ``g_i = -y_i x_i sigmoid(-y_i <w, x_i>)``
   (vectorized over the batch).
3. *Per-example clipping* to l2 norm ``C``: ``g_i <- g_i * min(1, C / ||g_i||)``.
   Only gradients are clipped, never data.
4. *Noisy sum*: ``s_t = sum_{i in B_t} g_i + N(0, (sigma C)^2 I)``.
5. *Step*: ``w_t = w_{t-1} - lr * (s_t / (q n) + l2 * w_{t-1})``, dividing by the
   *expected* batch size ``q n`` (a public constant) and, with ``l2 > 0``,
   adding the gradient of ``(l2 / 2) ||w||^2`` (the intercept is not penalised).

The released model is the **average of all T iterates** ``(w_1 + ... + w_T) / T``
(the paper "take[s] average over all the iterates in the run of privateSGD"),
not the last iterate and not a tail average.  With ``fit_intercept=True`` a
constant feature 1 is appended to every record; its weight is the intercept and
its gradient coordinate is clipped together with the others (so the intercept
is private too).  The one-hot blocks of the Adult encoding sum to a constant and
can play the role of an intercept, which is why ``fit_intercept=False`` is also
offered.

Privacy
-------
Every release of this module states a :class:`~oracledp.guarantees.PrivacyGuarantee`
with ``neighbouring="replace-one"`` (datasets of the same size ``n`` that differ
in one record), the relation of the ICML paper and of OPDisc.

Accounting uses Google's ``dp_accounting`` :class:`RdpAccountant` for the
``T``-fold composition of the Poisson-subsampled Gaussian mechanism
(Mironov, Talwar, Zhang 2019) with noise multiplier ``sigma``; that analysis is
for **add/remove-one** neighbours (``dp_accounting`` refuses Poisson sampling
under ``REPLACE_ONE`` in its RDP accountant).  Replace-one is derived by
**group privacy of size 2**: if ``D'`` is ``D`` with record ``x`` replaced by
``x'``, then ``D0 = D \\ {x}`` is an add/remove neighbour of both.  If the
mechanism is ``(e0, d0)``-DP for add/remove, then for every event S

    P[M(D) in S] <= e^e0 P[M(D0) in S] + d0 <= e^(2 e0) P[M(D') in S] + (1 + e^e0) d0,

so it is ``(2 e0, (1 + e^e0) d0)``-DP for replace-one.  :func:`dpsgd_epsilon`
therefore returns ``2 e0`` with ``e0 = eps_addremove(sigma, q, T, d0)`` and
``d0 = delta / (1 + e^c)`` for a ``c >= e0`` it verifies (a fixed point found
by iteration).  The normaliser ``q n`` uses the public ``n`` of the replace-one
relation, so the intermediate ``D0`` (``n - 1`` records) is run through the
*same* mechanism, which the add/remove analysis covers.

Why not the "noise multiplier sigma/2" shortcut (add/remove with sensitivity
``2C``)?  It is plausible but we do not have a proof that a *Poisson-subsampled*
replace-one pair is dominated by the add/remove pair with doubled sensitivity,
and it is numerically looser: on the Adult schedule (q = 256/15682, T = 1226,
delta = 1/15682**2) sigma = 1 gives 13.3 by group privacy versus 35.3 for the
shortcut, and the two agree within 1% for sigma >= 20.  The group-privacy bound
is never below ``dp_accounting``'s PLD for the one-dimensional replace-one pair
``+C`` vs ``-C`` (the replaced gradient's clipped value flipped: a bound below it
would be suspect), which the tests check; on that
schedule it is 7-9% above it for sigma >= 5 (20% at sigma = 2, 77% at sigma = 1).

RDP orders: integers 2..64, then a geometric grid (ratio sqrt 2) extended on
demand while the best order is the largest one evaluated, up to 2**17, so that
``epsilon = 0.01`` at ``delta = 1 / n**2`` (``n`` up to 1e5) is certifiable.
Any set of orders gives a valid bound; extending only tightens it.

Public inputs: ``n`` (through ``q``, the normaliser and ``delta = 1/n**2``), the
dimension, and every hyper-parameter.  The hyper-parameters must not be chosen
by looking at the private data: :func:`dpsgd_logistic` uses fixed, documented
defaults; :func:`dpsgd_paper_protocol` reproduces the paper's grid search over
hyper-parameters *on the data*, which is **not** accounted, and its result is
marked ``accounted=False`` with a guarantee that does not hold.

Noise is drawn from numpy's PCG64 in floating point (idealized numerics, like
every float DP library).

References
----------
R. Bassily, A. Smith, A. Thakurta. "Private Empirical Risk Minimization:
Efficient Algorithms and Tight Error Bounds". FOCS 2014.
M. Abadi et al. "Deep Learning with Differential Privacy". CCS 2016.
I. Mironov, K. Talwar, L. Zhang. "Renyi Differential Privacy of the Sampled
Gaussian Mechanism". arXiv:1908.10530, 2019.
S. Neel, A. Roth, G. Vietri, Z. S. Wu. "Oracle Efficient Private Non-Convex
Optimization". ICML 2020, Section 5.
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import dp_accounting
import numpy as np
from dp_accounting.rdp import RdpAccountant
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from oracledp._validation import (
    RandomLike,
    check_delta,
    check_epsilon,
    check_finite_matrix,
    check_positive,
    check_rng,
    check_signed_labels,
)
from oracledp.diagnostics import (
    NonPrivateDiagnostics,
    PicklesWithoutDiagnostics,
    check_diagnostics_flag,
    release_diagnostics,
    split_diagnostics,
)
from oracledp.errors import DiagnosticsWarning, PrivacyWarning
from oracledp.estimators._base import (
    BinaryClassifierTags,
    map_binary_labels,
    validate_private_data,
)
from oracledp.guarantees import GuaranteeKind, PrivacyGuarantee

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_CLIP",
    "DEFAULT_EPOCHS",
    "DEFAULT_PAPER_GRID",
    "SOURCE",
    "DPSGDLogisticRegression",
    "DPSGDResult",
    "auto_learning_rate",
    "calibrate_noise_multiplier",
    "dpsgd_epsilon",
    "dpsgd_logistic",
    "dpsgd_paper_protocol",
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

_REPLACE = "replace-one"
_ADD_REMOVE = "add-remove"
_NEIGHBOURING = (_REPLACE, _ADD_REMOVE)

# RDP orders: integers 2..64, then 64 * sqrt(2)**k (rounded), extended on demand up to 2**17.
_BASE_ORDERS: tuple[int, ...] = tuple(range(2, 65))
_MAX_ORDER = 2**17
_MAX_SIGMA = 1e8


def _extension_orders() -> list[int]:
    out: list[int] = []
    k = 1
    while True:
        a = round(64 * 2 ** (k / 2))
        if a > _MAX_ORDER:
            return out
        out.append(a)
        k += 1


_EXTENSION_ORDERS: tuple[int, ...] = tuple(_extension_orders())


# ==============================================================================================
# Accounting
# ==============================================================================================


class _AddRemoveRdp:
    """RDP of T Poisson-subsampled Gaussian steps (add/remove), orders extended on demand.

    Each block of orders is its own composed ``dp_accounting`` RdpAccountant; epsilon is the
    minimum over blocks of ``get_epsilon_and_optimal_order`` (the conversion is a minimum over
    orders, so a minimum over blocks is the same bound).
    """

    def __init__(self, sigma: float, q: float, steps: int) -> None:
        if q >= 1.0:
            step: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(sigma)
        else:
            step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        self._event = dp_accounting.SelfComposedDpEvent(step, steps)
        self._accountants: list[RdpAccountant] = []
        self._top = 0.0
        self._next = 0
        self._add(list(_BASE_ORDERS))

    def _add(self, orders: list[int]) -> None:
        acc = RdpAccountant(
            orders=[float(a) for a in orders],
            neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        )
        acc.compose(self._event)
        self._accountants.append(acc)
        self._top = float(max(orders))

    def epsilon(self, delta: float) -> tuple[float, float]:
        """(epsilon, best order) for add/remove at ``delta``."""
        if not delta > 0:
            return math.inf, math.nan
        while True:
            best = min(
                (acc.get_epsilon_and_optimal_order(delta) for acc in self._accountants),
                key=lambda eo: eo[0],
            )
            eps, order = float(best[0]), float(best[1])
            if order < self._top or self._next >= len(_EXTENSION_ORDERS) or not math.isfinite(eps):
                return eps, order
            self._add([_EXTENSION_ORDERS[self._next]])
            self._next += 1


def _check_q(q: object) -> float:
    v = check_positive(q, "q")
    if v > 1:
        raise ValueError(f"q is a sampling probability and must be in (0, 1], got {q!r}")
    return v


def _check_steps(steps: object) -> int:
    return int(check_positive(steps, "steps", integer=True))


def _check_neighbouring(neighbouring: object) -> str:
    if neighbouring not in _NEIGHBOURING:
        raise ValueError(
            f"neighbouring must be one of {', '.join(_NEIGHBOURING)}, got {neighbouring!r}"
        )
    return str(neighbouring)


def _replace_one_epsilon(curve: _AddRemoveRdp, delta: float) -> tuple[float, float]:
    """Group privacy (size 2): returns (2 e0, c) with e0 = eps_ar(delta / (1 + e^c)) <= c."""

    def f(c: float) -> float:
        if c > 700:  # e^c overflows; delta / (1 + e^c) underflows to 0
            return math.inf
        return curve.epsilon(delta / (1.0 + math.exp(c)))[0]

    e = f(0.0)  # a lower bound of the least fixed point
    for _ in range(200):
        if not math.isfinite(e):
            return math.inf, math.inf
        cand = e * (1.0 + 1e-9) + 1e-15
        fc = f(cand)
        # Certificate: add/remove (fc, delta / (1 + e^cand)) with fc <= cand => replace (2 fc, delta).
        if fc <= cand:
            return 2.0 * fc, cand
        e = fc
    return math.inf, math.inf  # no certificate found: refuse to claim anything


def dpsgd_epsilon(
    sigma: float,
    q: float,
    steps: int,
    delta: float,
    *,
    neighbouring: str = _REPLACE,
) -> float:
    """The epsilon that T steps of DP-SGD with noise multiplier ``sigma`` satisfy at ``delta``.

    Parameters
    ----------
    sigma : float
        Noise multiplier: the noise on the sum of clipped gradients has standard deviation
        ``sigma * C``.
    q : float
        Poisson sampling probability in (0, 1].
    steps : int
        Number of steps T.
    delta : float
        Target delta in (0, 1).
    neighbouring : {"replace-one", "add-remove"}
        ``"replace-one"`` (default, the relation of every oracledp guarantee) is derived from
        the add/remove bound by group privacy of size 2 (module docstring);
        ``"add-remove"`` is ``dp_accounting``'s RDP bound itself.

    Returns
    -------
    float
        An epsilon for which the mechanism is (epsilon, delta)-DP (``inf`` if none can be
        certified).
    """
    s = check_positive(sigma, "sigma")
    qq = _check_q(q)
    t = _check_steps(steps)
    d = check_delta(delta)
    rel = _check_neighbouring(neighbouring)
    curve = _AddRemoveRdp(s, qq, t)
    if rel == _ADD_REMOVE:
        return curve.epsilon(d)[0]
    return _replace_one_epsilon(curve, d)[0]


def calibrate_noise_multiplier(
    epsilon: float,
    delta: float,
    q: float,
    steps: int,
    *,
    neighbouring: str = _REPLACE,
    rtol: float = 1e-3,
) -> float:
    """The (nearly) smallest noise multiplier ``sigma`` with ``dpsgd_epsilon(sigma, ...) <= epsilon``.

    Bisection on ``log sigma`` with a one-sided invariant: the upper end ``hi`` is only ever
    set to a value whose epsilon was computed and found ``<= epsilon``, and ``hi`` is what is
    returned, so the result is *never* above the target (no tolerance on the privacy side;
    cf. Opacus issue #346).  The returned sigma is within a factor ``1 + rtol`` of the smallest
    sigma the accountant certifies.

    Raises
    ------
    ValueError
        For invalid parameters, or if no sigma <= 1e8 reaches the target.
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    qq = _check_q(q)
    t = _check_steps(steps)
    rel = _check_neighbouring(neighbouring)
    tol = check_positive(rtol, "rtol")

    def eps_of(s: float) -> float:
        curve = _AddRemoveRdp(s, qq, t)
        return curve.epsilon(d)[0] if rel == _ADD_REMOVE else _replace_one_epsilon(curve, d)[0]

    def ok(s: float) -> bool:
        return eps_of(s) <= eps

    # Initial guess from the Gaussian approximation (sensitivity 2 for replace-one).
    sens = 2.0 if rel == _REPLACE else 1.0
    guess = max(0.3, sens * qq * math.sqrt(2.0 * t * math.log(1.0 / d)) / eps)
    if ok(guess):
        hi = guess
        lo = guess / 2.0
        while ok(lo):
            hi = lo
            lo /= 2.0
            if lo < 1e-6:  # pragma: no cover - epsilon(sigma) -> inf as sigma -> 0
                return hi
    else:
        lo = guess
        hi = guess * 2.0
        while not ok(hi):
            lo = hi
            hi *= 2.0
            if hi > _MAX_SIGMA:
                raise ValueError(
                    f"no noise multiplier <= {_MAX_SIGMA:g} achieves epsilon={eps} at "
                    f"delta={d} with q={qq}, steps={t}"
                )
    while hi / lo > 1.0 + tol:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ==============================================================================================
# The optimizer
# ==============================================================================================


def _per_example_gradients(
    X: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Rows ``-y_i x_i sigmoid(-y_i <w, x_i>)``: gradients of log(1 + exp(-y <w, x>))."""
    s = expit(-y * (X @ w))
    return -(y * s)[:, None] * X


def _clip_rows(G: NDArray[np.float64], clip: float) -> NDArray[np.float64]:
    """Scale every row with norm > clip down to norm clip (others unchanged); clip may be inf."""
    norms = np.linalg.norm(G, axis=1)
    factor = np.divide(clip, norms, out=np.ones_like(norms), where=norms > clip)
    return G * factor[:, None]


def _dpsgd_core(
    X: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    sigma: float,
    clip: float,
    q: float,
    steps: int,
    lr: float,
    l2: float,
    penalized: NDArray[np.bool_],
    rng: np.random.Generator,
    return_history: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """DP-SGD iterations; returns (average of w_1..w_T, iterates w_0..w_T or None).

    Internal and unchecked: ``sigma = 0`` or ``clip = inf`` are accepted here (tests isolate
    the knobs that way) and give no privacy.  Per step the Generator is used exactly twice:
    ``rng.random(n)`` for the Poisson batch, then ``rng.standard_normal(d)`` for the noise.
    """
    n, d = X.shape
    w = np.zeros(d)
    total = np.zeros(d)
    history = np.empty((steps + 1, d)) if return_history else None
    if history is not None:
        history[0] = w
    noise_std = sigma * clip if sigma > 0 else 0.0
    scale = 1.0 / (q * n)
    pen = penalized.astype(np.float64) * l2
    for t in range(1, steps + 1):
        mask = rng.random(n) < q
        G = _clip_rows(_per_example_gradients(X[mask], y[mask], w), clip)
        noisy_sum = G.sum(axis=0) + noise_std * rng.standard_normal(d)
        w = w - lr * (noisy_sum * scale + pen * w)
        total += w
        if history is not None:
            history[t] = w
    return total / steps, history


def auto_learning_rate(clip: float, steps: int, dim: int, sigma: float, batch: float) -> float:
    """The default step size ``R / (G sqrt(T))`` of averaged SGD, from public quantities only.

    ``G = C sqrt(1 + dim sigma^2 / batch^2)`` bounds the root-mean-square norm of the noisy
    averaged gradient (clipped part <= C, noise part ``sigma C sqrt(dim) / (q n)``) and
    ``R = sqrt(dim)`` is a public guess of the norm of the minimiser (the radius OPDisc uses).
    It depends on epsilon only through sigma, never on the data.
    """
    g = clip * math.sqrt(1.0 + dim * sigma**2 / batch**2)
    return math.sqrt(dim) / (g * math.sqrt(steps))


# ==============================================================================================
# Results and the public function
# ==============================================================================================


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
    return PrivacyGuarantee(
        epsilon=epsilon,
        delta=delta,
        kind=GuaranteeKind.APPROXIMATE,
        requires_exact_oracle=False,
        source=SOURCE,
        neighbouring=_REPLACE,
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
    rng: RandomLike = None,
    return_history: bool = False,
    return_diagnostics: bool = False,
) -> DPSGDResult:
    """(epsilon, delta)-DP logistic regression by DP-SGD (replace-one neighbours).

    The noise multiplier is calibrated with :func:`calibrate_noise_multiplier` so that the
    replace-one epsilon certified by the accountant is ``<= epsilon`` (module docstring).

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
    rng : None, int, SeedSequence or Generator
        The only source of randomness (Poisson batches and noise).
    return_history : bool, default=False
        Also return all iterates (covered by the same guarantee).
    return_diagnostics : bool, default=False
        Attach :class:`~oracledp.diagnostics.NonPrivateDiagnostics` (``timings``).  For
        research only: issues a :class:`~oracledp.errors.DiagnosticsWarning` and sets
        ``guarantee.diagnostics_released``.

    Returns
    -------
    DPSGDResult

    Privacy
    -------
    (epsilon, delta)-DP for replace-one neighbours (datasets of the same n differing in one
    record), provided the hyper-parameters do not depend on the data.  Everything is validated
    before the first random number is drawn.
    """
    # 1. Parameters and data, before any randomness.
    eps = check_epsilon(epsilon)
    c, step, ep, reg, intercept = _check_hyper(clip, lr, epochs, l2, fit_intercept)
    if not isinstance(return_history, (bool, np.bool_)):
        raise TypeError("return_history must be a bool")
    want_diag = check_diagnostics_flag(return_diagnostics)
    gen = check_rng(rng)  # type check only
    X_arr = check_finite_matrix(X)
    n, d = X_arr.shape
    y_pm = check_signed_labels(y, n).astype(np.float64)
    dlt = check_delta(1.0 / n**2 if delta is None else delta)
    b, q, steps = _batch_and_steps(batch_size, ep, n)
    X1 = np.hstack([X_arr, np.ones((n, 1))]) if intercept else X_arr
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
    )
    t2 = time.perf_counter()
    coef = avg[:d].copy()
    b0 = float(avg[d]) if intercept else 0.0
    guarantee = _dpsgd_guarantee(eps, dlt, spent, sigma, q, steps)
    diagnostics = None
    if want_diag:
        guarantee = release_diagnostics(guarantee, "DP-SGD")
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


# ==============================================================================================
# The paper's protocol (grid search on the data: NOT accounted)
# ==============================================================================================

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
    rng: RandomLike = None,
) -> DPSGDResult:
    """The ICML 2020 baseline protocol: one DP-SGD run per grid point, keep the best.

    "For each target privacy parameters (epsilon, delta), we run a grid search to identify
    the triplet of parameters that give the highest accuracy" (Neel et al., Section 5).
    Every run is (epsilon, delta)-DP on its own, but choosing the best by accuracy on
    ``(X_val, y_val)`` is **not accounted**: with ``K`` grid points the released model can
    leak up to the whole selection (and ``(X_val, y_val)`` is often the test set).  The
    returned result therefore has ``accounted=False`` and a guarantee with ``holds=False``,
    and a :class:`~oracledp.errors.PrivacyWarning` is issued.  Use it only to reproduce the
    paper's curve, never as a private release.

    Parameters
    ----------
    grid : mapping, default=DEFAULT_PAPER_GRID
        Values per hyper-parameter among ``clip``, ``batch_size``, ``lr``, ``epochs``, ``l2``;
        the Cartesian product is searched, in order, ties going to the first.

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
    gen = check_rng(rng)
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
            res = dpsgd_logistic(X_arr, y, eps, delta, fit_intercept=fit_intercept, rng=gen,
                                 return_diagnostics=True, **cfg)
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
        stacklevel=2,
    )
    assert best.diagnostics is not None
    diagnostics = NonPrivateDiagnostics(
        "dpsgd_paper_protocol", {"search": tuple(rows), "timings": best.diagnostics["timings"]})
    return replace(best, guarantee=best.guarantee.not_holding(reason), accounted=False,
                   diagnostics=diagnostics)


# ==============================================================================================
# scikit-learn estimator
# ==============================================================================================


class DPSGDLogisticRegression(PicklesWithoutDiagnostics, BinaryClassifierTags, ClassifierMixin,
                              BaseEstimator):
    """Differentially private logistic regression trained by DP-SGD (the ICML 2020 baseline).

    One call of :func:`dpsgd_logistic` with fixed, documented hyper-parameters (never tuned
    on the data); the privacy statement of the fit is ``guarantee_``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter epsilon > 0 of the whole fit.
    delta : float or None, default=None
        Privacy parameter in (0, 1); ``None`` means ``1 / n**2`` (n treated as public).
    clip : float, default=1.0
        Per-example gradient clip norm.
    batch_size : int or None, default=None
        Expected Poisson batch size; ``None`` means ``min(256, n)``.
    lr : float or "auto", default="auto"
        Step size; ``"auto"`` = :func:`auto_learning_rate` (public quantities only).
    epochs : float, default=20
        Number of passes; ``T = ceil(epochs * n / batch_size)``.
    l2 : float, default=0
        l2 penalty on the weights (not the intercept).
    fit_intercept : bool, default=True
        Learn an intercept (weight of a constant feature 1, clipped with the gradient).
    classes : sequence of two labels or None, default=None
        The public label set, mapped in sorted order to -1 and +1.  ``None`` reads it from
        ``y`` (treating the label set as public; y with one class is refused).  With
        ``classes`` the mapping does not depend on y; labels outside it raise BoundsViolation.
    keep_diagnostics : bool, default=False
        Keep the run's :class:`~oracledp.diagnostics.NonPrivateDiagnostics` (timings) as
        ``diagnostics_``, for research: issues a :class:`~oracledp.errors.DiagnosticsWarning`
        and sets ``guarantee_.diagnostics_released``.  ``diagnostics_`` is never pickled.
    random_state : None, int, SeedSequence or numpy Generator, default=None
        Source of all randomness.  :func:`sklearn.base.clone` deep-copies a Generator, so
        clones draw identical noise: use int seeds or None in cross-validation.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1, ``classes_[1]`` to +1.
    coef_ : ndarray of shape (1, n_features)
    intercept_ : float
    guarantee_ : PrivacyGuarantee
        (epsilon, delta)-DP, replace-one neighbours, ``requires_exact_oracle=False``.
    sigma_, steps_, q_ : float, int, float
        Noise multiplier, number of steps, sampling probability.
    result_ : DPSGDResult
        The released run (its ``diagnostics`` is always None).
    diagnostics_ : NonPrivateDiagnostics
        Only with ``keep_diagnostics=True``; NOT private, dropped when pickled.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame with string column names.

    Privacy
    -------
    (epsilon, delta)-DP with respect to replacing one training record, via the RDP accountant
    of ``dp_accounting`` for Poisson-subsampled Gaussian steps (add/remove) and group privacy
    of size 2 (see :mod:`oracledp.baselines.dpsgd`).  As in scikit-learn, ``classes_`` (unless
    given), the number of features and, with ``delta=None``, n are read from the data and
    treated as public.
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
        *,
        clip: float = DEFAULT_CLIP,
        batch_size: int | None = None,
        lr: float | str = "auto",
        epochs: float = DEFAULT_EPOCHS,
        l2: float = 0.0,
        fit_intercept: bool = True,
        classes: Any = None,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.clip = clip
        self.batch_size = batch_size
        self.lr = lr
        self.epochs = epochs
        self.l2 = l2
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.keep_diagnostics = keep_diagnostics
        self.random_state = random_state

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def fit(self, X: ArrayLike, y: ArrayLike) -> DPSGDLogisticRegression:
        """Fit by one DP-SGD run; all validation happens before any noise is drawn."""
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, attr)

        check_epsilon(self.epsilon)
        if self.delta is not None:
            check_delta(self.delta)
        _check_hyper(self.clip, self.lr, self.epochs, self.l2, self.fit_intercept)
        if self.batch_size is not None:
            _check_int_positive(self.batch_size, "batch_size")
        keep = check_diagnostics_flag(self.keep_diagnostics, "keep_diagnostics")
        rng = check_rng(self.random_state)

        X_arr, y_arr = validate_private_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        check_classification_targets(y_arr)
        classes, y_pm = map_binary_labels(y_arr, self.classes, type(self).__name__)

        result = dpsgd_logistic(
            X_arr,
            y_pm,
            self.epsilon,
            self.delta,
            clip=self.clip,
            batch_size=self.batch_size,
            lr=self.lr,
            epochs=self.epochs,
            l2=self.l2,
            fit_intercept=bool(self.fit_intercept),
            rng=rng,
            return_diagnostics=keep,
        )
        result, diagnostics = split_diagnostics(result)
        self.classes_ = classes
        self.coef_ = result.coef.reshape(1, -1)
        self.intercept_ = float(result.intercept)
        self.guarantee_ = result.guarantee
        self.sigma_ = float(result.sigma)
        self.steps_ = int(result.steps)
        self.q_ = float(result.q)
        self.result_ = result
        if diagnostics is not None:
            self.diagnostics_ = diagnostics
        return self

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, w> + b``; > 0 means ``classes_[1]``."""
        check_is_fitted(self)
        X_arr = validate_private_data(
            self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
        return X_arr @ self.coef_[0] + self.intercept_

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """``classes_[1]`` where the score is > 0, else ``classes_[0]``."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.intp)]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Logistic probabilities, columns in the order of ``classes_``."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])
