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

Numerically meaningless answers are never certificates.  At a very large noise multiplier
the per-order RDP (about ``q^2 a / sigma^2`` per step) falls below double precision, the
computed value is rounding noise (zero or negative), and ``dp_accounting`` logs "Negative
Renyi divergence ... Returning an epsilon of zero" and answers ``0`` (or ``0`` through its
KL branch).  So with Poisson subsampling an accountant epsilon ``<= 0`` (and, always, a
``nan`` or the negative-RDP fallback) is *untrusted*: the answer is replaced by that of the
unsubsampled Gaussian (``q = 1``: RDP ``a / (2 sigma^2)`` per step, computed to full relative
precision and never below the subsampled RDP), and if that is untrusted too,
:func:`dpsgd_epsilon` returns ``inf`` and the calibration target is not met.  Without
subsampling an epsilon of 0 from the conversion (large ``delta``) is a valid certificate.  With
``r >= 0`` the conversion gives ``epsilon >= min_a [log(1 - 1/a) - log(delta a) / (a - 1)]``
over the orders used, whatever sigma is: :func:`certifiable_epsilon_floor` (doubled at
``delta / 2`` for replace-one, since ``c >= 0`` in the group-privacy step).  A target below
that floor, or one only reachable where the accountant's answers become untrusted, is
refused with one ValueError before any noise is drawn.  ``dp_accounting``'s absl warnings
are filtered out while it runs (a scoped :class:`logging.Filter` on the ``absl`` logger).

References
----------
M. Abadi et al. "Deep Learning with Differential Privacy". CCS 2016.
I. Mironov, K. Talwar, L. Zhang. "Renyi Differential Privacy of the Sampled
Gaussian Mechanism". arXiv:1908.10530, 2019.
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


class _AccountantWarnings(logging.Filter):
    """Drops dp_accounting's absl warnings; notes the "negative Renyi divergence" fallback."""

    def __init__(self) -> None:
        super().__init__()
        self.negative_rdp = False

    def filter(self, record: logging.LogRecord) -> bool:
        path = str(getattr(record, "pathname", "")).replace("\\", "/")
        try:
            msg = record.getMessage()
        except Exception:  # pragma: no cover - a malformed record: keep it
            return True
        if "Negative Renyi divergence" in msg:
            self.negative_rdp = True
            return False
        return "dp_accounting" not in path and "Renyi" not in msg and "_compute_log_a" not in msg


@contextlib.contextmanager
def _quiet_accountant() -> Iterator[_AccountantWarnings]:
    """Scoped: dp_accounting's absl warnings are filtered (and recorded) inside the block."""
    flt = _AccountantWarnings()
    logger = logging.getLogger("absl")
    logger.addFilter(flt)
    try:
        yield flt
    finally:
        logger.removeFilter(flt)


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
    return min(
        math.log1p(-1.0 / a) - math.log(d * a) / (a - 1.0) for a in _ALL_ORDERS
    )


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
        self._sigma, self._q, self._steps = sigma, q, steps
        self._fallback: _AddRemoveRdp | None = None
        self._accountants: list[RdpAccountant] = []
        self._top = 0.0
        self._next = 0
        # Set once any answer was numerically meaningless (epsilon <= 0 or nan, or the
        # "negative Renyi divergence" fallback): such answers are reported as inf.
        self.untrusted = False
        self._add(list(_BASE_ORDERS))

    def _add(self, orders: list[int]) -> None:
        acc = RdpAccountant(
            orders=[float(a) for a in orders],
            neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        )
        with _quiet_accountant() as flt:
            acc.compose(self._event)
        if flt.negative_rdp:
            self.untrusted = True
        self._accountants.append(acc)
        self._top = float(max(orders))

    def _fallback_epsilon(self, delta: float) -> tuple[float, float]:
        """The answer for untrusted subsampled RDP: the unsubsampled Gaussian's, else inf.

        Poisson subsampling never increases the add/remove Renyi divergence (joint
        quasi-convexity: both neighbours' outputs are mixtures with the same weights of
        Gaussians whose divergence is at most that of ``N(C, .)`` vs ``N(0, .)``), so the
        ``q = 1`` accountant is a valid, numerically exact, more conservative bound.  If it is
        untrusted too, nothing is certified (``inf``, and ``untrusted`` stays set).
        """
        if self._q >= 1.0:
            return math.inf, math.nan
        if self._fallback is None:
            self._fallback = _AddRemoveRdp(self._sigma, 1.0, self._steps)
        eps, order = self._fallback.epsilon(delta)
        if self._fallback.untrusted:
            return math.inf, math.nan
        self.untrusted = False
        return eps, order

    def _block_epsilon(self, acc: RdpAccountant, delta: float) -> tuple[float, float]:
        with _quiet_accountant() as flt:
            eps, order = acc.get_epsilon_and_optimal_order(delta)
        eps, order = float(eps), float(order)
        # nan, or the negative-RDP fallback, is never a certificate.  With subsampling (q < 1)
        # an epsilon <= 0 comes from RDP values lost to rounding (log of 1 + tiny): not one
        # either.  Without subsampling the RDP a / (2 sigma^2) is computed to full relative
        # precision, and 0 from the conversion (large delta) is a valid certificate.
        if flt.negative_rdp or math.isnan(eps) or (eps <= 0.0 and self._q < 1.0):
            self.untrusted = True
        return eps, order

    def epsilon(self, delta: float) -> tuple[float, float]:
        """(epsilon, best order) for add/remove at ``delta``."""
        if not delta > 0:
            return math.inf, math.nan
        while True:
            if self.untrusted:
                return self._fallback_epsilon(delta)
            answers = [self._block_epsilon(acc, delta) for acc in self._accountants]
            if self.untrusted:
                return self._fallback_epsilon(delta)
            eps, order = min(answers, key=lambda eo: eo[0])
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
        certified, including when the accountant's answer is numerically meaningless: an
        epsilon ``<= 0`` or ``nan`` for this finite noise, see the module docstring).
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
    set to a value whose epsilon was computed, trusted (positive and finite: see the module
    docstring) and found ``<= epsilon``, and ``hi`` is what is returned, so the result is
    *never* above the target (no tolerance on the privacy side, unlike a bisection that
    returns a midpoint within a tolerance of the target).  The returned sigma is within a
    factor ``1 + rtol`` of the smallest sigma the accountant certifies.

    Raises
    ------
    ValueError
        For invalid parameters, or if no sigma <= 1e8 reaches the target with a trusted
        accountant answer: a target below :func:`certifiable_epsilon_floor` is refused at
        once, and so is one the search can only reach where the accountant's answers have
        become numerically meaningless.  Deterministic and public: nothing random is drawn.
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

    def eps_of(s: float) -> tuple[float, bool]:
        """(epsilon, trusted) at noise multiplier s."""
        curve = _AddRemoveRdp(s, qq, t)
        e = curve.epsilon(d)[0] if rel == ADD_REMOVE else _replace_one_epsilon(curve, d)[0]
        return e, not curve.untrusted

    def ok(s: float) -> bool:
        e, trusted = eps_of(s)
        return trusted and e <= eps

    # Initial guess from the Gaussian approximation (sensitivity 2 for replace-one).
    sens = 2.0 if rel == REPLACE_ONE else 1.0
    guess = max(0.3, sens * qq * math.sqrt(2.0 * t * math.log(1.0 / d)) / eps)
    guess = min(guess, _MAX_SIGMA)  # a tiny epsilon: the accountant overflows far above it
    e_guess, trusted = eps_of(guess)
    while not trusted:  # beyond floating point: come down to where the accountant means something
        guess /= 4.0
        if guess < 0.3:  # pragma: no cover - small sigmas have large, meaningful RDP
            raise _below_certifiable(eps, d)
        e_guess, trusted = eps_of(guess)
    if e_guess <= eps:
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
        while True:
            e_hi, trusted = eps_of(hi)
            if not trusted:  # more noise only makes the answers more meaningless
                raise _below_certifiable(eps, d)
            if e_hi <= eps:
                break
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
