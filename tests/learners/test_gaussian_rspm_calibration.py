"""Gaussian RSPM's proven calibration (docs/proofs/gaussian-rspm-calibration.md), checked
independently.

* An independent high-precision quadrature (mpmath, 30 digits, its own error estimate added) of
  the proven bound ``int_{t0}^inf a e^{eps - a t - a^2/2} B(t) dt``,
  ``B = min(1, |W| Phi-bar, P[chi_m > t], C(t))`` with the Chernoff bound C evaluated at its
  mpmath-computed minimizer, is <= delta at the returned multiplier; the library's float value
  is above it (computed from above) and within a few percent of it; at 0.9 x mu (the planted
  mutant sigma x 0.9) it exceeds delta.
* Each tail term is a true upper bound: checked against mpmath's exact tails (chi, Gaussian)
  and against the exact law of ``||Z||_1`` for m = 1, 2.
* Monotone in mu; the closed form is admissible; the search never returns a failing mu;
  the paper-style sigma; refusals.
The exact-law counterexample (the paper-style sigma violating, the proven one not) is in
``tests/audit/test_gaussian_rspm_exact_law.py``.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from oracledp.learners._gaussian_rspm_calibration import (
    _grid_log_B,
    _log_l1_sf,
    _proven_multiplier,
    calibrate,
    closed_form_multiplier,
    delta_upper_bound,
    paper_multiplier,
    paper_sigma,
    proven_multiplier,
)

DELTA_ADULT = 1.0 / 15_682**2


def _mp_l1_chernoff(m: int, t: mp.mpf) -> mp.mpf:
    """inf_l exp(m (l^2/2 + ln(2 Phi(l)) - l t / sqrt(m))), the root by mpmath's findroot."""
    r = t / mp.sqrt(m)
    if r <= mp.sqrt(2 / mp.pi):
        return mp.mpf(1)

    def Phi(x: mp.mpf) -> mp.mpf:
        return mp.erfc(-x / mp.sqrt(2)) / 2

    def h(lam: mp.mpf) -> mp.mpf:
        return lam + mp.npdf(lam) / Phi(lam) - r

    lam = mp.findroot(h, (mp.mpf(0), r), solver="illinois")
    return min(mp.mpf(1), mp.exp(m * (lam**2 / 2 + mp.log(2 * Phi(lam)) - lam * r)))


def mp_bound(mu: float, eps: float, m: int, size: int | None) -> mp.mpf:
    """The bound by mpmath, written from the formula, sharing no code with the library."""
    with mp.workdps(30):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        a = eps / mu
        t0 = mu - eps / (2 * mu)

        def terms(t: mp.mpf) -> list[mp.mpf]:
            out = [mp.mpf(1), mp.gammainc(mp.mpf(m) / 2, t * t / 2, regularized=True),
                   _mp_l1_chernoff(m, t)]
            if size is not None:
                out.append(size * mp.erfc(t / mp.sqrt(2)) / 2)
            return out

        def active(t: mp.mpf) -> int:
            v = terms(t)
            return v.index(min(v))

        def B(t: mp.mpf) -> mp.mpf:
            return mp.mpf(1) if t <= 0 else min(terms(t))

        def f(t: mp.mpf) -> mp.mpf:
            return a * mp.exp(eps - a * t - a * a / 2) * B(t)

        # the integrand past `top` is below 1e-30 of its scale; the remainder is bounded by
        # B(top) (1 - g(top)) <= B(top) e^{eps - a top - a^2/2} and added (an upper bound)
        start = max(t0, mp.mpf("1e-9"))
        pts = [start]
        while B(pts[-1]) * mp.exp(eps - a * pts[-1]) > mp.mpf(1e-30) and len(pts) < 400:
            pts.append(pts[-1] + mp.mpf("0.5"))
        top = pts[-1]
        # breakpoints where the minimum switches terms (B has a kink there): bisection
        knots = []
        for lo, hi in itertools.pairwise(pts):
            k_lo = active(lo)
            if active(hi) != k_lo:
                for _ in range(50):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if active(mid) == k_lo else (lo, mid)
                knots.append(lo)
        pts = sorted([*pts, *knots])
        val, err = mp.quad(f, pts, error=True, method="gauss-legendre", maxdegree=3)
        val += B(top) * mp.exp(eps - a * top - a * a / 2)
        if t0 < 0:  # g(0) > 0 only for tiny mu: the mass below 0, at most g(0)
            val += 1 - mp.exp(eps - a * a / 2)
        return val + abs(err)


FAST_GRID = [  # (m, eps, delta, |W|): halfspaces (m = 2d, |W| = 3^d) and parities (|W| = 2^m)
    (2, 1.0, 1e-3, 3), (46, 1.0, DELTA_ADULT, 3**23), (40, 1.0, 0.1, 2**40),
    pytest.param(8, 1.0, 1e-3, 3**4, marks=pytest.mark.slow),
    pytest.param(100, 0.5, 1e-5, None, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("m", "eps", "delta", "size"), FAST_GRID)
def test_mpmath_bound_at_returned_mu_is_at_most_delta(m, eps, delta, size) -> None:
    mu = proven_multiplier(eps, delta, m, size)
    exact = mp_bound(mu, eps, m, size)
    assert exact <= delta, (m, eps, delta, mu, float(exact))
    ours = delta_upper_bound(mu, eps, m, size).delta
    # computed from above: the float value is >= the high-precision one, and not loose
    assert ours >= float(exact) * (1 - 1e-9)
    assert ours <= float(exact) * 1.05
    # tight: 0.9 x mu (the planted mutant sigma x 0.9) is not admissible
    assert mp_bound(0.9 * mu, eps, m, size) > delta


@pytest.mark.slow
@pytest.mark.parametrize("m", [1, 16, 100, 400])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [0.1, 1e-5, DELTA_ADULT])
@pytest.mark.parametrize("kind", ["halfspace", "parity"])
def test_mpmath_bound_full_grid(m: int, eps: float, delta: float, kind: str) -> None:
    size = {"halfspace": 3 ** ((m + 1) // 2), "parity": 2**m, "none": None}[kind]
    mu = proven_multiplier(eps, delta, m, size)
    exact = mp_bound(mu, eps, m, size)
    assert exact <= delta
    assert delta_upper_bound(mu, eps, m, size).delta >= float(exact) * (1 - 1e-9)
    assert mp_bound(0.9 * mu, eps, m, size) > delta


def test_l1_chernoff_is_an_upper_bound_of_the_exact_tail() -> None:
    """m = 1: P[|Z| > t] = erfc(t/sqrt2); m = 2: P[|Z1| + |Z2| > t] by one quadrature.  The
    library's log-bound is above the exact log-tail everywhere on the grid."""
    t = np.linspace(0.0, 12.0, 25)
    ours1 = _log_l1_sf(1, t)
    ours2 = _log_l1_sf(2, t)
    with mp.workdps(30):
        for ti, o1, o2 in zip(t, ours1, ours2, strict=True):
            x = mp.mpf(float(ti))
            exact1 = mp.erfc(x / mp.sqrt(2))
            assert o1 >= float(mp.log(exact1)) - 1e-12
            # |Z1| + |Z2| > s, s = sqrt(2) t:  int_0^inf 2 phi(u) P[|Z2| > s - u] du
            s = mp.sqrt(2) * x
            exact2 = (mp.quad(lambda u, s=s: 2 * mp.npdf(u) * mp.erfc((s - u) / mp.sqrt(2)),
                              [0, s]) + mp.erfc(s / mp.sqrt(2)))
            assert o2 >= float(mp.log(exact2)) - 1e-12


def test_grid_bound_terms_are_bounds() -> None:
    """log B on the grid is <= 0 and non-increasing; with one hypothesis it is the exact tail
    Phi-bar (the union term, below the others)."""
    _, lb, which = _grid_log_B(10, 3**5)
    assert (lb <= 0).all() and (np.diff(lb) <= 0).all()
    assert set(np.unique(which)) <= {0, 1, 2}
    t1, lb1, _ = _grid_log_B(1, 1)  # one hypothesis: B = Phi-bar(t) exactly (below the others)
    for ti, li in zip(t1[::5000], lb1[::5000], strict=True):
        assert li == pytest.approx(float(mp.log(mp.erfc(ti / mp.sqrt(2)) / 2)), rel=1e-9, abs=1e-12)


def test_bound_monotone_in_mu() -> None:
    """A larger sigma is never less private (the bound is non-increasing in mu)."""
    for m, eps, size in ((2, 1.0, 3), (46, 0.1, 3**23), (100, 2.0, 2**100), (400, 1.0, None)):
        mus = np.geomspace(0.3, 60.0, 40)
        vals = [delta_upper_bound(float(mu), eps, m, size).log_delta for mu in mus]
        assert all(b <= a + 1e-12 for a, b in itertools.pairwise(vals)), (m, eps)
        assert vals[-1] < vals[0]


def test_search_invariant_and_closed_form() -> None:
    for m, eps, delta in ((1, 0.5, 0.3), (46, 1.0, DELTA_ADULT), (160, 0.05, 1e-9)):
        for size in (None, 10**6, 2**m):
            mu = proven_multiplier(eps, delta, m, size)
            assert delta_upper_bound(mu, eps, m, size).delta <= delta
            assert delta_upper_bound(mu * (1 - 1e-4), eps, m, size).delta > delta
            cf = closed_form_multiplier(eps, delta, m, size)
            assert delta_upper_bound(cf, eps, m, size).delta <= delta
            assert mu <= cf


def test_paper_sigma_and_calibration_record() -> None:
    """The paper-style sigma is the Gaussian mechanism for a shift of norm 2 sqrt(m); the
    record's sigma is 2 sqrt(m) mu / eps rounded up, and the paper mode's bound exceeds delta
    on a wide class."""
    assert paper_multiplier(1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)))
    assert paper_sigma(1.0, 1e-5, 400) == pytest.approx(193.7922, rel=1e-6)
    cal = calibrate(1.0, 1e-5, 400, 2**400)
    assert cal.method == "proven" and cal.proven and cal.delta_bound <= 1e-5
    assert cal.sigma >= 2 * math.sqrt(400) * cal.mu / 1.0
    assert cal.sigma == pytest.approx(2 * math.sqrt(400) * cal.mu, rel=1e-14)
    assert cal.sigma_paper == pytest.approx(paper_sigma(1.0, 1e-5, 400))
    assert 3.7 < cal.ratio_to_paper < 3.8 and cal.bound == "l1-chernoff"
    assert "|W| = 2.582e+120" in cal.describe() and "m = 400" in cal.describe()
    paper = calibrate(1.0, 1e-5, 400, 2**400, "paper")
    assert paper.method == "paper" and not paper.proven and paper.delta_bound > 0.5
    assert paper.sigma == pytest.approx(paper_sigma(1.0, 1e-5, 400))


def test_adult_halfspaces_numbers() -> None:
    """Adult (d = 23, m = 46, |W| = 3^23, delta = 1/n^2) at eps = 1: sigma 117.7, 1.39 x the
    paper-style sigma; the union bound is the active term."""
    cal = calibrate(1.0, DELTA_ADULT, 46, 3**23)
    assert cal.sigma == pytest.approx(117.71, abs=0.01)
    assert cal.ratio_to_paper == pytest.approx(1.388, abs=1e-3) and cal.bound == "union"


def test_cached() -> None:
    _proven_multiplier.cache_clear()
    mu = proven_multiplier(0.37, 1e-7, 31, 10**9)
    assert proven_multiplier(0.37, 1e-7, 31, 10**9) == mu
    assert _proven_multiplier.cache_info().hits == 1


@pytest.mark.parametrize(("args", "match"), [
    ((0.0, 1e-5, 3, None), "epsilon"), ((-1.0, 1e-5, 3, None), "epsilon"),
    ((float("nan"), 1e-5, 3, None), "epsilon"), ((1.0, 0.0, 3, None), "delta"),
    ((1.0, 1.0, 3, None), "delta"), ((1.0, 1e-5, 0, None), "m \\(the separator"),
    ((1.0, 1e-5, 2.5, None), "m \\(the separator"), ((1.0, 1e-5, True, None), "m \\(the"),
    ((1.0, 1e-5, 3, 0), "|W|"),
])
def test_refusals(args, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        proven_multiplier(*args)


def test_bad_mu_and_calibration_refused() -> None:
    for mu in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="mu must"):
            delta_upper_bound(mu, 1.0, 3)
    with pytest.raises(ValueError, match="calibration must"):
        calibrate(1.0, 1e-5, 4, 9, "gaussian-mechanism")  # type: ignore[arg-type]
