"""What the proven calibrations of OPDisc and Gaussian RSPM share: one layer-cake bound.

Both mechanisms add Gaussian noise ``sigma Z`` whose replace-one privacy loss is undone by an
output-dependent shift, so both bound delta by ``E[g(Mx)]`` with
``g(t) = (1 - exp(eps - a t - a^2/2))_+``, ``a = eps / multiplier`` and ``Mx`` the maximum of
``<Z, u>`` over the unit vectors of the outputs.  They differ only in the bound ``B`` of the
survival function of ``Mx`` (OPDisc: ``docs/proofs/opdisc-calibration.md``; Gaussian RSPM:
``docs/proofs/gaussian-rspm-calibration.md``).  Shared here:

* the fixed partition of [0, T] and the running minimum of the bound terms on it
  (:func:`partition`, :func:`log_union_bound`, :func:`bound_table`);
* the layer-cake bound computed from above (:func:`layer_cake_log_bound`) and the term
  active at ``t0`` (:func:`delta_bound_on_grid`, a :class:`DeltaBound`);
* the closed-form start (:func:`closed_form`) and the search for the smallest admissible
  multiplier (:func:`smallest_admissible`);
* the choice between the proven and the paper's multiplier (:func:`choose_multiplier`), the
  rounding up of sigma (:func:`rounded_up`) and the interface of a calibration record
  (:class:`NoiseCalibration`) and the guarantee it gives (:func:`calibrated_guarantee`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy import special

from oracledp._validation import check_delta, check_epsilon
from oracledp.privacy._guarantees import PrivacyGuarantee

SAFETY = 1e-6
"""Relative floating-point safety margin on the computed delta bound."""
_H = 1e-3
"""Step of the fixed partition of [0, T] (smaller: a tighter, still valid, bound)."""
_BISECT_RTOL = 1e-5

Calibration = Literal["proven", "paper"]


def check_calibration(calibration: object) -> None:
    """Refuse a calibration other than ``'proven'`` or ``'paper'`` (ValueError)."""
    if calibration not in ("proven", "paper"):
        raise ValueError(f"calibration must be 'proven' or 'paper', got {calibration!r}")


def log_chi_sf(k: int, t: np.ndarray) -> np.ndarray:
    """An upper bound of log P[chi_k > t] = log Q(k/2, t^2/2), for t >= 0.

    Q is the regularized upper incomplete gamma, used where it is a normal float.  Where it
    underflows (Q < 1e-290, so x = t^2/2 > s = k/2), the bound
    ``Gamma(s, x) <= x^{s-1} e^{-x} / (1 - (s-1)/x)`` (s >= 1, x > s - 1; for s < 1 without
    the denominator), from ``(1 + u/x)^{s-1} <= e^{u (s-1)/x}`` in
    ``Gamma(s, x) = x^{s-1} e^{-x} int_0^inf (1 + u/x)^{s-1} e^{-u} du``.
    """
    s = k / 2.0
    x = 0.5 * t * t
    q = special.gammaincc(s, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        logq = np.log(q)
        xs = np.maximum(x, s + 1.0)  # only used where q underflows, i.e. x far above s
        asym = (s - 1.0) * np.log(xs) - xs - special.gammaln(s)
        if s >= 1.0:
            asym = asym - np.log1p(-(s - 1.0) / xs)
    return np.where(q > 1e-290, logq, asym)


def partition(spread: float, log_size: float | None) -> np.ndarray:
    """The fixed partition ``t_j = j h`` of [0, T], ``T = max(spread, sqrt(2 ln|W|)) + 45``.

    ``spread`` is the typical size of the chi term (sqrt(d+1) for OPDisc, sqrt(m) for Gaussian
    RSPM); with it T makes B(T) < e^-1000, below every float delta.
    """
    top = max(spread, 0.0 if log_size is None else math.sqrt(2.0 * log_size)) + 45.0
    return np.arange(0, math.ceil(top / _H) + 1, dtype=np.float64) * _H


def log_union_bound(t: np.ndarray, log_size: float | None) -> np.ndarray:
    """log of the union bound ``|W| Phi-bar(t)`` (infinite, i.e. unused, without |W|)."""
    if log_size is None:
        return np.full_like(t, np.inf)
    return log_size + special.log_ndtr(-t)


def bound_table(terms: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """log B(t_j) = log min(1, terms) made non-increasing, and the index of the smaller term
    (the first one on ties).

    P[Mx > t] is non-increasing: the running minimum of the bounds is a bound too, and it
    makes B non-increasing (needed for the monotonicity in the multiplier, Proposition 4).
    """
    stack = np.vstack(terms)
    which = np.argmin(stack, axis=0)
    lb = np.minimum(stack.min(axis=0), 0.0)
    return np.minimum.accumulate(lb), which


def layer_cake_log_bound(t: np.ndarray, lb: np.ndarray, eps: float, m: float) -> float:
    """log of ``E[g(Y)]`` bounded from above, for Y with survival function <= B (Proposition 4).

    ``t`` is the fixed partition ``t_j = j h`` of [0, T], ``lb`` = log B(t_j) (non-increasing),
    ``g(t) = (1 - exp(eps - a t - a^2/2))_+`` with ``a = eps / m``.  Returns the log of
    ``g(0) + sum_j B(t_{j-1}) (g(t_j) - g(t_{j-1})) + B(T) (1 - g(T))``, each term in log
    space, plus ``log1p(SAFETY)``.  Shared by OPDisc and Gaussian RSPM
    (``docs/proofs/gaussian-rspm-calibration.md``), whose bounds differ only in B.
    """
    a = eps / m
    t0 = m - eps / (2.0 * m)
    c0 = eps - 0.5 * a * a  # log(1 - g(t)) = c0 - a t where g(t) > 0
    terms = []
    if t0 < 0.0:  # g(0) > 0 (only for tiny m): the first term
        terms.append(math.log(-math.expm1(c0)))
    # bins (t_{j-1}, t_j] with g(t_j) > 0, i.e. t_j > t0
    first = max(int(np.searchsorted(t, t0, side="right")), 1)
    if first < len(t):
        lo, hi = t[first - 1:-1], t[first:]
        with np.errstate(divide="ignore"):
            # g(t_j) - g(t_{j-1}): the whole of g(t_j) for the bin containing t0
            diff = np.where(
                lo > t0,
                c0 - a * lo + np.log(-np.expm1(-a * (hi - lo))),
                np.log(-np.expm1(np.minimum(c0 - a * hi, 0.0))),
            )
        terms.append(float(special.logsumexp(lb[first - 1:-1] + diff)))
    # the last point: B(T) (1 - g(T))
    terms.append(float(lb[-1]) + min(c0 - a * float(t[-1]), 0.0))
    log_total = float(special.logsumexp(terms)) + math.log1p(SAFETY)
    if not math.isfinite(log_total):  # pragma: no cover - all terms are finite by construction
        raise FloatingPointError("delta bound is not finite")
    return log_total


@dataclass(frozen=True)
class DeltaBound:
    """A proven upper bound on the delta of OPDisc (at multiplier m) or of Gaussian RSPM (at
    multiplier mu): see the two modules' ``delta_upper_bound``."""

    delta: float
    log_delta: float
    bound: str
    """The term of B active at t0, where the integrand is largest (OPDisc: hemisphere-chi or
    union; Gaussian RSPM: union, chi or l1-chernoff)."""


def check_multiplier(value: Any, name: str) -> float:
    """A multiplier (OPDisc's m, Gaussian RSPM's mu): a positive finite number."""
    if not (isinstance(value, (int, float, np.floating)) and value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def delta_bound_on_grid(t: np.ndarray, lb: np.ndarray, which: np.ndarray,
                        term_names: Sequence[str], eps: float, m: float) -> DeltaBound:
    """The layer-cake bound at multiplier ``m`` on the partition ``t`` (log B = ``lb``), with
    the name of the term of B (``term_names[which]``) active at ``t0 = m - eps / (2 m)``."""
    log_total = layer_cake_log_bound(t, lb, eps, m)
    t0 = m - eps / (2.0 * m)
    at = min(max(int(np.searchsorted(t, t0)), 0), len(t) - 1)
    return DeltaBound(delta=math.exp(log_total), log_delta=log_total,
                      bound=term_names[int(which[at])])


def closed_form(epsilon: float, delta: float, spread: float, size: int | None) -> float:
    """A closed-form admissible multiplier (both proofs, Proposition 3): ``s + eps / (2 s)``
    with ``s = min(spread + sqrt(2 ln(1/delta)), sqrt(2 ln(|W| / (2 delta))))``; ``spread``
    bounds the mean of the chi term (concentration), the second term is the union bound."""
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    L = math.log(1.0 / dlt)
    s = spread + math.sqrt(2.0 * L)
    if size is not None and size >= 2:
        s = min(s, math.sqrt(2.0 * (math.log(size) + L - math.log(2.0))))
    return s + eps / (2.0 * s)


def smallest_admissible(bound: Callable[[float], DeltaBound], start: float, delta: float,
                        what: str) -> tuple[float, DeltaBound]:
    """The smallest multiplier (to a relative ``_BISECT_RTOL``, the admissible end) whose
    proven bound ``bound(m)`` is at most ``delta``, searched from the closed form ``start``
    (admissible by the proof: the numeric bound only confirms it, with a few 5% steps up
    allowed), then down by factors of 4 and by bisection.  Every returned value was checked
    with ``bound``; OPDisc and Gaussian RSPM share it."""
    log_target = math.log(delta)

    def ok(m: float) -> DeltaBound | None:
        b = bound(m)
        return b if b.log_delta <= log_target else None

    hi = start
    hi_bound = ok(hi)
    for _ in range(60):  # the closed form is proven; the numeric bound should confirm it
        if hi_bound is not None:
            break
        hi *= 1.05
        hi_bound = ok(hi)
    if hi_bound is None:  # pragma: no cover - would be a bug in the quadrature
        raise FloatingPointError(f"{what} calibration: no admissible multiplier found")
    lo = hi / 4.0
    while (b := ok(lo)) is not None and lo > 1e-6:
        hi, hi_bound = lo, b
        lo /= 4.0
    while (hi - lo) > _BISECT_RTOL * hi:
        mid = 0.5 * (lo + hi)
        b = ok(mid)
        if b is None:
            lo = mid
        else:
            hi, hi_bound = mid, b
    assert hi_bound is not None and hi_bound.log_delta <= log_target
    return hi, hi_bound


def cached_smallest(bound: Callable[[float, float, int, int | None], DeltaBound],
                    start: Callable[[float, float, int, int | None], float], what: str,
                    ) -> Callable[[float, float, int, int | None], tuple[float, float, str]]:
    """``(eps, delta, k, size) -> (multiplier, its proven delta bound, the active term)``,
    cached: :func:`smallest_admissible` for the proven bound ``bound(multiplier, eps, k,
    size)`` from the closed form ``start(eps, delta, k, size)`` (``k``: OPDisc's d, Gaussian
    RSPM's m).  The arguments are the checked ones."""

    @lru_cache(maxsize=4096)
    def proven(eps: float, dlt: float, k: int, size: int | None) -> tuple[float, float, str]:
        x, b = smallest_admissible(lambda x: bound(x, eps, k, size), start(eps, dlt, k, size),
                                   dlt, what)
        return x, b.delta, b.bound

    return proven


def choose_multiplier(calibration: Calibration, paper: float,
                      proven: Callable[[], tuple[float, float, str]],
                      bound: Callable[[float], DeltaBound]) -> tuple[float, float, str]:
    """``(multiplier, delta bound, active term)``: the smallest proven one (``proven()``, a
    cached search) or, for ``calibration='paper'``, the paper's with the proven bound *at* it
    (which may exceed delta)."""
    if calibration == "proven":
        return proven()
    b = bound(paper)
    return paper, b.delta, b.bound


def rounded_up(value: float, roundings: int) -> float:
    """``value`` moved up by one ulp per floating-point rounding that computed it (each loses
    at most half an ulp), so sigma is never below the proven one."""
    for _ in range(roundings):
        value = math.nextafter(value, math.inf)
    return value


def check_count(value: Any, name: str) -> int:
    """``value`` as a positive integer (ValueError naming it ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_size(size: Any) -> int | None:
    """|W| (or an upper bound of it) for the union bound: a positive integer, or None."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"|W| must be a positive integer, got {size!r}")
    return int(size)


@dataclass(frozen=True)
class NoiseCalibration:
    """The fields and text common to the Gaussian calibration records (OPDisc's, Gaussian
    RSPM's frozen dataclasses, which add their multiplier and what sigma is made of).

    ``sigma`` the noise's standard deviation, ``delta_bound`` the proven bound on delta at
    the chosen multiplier, ``bound`` its active term, ``method`` ``'proven'`` or ``'paper'``,
    ``size`` and ``size_how`` |W| for the union bound and how it was obtained (None and
    ``'not used'`` without one).  Each record also has ``ratio_to_paper`` and ``describe()``
    (the text in the guarantee).  Its guarantee holds only if ``proven``.
    """

    epsilon: float
    delta: float
    size: int | None
    size_how: str
    sigma: float
    delta_bound: float
    bound: str
    method: str

    @property
    def proven(self) -> bool:
        """Whether the proven delta bound at the chosen multiplier is at most delta."""
        return self.delta_bound <= self.delta

    def describe(self) -> str:
        """The calibration in one line, as recorded in ``guarantee.calibration``."""
        raise NotImplementedError

    def _bound_text(self, proof: str, extra: str = "") -> str:
        """The end of :meth:`describe`: the proven delta bound, its term and ``proof``, then
        ``extra`` and ``, |W| = N`` (``<= N`` for a bound; nothing without |W|)."""
        size = ("" if self.size is None else
                f", |W| {'=' if self.size_how == 'exact' else '<='} {self.size:.4g}")
        return (f"proven delta bound {self.delta_bound:.4g} ({self.bound} term; layer-cake "
                f"bound of {proof}{extra}{size})")


def calibrated_guarantee(cal: NoiseCalibration, *, source: str, source_paper: str, notes: str,
                         paper_reason: str) -> PrivacyGuarantee:
    """The (eps, delta)-DP statement of a run with calibration ``cal``, which needs the exact
    minimizer; it holds only for ``method='proven'`` (``source``), and is marked as not holding
    with ``paper_reason`` for the paper's calibration (``source_paper``)."""
    g = PrivacyGuarantee.approximate(
        cal.epsilon, cal.delta, source=source if cal.method == "proven" else source_paper,
        requires_exact_oracle=True, notes=notes, calibration=cal.describe())
    if cal.method != "proven" or not cal.proven:
        return g.not_holding(paper_reason)
    return g
