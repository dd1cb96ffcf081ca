"""OracleQuerySynthesizer (spec docs/specs/oracle-query.md §6): Hedge/FTPL data players,
exponential-mechanism/RSPM (PrivBR) query players."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from _laplace import laplace_cdf, laplace_pdf
from oracledp._errors import BudgetError
from oracledp.audit import audit
from oracledp.privacy import Spend, compose
from oracledp.privacy._guarantees import GuaranteeKind
from oracledp.synth import Domain, answer, errors, kway_marginal_workload
from oracledp.synth._oracle_query import OracleQuerySynthesizer, _calibrate
from oracledp.synth._oracle_query_players import (
    _ftpl_samples,
    _indicator_offsets,
    _privbr_rspm,
    separator_patterns,
    workload_literals,
)


def _tiny(n: int = 2000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """4 binary attributes, correlated so that 2-way marginals are far from uniform."""
    rng = np.random.default_rng(seed)
    x0 = rng.random(n) < 0.8
    x1 = np.where(rng.random(n) < 0.9, x0, ~x0)
    x2 = rng.random(n) < 0.3
    x3 = np.where(rng.random(n) < 0.85, x2, rng.random(n) < 0.5)
    codes = np.stack([x0, x1, x2, x3], axis=1).astype(np.int64)
    dom = Domain(("a", "b", "c", "d"), ((0, 1),) * 4)
    return codes, dom


def _max_error(syn: OracleQuerySynthesizer, codes: np.ndarray) -> float:
    return errors(answer(syn.workload_, codes), syn.answer())["max"]


def test_error_decreases_with_rounds_at_large_eps() -> None:
    codes, dom = _tiny()
    uniform = errors(answer(kway_marginal_workload(dom, 2), codes),
                     np.full(24, 0.25))["max"]
    means = []
    for T in (3, 30, 300):
        errs = [_max_error(OracleQuerySynthesizer(1e4, 1e-6, k=2, rounds=T, random_state=s)
                           .fit(codes, dom), codes) for s in range(3)]
        means.append(float(np.mean(errs)))
    assert means[0] > means[1] > means[2]
    assert means[2] < 0.1 < uniform
    # the Hedge + exact-best-response bound sqrt(ln|X| / (2T)) (alpha0 ~ 0 at this eps)
    assert means[2] <= math.sqrt(math.log(16) / 600) + 0.01


@pytest.mark.parametrize("eps,delta,T", [(1.0, 1e-6, 300), (0.1, 1e-5, 50), (1.0, 0.0, 20),
                                         (5.0, 1e-3, 2), (0.5, 1e-9, 1)])
def test_ledger_composes_to_at_most_the_guarantee(eps: float, delta: float, T: int) -> None:
    codes, dom = _tiny(300)
    syn = OracleQuerySynthesizer(eps, delta, k=2, rounds=T, random_state=1).fit(codes, dom)
    assert len(syn.ledger_) == T == syn.rounds_
    assert all(r.epsilon == syn.eps0_ for r in syn.ledger_)
    assert [r.round for r in syn.ledger_] == list(range(1, T + 1))
    nq = len(syn.workload_)
    assert all(len(r.released) == 1 and 0 <= r.released[0] < 2 * nq for r in syn.ledger_)
    tot_eps, tot_delta = compose(syn.ledger_, syn.composition_, delta)
    g = syn.guarantee_
    assert tot_eps <= g.epsilon <= eps
    assert tot_delta <= g.delta <= delta
    if delta == 0:
        assert syn.composition_ == "basic" and g.kind is GuaranteeKind.PURE
    # the budget is (nearly) used up: eps0 is not needlessly small
    assert tot_eps >= eps * (1 - 1e-9)


def test_calibration_property_never_overshoots() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        eps = float(10 ** rng.uniform(-3, 1))
        delta = float(10 ** rng.uniform(-12, -1))
        T = int(rng.integers(1, 2000))
        eps0, comp = _calibrate(eps, delta, T)
        ledger = [Spend("", eps0) for _ in range(T)]
        assert compose(ledger, comp, delta)[0] <= eps
    # zCDP beats basic composition for many rounds
    assert _calibrate(1.0, 1e-6, 300)[1] == "zcdp"
    assert _calibrate(1.0, 1e-6, 300)[0] > 1.0 / 300


def test_reproducible_by_seed() -> None:
    codes, dom = _tiny(500)
    a = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=40, random_state=7).fit(codes, dom)
    b = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=40, random_state=7).fit(codes, dom)
    c = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=40, random_state=8).fit(codes, dom)
    assert np.array_equal(a.distribution_, b.distribution_)
    assert a.ledger_ == b.ledger_
    assert np.array_equal(a.sample_codes(100), b.sample_codes(100))
    assert not np.array_equal(a.distribution_, c.distribution_)
    s = a.sample_codes(50)
    assert s.shape == (50, 4) and s.min() >= 0 and s.max() <= 1
    assert a.sample_codes().shape == (500, 4)
    assert list(a.sample(5).columns) == ["a", "b", "c", "d"]


def test_default_rounds_are_data_independent_and_bounded() -> None:
    codes, dom = _tiny(1000)
    a = OracleQuerySynthesizer(1.0, 1e-6, k=2, max_rounds=50, random_state=0).fit(codes, dom)
    b = OracleQuerySynthesizer(1.0, 1e-6, k=2, max_rounds=50, random_state=0).fit(1 - codes, dom)
    assert 1 <= a.rounds_ == b.rounds_ <= 50


class _NoRandom:
    """A random_state that fails the test if any randomness is requested."""


def _frame() -> tuple[pd.DataFrame, Domain]:
    dom = Domain(("x", "y"), (("p", "q"), (0, 1, 2)))
    return pd.DataFrame({"x": ["p", "q", "p"], "y": [0, 2, 1]}), dom


@pytest.mark.parametrize(
    "make,exc,match",
    [
        (lambda df, dom: (df.assign(z=1), dom), ValueError, "unknown columns"),
        (lambda df, dom: (df.assign(y=[0.5, 1.0, 2.0]), dom), TypeError, "continuous"),
        (lambda df, dom: (df.iloc[:0], dom), ValueError, "no rows"),
        (lambda df, dom: (df.drop(columns="y"), dom), ValueError, "missing"),
        (lambda df, dom: (df, Domain(("x", "w"), (("p", "q"), (0, 1)))), ValueError,
         "unknown columns"),
        (lambda df, dom: (np.zeros((3, 3), dtype=np.int64), dom), ValueError, "shape"),
        (lambda df, dom: (np.zeros((0, 2), dtype=np.int64), dom), ValueError, "no rows"),
        (lambda df, dom: (np.array([[0, 3]]), dom), ValueError, "outside"),
        (lambda df, dom: (df, {"x": ("p", "q")}), TypeError, "Domain"),
        (lambda df, dom: (df.to_numpy().tolist(), dom), TypeError, "DataFrame"),
    ],
)
def test_bad_inputs_fail_before_randomness(make, exc, match) -> None:  # type: ignore[no-untyped-def]
    df, dom = _frame()
    data, domain = make(df, dom)
    # a random_state of the wrong type would raise TypeError("random_state ...") on first use
    syn = OracleQuerySynthesizer(1.0, 1e-6, k=1, rounds=2, random_state=_NoRandom())  # type: ignore[arg-type]
    with pytest.raises(exc, match=match):
        syn.fit(data, domain)


def test_frame_input_fits_and_k_too_large() -> None:
    df, dom = _frame()
    syn = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=3, random_state=0).fit(df, dom)
    assert syn.distribution_.shape == (2, 3)
    assert syn.distribution_.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="exceeds the number of attributes"):
        OracleQuerySynthesizer(1.0, 1e-6, k=3, random_state=_NoRandom()).fit(df, dom)  # type: ignore[arg-type]


def test_constructor_validation_and_rspm() -> None:
    with pytest.raises(ValueError, match="data_player"):
        OracleQuerySynthesizer(1.0, 1e-6, data_player="mw")
    with pytest.raises(ValueError, match="samples"):
        OracleQuerySynthesizer(1.0, 1e-6, data_player="ftpl", samples=0)
    with pytest.raises(ValueError, match="query_player"):
        OracleQuerySynthesizer(1.0, 1e-6, query_player="best")
    with pytest.raises(ValueError, match="query class"):
        OracleQuerySynthesizer(1.0, 1e-6, queries="halfspaces")
    with pytest.raises(ValueError):
        OracleQuerySynthesizer(0.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        OracleQuerySynthesizer(1.0, 1.0)
    with pytest.raises(ValueError, match="rounds"):
        OracleQuerySynthesizer(1.0, 1e-6, rounds=0)
    with pytest.raises(RuntimeError, match="fit"):
        OracleQuerySynthesizer(1.0, 1e-6).sample(3)


# --------------------------------------------------------------- RSPM query player
def test_separator_one_minus_e_l_separates_the_k_literal_workload() -> None:
    """Spec §2: u_l = 1 - e_l over the m one-hot indicators; q(u_l) = 1 iff l not in q."""
    dom = Domain(("a", "b", "c", "d"), ((0, 1), (0, 1, 2), (0, 1), (0, 1, 2, 3)))
    m = sum(dom.shape)
    off = _indicator_offsets(dom)
    for k in (1, 2, 3, 4):
        wl = kway_marginal_workload(dom, k)
        lit = workload_literals(wl)
        P = separator_patterns(lit, m)
        for q in range(len(wl)):
            assert list(lit[q]) == [off[a] + c for a, c in wl.literals(q)]
            for ell in range(m):  # direct evaluation of the conjunction at u_l
                u = np.ones(m, dtype=np.int8)
                u[ell] = 0
                assert P[q, ell] == int(u[lit[q]].all())
        assert len({row.tobytes() for row in P}) == len(wl)  # pattern map injective


def _laplace_argmax_law(c: np.ndarray, b: float) -> np.ndarray:
    """Exact P(argmax_i c_i + L_i = i), L_i iid Laplace(b), by 1-d quadrature."""
    from scipy import integrate

    out = np.empty(c.size)
    for i in range(c.size):
        shifts = [float(c[i] - o) for o in np.delete(c, i)]
        out[i] = integrate.quad(
            lambda x, s=shifts: laplace_pdf(x, b) * math.prod(laplace_cdf(x + t, b) for t in s),
            -np.inf, np.inf, epsabs=1e-12, epsrel=1e-10)[0]
    return out


def _privbr_exact_law(diff: np.ndarray, e3: float) -> np.ndarray:
    """Exact law of (query, negated) of PrivBR for k = 1 (lit[q] = [q]); index q + nq*neg.

    (i) argmin_q -diff_q - eta_q = argmax diff_q + eta_q; (ii) argmin_q diff_q + eta'_q
    = argmax -diff_q + (-eta'_q) (Laplace is symmetric); (iii) q1 is kept iff
    -diff[q1] + L1 < diff[q2] + L2, with P(L1 - L2 < z) = int f(y) F(z + y) dy.
    """
    from scipy import integrate

    m = diff.size
    p1 = _laplace_argmax_law(diff, 2 * m / e3)
    p2 = _laplace_argmax_law(-diff, 2 * m / e3)
    b2 = 2 / e3
    law = np.zeros(2 * m)
    for a in range(m):
        for b in range(m):
            z = float(diff[b] + diff[a])
            keep = integrate.quad(lambda y, z=z: laplace_pdf(y, b2) * laplace_cdf(z + y, b2),
                                  -np.inf, np.inf, epsabs=1e-12, epsrel=1e-10)[0]
            law[a] += p1[a] * p2[b] * keep
            law[m + b] += p1[a] * p2[b] * (1 - keep)
    return law


def test_privbr_rspm_matches_exact_law_and_catches_half_noise() -> None:
    """One round's query-player step on a tiny domain (2 binary attributes, k = 1, m = 4).

    A black-box Clopper-Pearson audit cannot see a half-noise mutant here: RSPM's
    Lap(2m/(eps0/3)) is far from tight (the realized loss of the whole round is well
    under eps0 even with half the noise), so the mutant is caught by a chi-square
    test against the exact output law (8 outcomes, computed by quadrature).
    """
    from scipy import stats

    dom = Domain(("a", "b"), ((0, 1), (0, 1)))
    lit = workload_literals(kway_marginal_workload(dom, 1))
    assert lit.ravel().tolist() == [0, 1, 2, 3]
    diff = np.array([6.0, -6.0, 2.0, -2.0])  # n (q(S) - q(D)); each marginal sums to 0
    e3 = 1.0
    law = _privbr_exact_law(diff, e3)
    assert law.sum() == pytest.approx(1.0, abs=1e-8)
    N = 200_000
    for factor, ok in ((1.0, True), (0.5, False)):
        q, neg, _, _ = _privbr_rspm(diff, lit, 4, e3, N, np.random.default_rng(11),
                                    scale_factor=factor)
        counts = np.bincount(q + 4 * neg, minlength=8)
        pval = stats.chisquare(counts, N * law).pvalue
        assert (pval > 1e-6) == ok, (factor, pval, counts, N * law)


def test_privbr_rspm_black_box_audit_on_neighbours() -> None:
    """Clopper-Pearson audit (alpha = 1e-6) of one PrivBR round on replace-one neighbours."""
    dom = Domain(("a", "b"), ((0, 1), (0, 1)))
    wl = kway_marginal_workload(dom, 1)
    lit = workload_literals(wl)
    D = np.array([[0, 0]] * 6 + [[1, 1]] * 2)
    D2 = D.copy()
    D2[0] = [1, 1]
    p_pub = np.full((2, 2), 0.25)  # the data player's (public) play
    from oracledp.synth import answer_distribution

    ansD = answer_distribution(wl, p_pub)
    eps0 = 1.5

    def sampler(data: np.ndarray):  # type: ignore[no-untyped-def]
        diff = len(data) * (answer(wl, data) - ansD)

        def run(n: int, rng: np.random.Generator) -> np.ndarray:
            q, neg, _, _ = _privbr_rspm(diff, lit, 4, eps0 / 3, n, rng)
            return q + 4 * neg

        return run

    for target in range(8):
        res = audit(sampler(D), sampler(D2), lambda o, t=target: o == t, 100_000,
                    np.random.default_rng(target), claimed_epsilon=eps0)
        assert res.passed, res.summary()


@pytest.mark.parametrize("eps,delta,T", [(1.0, 1e-6, 40), (1.0, 0.0, 10), (0.5, 1e-9, 1)])
def test_rspm_ledger_records_three_parts(eps: float, delta: float, T: int) -> None:
    codes, dom = _tiny(300)
    syn = OracleQuerySynthesizer(eps, delta, k=2, rounds=T, query_player="rspm",
                                 random_state=1).fit(codes, dom)
    assert len(syn.ledger_) == 3 * T
    assert [r.round for r in syn.ledger_] == [t for t in range(1, T + 1) for _ in range(3)]
    assert all(r.epsilon * 3 == pytest.approx(syn.eps0_, rel=1e-12) for r in syn.ledger_)
    tot_eps, tot_delta = compose(syn.ledger_, syn.composition_, delta)
    g = syn.guarantee_
    assert tot_eps <= g.epsilon <= eps and tot_delta <= g.delta <= delta
    assert tot_eps >= eps * (1 - 1e-9)
    assert g.requires_exact_oracle and "RSPM" in g.source
    # the final choice is one of the two RSPM candidates (a query of Q, a negation in ¬Q)
    nq = len(syn.workload_)
    for t in range(T):
        a, b, c = syn.ledger_[3 * t : 3 * t + 3]
        assert a.released[0] < nq <= b.released[0] < 2 * nq
        assert c.released in (a.released, b.released)


# --------------------------------------------------------------- FTPL data player
def test_ftpl_data_oracle_equals_brute_force_argmax() -> None:
    rng = np.random.default_rng(3)
    for shape in ((2, 3, 2), (3,), (2, 2, 3, 2, 2)):
        m = sum(shape)
        off = np.concatenate([[0], np.cumsum(shape)])
        cells = np.stack(np.unravel_index(np.arange(math.prod(shape)), shape), axis=1)
        for _ in range(5):
            gain = rng.normal(size=shape) * 3
            xi = rng.laplace(0, 2.0, size=(20, m))
            got = _ftpl_samples(gain, xi, shape)
            pert = np.stack([sum(x[off[a] + cells[:, a]] for a in range(len(shape)))
                             for x in xi])
            want = np.argmax(gain.ravel()[None, :] - pert, axis=1)
            assert np.array_equal(got, want)


@pytest.mark.parametrize("query_player", ["noisy-min", "rspm"])
def test_ftpl_error_decreases_with_rounds(query_player: str) -> None:
    codes, dom = _tiny()
    means = []
    for T in (3, 30, 300):
        errs = [_max_error(OracleQuerySynthesizer(1e4, 1e-6, k=2, rounds=T, data_player="ftpl",
                                                  query_player=query_player, samples=100,
                                                  random_state=s).fit(codes, dom), codes)
                for s in range(3)]
        means.append(float(np.mean(errs)))
    assert means[0] > means[1] > means[2]
    assert means[2] < 0.06


def test_rspm_and_ftpl_reproducible_by_seed() -> None:
    codes, dom = _tiny(500)
    kw = {"k": 2, "rounds": 15, "query_player": "rspm", "data_player": "ftpl", "samples": 50}
    a = OracleQuerySynthesizer(1.0, 1e-6, random_state=7, **kw).fit(codes, dom)  # type: ignore[arg-type]
    b = OracleQuerySynthesizer(1.0, 1e-6, random_state=7, **kw).fit(codes, dom)  # type: ignore[arg-type]
    assert np.array_equal(a.distribution_, b.distribution_)
    assert a.distribution_.sum() == pytest.approx(1.0)
    assert a.ledger_ == b.ledger_


# ---------------------------------------------------------------- query_player="prsma"
def _tiny3(n: int = 2000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """3 binary attributes."""
    rng = np.random.default_rng(seed)
    codes = (rng.random((n, 3)) < [0.8, 0.3, 0.6]).astype(np.int64)
    return codes, Domain(("a", "b", "c"), ((0, 1),) * 3)


# eps = 93, delta = 0.75, T = 3: basic composition, (eps0, delta0) = (31, 0.25) per round,
# K = 11 parts x R = 273 runs = 3003 base runs per round (prsma_cost), 9009 in all
_PRSMA_EPS, _PRSMA_DELTA, _PRSMA_T = 93.0, 0.75, 3


def test_prsma_budget_split_is_affordable_on_tiny_domain() -> None:
    from oracledp.learners._prsma import prsma_cost
    from oracledp.synth._oracle_query_calibration import _calibrate_prsma

    e0, d0, comp = _calibrate_prsma(_PRSMA_EPS, _PRSMA_DELTA, _PRSMA_T)
    assert (e0, comp) == (31.0, "basic") and d0 == pytest.approx(0.25)
    assert _PRSMA_T * prsma_cost(2000, e0, d0) == 9009
    # small eps, many rounds: advanced composition wins; totals never exceed the target
    for eps, delta, T in [(1.0, 1e-6, 100), (5.0, 0.1, 7), (0.3, 1e-3, 1), (200.0, 0.5, 2)]:
        e0, d0, comp = _calibrate_prsma(eps, delta, T)
        assert e0 <= 31.0
        ledger = [Spend("x", e0, d0, round=t) for t in range(T)]
        tot_e, tot_d = compose(ledger, comp, delta)
        assert tot_e <= eps and tot_d <= delta
    assert _calibrate_prsma(1.0, 1e-6, 100)[2] == "advanced"
    with pytest.raises(ValueError, match="zCDP"):
        compose([Spend("x", 1.0, 1e-3, round=1)], "zcdp", 1e-2)


@pytest.mark.parametrize("k", [1, 2])
def test_prsma_query_player_runs_within_budget(k: int) -> None:
    codes, dom = _tiny3()
    syn = OracleQuerySynthesizer(_PRSMA_EPS, _PRSMA_DELTA, k=k, rounds=_PRSMA_T,
                                 query_player="prsma", random_state=1).fit(codes, dom)
    assert len(syn.ledger_) == _PRSMA_T
    assert all(r.epsilon == syn.eps0_ and r.delta == syn.delta0_ for r in syn.ledger_)
    tot_eps, tot_delta = compose(syn.ledger_, syn.composition_, _PRSMA_DELTA)
    assert tot_eps <= _PRSMA_EPS and tot_delta <= _PRSMA_DELTA
    g = syn.guarantee_
    assert g.kind is GuaranteeKind.APPROXIMATE and not g.requires_exact_oracle
    assert syn.distribution_.sum() == pytest.approx(1.0)
    for t, r in enumerate(syn.ledger_, start=1):
        assert r.round == t and len(r.released) <= 1  # a query, or none when PRSMA failed
        assert all(0 <= j < 2 * len(syn.workload_) for j in r.released)
    # default rounds: an affordable T is chosen
    syn2 = OracleQuerySynthesizer(_PRSMA_EPS, _PRSMA_DELTA, k=k, query_player="prsma",
                                  max_rounds=5, random_state=2).fit(codes, dom)
    assert 1 <= syn2.rounds_ <= 5


def test_prsma_failing_oracle_spends_privacy_but_releases_nothing() -> None:
    codes, dom = _tiny3()
    outs = []
    for seed in (0, 1):
        c = codes if seed == 0 else 1 - codes  # different data, same output
        syn = OracleQuerySynthesizer(_PRSMA_EPS, _PRSMA_DELTA, k=1, rounds=_PRSMA_T,
                                     query_player="prsma", random_state=seed,
                                     oracle_failure=lambda part: True).fit(c, dom)
        assert all(r.released == () for r in syn.ledger_)
        assert "3 round(s) failed" in syn.guarantee_.notes
        assert len(syn.ledger_) == _PRSMA_T
        tot_eps, tot_delta = compose(syn.ledger_, syn.composition_, _PRSMA_DELTA)
        assert tot_eps == pytest.approx(_PRSMA_T * syn.eps0_) and tot_eps > 0  # still spent
        assert tot_delta == pytest.approx(_PRSMA_DELTA)
        np.testing.assert_allclose(syn.distribution_, np.full(dom.shape, 1 / 8))  # Hedge's D_1
        outs.append(syn.distribution_)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_prsma_refuses_unaffordable_before_randomness() -> None:
    codes, dom = _tiny3()
    g = np.random.default_rng(3)
    state = g.bit_generator.state
    with pytest.raises(BudgetError, match=r"costs 9009 base runs.*max_calls = 9000"):
        OracleQuerySynthesizer(_PRSMA_EPS, _PRSMA_DELTA, k=1, rounds=_PRSMA_T,
                               query_player="prsma", max_calls=9000,
                               random_state=g).fit(codes, dom)
    with pytest.raises(BudgetError, match=r"too small for PRSMA's K"):  # n < K
        OracleQuerySynthesizer(1.0, 0.1, k=1, rounds=1, query_player="prsma",
                               random_state=g).fit(codes[:50], dom)
    assert g.bit_generator.state == state
    with pytest.raises(ValueError, match="delta > 0"):
        OracleQuerySynthesizer(1.0, 0.0, query_player="prsma")


def test_prsma_refused_on_adult_at_eps1() -> None:
    from oracledp.synth._domain import load_adult_categorical

    adult = load_adult_categorical()
    g = np.random.default_rng(4)
    state = g.bit_generator.state
    # default rounds: no T is affordable, T = 1 costs K = 1111 x R = 255490638 = 2.839e11 runs
    with pytest.raises(BudgetError, match=r"costs 2\.839e\+11 base runs \(T = 1 rounds x "
                       r"K = 1111 parts x R = 255490638"):
        OracleQuerySynthesizer(1.0, 1e-6, query_player="prsma",
                               random_state=g).fit(adult.codes, adult.domain)
    with pytest.raises(BudgetError, match="too small for PRSMA's K"):
        OracleQuerySynthesizer(1.0, 1e-6, query_player="prsma", rounds=50,
                               random_state=g).fit(adult.codes, adult.domain)
    assert g.bit_generator.state == state
