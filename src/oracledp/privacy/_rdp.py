"""The Renyi (RDP) accountant of DP-SGD, with the step from add/remove-one to replace-one.

DP facts implemented here (for :mod:`oracledp.baselines._dpsgd`, the only user):

* **RDP of the Poisson-subsampled Gaussian mechanism.**  ``T`` steps, each adding
  ``N(0, (sigma C)^2 I)`` to a sum of gradients clipped to l2 norm ``C`` over a Poisson
  sample with rate ``q``, are accounted with Google's ``dp_accounting``
  :class:`RdpAccountant` (``T``-fold ``SelfComposedDpEvent`` of
  ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``, of ``GaussianDpEvent(sigma)`` when
  ``q = 1``; Mironov, Talwar, Zhang 2019; the moments accountant of Abadi et al. 2016).
  That analysis is for **add/remove-one** neighbours (``dp_accounting`` refuses Poisson
  sampling under ``REPLACE_ONE`` in its RDP accountant).
* **Conversion to (epsilon, delta).**  Done here, per order, with the formula of
  ``dp_accounting``'s ``compute_epsilon``: at order ``a`` with total RDP at most ``r``,
  ``epsilon_a = 0`` if ``delta^2 + expm1(-r) > 0`` (the KL branch: the RDP bounds the KL
  divergence, and total variation ``<= sqrt(1 - e^-KL)``), else ``r + log(1 - 1/a) -
  log(delta a) / (a - 1)`` (Balle et al. 2020, Prop. 12; Canonne, Kamath, Steinke 2020);
  epsilon is the minimum over the orders evaluated.  Any set of orders gives a valid bound;
  adding orders only tightens it.  It is applied to a per-order *upper bound* of the RDP,
  not to the value as computed (next point).
* **Replace-one by group privacy of size 2.**  If ``D'`` is ``D`` with record ``x``
  replaced by ``x'``, then ``D0 = D \\ {x}`` is an add/remove neighbour of both.  If the
  mechanism is ``(e0, d0)``-DP for add/remove, then for every event S

      P[M(D) in S] <= e^e0 P[M(D0) in S] + d0 <= e^(2 e0) P[M(D') in S] + (1 + e^e0) d0,

  so it is ``(2 e0, (1 + e^e0) d0)``-DP for replace-one (full proof, and why the ICML
  2020 baseline's add/remove accounting is not a replace-one guarantee:
  ``docs/proofs/dpsgd-replace-one.md``).  :func:`dpsgd_epsilon`
  therefore returns ``2 e0`` with ``e0 = eps_addremove(sigma, q, T, d0)`` and
  ``d0 = delta / (1 + e^c)`` for a ``c >= e0`` it verifies (a fixed point found
  by iteration).  DP-SGD's normaliser ``q n`` uses the public ``n`` of the replace-one
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

:func:`calibrate_noise_multiplier` inverts :func:`dpsgd_epsilon`: the smallest noise
multiplier (within ``1 + rtol``) whose certified epsilon is never above the target.

Rounding.  The RDP ``dp_accounting`` computes for ``q < 1`` is not exact: at a very large noise
multiplier the per-order value (about ``q^2 a / sigma^2`` per step) falls below double
precision and what is computed is rounding noise (zero or negative, where the old conversion
answered ``0``).  So each order's computed total ``r`` is used through a stated bound
``err(a)`` on its absolute rounding error (:func:`_rounding_bound`).  With ``u = 2.2e-16``
(machine epsilon) and ``L = log(1/(1 - q))``: ``dp_accounting``'s ``_compute_log_a_int`` is a
left-to-right log-sum-exp of the ``a + 1`` terms ``s_i = log C(a, i) + i log q + (a - i) log(1 -
q) + (i^2 - i) / (2 sigma^2)``.  Each term is a few operations (three ``lgamma`` among them) on
quantities of size at most ``M = 2 lgamma(a + 1) + a (|log q| + L) + a (a - 1) / (2 sigma^2)``,
so its absolute error is taken as at most ``16 u M`` (an assumption about the library
functions' rounding, checked against 60-digit mpmath with a margin of about 500:
``docs/proofs/dpsgd-replace-one.md``); log-sum-exp is 1-Lipschitz in its terms,
so that passes to the sum unamplified.  Each of the ``a + 1`` accumulation steps
``log1p(exp(x - y)) + y`` adds at most ``4 u`` from ``exp``/``log1p`` (their result is in
``[0, log 2]``, and an error in ``x - y`` is damped by ``exp(x - y)``) and ``u |y|`` from the
final addition, where the partial sums ``y`` lie between the first term ``-a L`` and the total
``log A_a <= a (a - 1) / (2 sigma^2)``, hence ``|y| <= B = a L + a (a - 1) / (2 sigma^2) +
log(a + 1)``.  Then ``|log A_a error| <= u (16 M + (a + 1) (4 + B))``; the step RDP is ``log
A_a / (a - 1)`` (one more rounding) and the total is ``T`` times it (one more), so ``err(a) = 4
[T u (16 M + (a + 1)(4 + B)) / (a - 1) + 2 u |r|]``, with a safety factor 4 over this
worst-case, linearly accumulated estimate.  (At ordinary calibrations ``err`` is thousands of
times below ``r``: Adult schedule, sigma 530 (epsilon 0.01), order 2: ``r = 1.2e-6``, ``err =
1.8e-10``; the calibrated sigmas of ordinary targets are unchanged to all digits.)

The per-order bound used is: if ``r >= 4 err(a)`` (the order is *resolved*: the value is far
above its rounding), ``min(r + err(a), R_a)``; otherwise (including ``nan`` and negative
``r``) ``R_a = T a / (2 sigma^2)``, the RDP of the unsubsampled Gaussian (``q = 1``), computed
to full relative precision (rounded up by ``8 u``) and never below the subsampled RDP (module
proof: ``docs/proofs/dpsgd-replace-one.md``).  Either is a valid upper bound of the true RDP at
that order, so the conversion's answer is a valid certificate, a KL-branch ``0`` included: it
is accepted exactly when it holds for the rounded-up RDP (at ``delta = 0.4`` a well-resolved
subsampled RDP gives ``0`` at sigma around 0.5, which the former test "subsampled epsilon
``<= 0`` is untrusted" rejected, making epsilon(sigma) jump up to the loose ``q = 1`` curve
and the calibration's bisection miss the smallest sigma by a factor 27), while a zero that
only came from RDP lost to rounding is not (that order falls back to ``R_a``).  For ``q = 1``
the bound is ``R_a`` at every order.  Orders that cannot be resolved (``R_a`` below three
rounding bounds) are not computed at all.  The per-order switch to ``R_a`` can make epsilon
rise very slightly where resolution is lost (sigma of order 1e6 for ``q = 0.256``, epsilon
within 1e-5 of the floor): there the calibration may lose near-minimality, never validity.

With every per-order bound ``>= 0`` the conversion gives ``epsilon >= min_a [log(1 - 1/a) -
log(delta a) / (a - 1)]`` over the orders used, whatever sigma is:
:func:`certifiable_epsilon_floor` (doubled at ``delta / 2`` for replace-one, since ``c >= 0`` in
the group-privacy step).  A target below that floor is refused with one ValueError before any
noise is drawn (unless the KL branch is reachable in the sigmas searched).
``dp_accounting``'s absl log records are dropped while it runs (a scoped
:class:`logging.Filter` on the ``absl`` logger).

References
----------
M. Abadi et al. "Deep Learning with Differential Privacy". CCS 2016.
I. Mironov, K. Talwar, L. Zhang. "Renyi Differential Privacy of the Sampled
Gaussian Mechanism". arXiv:1908.10530, 2019.
B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato. "Hypothesis Testing Interpretations and
Renyi Differential Privacy". AISTATS 2020.
C. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential Privacy".
NeurIPS 2020.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator

import dp_accounting
from dp_accounting.rdp import RdpAccountant

from oracledp._validation import check_delta, check_epsilon, check_positive
from oracledp.privacy._guarantees import ADD_REMOVE, REPLACE_ONE

__all__ = ["calibrate_noise_multiplier", "certifiable_epsilon_floor", "dpsgd_epsilon"]

_NEIGHBOURING = (REPLACE_ONE, ADD_REMOVE)

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
_ALL_ORDERS: tuple[int, ...] = _BASE_ORDERS + _EXTENSION_ORDERS


class _DropAccountantRecords(logging.Filter):
    """Drops the absl log records emitted from inside ``dp_accounting``."""

    def filter(self, record: logging.LogRecord) -> bool:
        path = str(getattr(record, "pathname", "")).replace("\\", "/")
        return "/dp_accounting/" not in path


@contextlib.contextmanager
def _quiet_accountant() -> Iterator[None]:
    """Scoped: dp_accounting's absl log records are dropped inside the block."""
    flt = _DropAccountantRecords()
    logger = logging.getLogger("absl")
    logger.addFilter(flt)
    try:
        yield
    finally:
        logger.removeFilter(flt)


_U = 2.2e-16  # machine epsilon of double precision (rounded up)
_ROUNDING_SAFETY = 4.0  # factor over the worst-case rounding estimate (module docstring)
_RESOLVED = 4.0  # a computed RDP is used when at least this many times its rounding bound


def _rounding_bound(a: int, sigma: float, q: float, steps: int, r: float) -> float:
    """Bound on the absolute rounding error of dp_accounting's total RDP ``r`` at integer order
    ``a`` (``T`` Poisson-subsampled Gaussian steps, ``q < 1``); derivation in the module docstring."""
    v = 1.0 / (2.0 * sigma * sigma)
    big_l = -math.log1p(-q)
    m = 2.0 * math.lgamma(a + 1.0) + a * (-math.log(q) + big_l) + a * (a - 1.0) * v
    b = a * big_l + a * (a - 1.0) * v + math.log(a + 1.0)
    log_a_err = _U * (16.0 * m + (a + 1.0) * (4.0 + b))
    return _ROUNDING_SAFETY * (steps * log_a_err / (a - 1.0) + 2.0 * _U * abs(r))


def _gaussian_rdp(a: int, sigma: float, steps: int) -> float:
    """``T a / (2 sigma^2)``, the RDP of T unsubsampled Gaussian steps, rounded up."""
    return steps * a / (2.0 * sigma * sigma) * (1.0 + 8.0 * _U)


def _rdp_to_epsilon(orders: list[int], rdp: list[float], delta: float) -> tuple[float, float]:
    """(epsilon, best order): the conversion of upper bounds ``rdp`` of the RDP at ``orders``
    (the per-order formula of ``dp_accounting``'s ``compute_epsilon``; module docstring)."""
    best, best_order = math.inf, math.nan
    for a, r in zip(orders, rdp, strict=True):
        if delta * delta + math.expm1(-r) > 0:
            e = 0.0  # the KL branch: total variation <= sqrt(1 - e^-r) < delta
        else:
            e = r + math.log1p(-1.0 / a) - math.log(delta * a) / (a - 1.0)
        if e < best:
            best, best_order = e, float(a)
    return max(0.0, best), best_order


def certifiable_epsilon_floor(delta: float, *, neighbouring: str = REPLACE_ONE) -> float:
    """The smallest epsilon this accountant can certify at ``delta``, for any sigma, q, T.

    The conversion of RDP ``r >= 0`` at order ``a`` is ``r + log(1 - 1/a) - log(delta a) /
    (a - 1)`` (``dp_accounting``), at least the same expression with ``r = 0``; its minimum over
    the orders used is a floor no noise multiplier goes below, except through the conversion's
    KL branch (epsilon 0 when ``r < -log(1 - delta^2)``, which :func:`calibrate_noise_multiplier`
    checks is out of reach before refusing); other answers below it come only from
    numerically meaningless RDP values, which are not certificates.  For replace-one the
    group-privacy step certifies ``2 e0`` with ``e0`` at ``delta / (1 + e^c)``, ``c >= 0``,
    hence the floor is twice the add/remove floor at ``delta / 2``.
    """
    d = check_delta(delta)
    rel = _check_neighbouring(neighbouring)
    if rel == REPLACE_ONE:
        return 2.0 * certifiable_epsilon_floor(d / 2.0, neighbouring=ADD_REMOVE)
    return min(math.log1p(-1.0 / a) - math.log(d * a) / (a - 1.0) for a in _ALL_ORDERS)


class _AddRemoveRdp:
    """Upper bounds of the RDP of T Poisson-subsampled Gaussian steps (add/remove), per order,
    with the orders extended on demand.

    Each block of orders added is composed by its own ``dp_accounting`` RdpAccountant; every
    order's computed total RDP then becomes a valid upper bound (resolved value plus its
    rounding bound, else the unsubsampled Gaussian's, see the module docstring), and epsilon
    is the conversion of those bounds, a minimum over all the orders evaluated.
    """

    def __init__(self, sigma: float, q: float, steps: int) -> None:
        self._sigma, self._q, self._steps = sigma, q, steps
        self._orders: list[int] = []
        self._bounds: list[float] = []
        self._next = 0
        self._add(list(_BASE_ORDERS))

    def _add(self, orders: list[int]) -> None:
        sigma, q, steps = self._sigma, self._q, self._steps
        gauss = {a: _gaussian_rdp(a, sigma, steps) for a in orders}
        bounds = dict(gauss)
        # Orders whose subsampled RDP cannot be resolved (it is at most the Gaussian's, and
        # would need to be (_RESOLVED - 1) rounding bounds or more) are not computed at all:
        # at a huge sigma the large orders cost seconds and would only give way to gauss.
        todo = [
            a
            for a in orders
            if q < 1.0 and gauss[a] >= (_RESOLVED - 1.0) * _rounding_bound(a, sigma, q, steps, 0.0)
        ]
        if todo:
            acc = RdpAccountant(
                orders=[float(a) for a in todo],
                neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
            )
            step = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
            with _quiet_accountant():
                acc.compose(dp_accounting.SelfComposedDpEvent(step, steps))
            for a, r in zip(todo, acc.rdp.tolist(), strict=True):
                err = _rounding_bound(a, sigma, q, steps, r)
                # nan, and r not far above its rounding bound (zero or negative included),
                # fail this test: the exact q = 1 bound stands in.
                if r >= _RESOLVED * err:
                    bounds[a] = min(r + err, gauss[a])
        self._orders.extend(orders)
        self._bounds.extend(bounds[a] for a in orders)

    def epsilon(self, delta: float) -> tuple[float, float]:
        """(epsilon, best order) for add/remove at ``delta``."""
        if not delta > 0:
            return math.inf, math.nan
        while True:
            eps, order = _rdp_to_epsilon(self._orders, self._bounds, delta)
            if (
                order < self._orders[-1]
                or self._next >= len(_EXTENSION_ORDERS)
                or not math.isfinite(eps)
            ):
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
    lo = 0.0
    for _ in range(200):
        if not math.isfinite(e):
            return math.inf, math.inf
        cand = e * (1.0 + 1e-9) + 1e-15
        fc = f(cand)
        # Certificate: add/remove (fc, delta / (1 + e^cand)) with fc <= cand => replace (2 fc, delta).
        if fc <= cand:
            return 2.0 * fc, cand
        lo, e = cand, fc
    # The iteration creeps (f has slope near 1 at order 2 for a small delta / (1 + e^c)):
    # bracket a certificate (f(hi) <= hi, f(lo) > lo) by doubling, then bisect.
    hi = 2.0 * lo + 1.0
    while f(hi) > hi:
        lo, hi = hi, 2.0 * hi
        if hi > 700:
            return math.inf, math.inf  # no certificate found: refuse to claim anything
    while hi - lo > 1e-9 * hi + 1e-15:
        mid = 0.5 * (lo + hi)
        if f(mid) <= mid:
            hi = mid
        else:
            lo = mid
    return 2.0 * f(hi), hi


def dpsgd_epsilon(
    sigma: float,
    q: float,
    steps: int,
    delta: float,
    *,
    neighbouring: str = REPLACE_ONE,
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
        certified).  RDP values lost to rounding are never used as they are (module
        docstring).
    """
    s = check_positive(sigma, "sigma")
    qq = _check_q(q)
    t = _check_steps(steps)
    d = check_delta(delta)
    rel = _check_neighbouring(neighbouring)
    curve = _AddRemoveRdp(s, qq, t)
    if rel == ADD_REMOVE:
        return curve.epsilon(d)[0]
    return _replace_one_epsilon(curve, d)[0]


def _below_certifiable(eps: float, delta: float) -> ValueError:
    return ValueError(
        f"the requested (epsilon={eps:g}, delta={delta:g}) is below what the DP-SGD RDP "
        "accountant can certify in floating point (at such noise its Renyi divergences are "
        "lost to rounding); use a larger epsilon or delta"
    )


def calibrate_noise_multiplier(
    epsilon: float,
    delta: float,
    q: float,
    steps: int,
    *,
    neighbouring: str = REPLACE_ONE,
    rtol: float = 1e-3,
) -> float:
    """The (nearly) smallest noise multiplier ``sigma`` with ``dpsgd_epsilon(sigma, ...) <= epsilon``.

    Bisection on ``log sigma`` with a one-sided invariant: the upper end ``hi`` is only ever
    set to a value whose epsilon was computed and found ``<= epsilon``, and ``hi`` is what is
    returned, so the result is *never* above the target (no tolerance on the privacy side,
    unlike a bisection that returns a midpoint within a tolerance of the target).  The returned
    sigma is within a factor ``1 + rtol`` of the smallest sigma the accountant certifies, as
    epsilon is non-increasing in sigma (except for slight rises near the floor, where the
    subsampled RDP stops being resolved: module docstring).

    Raises
    ------
    ValueError
        For invalid parameters, or if no sigma <= 2e8 (twice ``_MAX_SIGMA``) reaches the
        target: a target below :func:`certifiable_epsilon_floor` is refused at once.  Deterministic and public:
        nothing random is drawn.
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    qq = _check_q(q)
    t = _check_steps(steps)
    rel = _check_neighbouring(neighbouring)
    tol = check_positive(rtol, "rtol")
    # The floor holds unless the conversion's KL branch (epsilon 0 once the RDP is below
    # -log(1 - delta'^2)) can be reached by the exact Gaussian bound T a / (2 sigma^2) at some
    # sigma searched (<= 2 * _MAX_SIGMA, order 2; delta' <= delta / 2 for replace-one).
    d_ar = d / 2.0 if rel == REPLACE_ONE else d
    kl_reachable = d_ar * d_ar + math.expm1(-t / (2.0 * _MAX_SIGMA) ** 2) > 0
    if not kl_reachable and eps < certifiable_epsilon_floor(d, neighbouring=rel):
        raise _below_certifiable(eps, d)

    def eps_of(s: float) -> float:
        curve = _AddRemoveRdp(s, qq, t)
        return curve.epsilon(d)[0] if rel == ADD_REMOVE else _replace_one_epsilon(curve, d)[0]

    def ok(s: float) -> bool:
        return eps_of(s) <= eps

    # Initial guess from the Gaussian approximation (sensitivity 2 for replace-one).
    sens = 2.0 if rel == REPLACE_ONE else 1.0
    guess = max(0.3, sens * qq * math.sqrt(2.0 * t * math.log(1.0 / d)) / eps)
    guess = min(guess, _MAX_SIGMA)  # a tiny epsilon: the accountant overflows far above it
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
                raise _below_certifiable(eps, d)
    while hi / lo > 1.0 + tol:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi
