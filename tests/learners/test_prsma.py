"""PRSMA (Neel, Roth, Wu 2019, Section III-B, Theorem 8): spec ``docs/specs/privacy-testing.md`` section 5.

Statistical assertions use alpha = 1e-6 each (Clopper-Pearson audits per direction,
exact binomial / chi-square tests), on fixed seeds; about 12 assertions here, so the
family-wise false-alarm rate on fresh seeds is <= 1.2e-5.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
from scipy import stats

from oracledp._errors import BudgetError, DiagnosticsWarning
from oracledp.audit import ALPHA, FAILURE, audit, is_failure
from oracledp.learners._prsma import (
    FAIL,
    ExplicitRSPMBase,
    _parameters_from_star,
    _prsma_run,
    prsma,
    prsma_cost,
    prsma_parameters,
)

# R1 universe (spec privacy-testing.md section 5, RSPM R1): Q = {q+, q-}, separator U = {+1}.
# Record ids: 0 -> x = +1, 1 -> x = -1, 2 -> z, a record that behaves like -1 but poisons the oracle.
# Loss of q+ on a record = [x = +1], of q- = [x = -1] (data losses (#(+1), #(-1)) as in R1);
# q+ is output iff eta < #(-1) - #(+1).
R1_LOSSES = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
R1_PATTERNS = np.array([[1.0], [0.0]])
Z = 2
EXACT = ExplicitRSPMBase(R1_LOSSES, R1_PATTERNS)
POISON = ExplicitRSPMBase(R1_LOSSES, R1_PATTERNS, fail_records=(Z,))


def _with_diagnostics(*args, **kw):
    """``prsma`` with its non-private diagnostics (per-part outcomes, calls, times): warns."""
    with pytest.warns(DiagnosticsWarning):
        res = prsma(*args, return_diagnostics=True, **kw)
    assert res.guarantee.diagnostics_released
    return res


def _neighbours(n_plus: int, n_minus: int) -> tuple[np.ndarray, np.ndarray]:
    d = np.array([0] * n_plus + [1] * n_minus)
    d2 = d.copy()
    d2[-1] = Z  # replace one -1 record by the poison record z
    return d, d2


# ---------------------------------------------------------------- tier 0: goldens and validation


def test_parameter_goldens() -> None:
    p = prsma_parameters(50_000, 1.0, 1e-3)
    assert (p.K, p.R, p.n_part, p.n_discard) == (682, 174138, 73, 50_000 - 682 * 73)
    assert p.eps_star == 1 / 62 and p.delta_star == 1e-3 / 11
    assert p.eps_prime == pytest.approx(1 / math.sqrt(8 * 73 * math.log(2 * 682 / (1e-3 / 11))))
    assert round(p.eps_prime, 3) == 0.010
    assert p.calls == 682 * 174138 == prsma_cost(50_000, 1.0, 1e-3)
    assert (p.epsilon, p.delta) == (1.0, 1e-3)

    q = prsma_parameters(50_000, 1.0, 0.1)
    assert (q.K, q.R, q.calls) == (397, 1176, 397 * 1176)
    assert prsma_cost(50_000, 1.0, 0.1) == 466_872
    assert q.threshold == pytest.approx(62 * (1 + math.log(110)))

    # the fail-event configuration: raw eps* = 0.5, delta* = 0.2
    r = _parameters_from_star(23, 0.5, 0.2)
    assert (r.K, r.R, r.n_part, r.n_discard) == (7, 18, 3, 2)
    assert round(r.threshold, 2) == 5.22
    assert r.count_noise_scale == 2.0


def test_parameter_validation() -> None:
    with pytest.raises(ValueError, match="eps\\* = eps/62 <= 1/2"):
        prsma_parameters(10**6, 31.5, 0.1)
    prsma_parameters(10**6, 31.0, 0.1)  # boundary eps* = 1/2 is allowed
    with pytest.raises(ValueError, match="delta"):
        prsma_parameters(10**6, 1.0, 1.0)
    with pytest.raises(ValueError, match="delta\\* = delta/11 <= 1/2"):
        _parameters_from_star(100, 0.5, 0.6)
    with pytest.raises(ValueError, match="eps\\* = eps/62 <= 1/2"):
        _parameters_from_star(100, 0.6, 0.2)
    with pytest.raises(ValueError, match="too small for PRSMA's K = 397"):
        prsma_parameters(396, 1.0, 0.1)
    for bad_n in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n must be"):
            prsma_parameters(bad_n, 1.0, 0.1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        prsma_parameters(100, "1", 0.1)  # type: ignore[arg-type]


def test_prsma_argument_validation() -> None:
    data, _ = _neighbours(100, 297)
    with pytest.raises(ValueError, match="threshold must be 'paper'"):
        prsma(data, EXACT, 1.0, 0.1, random_state=0, threshold="corrected")
    with pytest.raises(TypeError, match="base must be callable"):
        prsma(data, 3, 1.0, 0.1, random_state=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_jobs"):
        prsma(data, EXACT, 1.0, 0.1, random_state=0, n_jobs=0)
    with pytest.raises(ValueError, match="batch"):
        prsma(data, EXACT, 1.0, 0.1, random_state=0, batch=0)
    with pytest.raises(ValueError, match="max_calls"):
        prsma(data, EXACT, 1.0, 0.1, random_state=0, max_calls=0)
    with pytest.raises(ValueError, match="non-empty"):
        prsma(np.array([]), EXACT, 1.0, 0.1, random_state=0)
    with pytest.raises(ValueError, match="too small"):
        prsma(data[:10], EXACT, 1.0, 0.1, random_state=0)
    with pytest.raises(TypeError, match="random_state"):
        prsma(data, EXACT, 1.0, 0.1,
              random_state=np.random.RandomState(0))  # type: ignore[arg-type]
    # a malformed batch (1 output for size = R) fails its part instead of raising
    res = _with_diagnostics(data, lambda part, e, rng, size: [0], 1.0, 0.1, random_state=0)
    assert res.failed and res.diagnostics.n_passing == 0
    assert set(res.diagnostics.part_errors) == {"malformed: wrong number of outputs"}
    with pytest.raises(ValueError, match="fail_records"):
        ExplicitRSPMBase(R1_LOSSES, R1_PATTERNS, fail_records=(3,))
    with pytest.raises(ValueError, match="shape"):
        ExplicitRSPMBase(R1_LOSSES, R1_PATTERNS.T)


class _CountingBase:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, part, eps_prime, rng, size):
        self.calls += 1
        return np.zeros(size, dtype=int)


def test_max_calls_refused_before_any_randomness() -> None:
    data, _ = _neighbours(100, 297)
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    base = _CountingBase()
    with pytest.raises(BudgetError, match="needs 466872 base-algorithm runs") as info:
        prsma(data, base, 1.0, 0.1, random_state=gen, max_calls=466_871)
    assert "466871" in str(info.value)
    assert gen.bit_generator.state == state  # no draw, and the generator was not spawned from
    assert base.calls == 0
    res = _with_diagnostics(data, base, 1.0, 0.1, random_state=gen,
                            max_calls=466_872)  # at the limit
    assert res.diagnostics.calls == 466_872 == res.parameters.calls  # perfect oracle: K * R
    assert base.calls == 397  # one vectorized call per part (batch = R)


def test_stop_at_first_failure_and_batches() -> None:
    """A part stops at its first failing batch; with batch=1 that is its first run."""
    _, d2 = _neighbours(80, 260)
    p = prsma_parameters(340, 3.5, 0.5)
    assert (p.K, p.R) == (85, 166)
    res = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=4, batch=1).diagnostics
    assert res.n_passing == p.K - 1 and res.part_passed.count(False) == 1
    assert res.calls == (p.K - 1) * p.R + 1
    res = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=4, batch=100).diagnostics
    assert res.calls == (p.K - 1) * p.R + 100
    assert _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=4, batch=10**9).diagnostics.calls \
        == p.K * p.R


# ---------------------------------------------------------------- the count test and the 1/4 finding


def test_perfect_oracle_rejection_rate_paper_threshold() -> None:
    """[!] spec 5: with a perfect oracle T = K and P[FAIL] = exp(-eps*(K - thr))/2, in (e^-eps*/4, 1/4].

    Exact values on a grid, then Monte Carlo of the public prsma (eps=1, delta=0.1, exact
    0.2476) with N = 400 runs: exact binomial test at alpha = 1e-6."""
    for eps in (0.5, 1.0, 5.0, 31.0):
        for delta in (1e-6, 1e-3, 0.1, 0.9):
            p = prsma_parameters(10**7, eps, delta)
            p0 = p.perfect_oracle_fail_probability
            assert p.K - p.threshold >= math.log(2) / p.eps_star - 1e-9
            assert math.exp(-p.eps_star) / 4 < p0 <= 0.25 + 1e-12
            if eps <= 1.0:
                assert p0 > 0.24  # "about a quarter"
    p = prsma_parameters(397, 1.0, 0.1)
    p0 = p.perfect_oracle_fail_probability
    assert p0 == pytest.approx(0.2476, abs=1e-4)
    assert p0 == pytest.approx(0.5 * stats.laplace(scale=62).cdf(p.threshold - p.K) * 2)

    base = _CountingBase()  # never fails: a perfect oracle
    data = np.zeros(397, dtype=int)
    gen = np.random.default_rng(20)
    N = 400
    k = sum(prsma(data, base, 1.0, 0.1, random_state=gen).failed for _ in range(N))
    assert stats.binomtest(k, N, p0).pvalue > ALPHA, k


def test_count_decision_white_box() -> None:
    """With the count noise fixed to z0 through the hook, FAIL iff not (T + z0 > threshold) or T == 0."""
    p = _parameters_from_star(21, 0.5, 0.2)
    gen = np.random.default_rng(6)
    d = np.array([0] * 10 + [1] * 11)
    datasets = [d, np.where(np.arange(21) == 20, Z, d), np.where(np.arange(21) < 2, Z, d)]
    seen_T = set()
    for data in datasets:
        for z0 in np.linspace(-3.0, 1.0, 17):
            res = _prsma_run(data, POISON, p, gen, _count_noise=float(z0),
                             return_diagnostics=True)
            diag = res.diagnostics
            seen_T.add(diag.n_passing)
            assert diag.count_noise == z0
            assert res.failed == (not (diag.n_passing + z0 > p.threshold))
            assert res.failed == (res.output is FAIL) == (diag.chosen_part is None)
    assert {7, 6, 5} <= seen_T
    # T == 0 fails whatever the noise
    res = _prsma_run(np.full(21, Z), POISON, p, gen, _count_noise=100.0, return_diagnostics=True)
    assert res.diagnostics.n_passing == 0 and res.failed


def _tag_base(part, eps_prime, rng, size):
    """Outputs tag their part (the sorted record ids); fails when the part holds record 0 or 1."""
    part = np.asarray(part)
    if (part <= 1).any():
        return FAIL
    out = np.empty(size, dtype=object)
    out[:] = [tuple(sorted(part.tolist()))] * size
    return out


def test_output_never_from_failed_part_and_uniform_over_passing() -> None:
    """White-box: the output is never from a part with o_i = FAIL, and the chosen part is
    uniform over the passing ones (chi-square per T, alpha = 1e-6 / 2 each)."""
    p = _parameters_from_star(21, 0.5, 0.2)
    data = np.arange(21)  # records 0 and 1 poison their parts: T is 5 or 6
    gen = np.random.default_rng(7)
    ranks: dict[int, list[int]] = {5: [], 6: []}
    for _ in range(6000):
        res = _prsma_run(data, _tag_base, p, gen, _count_noise=50.0, return_diagnostics=True)
        diag = res.diagnostics
        assert not res.failed and diag.part_passed[diag.chosen_part]
        assert 0 not in res.output and 1 not in res.output and len(res.output) == 3
        passing = np.flatnonzero(diag.part_passed)
        ranks[diag.n_passing].append(int(np.searchsorted(passing, diag.chosen_part)))
    for T, r in ranks.items():
        counts = np.bincount(r, minlength=T)
        assert len(r) > 500 and counts.shape == (T,)
        assert stats.chisquare(counts).pvalue > ALPHA / 2, (T, counts)


# ---------------------------------------------------------------- audits


def _prsma_sampler(data, base, params, **kw):
    def sample(n, rng):
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = _prsma_run(data, base, params, rng, **kw).output
        return out

    return sample


@pytest.mark.slow
def test_fail_event_audit() -> None:
    """Spec 5: raw eps* = 0.5, delta* = 0.2 (K=7, R=18, threshold 5.22), poison oracle.
    P[FAIL] = 0.205 on D (T=7) and 0.338 on D' (T=6), exactly e^0.5 apart.  Exact binomial
    tests of both, the audit at eps* (N = 2*10^4) passes, and the mutant with count noise of
    scale 1/(2 eps*) (ratio e^1.0) fails on the same seed."""
    p = _parameters_from_star(21, 0.5, 0.2)
    p_d = 0.5 * math.exp(-0.5 * (7 - p.threshold))
    p_d2 = 0.5 * math.exp(-0.5 * (6 - p.threshold))
    assert (round(p_d, 3), round(p_d2, 3)) == (0.205, 0.338)
    assert math.log(p_d2 / p_d) == pytest.approx(0.5, abs=1e-12)
    assert p_d == pytest.approx(p.perfect_oracle_fail_probability)
    d, d2 = _neighbours(10, 11)  # n = 3K: z is never discarded
    N = 20_000
    ok = audit(_prsma_sampler(d, POISON, p), _prsma_sampler(d2, POISON, p), is_failure, N,
               np.random.default_rng(8), claimed_epsilon=0.5, label="PRSMA fail event")
    assert ok.passed, ok.summary()
    assert stats.binomtest(ok.k_d, N, p_d).pvalue > ALPHA, ok.summary()
    assert stats.binomtest(ok.k_d2, N, p_d2).pvalue > ALPHA, ok.summary()
    assert ok.eps_lb > 0.3  # tight: the true log-ratio is exactly eps*

    bad = audit(_prsma_sampler(d, POISON, p, _noise_scale_factor=0.5),
                _prsma_sampler(d2, POISON, p, _noise_scale_factor=0.5), is_failure, N,
                np.random.default_rng(8), claimed_epsilon=0.5, label="half count noise")
    assert not bad.passed, bad.summary()


@pytest.mark.slow
def test_poison_oracle_audit_prsma_passes_naive_fallback_fails() -> None:
    """P1: the oracle fails whenever its data contain record z; D has no z, D' has one -1
    replaced by z (n = 4K, so z is never discarded).  Claim (eps, delta) = (3.5, 0.5),
    event {output = q+}, N = 2000 per side.  PRSMA stays within e^eps plus delta; the wrapper
    "RSPM at eps on the full data, default q- on failure" separates D from D' (q+ w.p. ~1
    on D, never on D') and must fail the same audit (eps_lb ~ 4.2 > 3.5)."""
    eps, delta, N = 3.5, 0.5, 2000
    p = prsma_parameters(340, eps, delta)
    assert p.K == 85 and p.n_discard == 0
    d, d2 = _neighbours(80, 260)

    def event(out):
        return np.array([o is not FAILURE and o == 0 for o in out])

    ok = audit(_prsma_sampler(d, POISON, p), _prsma_sampler(d2, POISON, p), event, N,
               np.random.default_rng(9), claimed_epsilon=eps, claimed_delta=delta,
               label="PRSMA, poison oracle")
    assert ok.passed, ok.summary()
    assert 0.2 < ok.p_d < 0.8 and 0.2 < ok.p_d2 < 0.8  # PRSMA still answers on D'

    def naive(data):
        def sample(n, rng):
            out = POISON(data, eps, rng, n)  # RSPM at eps on the full data, n draws
            return np.ones(n, dtype=int) if out is FAIL else out  # fall back to q-

        return sample

    bad = audit(naive(d), naive(d2), lambda o: np.asarray(o) == 0, N,
                np.random.default_rng(9), claimed_epsilon=eps, claimed_delta=delta,
                label="fallback to a default")
    assert not bad.passed, bad.summary()
    assert bad.k_d == N and bad.k_d2 == 0


# ---------------------------------------------------------------- parallel execution


def _signature(res):
    d = res.diagnostics
    return (res.output, res.failed, d.part_passed, d.chosen_part, d.count_noise, d.calls)


def test_results_independent_of_n_jobs() -> None:
    _, d2 = _neighbours(80, 260)
    ref = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=12)
    assert ref.diagnostics.n_passing == 84 and ref.backend == "sequential"
    two = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=12, n_jobs=2)
    thr = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=12, n_jobs=2, backend="threading")
    assert _signature(two) == _signature(ref) == _signature(thr)
    assert (two.backend, thr.backend) == ("LokyBackend", "ThreadingBackend")
    assert _signature(_with_diagnostics(d2, POISON, 3.5, 0.5, random_state=13)) != _signature(ref)


def test_dask_local_cluster_matches_local() -> None:
    """Dask path: LocalCluster(2 workers, 1 thread each, processes) gives the local result."""
    pytest.importorskip("distributed")
    import joblib
    from distributed import Client, LocalCluster

    _, d2 = _neighbours(80, 260)
    ref = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=14)
    with warnings.catch_warnings():
        # cluster start-up/shutdown may warn about ports or closing comms: only distributed's
        warnings.filterwarnings("ignore", module=r"distributed(\..*)?$")
        warnings.filterwarnings("ignore", category=ResourceWarning)
        with (
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster,
            Client(cluster),
        ):
            res = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=14, backend="dask", n_jobs=2)
            with joblib.parallel_config(backend="dask"):
                res2 = _with_diagnostics(d2, POISON, 3.5, 0.5, random_state=14, n_jobs=-1)
    assert res.backend == res2.backend == "DaskDistributedBackend"
    assert _signature(res) == _signature(ref) == _signature(res2)


# ---------------------------------------------------------------- end to end


def test_end_to_end_demo_under_two_minutes() -> None:
    """Public API, eps=1, delta=0.1 (K=397, R=1176: 466,872 RSPM runs), n = 5K records."""
    data, _ = _neighbours(5 * 397 // 2, 5 * 397 - 5 * 397 // 2)
    t0 = time.perf_counter()
    res = _with_diagnostics(data, EXACT, 1.0, 0.1, random_state=15)
    elapsed = time.perf_counter() - t0
    assert elapsed < 120.0
    diag = res.diagnostics
    assert diag.calls == 466_872 and diag.n_passing == 397
    assert res.failed or res.output in (0, 1)
    g = res.guarantee
    assert g is not None and (g.epsilon, g.delta) == (1.0, 0.1)
    assert g.requires_exact_oracle is False and g.holds
    assert "Theorem 8" in g.source and "Neel, Roth, Wu" in g.source
    assert diag.time_total_s >= diag.time_parts_s > 0


def test_poison_variant_fails_half_the_time() -> None:
    """P1 variant: with fail_probability = 1/2 a poisoned single run fails w.p. 1/2 (exact
    binomial test, alpha = 1e-6); clean parts never fail; outputs are hypothesis indices."""
    half = ExplicitRSPMBase(R1_LOSSES, R1_PATTERNS, fail_records=(Z,), fail_probability=0.5)
    gen = np.random.default_rng(16)
    N = 4000
    k = sum(half(np.array([0, 1, Z]), 0.5, gen, 1) is FAIL for _ in range(N))
    assert stats.binomtest(k, N, 0.5).pvalue > ALPHA, k
    out = half(np.array([0, 1, 1]), 0.5, gen, 50)
    assert out is not FAIL and out.shape == (50,) and set(np.unique(out)) <= {0, 1}
    with pytest.raises(ValueError, match="fail_probability"):
        ExplicitRSPMBase(R1_LOSSES, R1_PATTERNS, fail_records=(Z,), fail_probability=0.0)


