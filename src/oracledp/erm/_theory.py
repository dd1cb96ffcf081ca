"""Theory curves of Accuracy First and the default privacy grids built from them.

Ligett, Neel, Roth, Waggoner, Wu, "Accuracy First" (NeurIPS 2017).  The
"theory approach" the paper compares against: take a utility theorem of a
private ERM algorithm, which bounds the *expected* excess risk at privacy level
epsilon, and solve it for the smallest epsilon giving expected excess risk
``alpha``:

* :func:`covpert_ridge_epsilon`: Theorem 3.1 (covariance perturbation, ridge),
* :func:`outpert_logistic_epsilon`: Theorem 3.3 (output perturbation, logistic),
* :func:`outpert_ridge_epsilon`: Theorem A.9 (output perturbation, ridge), with
  the correction explained there.

Appendix B builds the noise-reduction grid from these: the least private level
is ``4E`` (E the theory epsilon for alpha) and the most private ``1/n``.  The
appendix prints them the other way round (``eps_1 = 4E``, ``eps_T = 1/n``), but
Algorithms 1, 3 and 5 need ``eps_1 < ... < eps_T``, so we use
``eps_1 = 1/n < ... < eps_T = 4E`` (what the authors' code does too).

All functions treat n, p, lambda and alpha as public.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._validation import as_real_float64, check_positive

__all__ = [
    "covpert_ridge_epsilon",
    "covpert_ridge_excess_bound",
    "default_eps_grid",
    "doubling_grid",
    "geometric_grid",
    "outpert_logistic_epsilon",
    "outpert_logistic_excess_bound",
    "outpert_ridge_epsilon",
    "outpert_ridge_excess_bound",
    "resolve_eps_grid",
    "theory_epsilon",
]

DEFAULT_T = 1000  # Appendix B: T = 1000 levels for NoiseReduction


def _np(n: object, p: object) -> tuple[int, int]:
    for name, v in (("n", n), ("p", p)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
    return int(n), int(p)  # type: ignore[call-overload]


# --- Theorem 3.1: covariance perturbation for ridge regression ----------------------------------
def covpert_ridge_excess_bound(epsilon: float, n: int, p: int, lam: float) -> float:
    """Theorem 3.1: ``E[L(theta_p) - L(theta*)] <= 4 sqrt2 (2 sqrt(p/lambda) + p/lambda) / (n eps)``.

    (In the proof's notation ``4 sqrt2 (2 sqrt(p) M + p M^2) / (n eps)`` with ``M = sqrt(1/lambda)``.)
    """
    eps = check_positive(epsilon, "epsilon")
    n_, p_ = _np(n, p)
    lam_ = check_positive(lam, "lam")
    return 4.0 * math.sqrt(2.0) * (2.0 * math.sqrt(p_ / lam_) + p_ / lam_) / (n_ * eps)


def covpert_ridge_epsilon(alpha: float, n: int, p: int, lam: float) -> float:
    """The epsilon at which Theorem 3.1 bounds the expected excess risk by alpha."""
    a = check_positive(alpha, "alpha")
    n_, p_ = _np(n, p)
    lam_ = check_positive(lam, "lam")
    return 4.0 * math.sqrt(2.0) * (2.0 * math.sqrt(p_ / lam_) + p_ / lam_) / (n_ * a)


# --- Theorem 3.3: output perturbation for logistic regression -----------------------------------
def outpert_logistic_excess_bound(epsilon: float, n: int, p: int, lam: float) -> float:
    """Theorem 3.3: ``E[L(theta_p) - L(theta*)] <= 2 sqrt2 p / (n lambda eps) + 4 p^2 / (n^2 lambda eps^2)``."""
    eps = check_positive(epsilon, "epsilon")
    n_, p_ = _np(n, p)
    lam_ = check_positive(lam, "lam")
    return 2.0 * math.sqrt(2.0) * p_ / (n_ * lam_ * eps) + 4.0 * p_**2 / (n_**2 * lam_ * eps**2)


def outpert_logistic_epsilon(alpha: float, n: int, p: int, lam: float) -> float:
    """The epsilon at which Theorem 3.3 bounds the expected excess risk by alpha.

    With ``u = 1/eps`` the bound is ``a u^2 + b u``, ``a = 4p^2/(n^2 lambda)``,
    ``b = 2 sqrt2 p/(n lambda)``; the positive root of ``a u^2 + b u = alpha`` is
    ``u = 2 alpha / (b + sqrt(b^2 + 4 a alpha))`` (the cancellation-free form).
    Both terms are kept (the authors' code keeps only the first).
    """
    al = check_positive(alpha, "alpha")
    n_, p_ = _np(n, p)
    lam_ = check_positive(lam, "lam")
    a = 4.0 * p_**2 / (n_**2 * lam_)
    b = 2.0 * math.sqrt(2.0) * p_ / (n_ * lam_)
    u = 2.0 * al / (b + math.sqrt(b * b + 4.0 * a * al))
    return 1.0 / u


# --- Theorem A.9: output perturbation for ridge regression --------------------------------------
def outpert_ridge_excess_bound(
    epsilon: float, n: int, p: int, lam: float, *, as_printed: bool = False
) -> float:
    """Theorem A.9 (output perturbation for ridge, noise ``Lap(r)``, ``r = (M+1) sqrt(p/(n lambda)) / eps``).

    Correction: the proof bounds each record's expected squared-loss increase by
    ``E||b||^2 = 2 p r^2`` and then multiplies by ``1/(2n)``, forgetting the sum
    over the n records of ``L = (1/2n) sum_i ...``; the data term is
    ``(1/2n) * n * 2 p r^2 = p r^2``, not ``p r^2 / n``.  What the proof shows is

        ``E[L(theta_p) - L(theta*)] <= (1 + lambda) p r^2 = (1 + lambda) (M+1)^2 p^2 / (n lambda eps^2)``,

    ``M = sqrt(1/lambda)``; the theorem prints ``(1/n + lambda)`` in place of
    ``(1 + lambda)``.  ``as_printed=True`` returns the printed formula (to
    reproduce the paper's Figure 1a curve); it is not a proven bound.
    """
    eps = check_positive(epsilon, "epsilon")
    n_, p_ = _np(n, p)
    lam_ = check_positive(lam, "lam")
    M = math.sqrt(1.0 / lam_)
    factor = (1.0 / n_ + lam_) if as_printed else (1.0 + lam_)
    return factor * (M + 1.0) ** 2 * p_**2 / (n_ * lam_ * eps**2)


def outpert_ridge_epsilon(
    alpha: float, n: int, p: int, lam: float, *, as_printed: bool = False
) -> float:
    """The epsilon at which Theorem A.9 (corrected, see :func:`outpert_ridge_excess_bound`) gives alpha.

    ``eps = (M + 1) p sqrt((1 + lambda) / (n lambda alpha))``; ``as_printed=True``
    uses the printed ``(1/n + lambda)``.
    """
    a = check_positive(alpha, "alpha")
    n_, p_ = _np(n, p)
    lam_ = check_positive(lam, "lam")
    M = math.sqrt(1.0 / lam_)
    factor = (1.0 / n_ + lam_) if as_printed else (1.0 + lam_)
    return (M + 1.0) * p_ * math.sqrt(factor / (n_ * lam_ * a))


# --- grids ----------------------------------------------------------------------------------------
def _check_levels(eps: NDArray[np.float64], name: str = "eps_list") -> NDArray[np.float64]:
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D sequence of levels, got shape {eps.shape}"
        )
    if not np.isfinite(eps).all() or (eps <= 0).any():
        raise ValueError(f"{name} must contain finite levels > 0, got {eps[:10].tolist()}")
    if (np.diff(eps) <= 0).any():
        i = int(np.flatnonzero(np.diff(eps) <= 0)[0])
        raise ValueError(
            f"{name} must be strictly increasing (most private first); "
            f"{name}[{i}] = {eps[i]!r} >= {name}[{i + 1}] = {eps[i + 1]!r}"
        )
    return eps


def _check_range(eps_min: object, eps_max: object) -> tuple[float, float]:
    lo = check_positive(eps_min, "eps_min")
    hi = check_positive(eps_max, "eps_max")
    if not lo < hi:
        raise ValueError(f"need eps_min < eps_max, got eps_min={lo!r}, eps_max={hi!r}")
    return lo, hi


def geometric_grid(eps_min: float, eps_max: float, T: int) -> NDArray[np.float64]:
    """``T`` levels from eps_min to eps_max (both included) with a constant ratio (Appendix B).

    Appendix B writes ``eps_t = eps_1 r^t`` with ``r = (eps_T/eps_1)^(1/T)``, which
    does not hit its own endpoints; we use ``r = (eps_max/eps_min)^(1/(T-1))`` so
    both are levels (``numpy.geomspace``).
    """
    lo, hi = _check_range(eps_min, eps_max)
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or int(T) < 2:
        raise ValueError(f"T must be a whole number >= 2, got {T!r}")
    grid = np.geomspace(lo, hi, int(T))
    grid[0], grid[-1] = lo, hi
    return _check_levels(grid)


def doubling_grid(eps_min: float, eps_max: float) -> NDArray[np.float64]:
    """The DoublingMethod's levels ``eps_min * 2^i``, ``i = 0..K``, with ``K = ceil(log2(eps_max/eps_min))``.

    Appendix B prints ``T = ceil(log2(eps_1 / eps_T))`` with the two ends swapped
    (as for the noise-reduction grid); the number of doublings needed to reach
    ``eps_max`` from ``eps_min`` is ``K = ceil(log2(eps_max / eps_min))``, and the
    grid has the ``T = K + 1`` levels ``eps_min, 2 eps_min, ..., 2^K eps_min >= eps_max``
    (its last level is the first to reach eps_max, as in the authors' code).
    Multiplying by a power of two is exact in floating point, so the sum of the
    first k levels is exactly ``(2^k - 1) eps_min`` up to one rounding.
    """
    lo, hi = _check_range(eps_min, eps_max)
    K = max(1, math.ceil(math.log2(hi / lo)))
    while lo * 2.0**K < hi:  # guard against rounding in log2
        K += 1
    return lo * 2.0 ** np.arange(K + 1, dtype=np.float64)


def theory_epsilon(method: str, alpha: float, n: int, p: int, lam: float) -> float:
    """E: the epsilon at which the method's theory curve bounds the expected excess risk by alpha.

    Theorem 3.1 (:func:`covpert_ridge_epsilon`) for ``"covnr"`` / ``"doubling-covpert"``,
    Theorem 3.3 (:func:`outpert_logistic_epsilon`) for ``"outputnr"`` /
    ``"doubling-outpert"``: the curve Appendix B builds the default grid from.
    """
    n_, p_ = _np(n, p)
    if method in ("covnr", "doubling-covpert"):
        return covpert_ridge_epsilon(alpha, n_, p_, lam)
    if method in ("outputnr", "doubling-outpert"):
        return outpert_logistic_epsilon(alpha, n_, p_, lam)
    raise ValueError(
        f"unknown method {method!r}; valid: covnr, outputnr, doubling-covpert, doubling-outpert"
    )


def default_eps_grid(
    method: str, alpha: float, n: int, p: int, lam: float, T: int = DEFAULT_T
) -> NDArray[np.float64]:
    """Appendix B's grid: from ``1/n`` to ``4E``, E the theory epsilon for expected excess alpha.

    ``method``: ``"covnr"`` (E from Theorem 3.1), ``"outputnr"`` (Theorem 3.3) --
    geometric with T levels; ``"doubling-covpert"`` / ``"doubling-outpert"`` --
    :func:`doubling_grid` between the same ends.  Raises ValueError when
    ``1/n >= 4E`` (alpha so large that no search is needed).
    """
    n_, p_ = _np(n, p)
    E = theory_epsilon(method, alpha, n_, p_, lam)
    lo, hi = 1.0 / n_, 4.0 * E
    if not lo < hi:
        raise ValueError(
            f"the default grid runs from 1/n = {lo:g} to 4E = {hi:g} (Appendix B) and is empty "
            f"for alpha = {alpha!r}; pass eps_list explicitly"
        )
    if method.startswith("doubling"):
        return doubling_grid(lo, hi)
    return geometric_grid(lo, hi, T)


def resolve_eps_grid(
    eps_list: ArrayLike | tuple[float, float] | tuple[float, float, int] | None,
    *,
    method: str,
    alpha: float,
    n: int,
    p: int,
    lam: float,
) -> NDArray[np.float64]:
    """Turn the ``eps_list`` argument of the algorithms into a validated grid.

    * ``None``: :func:`default_eps_grid` (Appendix B, corrected).
    * a *tuple* ``(eps_min, eps_max, T)`` (noise reduction: :func:`geometric_grid`)
      or ``(eps_min, eps_max)`` (doubling: :func:`doubling_grid`; for noise
      reduction ``T = 1000``);
    * a *list or array*: the levels themselves, strictly increasing, finite, > 0.
    """
    if eps_list is None:
        return default_eps_grid(method, alpha, n, p, lam)
    doubling = method.startswith("doubling")
    if isinstance(eps_list, tuple):
        if len(eps_list) == 2:
            lo, hi = eps_list
            return doubling_grid(lo, hi) if doubling else geometric_grid(lo, hi, DEFAULT_T)
        if len(eps_list) == 3 and not doubling:
            lo, hi, T = eps_list
            if isinstance(T, bool) or not isinstance(T, numbers.Integral):
                raise TypeError(
                    "eps_list given as a tuple means (eps_min, eps_max, T) with an int T; "
                    "pass a list or array for explicit levels"
                )
            return geometric_grid(lo, hi, T)
        raise ValueError(
            "eps_list given as a tuple must be (eps_min, eps_max, T) for noise reduction or "
            "(eps_min, eps_max) for the doubling method; pass a list or array for explicit levels"
        )
    levels = as_real_float64(eps_list, "eps_list", must_be="None, a tuple or a 1-D array of levels")
    return _check_levels(levels)  # a fresh array: never the caller's


def cap_levels(
    grid: NDArray[np.float64],
    max_epsilon: float | None,
    worst_loss: Callable[[NDArray[np.float64]], float],
    context: str = "",
) -> NDArray[np.float64]:
    """The longest prefix of ``grid`` whose worst ex-post loss stays within ``max_epsilon``.

    ``worst_loss(levels)`` is the largest ex-post privacy loss a search over ``levels`` can
    report: stopping at the last level, or refusing after it (CovNR/OutputNR:
    ``eps_0(T) + eps_T``, Lemma 2.8; DoublingMethod: ``E(T)``, Theorem A.2).  It grows with
    the prefix, so with the returned levels no run -- released or refused -- has a loss
    above ``max_epsilon``.  Everything here is public (n, p, lambda, alpha, gamma, the grid):
    nothing random happens.  ``max_epsilon=None`` returns the grid unchanged.  Raises
    ValueError when even the first level exceeds the cap; ``context`` (public parameters,
    e.g. ``" with alpha = 0.1 and n = 921 records"``) is named in its message.
    """
    if max_epsilon is None:
        return grid
    cap = check_positive(max_epsilon, "max_epsilon")
    t = int(grid.size)
    while t > 0 and worst_loss(grid[:t]) > cap:
        t -= 1
    if t == 0:
        raise ValueError(
            f"max_epsilon = {cap:g} is below the smallest ex-post loss this search can have"
            f"{context} ({worst_loss(grid[:1]):.4g}: the accuracy test's own epsilon plus the "
            "first level), so nothing can be released within it. Raise alpha (a looser accuracy "
            "target needs a cheaper test) or max_epsilon; on small tables the test's epsilon "
            "grows as 1/n."
        )
    return grid[:t].copy()


#: How far below the theory epsilon E the largest level of a search may be before
#: :func:`check_theory_reachable` refuses it (see there for the measurements behind it).
THEORY_MARGIN = 10_000.0


def check_theory_reachable(
    grid: NDArray[np.float64],
    *,
    method: str,
    alpha: float,
    n: int,
    p: int,
    lam: float,
    max_epsilon: float | None,
) -> None:
    """Refuse, before any noise, a search whose largest level is hopeless by the theory curve.

    Rule: with ``E = theory_epsilon(method, alpha, n, p, lam)`` (Theorem 3.1 or 3.3: the
    level at which the method's worst-case bound on the *expected* excess risk of a
    hypothesis equals alpha), the search over ``grid`` (already cut by ``max_epsilon``) is
    refused with a ValueError when ``THEORY_MARGIN * grid[-1] < E``, i.e. when even its
    largest level, made :data:`THEORY_MARGIN` times less private, would still not bring the
    theory bound down to alpha.

    Public quantities only: ``alpha``, ``n`` (the number of records, public in this model:
    the default grid, the sensitivities and the test's epsilon already depend on it), ``p``
    (the number of features), ``lambda``, and the grid (``eps_list`` or Appendix B's, cut
    by :func:`cap_levels` from ``max_epsilon``, ``gamma`` and the calibration).  No data
    value is read and nothing random happens, so a refusal costs no privacy.

    Why a margin: the theorems bound the worst case over the data domain, and on real data
    the search halts far below E.  On KDD-99 (``lab/accuracy_first``, n = 100,000, the
    default grid) every one of the 560 noise-reduction runs halted, at levels 19 to 940
    times below E (OutputNR 19-320, CovNR 20-940).  Refusing at ``grid[-1] < E`` (no margin)
    would refuse capped runs that succeed (OutputNR at alpha = 0.1 and max_epsilon = 2 there
    has ``grid[-1] = E / 1.5``); a margin of ten times the largest ratio measured keeps them
    while the hopeless searches that motivated the check sit far beyond it (a bundled table
    of 15,590 records at alpha = 0.1 and max_epsilon = 2: the cap leaves 17 levels up to
    8e-5, ``E / 114,000``, where a search spends an ex-post 2 on hypotheses that are noise).
    The check is a policy on public parameters, not an impossibility proof: a search it lets
    through may still refuse after its noise (:class:`~oracledp.erm.NoHaltError`).

    Scope (the algorithms call it): the grid the library derives (``eps_list=None``:
    Appendix B's grid from 1/n to 4E, which only ``max_epsilon`` can cut below E), when a
    search that finds nothing would end in a refusal (``allow_no_halt=False``).  An
    explicit ``eps_list`` is the caller's public choice and is searched as given (the way
    to search below the margin on data known to be easy); with ``allow_no_halt=True`` a
    search that finds nothing releases theta* instead of refusing.
    """
    E = theory_epsilon(method, alpha, n, p, lam)
    top = float(grid[-1])
    if THEORY_MARGIN * top < E:
        cap = "no max_epsilon" if max_epsilon is None else f"max_epsilon = {max_epsilon:g}"
        raise ValueError(
            f"{method}: with alpha = {alpha:g}, n = {n:,} records and {cap}, the largest "
            f"privacy level the search could use is {top:.3g}, more than {THEORY_MARGIN:,.0f} "
            f"times below {E:.3g}, the level at which its theory curve (Ligett et al. 2017, "
            f"Theorem {'3.1' if 'cov' in method else '3.3'}) expects the excess risk to reach "
            "alpha: its hypotheses would be mostly noise, and the search would most likely "
            "spend privacy and then refuse. Refused before any noise was drawn (no privacy "
            "spent). Raise max_epsilon or alpha, or use more records; `oracledp models` gives "
            "the n needed."
        )
