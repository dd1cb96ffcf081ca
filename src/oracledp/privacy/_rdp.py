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
* **Conversion to (epsilon, delta).**  ``dp_accounting``'s
  ``get_epsilon_and_optimal_order(delta)``, a minimum over the RDP orders evaluated: any set
  of orders gives a valid bound; adding orders only tightens it.
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

References
----------
M. Abadi et al. "Deep Learning with Differential Privacy". CCS 2016.
I. Mironov, K. Talwar, L. Zhang. "Renyi Differential Privacy of the Sampled
Gaussian Mechanism". arXiv:1908.10530, 2019.
"""

from __future__ import annotations

import math

import dp_accounting
from dp_accounting.rdp import RdpAccountant

from oracledp._validation import check_delta, check_epsilon, check_positive
from oracledp.privacy._guarantees import ADD_REMOVE, REPLACE_ONE

__all__ = ["calibrate_noise_multiplier", "dpsgd_epsilon"]

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
        certified).
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
    unlike a bisection that returns a midpoint within a tolerance of the target).  The
    returned sigma is within a factor ``1 + rtol`` of the smallest sigma the accountant
    certifies.

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
