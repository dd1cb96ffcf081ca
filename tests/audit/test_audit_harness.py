"""Unit tests of the audit harness (docs/specs/privacy-testing.md sections 3 and 7 "helper coverage tests").

Layer 1 (deterministic goldens, exact coverage sums) and a few seeded simulations,
each with its false-alarm rate stated in its docstring.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from oracledp._errors import OracleFailure
from oracledp.audit import (
    ALPHA,
    FAILURE,
    AuditResult,
    audit,
    clopper_pearson_interval,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    failure_aware_sampler,
    gaussian_mu_max,
    is_failure,
    mu_lower_bound,
)
from oracledp.privacy._composition import gaussian_delta

# --- Clopper-Pearson: goldens and edge cases -------------------------------------------------


def test_cp_closed_forms_small_n() -> None:
    """Layer 1.  Beta(1,1), Beta(1,2), Beta(2,1) quantiles in closed form (hand-derived).

    n=1: lower(1,1,a) = a, upper(0,1,a) = 1-a.  n=2, k=1: lower = 1 - sqrt(1-a)
    (CDF of Beta(1,2) is 1-(1-x)^2), upper = sqrt(1-a) (CDF of Beta(2,1) is x^2).
    """
    for a in (0.2, 0.05, 1e-6):
        assert clopper_pearson_lower(1, 1, a) == pytest.approx(a, rel=1e-12)
        assert clopper_pearson_upper(0, 1, a) == pytest.approx(1 - a, rel=1e-12)
        assert clopper_pearson_lower(1, 2, a) == pytest.approx(1 - math.sqrt(1 - a), rel=1e-9)
        assert clopper_pearson_upper(1, 2, a) == pytest.approx(math.sqrt(1 - a), rel=1e-12)


@pytest.mark.parametrize("n", [1, 7, 200, 2000])
def test_cp_k_zero_and_k_n(n: int) -> None:
    """Layer 1.  k=0: lower 0, upper 1 - a^(1/n) (never 0); k=n: upper 1, lower a^(1/n)."""
    a = 5e-7
    assert clopper_pearson_lower(0, n, a) == 0.0
    assert clopper_pearson_upper(0, n, a) == pytest.approx(1 - a ** (1 / n), rel=1e-9)
    assert clopper_pearson_upper(0, n, a) > 0.0
    assert clopper_pearson_upper(n, n, a) == 1.0
    assert clopper_pearson_lower(n, n, a) == pytest.approx(a ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, a) < 1.0


@pytest.mark.parametrize("n", [1, 5, 60])
def test_cp_symmetry_and_monotonicity(n: int) -> None:
    """Layer 1.  lower(k) = 1 - upper(n-k); bounds increase with k; lower <= k/n <= upper."""
    a = 0.01
    lo = np.array([clopper_pearson_lower(k, n, a) for k in range(n + 1)])
    hi = np.array([clopper_pearson_upper(k, n, a) for k in range(n + 1)])
    np.testing.assert_allclose(lo, 1.0 - hi[::-1], atol=1e-12)
    assert (np.diff(lo) > 0).all() and (np.diff(hi) > 0).all()
    phat = np.arange(n + 1) / n
    assert (lo <= phat).all() and (phat <= hi).all()
    assert clopper_pearson_interval(3, 10, 0.1) == (
        clopper_pearson_lower(3, 10, 0.05),
        clopper_pearson_upper(3, 10, 0.05),
    )


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        ((-1, 10, 0.05), ValueError),
        ((11, 10, 0.05), ValueError),
        ((0, 0, 0.05), ValueError),
        ((1, 10, 0.0), ValueError),
        ((1, 10, 1.0), ValueError),
        ((1, 10, float("nan")), ValueError),
        ((1.5, 10, 0.05), TypeError),
        ((True, 10, 0.05), TypeError),
    ],
)
def test_cp_rejects_bad_input(args: tuple, exc: type[Exception]) -> None:
    with pytest.raises(exc):
        clopper_pearson_lower(*args)
    with pytest.raises(exc):
        clopper_pearson_upper(*args)


# --- Clopper-Pearson: coverage ---------------------------------------------------------------

COVERAGE_P = (0.001, 0.02, 0.3, 0.5, 0.77, 0.999)
COVERAGE_N = (10, 50, 500)


def _cp_table(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    lo = np.array([clopper_pearson_lower(k, n, alpha / 2) for k in range(n + 1)])
    hi = np.array([clopper_pearson_upper(k, n, alpha / 2) for k in range(n + 1)])
    return lo, hi


@pytest.mark.parametrize("n", COVERAGE_N)
def test_cp_exact_coverage(n: int) -> None:
    """Layer 1 (exact, no randomness).  For each p on a grid, the exact coverage
    sum_k Binom(k; n, p) 1[lo(k) <= p <= hi(k)] of the two-sided 95% interval is >= 0.95,
    and each one-sided miss probability is <= 0.025.  Catches a swapped Beta parameter or
    an alpha not halved."""
    lo, hi = _cp_table(n, 0.05)
    ks = np.arange(n + 1)
    for p in (*COVERAGE_P, 1 / 3, 0.05, 0.95):
        pmf = stats.binom.pmf(ks, n, p)
        assert pmf[lo > p].sum() <= 0.025 + 1e-12, (n, p)
        assert pmf[hi < p].sum() <= 0.025 + 1e-12, (n, p)
        assert pmf[(lo <= p) & (p <= hi)].sum() >= 0.95 - 1e-12, (n, p)


def _coverage_floor(m: int, level: float, alpha: float) -> int:
    """The alpha quantile of Binomial(m, level): a covered count below it has probability < alpha."""
    return int(stats.binom.ppf(alpha, m, level))


M_SIM = 4000
SIM_ALPHA = 1e-6 / (len(COVERAGE_P) * len(COVERAGE_N))  # Bonferroni over the 18 cases


def test_cp_simulated_coverage() -> None:
    """Layer 2 (seeded simulation), spec section 3 item 7.

    For each (p, n) in a 6 x 3 grid, draw M = 4,000 binomials k ~ Bin(n, p) and count
    how often the 95% CP interval covers p.  Under a correct helper the covered count is
    Binomial(M, c) with c >= 0.95, so we reject only if it falls below the 1e-6/18 quantile
    of Binomial(4000, 0.95) (= 3,729, i.e. observed coverage >= 93.2%).  Family-wise
    false-alarm rate <= 1e-6.  The Wald interval is rejected by the same rule (meta-test).
    """
    rng = np.random.default_rng(20240601)
    floor = _coverage_floor(M_SIM, 0.95, SIM_ALPHA)
    assert 3700 < floor < 3760
    wald_rejected = 0
    for n in COVERAGE_N:
        lo, hi = _cp_table(n, 0.05)
        ks = np.arange(n + 1)
        z = stats.norm.isf(0.025)
        ph = ks / n
        w_lo, w_hi = ph - z * np.sqrt(ph * (1 - ph) / n), ph + z * np.sqrt(ph * (1 - ph) / n)
        for p in COVERAGE_P:
            k = rng.binomial(n, p, size=M_SIM)
            covered = int(((lo[k] <= p) & (p <= hi[k])).sum())
            assert covered >= floor, (
                f"CP coverage {covered}/{M_SIM} at p={p}, n={n} is below {floor} "
                f"(false-alarm rate of this check {SIM_ALPHA:.1e})"
            )
            wald = int(((w_lo[k] <= p) & (p <= w_hi[k])).sum())
            wald_rejected += wald < floor
    assert wald_rejected >= 6  # Wald fails near p=0 and p=1 at small n


# --- epsilon and mu lower bounds ---------------------------------------------------------------


def test_eps_lb_hand_goldens() -> None:
    """Layer 1.  With n=1 the CP bounds are a/2 and 1 - a/2 (see test_cp_closed_forms_small_n):
    eps_lb(1,1,0,1; alpha=0.2) = ln(0.1/0.9) = -ln 9; with delta=0.05, ln(0.05/0.9).
    With n=2, k=k'=1, h=alpha/2: ln((1 - sqrt(1-h)) / sqrt(1-h))."""
    assert epsilon_lower_bound(1, 1, 0, 1, alpha=0.2) == pytest.approx(-math.log(9), rel=1e-12)
    assert epsilon_lower_bound(1, 1, 0, 1, alpha=0.2, delta=0.05) == pytest.approx(
        math.log(0.05 / 0.9), rel=1e-12
    )
    h = 0.01
    r = math.sqrt(1 - h)
    assert epsilon_lower_bound(1, 2, 1, 2, alpha=2 * h) == pytest.approx(
        math.log((1 - r) / r), rel=1e-9
    )
    assert mu_lower_bound(1, 1, 0, 1, alpha=0.2) == pytest.approx(
        2 * stats.norm.ppf(0.1), rel=1e-12
    )


def test_eps_lb_formula_matches_beta_quantiles() -> None:
    """Layer 1.  eps_lb = ln((p_lo - delta)/p'_hi) with p_lo = Beta(k, N-k+1).ppf(alpha/2) and
    p'_hi = Beta(k'+1, N'-k').ppf(1 - alpha/2), written out independently here."""
    k, N, k2, N2, a, dlt = 731, 1000, 402, 1200, 1e-6, 1e-3
    p_lo = stats.beta.ppf(a / 2, k, N - k + 1)
    p2_hi = stats.beta.ppf(1 - a / 2, k2 + 1, N2 - k2)
    assert epsilon_lower_bound(k, N, k2, N2, a, dlt) == pytest.approx(
        math.log((p_lo - dlt) / p2_hi), rel=1e-10
    )
    assert epsilon_lower_bound(k, N, k2, N2, a) == pytest.approx(math.log(p_lo / p2_hi), rel=1e-10)
    assert mu_lower_bound(k, N, k2, N2, a) == pytest.approx(
        stats.norm.ppf(p_lo) - stats.norm.ppf(p2_hi), rel=1e-10
    )


def test_eps_lb_guards() -> None:
    """Layer 1.  k=0 gives -inf; p_lo <= delta gives -inf; bad delta/alpha are rejected."""
    assert epsilon_lower_bound(0, 100, 0, 100) == -math.inf
    assert mu_lower_bound(0, 100, 50, 100) == -math.inf
    p_lo = clopper_pearson_lower(5, 100, ALPHA / 2)
    assert epsilon_lower_bound(5, 100, 0, 100, delta=p_lo) == -math.inf
    assert epsilon_lower_bound(5, 100, 0, 100, delta=p_lo * 0.999) > -math.inf
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError):
            epsilon_lower_bound(5, 100, 0, 100, delta=bad)
    with pytest.raises(ValueError):
        epsilon_lower_bound(5, 100, 0, 100, alpha=0.0)


@pytest.mark.parametrize(("N", "expected"), [(200, 2.587081), (2000, 4.922528)])
def test_perfect_separation_bound(N: int, expected: float) -> None:
    """Layer 1, verifies spec section 3: a mechanism that separates D and D' perfectly
    (k = N, k' = 0) reaches only eps_lb = ln(h^(1/N) / (1 - h^(1/N))), h = alpha/2 = 5e-7:
    2.587 at N = 200 and 4.923 at N = 2,000 (the spec's "~2.6" and "~4.9" are right)."""
    h = ALPHA / 2
    closed = math.log(h ** (1 / N) / (1 - h ** (1 / N)))
    assert closed == pytest.approx(expected, abs=1e-6)
    assert epsilon_lower_bound(N, N, 0, N, alpha=ALPHA) == pytest.approx(closed, rel=1e-10)


def test_gaussian_mu_max() -> None:
    """Layer 1.  mu_max(1, 1e-5) = 0.26805 (spec section 5 quotes 0.268); it inverts
    gaussian_delta and grows with delta."""
    m = gaussian_mu_max(1.0, 1e-5)
    assert m == pytest.approx(0.2680511, abs=1e-6)
    assert gaussian_delta(1.0, m) == pytest.approx(1e-5, rel=1e-8)
    assert gaussian_mu_max(1.0, 1e-3) > m > gaussian_mu_max(1.0, 1e-7)
    assert gaussian_mu_max(0.5, 1e-5) < m
    with pytest.raises(ValueError):
        gaussian_mu_max(0.0, 1e-5)
    with pytest.raises(ValueError):
        gaussian_mu_max(1.0, 0.0)


# --- the audit harness ---------------------------------------------------------------------


def _const_sampler(value: int):
    def sample(n: int, rng: np.random.Generator) -> np.ndarray:
        return np.full(n, value)

    return sample


def _rr_sampler(bit: int, eps: float):
    """Randomized response: report the bit with probability e^eps / (1 + e^eps)."""

    def sample(n: int, rng: np.random.Generator) -> np.ndarray:
        keep = rng.random(n) < math.exp(eps) / (1 + math.exp(eps))
        return np.where(keep, bit, 1 - bit)

    return sample


def _is_one(o: np.ndarray) -> np.ndarray:
    return np.asarray(o) == 1


def test_audit_perfect_separation_fails_at_4_9() -> None:
    """Layer 3 (deterministic mechanism).  A perfectly separating mechanism at N=2,000,
    alpha=1e-6 gives eps_lb = 4.92 forward and -inf backward; it FAILS a claim of 1 and,
    as the spec notes, cannot refute a claim of 5 at this N."""
    res = audit(_const_sampler(1), _const_sampler(0), _is_one, 2000, 0, claimed_epsilon=1.0)
    assert (res.k_d, res.k_d2, res.n) == (2000, 0, 2000)
    assert res.eps_lb_forward == pytest.approx(4.922528, abs=1e-6)
    assert res.eps_lb_backward == -math.inf
    assert res.eps_lb == res.eps_lb_forward
    assert not res.passed
    assert "FAIL" in res.summary() and "2000/2000" in res.summary()
    assert audit(_const_sampler(1), _const_sampler(0), _is_one, 2000, 0, claimed_epsilon=5.0).passed


def test_audit_randomized_response() -> None:
    """Layer 3 with a tight mechanism.  Randomized response at eps_true = 2 on the pair
    (bit 1, bit 0), N = 10^4: the claim eps = 2 passes (false-alarm rate <= 2e-6, two
    directions at alpha = 1e-6) and the claim eps = 1 fails (expected eps_lb ~ 1.86)."""
    s1, s0 = _rr_sampler(1, 2.0), _rr_sampler(0, 2.0)
    ok = audit(s1, s0, _is_one, 10_000, 11, claimed_epsilon=2.0, label="RR eps=2")
    assert ok.passed, ok.summary()
    assert 1.5 < ok.eps_lb_forward <= 2.0
    assert ok.eps_lb_backward < 0
    bad = audit(s1, s0, _is_one, 10_000, 11, claimed_epsilon=1.0)
    assert not bad.passed
    assert (bad.k_d, bad.k_d2) == (ok.k_d, ok.k_d2)  # same seed, same counts
    # the same event in the other direction: swap the datasets
    swapped = audit(s0, s1, _is_one, 10_000, 11, claimed_epsilon=1.0)
    assert not swapped.passed and swapped.eps_lb_backward > 1.0


def test_audit_identical_mechanisms_pass() -> None:
    """Layer 3 sanity.  The same mechanism on both sides: each direction's eps_lb is < 0
    unless a CP bound fails (probability <= 1e-6 per direction)."""
    s = _rr_sampler(1, 0.5)
    res = audit(s, s, _is_one, 5000, 3, claimed_epsilon=0.01, claimed_mu=0.01)
    assert res.eps_lb_forward < 0 and res.eps_lb_backward < 0
    assert res.mu_lb < 0
    assert res.passed


def test_audit_claimed_mu() -> None:
    """A mu claim is checked too: Gaussian threshold with true mu = 1 fails claimed_mu = 0.5."""

    def gauss(shift: float):
        def sample(n: int, rng: np.random.Generator) -> np.ndarray:
            return rng.normal(shift, 1.0, size=n)

        return sample

    def ev(o: np.ndarray) -> np.ndarray:
        return o > 0

    res = audit(gauss(0.5), gauss(-0.5), ev, 20_000, 5, claimed_epsilon=10.0, claimed_mu=0.5)
    assert 0.5 < res.mu_lb_forward < 1.0
    assert not res.passed
    assert audit(
        gauss(0.5), gauss(-0.5), ev, 20_000, 5, claimed_epsilon=10.0, claimed_mu=1.0
    ).passed


def test_audit_result_is_frozen_and_reproducible() -> None:
    a = audit(_rr_sampler(1, 1.0), _rr_sampler(0, 1.0), _is_one, 500, 42, claimed_epsilon=1.0)
    b = audit(_rr_sampler(1, 1.0), _rr_sampler(0, 1.0), _is_one, 500, 42, claimed_epsilon=1.0)
    assert a == b
    assert isinstance(a, AuditResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.k_d = 0  # type: ignore[misc]
    assert a.p_d == a.k_d / 500 and a.alpha == ALPHA
    assert "PASS" in str(a) or "FAIL" in str(a)


def test_audit_rejects_dropped_outputs_and_bad_events() -> None:
    """Failures must be outcomes: a sampler returning fewer than n outputs is refused."""

    def drops(n: int, rng: np.random.Generator) -> np.ndarray:
        return np.ones(n - 1)

    with pytest.raises(ValueError, match="FAILURE"):
        audit(drops, _const_sampler(0), _is_one, 10, 0, claimed_epsilon=1.0)
    with pytest.raises(TypeError, match="boolean"):
        audit(_const_sampler(1), _const_sampler(0), lambda o: o, 10, 0, claimed_epsilon=1.0)
    with pytest.raises(TypeError, match="boolean"):
        audit(
            _const_sampler(1),
            _const_sampler(0),
            lambda o: np.ones(3, bool),
            10,
            0,
            claimed_epsilon=1.0,
        )
    for kwargs in (
        {"claimed_epsilon": 0.0},
        {"claimed_epsilon": 1.0, "claimed_delta": 1.0},
        {"claimed_epsilon": 1.0, "alpha": 2.0},
        {"claimed_epsilon": 1.0, "claimed_mu": -1.0},
    ):
        with pytest.raises(ValueError):
            audit(_const_sampler(1), _const_sampler(0), _is_one, 10, 0, **kwargs)
    with pytest.raises(ValueError):
        audit(_const_sampler(1), _const_sampler(0), _is_one, 0, 0, claimed_epsilon=1.0)


def test_failure_aware_sampler_records_failures() -> None:
    """A data-dependent failure is an outcome: a mechanism that always fails on D' and
    never on D is caught (eps_lb 4.92 at N=2,000) by the event "failed"."""

    def ok_run(rng: np.random.Generator) -> int:
        return int(rng.integers(2))

    def failing_run(rng: np.random.Generator) -> int:
        rng.integers(2)
        raise OracleFailure("poisoned")

    s_d, s_d2 = failure_aware_sampler(ok_run), failure_aware_sampler(failing_run)
    out = s_d2(5, np.random.default_rng(0))
    assert len(out) == 5 and all(o is FAILURE for o in out)
    assert is_failure(out).all() and not is_failure(s_d(5, np.random.default_rng(0))).any()
    assert (out == FAILURE).all()
    res = audit(s_d2, s_d, is_failure, 2000, 1, claimed_epsilon=1.0)
    assert (res.k_d, res.k_d2) == (2000, 0)
    assert res.eps_lb_forward == pytest.approx(4.922528, abs=1e-6) and not res.passed

    def other_error(rng: np.random.Generator) -> int:
        raise RuntimeError("not an oracle failure")

    with pytest.raises(RuntimeError):
        failure_aware_sampler(other_error)(3, np.random.default_rng(0))


def _laplace_or_fail(rng: np.random.Generator) -> float:
    """A module-level run (picklable): a Laplace draw, a failure when it is large."""
    x = float(rng.laplace(0.0, 1.0))
    if x > 2.0:
        raise OracleFailure("large draw")
    return x


def test_parallel_sampler_outputs_do_not_depend_on_where_they_run() -> None:
    """n_jobs: one child generator per run, so in-process, 2 joblib processes and joblib's
    threads give the same outputs (failures included) at the same seed."""
    serial = failure_aware_sampler(_laplace_or_fail, n_jobs=1)(40, np.random.default_rng(5))
    procs = failure_aware_sampler(_laplace_or_fail, n_jobs=2)(40, np.random.default_rng(5))
    threads = failure_aware_sampler(_laplace_or_fail, n_jobs=2, backend="threading")(
        40, np.random.default_rng(5))
    assert is_failure(serial).any() and not is_failure(serial).all()
    for other in (procs, threads):
        assert is_failure(other).tolist() == is_failure(serial).tolist()
        assert [o for o in other if o is not FAILURE] == [o for o in serial if o is not FAILURE]
    # the runs are independent draws (not one stream reused): no two outputs equal
    vals = [o for o in serial if o is not FAILURE]
    assert len(set(vals)) == len(vals)
    with pytest.raises(ValueError, match="n_jobs"):
        failure_aware_sampler(_laplace_or_fail, n_jobs=0)


