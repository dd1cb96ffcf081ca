"""OracleQueryPGM (OracleQuery's selection + Gaussian measurements + estimate) and the estimator
(:func:`oracledp.synth._graphical.estimate_model`)."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
from scipy import stats

from oracledp.privacy import zcdp_epsilon, zcdp_rho
from oracledp.privacy._guarantees import GuaranteeKind
from oracledp.synth import Domain, answer, errors, kway_marginal_workload
from oracledp.synth._estimation import (
    MarginalMeasurement,
    combine_measurements,
    margins_within_noise,
    shrink_interaction,
)
from oracledp.synth._graphical import _MarginalOperator, estimate_model
from oracledp.synth._oracle_query_pgm import (
    L1_SELECTION_EPS,
    OracleQueryPGM,
    _wanted_rounds,
    alone_attributes,
    cover_rounds,
    default_rounds,
    floor_rounds,
    measures_all,
    one_way_share,
    one_way_sigmas,
    table_scores,
)
from oracledp.synth._workload import marginal_tables


def _tiny(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """4 attributes (2, 3, 2, 4 levels) with strong pairwise dependence."""
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < 0.7).astype(int)
    b = np.where(rng.random(n) < 0.8, a + 1, rng.integers(0, 3, n))
    c = (rng.random(n) < 0.2).astype(int)
    d = np.where(rng.random(n) < 0.75, 2 * c + a, rng.integers(0, 4, n))
    dom = Domain(("a", "b", "c", "d"), ((0, 1), (0, 1, 2), (0, 1), (0, 1, 2, 3)))
    return np.stack([a, b, c, d], axis=1).astype(np.int64), dom


def _wide(n: int = 500, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """7 attributes (21 pairs): the adaptive rounds run unless T >= 11."""
    rng = np.random.default_rng(seed)
    levels = (2, 3, 2, 4, 2, 3, 2)
    cols = [rng.integers(0, levels[0], n)]
    for v in levels[1:]:
        keep = rng.random(n) < 0.6
        cols.append(np.where(keep, cols[-1] % v, rng.integers(0, v, n)))
    dom = Domain(tuple("abcdefg"), tuple(tuple(range(v)) for v in levels))
    return np.stack(cols, axis=1).astype(np.int64), dom


# --------------------------------------------------------------------- estimator
@pytest.mark.parametrize("shape", [(7, 16, 7, 14, 6, 5, 2, 2), (3, 4, 2), (5,), (2, 3, 4, 5, 6)])
def test_marginal_operator_matches_sums_and_is_adjoint(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    p = rng.random(shape)
    d = len(shape)
    cliques = [c for k in (1, 2, 3) for c in itertools.combinations(range(d), k)][:40]
    op = _MarginalOperator(shape, cliques)
    got = op.marginals(p)
    for c, g in zip(cliques, got, strict=True):
        other = tuple(a for a in range(d) if a not in c)
        np.testing.assert_allclose(g, p.sum(axis=other), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[0], marginal_tables(p, cliques[:1])[0])
    tables = [rng.normal(size=g.shape) for g in got]
    G = op.adjoint(tables)
    # <G, p> = sum_r <t_r, M_r p> for every p: G is the adjoint applied to the tables
    assert math.isclose(float(np.vdot(G, p)),
                        sum(float(np.vdot(t, g)) for t, g in zip(tables, got, strict=True)),
                        rel_tol=1e-10)


def test_combine_measurements_is_inverse_variance_weighted() -> None:
    m1 = MarginalMeasurement((0,), np.array([10.0, 20.0]), 1.0)
    m2 = MarginalMeasurement((0,), np.array([13.0, 23.0]), 2.0)
    (c,) = combine_measurements([m1, m2])
    np.testing.assert_allclose(c.values, [(10 + 13 / 4) / 1.25, (20 + 23 / 4) / 1.25])
    assert math.isclose(c.sigma, 1.0 / math.sqrt(1.25))


def test_estimate_recovers_full_table_and_max_entropy_product() -> None:
    rng = np.random.default_rng(2)
    shape = (3, 4, 2)
    p = rng.dirichlet(np.ones(24)).reshape(shape)
    n = 1000
    full = MarginalMeasurement((0, 1, 2), n * p, 1.0)
    est = estimate_model(shape, [full], n, iterations=400).dense()
    assert np.abs(est - p).max() < 1e-6
    # exact 1-way marginals only: the minimizer reached from uniform is their product
    ones = [MarginalMeasurement((a,), n * p.sum(axis=tuple(b for b in range(3) if b != a)), 1.0)
            for a in range(3)]
    est = estimate_model(shape, ones, n, iterations=400).dense()
    m = [p.sum(axis=tuple(b for b in range(3) if b != a)) for a in range(3)]
    assert np.abs(est - np.einsum("i,j,k->ijk", *m)).max() < 1e-6


def test_estimate_decreases_the_loss_monotonically() -> None:
    rng = np.random.default_rng(3)
    shape = (2, 3, 4, 5)
    n = 500
    ms = [MarginalMeasurement(c, rng.normal(n / math.prod(shape[a] for a in c), 30.0,
                                            tuple(shape[a] for a in c)), 30.0)
          for c in [(0, 1), (1, 2), (2, 3), (0, 3)]]

    def loss(q: np.ndarray) -> float:
        return 0.5 * sum((n / m.sigma) ** 2 * float(np.sum(
            (q.sum(axis=tuple(a for a in range(4) if a not in m.axes)) - m.values / n) ** 2))
            for m in ms)

    model, prev = None, math.inf
    for _ in range(6):
        model = estimate_model(shape, ms, n, iterations=5, warm=model)
        p = model.dense()
        cur = loss(p)
        assert cur <= prev + 1e-12
        prev = cur
    assert np.all(p >= 0) and math.isclose(float(p.sum()), 1.0)


def test_estimate_rejects_mismatched_measurements() -> None:
    with pytest.raises(ValueError, match="does not match"):
        estimate_model((2, 3), [MarginalMeasurement((1,), np.zeros(2), 1.0)], 10)
    with pytest.raises(ValueError, match="sigma"):
        MarginalMeasurement((0,), np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="finite"):
        MarginalMeasurement((0,), np.array([np.nan, 1.0]), 1.0)


# ------------------------------------------------------------------- mechanism
def test_rho_conversion_is_the_largest_within_epsilon() -> None:
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-6), (5.0, 1e-9)]:
        rho = zcdp_rho(eps, delta)
        assert zcdp_epsilon(rho, delta) <= eps
        assert zcdp_epsilon(rho * (1 + 1e-9), delta) > eps * (1 - 1e-8)


@pytest.mark.parametrize("eps, selection, orders", [(0.1, "query", None), (1.0, "table", (1, 2)),
                                                    (8.0, "table", None), (0.5, "l1", None),
                                                    (2.0, "l1", (1, 2))])
def test_ledger_composes_to_the_target(eps: float, selection: str, orders: tuple | None) -> None:
    codes, dom = _tiny()
    syn = OracleQueryPGM(eps, 1e-6, k=2, rounds=7, iterations=2, final_iterations=5,
                         selection=selection, orders=orders, random_state=0).fit(codes, dom)
    rho = math.fsum(s.rho for s in syn.ledger_)
    assert math.isclose(rho, zcdp_rho(eps, 1e-6), rel_tol=1e-9)
    assert zcdp_epsilon(rho, 1e-6) <= eps * (1 + 1e-9)
    assert len(syn.ledger_) == 4 + 2 * 7  # 4 one-way tables, then select + measure per round
    g = syn.guarantee_
    assert g.kind is GuaranteeKind.APPROXIMATE and g.epsilon == eps and g.delta == 1e-6
    assert not g.requires_exact_oracle and g.holds and g.neighbouring == "replace-one"
    # selection: eps_sel^2 / 8 (bounded range); measurement: sqrt(2)-sensitive Gaussian,
    # 2 / (2 sigma^2) = 1 / sigma^2 (to the last bit, as before the core computed them)
    sel = [s for s in syn.ledger_ if not s.released]
    assert all(s.rho == syn.eps_selection_**2 / 8.0 for s in sel)
    assert [s.round for s in sel] == list(range(1, 8))
    meas = [s for s in syn.ledger_ if s.round > 0 and s.released]
    assert len(meas) == 7 and all(s.rho == 1.0 / syn.sigma_**2 for s in meas)
    assert all(s.rho == 1.0 / syn.sigma_one_way_[s.released[0]] ** 2 for s in syn.ledger_[:4])
    assert syn.measured_axes_ == tuple(s.released for s in syn.ledger_ if s.released)
    allowed = {len(c) for c in syn.measured_axes_[4:]}
    assert allowed <= set(orders or (2,))


@pytest.mark.parametrize("selection, stated", [("table", 1.0), ("l1", 2.0)])
def test_table_scores_sensitivity_is_exact_by_brute_force(selection: str, stated: float) -> None:
    """Every replace-one neighbour of a small dataset moves every table score by at most the
    stated sensitivity, and some neighbour moves one by exactly that much (so a claimed
    sensitivity 1 for the L1 score, a planted mutant, is caught)."""
    dom = Domain(("a", "b", "c"), ((0, 1), (0, 1, 2), (0, 1)))
    wl = [kway_marginal_workload(dom, 1), kway_marginal_workload(dom, 2)]
    blocks = [b for w in wl for b in w.blocks]
    block_of = np.concatenate([np.repeat(np.arange(len(w.blocks)), np.diff(w.offsets))
                               + sum(len(v.blocks) for v in wl[:i]) for i, w in enumerate(wl)])
    cells = np.array([math.prod(dom.shape[a] for a in b) for b in blocks], dtype=float)
    rng = np.random.default_rng(7)
    codes = np.stack([rng.integers(0, s, 9) for s in dom.shape], axis=1)
    est = rng.random(len(block_of))  # D_t: fixed by earlier releases
    points = list(itertools.product(*(range(s) for s in dom.shape)))

    def scores(c: np.ndarray) -> np.ndarray:
        true = np.concatenate([answer(w, c) for w in wl])
        return table_scores(len(c) * (true - est), block_of, cells, selection, 3.0)[0]

    base, sens = scores(codes), table_scores(np.zeros(len(block_of)), block_of, cells,
                                             selection, 3.0)[1]
    assert sens == stated
    worst = 0.0
    for i in range(len(codes)):
        for x in points:
            nb = codes.copy()
            nb[i] = x
            worst = max(worst, float(np.abs(scores(nb) - base).max()))
    assert worst == pytest.approx(stated)
    l1 = table_scores(np.array([3.0, -1.0, 2.0]), np.array([0, 0, 1]), np.array([2.0, 1.0]),
                      "l1", 2.0)[0]
    assert l1 == pytest.approx([4 - math.sqrt(2 / math.pi) * 4, 2 - math.sqrt(2 / math.pi) * 2])


def test_cover_rounds_reads_only_public_quantities() -> None:
    """L1 for up to 3 (d - 1) rounds from a selection budget of 0.01 per round; below it
    min(d - 1, ceil(T / 2)) (the boundary is inclusive)."""
    assert [cover_rounds(T, 7, 0.01) for T in (3, 18, 40)] == [3, 18, 18]
    assert [cover_rounds(T, 7, 0.0099) for T in (3, 8, 40)] == [2, 4, 6]
    assert cover_rounds(9, 10, 0.12) == 9 and cover_rounds(9, 10, 0.003) == 5


def test_floor_rounds_reads_only_public_quantities() -> None:
    """3 (d - 1) rounds where round(n sqrt(rho) / 50) < d - 1 and 3 (d - 1) <= 50, else 0."""
    assert floor_rounds(699, 1.0, 1 / 699**2, 10) == 27  # biopsy: 1 round asked, 9 a tree
    assert floor_rounds(1629, 1.0, 1 / 1629**2, 40) == 0  # nhefs: 3 (d - 1) = 117 > 50
    assert floor_rounds(22_272, 0.5, 1 / 22_272**2, 12) == 0  # 22 rounds asked, d - 1 = 11
    assert floor_rounds(100, 1.0, 1e-4, 17) == 48 and floor_rounds(100, 1.0, 1e-4, 18) == 0
    # the boundary: asking for exactly d - 1 rounds sets no floor, one fewer does
    n = next(m for m in range(1, 10_000) if _wanted_rounds(m, 1.0, 1e-6, 50.0) >= 9)
    assert _wanted_rounds(n - 1, 1.0, 1e-6, 50.0) == 8
    assert floor_rounds(n, 1.0, 1e-6, 10) == 0 and floor_rounds(n - 1, 1.0, 1e-6, 10) == 27


@pytest.mark.parametrize("epsilon, floored", [(1.0, True), (0.2, False), (0.1, False)])
def test_default_rounds_rise_to_the_floor_only_where_the_l1_rule_can_pay(
        epsilon: float, floored: bool) -> None:
    """On a capped junction tree T = floor_rounds where a round's selection budget *at the
    floor* is at least 0.01 (then every round is scored by L1), else default_rounds (at eps
    0.2 the budget is above 0.01 at 6 rounds and below it at 18); the same T for two datasets
    of one n; no floor with one clique, with selection other than "auto", or rounds given."""
    d = 7
    T0 = default_rounds(500, epsilon, 1e-6, d, divisor=50.0)
    F = floor_rounds(500, epsilon, 1e-6, d)
    assert T0 == d - 1 and F == 18  # round(500 sqrt(rho) / 50) < 6
    auto = OracleQueryPGM(epsilon, 1e-6, k=2)
    assert auto._default_T(500, d, whole=False) == (F if floored else T0)
    assert auto._default_T(500, d, whole=True) == default_rounds(500, epsilon, 1e-6, d)
    assert OracleQueryPGM(epsilon, 1e-6, k=2, selection="table")._default_T(500, d, False) == T0
    # a capped tree that cannot hold every pair (else measures_all measures each once)
    kw = dict(k=2, estimator="graphical", max_model_cells=100, random_state=0)
    fits = [OracleQueryPGM(epsilon, 1e-6, **kw).fit(*_wide(500, seed)) for seed in (0, 1)]
    assert fits[0].rounds_ == fits[1].rounds_ == (F if floored else T0)
    if floored:  # every round scored by the L1 rule
        sel = [s.mechanism for s in fits[0].ledger_ if not s.released]
        assert len(sel) == F and all("L1" in m for m in sel)
    assert OracleQueryPGM(epsilon, 1e-6, rounds=4, **kw).fit(*_wide(500)).rounds_ == 4


def test_one_way_share_is_a_rounds_budget_per_table_only_where_rounds_are_few() -> None:
    """d / (T + d) between 0.1 and 0.5 where the budget asks for at most (d - 1) / 2 rounds,
    linear down to 0.1 at d - 1 rounds (small steps, no jump, for d = 40), 0.1 from there;
    public quantities only."""
    assert one_way_share(40, 39, wanted=4) == 0.5  # nhefs: 40 / 79 capped at 0.5
    assert one_way_share(10, 27, wanted=2) == pytest.approx(10 / 37)  # biopsy at its floor
    assert one_way_share(8, 100, wanted=0) == 0.1  # 8 / 108 below the floor
    assert one_way_share(12, 28, wanted=28) == 0.1  # the panel: 28 rounds asked, d - 1 = 11
    assert one_way_share(40, 39, wanted=19) == 0.5  # 19 <= 39 / 2: the whole share
    assert one_way_share(40, 39, wanted=29) == pytest.approx(0.1 + 0.4 * 2 * (1 - 29 / 39))
    shares = [one_way_share(40, 39, wanted=w) for w in range(60)]
    assert all(b <= a for a, b in itertools.pairwise(shares))  # never rises with the budget
    assert max(abs(b - a) for a, b in itertools.pairwise(shares)) < 0.03  # and never jumps
    assert shares[39] == shares[59] == 0.1 and one_way_share(1, 5, wanted=0) == 0.1
    for d, T in ((0, 5), (5, 0)):
        with pytest.raises(ValueError, match="one_way_share"):
            one_way_share(d, T, wanted=0)
    q = OracleQueryPGM(1.0, 1e-6, k=2)
    w50, w100 = _wanted_rounds(2000, 1.0, 1e-6, 50.0), _wanted_rounds(2000, 1.0, 1e-6, 100.0)
    assert q._wanted(2000) == w50 != w100  # either model: divisor 50
    assert q._one_way_fraction(7, 18, select=False, wanted=0) == 0.1  # every table measured
    given = OracleQueryPGM(1.0, one_way_fraction=0.2)
    assert given._one_way_fraction(7, 18, wanted=0) == 0.2


@pytest.mark.parametrize("share", [None, 0.1])
def test_the_ledger_spends_the_one_way_share_it_reports(share: float | None) -> None:
    """The 1-way tables' spends sum to one_way_fraction_ rho, the rounds' to the rest: at eps
    1 on 500 records and 7 attributes the budget asks for fewer than 3 rounds, T rises to the
    floor (18) and the default share is 7 / 25; a given share is kept.  The floor's test read
    the selection budget at that share."""
    kw = dict(k=2, estimator="graphical", max_model_cells=100, random_state=0)
    fit = OracleQueryPGM(1.0, 1e-6, one_way_fraction=share, **kw).fit(*_wide(500))
    f = 7 / 25 if share is None else share
    assert fit.rounds_ == 18 and fit.one_way_fraction_ == pytest.approx(f)
    one = math.fsum(s.zcdp for s in fit.ledger_ if s.round == 0)
    rest = math.fsum(s.zcdp for s in fit.ledger_ if s.round > 0)
    assert one == pytest.approx(f * fit.rho_) and rest == pytest.approx((1 - f) * fit.rho_)
    # split by cells^(2/3) (levels 2, 3, 2, 4, 2, 3, 2)
    w = np.array([2, 3, 2, 4, 2, 3, 2]) ** (2 / 3)
    assert fit.sigma_one_way_ == pytest.approx(tuple(1 / np.sqrt(f * fit.rho_ * w / w.sum())))
    assert fit.eps_selection_ == pytest.approx(math.sqrt(8 * 0.25 * (1 - f) * fit.rho_ / 18))
    assert f"1-way tables {fit.one_way_fraction_:.4g} of rho" in fit.guarantee_.notes


def test_one_clique_takes_the_same_share_and_all_keeps_one_tenth() -> None:
    """On one clique (the small domain) the share is the same function of the budget as on a
    junction tree (a given T releases the same on both); measuring every table keeps 0.1."""
    n = next(m for m in range(1, 10_000) if _wanted_rounds(m, 1.0, 1e-6, 50.0) == 5)
    codes, dom = _wide(n)
    kw = dict(k=2, rounds=8, selection="table", random_state=0)
    a = OracleQueryPGM(1.0, 1e-6, **kw).fit(codes, dom)
    b = OracleQueryPGM(1.0, 1e-6, estimator="graphical", **kw).fit(codes, dom)
    assert a.max_model_cells_ is None and b.max_model_cells_ is not None
    # 5 rounds asked, between (d - 1) / 2 and d - 1: on the ramp (divisor 100 would not be)
    f = 0.1 + (7 / 15 - 0.1) * 2 * (1 - 5 / 6)
    assert a.one_way_fraction_ == b.one_way_fraction_ == pytest.approx(f)
    assert a.sigma_one_way_ == b.sigma_one_way_ and a.measured_axes_ == b.measured_axes_
    every = OracleQueryPGM(1.0, 1e-6, k=2, selection="all", random_state=0).fit(codes, dom)
    assert every.one_way_fraction_ == 0.1
    assert math.fsum(s.zcdp for s in every.ledger_ if s.round == 0) == pytest.approx(
        0.1 * every.rho_)


def test_the_floor_is_tested_at_the_share_it_would_run_with() -> None:
    """At eps 0.25 (d = 7, 500 records) a round's selection budget at the floor's 18 rounds is
    above 0.01 with a 1-way share of 0.1 and below it with the default share there (7 / 25):
    the default keeps d - 1 rounds, a given share of 0.1 takes the floor."""
    rho = zcdp_rho(0.25, 1e-6)
    assert math.sqrt(2 * 0.72 * rho / 18) < L1_SELECTION_EPS <= math.sqrt(2 * 0.9 * rho / 18)
    assert OracleQueryPGM(0.25, 1e-6, k=2)._default_T(500, 7, whole=False) == 6
    given = OracleQueryPGM(0.25, 1e-6, k=2, one_way_fraction=0.1)
    assert given._default_T(500, 7, whole=False) == 18


@pytest.mark.parametrize("rounds, epsilon, cover", [(3, 1.0, 3), (8, 1.0, 8), (8, 0.05, 4),
                                                     (10, 1.0, 10)])
def test_fit_passes_each_rule_its_sensitivity(monkeypatch: pytest.MonkeyPatch,
                                              rounds: int, epsilon: float, cover: int) -> None:
    """The default ("auto") selection runs the L1 rule with Delta = 2 in the first
    cover_rounds(T, d, eps_sel) rounds and the worst-query rule with Delta = 1 after (a
    mutant passing Delta = 1 to the L1 rule would double its privacy loss); at epsilon 0.05
    the round's selection budget is below L1_SELECTION_EPS (the mixed rule), at 1 above."""
    from oracledp.privacy import _noise

    calls: list[tuple[np.ndarray, float, float]] = []
    real = _noise.exponential_mechanism

    def spy(rng: np.random.Generator, scores: np.ndarray, eps: float, sens: float) -> int:
        calls.append((np.array(scores), eps, sens))
        return real(rng, scores, eps, sens)

    monkeypatch.setattr(_noise, "exponential_mechanism", spy)
    codes, dom = _wide(500)
    # every round selects (a last round covering lone attributes selects nothing)
    syn = OracleQueryPGM(epsilon, 1e-6, k=2, rounds=rounds, last_round="select",
                         random_state=0).fit(codes, dom)
    assert (syn.eps_selection_ >= L1_SELECTION_EPS) == (epsilon == 1.0)
    assert syn.selection == "auto" and len(calls) == rounds
    assert cover_rounds(rounds, 7, syn.eps_selection_) == cover
    assert [sens for _, _, sens in calls] == [2.0] * cover + [1.0] * (rounds - cover)
    assert all(eps == syn.eps_selection_ for _, eps, _ in calls)
    assert all(len(sc) == math.comb(7, 2) for sc, _, _ in calls)  # the pair tables
    sel = [s.mechanism for s in syn.ledger_ if not s.released]
    assert ["L1" in m for m in sel] == [True] * cover + [False] * (rounds - cover)


def test_measures_all_rule_reads_only_public_quantities() -> None:
    shape = (2, 3, 2, 4)
    pairs = list(itertools.combinations(range(4), 2))
    assert [measures_all(T, shape, pairs, None) for T in (1, 2, 3, 4)] == [False, False,
                                                                            True, True]
    # a junction tree over every pair of these 4 columns is the full table: 48 cells
    assert measures_all(3, shape, pairs, 48) and not measures_all(3, shape, pairs, 47)


@pytest.mark.parametrize("rounds, everything", [(2, False), (3, True), (5, True)])
def test_auto_measures_every_table_once_when_the_rounds_cover_half(
        monkeypatch: pytest.MonkeyPatch, rounds: int, everything: bool) -> None:
    """4 columns, 6 pairs: with 2 T >= 6 the default measures each pair once, in the
    workload's order, with the rounds' whole budget and no selection (a spy counts the
    exponential mechanism's draws); the ledger still composes to the target."""
    from oracledp.privacy import _noise

    calls: list[float] = []
    real = _noise.exponential_mechanism

    def spy(rng: np.random.Generator, scores: np.ndarray, eps: float, sens: float) -> int:
        calls.append(sens)
        return real(rng, scores, eps, sens)

    monkeypatch.setattr(_noise, "exponential_mechanism", spy)
    codes, dom = _tiny(500)
    syn = OracleQueryPGM(1.0, 1e-6, k=2, rounds=rounds, iterations=2, final_iterations=5,
                         last_round="select", random_state=0).fit(codes, dom)  # every round selects
    rho = math.fsum(s.rho for s in syn.ledger_)
    assert math.isclose(rho, zcdp_rho(1.0, 1e-6), rel_tol=1e-9)
    pairs = tuple(itertools.combinations(range(4), 2))
    if everything:
        assert calls == [] and syn.eps_selection_ == 0.0 and syn.rounds_ == 6
        assert syn.measured_axes_[4:] == pairs and len(syn.ledger_) == 4 + 6
        # the rounds' (1 - f) rho split evenly over the 6 tables
        assert all(math.isclose(s.rho, 0.9 * zcdp_rho(1.0, 1e-6) / 6, rel_tol=1e-12)
                   for s in syn.ledger_[4:])
    else:
        assert len(calls) == rounds and syn.rounds_ == rounds and syn.eps_selection_ > 0
        assert len(syn.ledger_) == 4 + 2 * rounds
    same = OracleQueryPGM(1.0, 1e-6, k=2, rounds=rounds, iterations=2, final_iterations=5,
                          selection="all", random_state=0).fit(codes, dom)
    assert (same.measured_axes_ == syn.measured_axes_) == everything


def test_margins_within_noise_drops_only_interactions_below_their_noise() -> None:
    """The rule on 200 noisy 6 x 30 tables of 12,000 records (sigma 63, dof 145).
    Independent counts: the statistic is about chi-square(145), and it keeps the table only
    above 2 * 145 - 2 sqrt(290) = 256 (chance per table about 4e-8): margins every time.
    A planted interaction of twice the noise's energy: the statistic is about noncentral
    chi-square of mean 435 and sd 38, at or below 256 with chance about 4e-8 per table
    (below 1e-5 for the 200 of each): kept every time.  Margins are the noisy table's own sums."""
    rng = np.random.default_rng(7)
    flat = np.outer(np.full(6, 2000.0), np.full(30, 1 / 30))
    sign = np.where(np.arange(6)[:, None] < 3, 1.0, -1.0) * np.where(
        np.arange(30) < 15, 1.0, -1.0)
    # energy of the plant: 180 * a^2 = 2 * 145 * 63^2
    planted = flat + sign * math.sqrt(2 * 145 * 63.0**2 / 180)
    maps = ((0, 0, 1, 1, 2, 2), None)
    for _ in range(200):
        y = flat + rng.normal(0, 63, flat.shape)
        got = margins_within_noise(MarginalMeasurement((1, 4), y, 63.0))
        assert got is not None
        assert [g.axes for g in got] == [(1,), (4,)]
        assert np.array_equal(got[0].values, y.sum(axis=1))
        assert np.array_equal(got[1].values, y.sum(axis=0))
        assert [g.sigma for g in got] == [63.0 * math.sqrt(30), 63.0 * math.sqrt(6)]
        kept = MarginalMeasurement((1, 4), planted + rng.normal(0, 63, flat.shape), 63.0)
        assert margins_within_noise(kept) is None
    # a coarse table's margins keep its public codes
    coarse = MarginalMeasurement((1, 4), flat[:3] * 2 + rng.normal(0, 63, (3, 30)), 63.0,
                                 (maps[0], None))
    got = margins_within_noise(coarse)
    assert got is not None and got[0].maps == (maps[0],) and got[1].maps is None


def test_shrink_interaction_keeps_the_margins_and_lowers_the_squared_error() -> None:
    """The shrinkage on noisy 6 x 8 tables (dof 35, sigma 20): the shrunk table keeps the
    noisy table's row and column sums exactly and its factor is max(0, 1 - 33 sigma^2 /
    ||y - e||^2) (a mutant that shrinks toward 0, to e, or uses dof fails these).  Over 300
    draws (fixed seed) its summed squared error against the true table is 0.35 of the raw
    table's where the interaction is small beside the noise (asserted below 2/3), and 0.90
    where it is strong (a pattern of +-40 counts; factor 0.78-0.95; asserted below 1): no
    theorem here (the independence fit is not a linear projection), what the docstring
    says.  Tables of dof <= 2 or a total not above 0 are returned as they are."""
    rng = np.random.default_rng(11)
    true = np.outer(np.arange(1.0, 7.0) * 50, np.linspace(1, 2, 8))
    true[0, 0] += 15.0
    true[0, 1] -= 15.0
    sq_raw = sq_shr = 0.0
    for _ in range(300):
        y = true + rng.normal(0, 20.0, true.shape)
        got = shrink_interaction(MarginalMeasurement((0, 3), y, 20.0))
        assert got.axes == (0, 3) and got.sigma == 20.0
        np.testing.assert_allclose(got.values.sum(axis=0), y.sum(axis=0), rtol=1e-12)
        np.testing.assert_allclose(got.values.sum(axis=1), y.sum(axis=1), rtol=1e-12)
        e = np.outer(y.sum(axis=1), y.sum(axis=0)) / y.sum()
        c = max(0.0, 1 - 33 * 400.0 / float(((y - e) ** 2).sum()))
        np.testing.assert_allclose(got.values, e + c * (y - e), rtol=1e-12)
        sq_raw += float(((y - true) ** 2).sum())
        sq_shr += float(((got.values - true) ** 2).sum())
    assert sq_shr < (1 - 1 / 3) * sq_raw
    sign = np.where(np.arange(6)[:, None] < 3, 1.0, -1.0) * np.where(np.arange(8) < 4, 1, -1)
    strong = np.outer(np.arange(1.0, 7.0) * 50, np.linspace(1, 2, 8)) + 40.0 * sign
    sq_raw = sq_shr = 0.0
    for _ in range(300):
        y = strong + rng.normal(0, 20.0, strong.shape)
        got = shrink_interaction(MarginalMeasurement((0, 3), y, 20.0)).values
        sq_raw += float(((y - strong) ** 2).sum())
        sq_shr += float(((got - strong) ** 2).sum())
    assert sq_shr < sq_raw
    small = MarginalMeasurement((0, 1), np.array([[5.0, 1, 2], [1, 5, 2]]), 3.0)  # dof 2
    assert shrink_interaction(small) is small
    neg = MarginalMeasurement((0, 1), np.full((4, 4), -1.0), 3.0)
    assert shrink_interaction(neg) is neg


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 1)])
def test_margins_within_noise_never_acts_on_a_table_too_small_to_judge(
        shape: tuple[int, int]) -> None:
    """dof 1 or 2: even a table exactly independent and noiseless is kept, since R + 2
    sqrt(2 dof) >= 2 dof for R >= 0 (and a single row has no interaction to judge); a
    table whose noisy total is not above 0 is kept too."""
    exact = np.outer(np.arange(1, shape[0] + 1), np.arange(1, shape[1] + 1)).astype(float)
    assert margins_within_noise(MarginalMeasurement((0, 1), exact, 1.0)) is None
    neg = np.full((6, 30), -1.0)
    assert margins_within_noise(MarginalMeasurement((0, 1), neg, 50.0)) is None


def test_all_fits_a_large_independent_pair_by_its_margins() -> None:
    """5,000 records: a (2 levels) drives b (2 levels); c (6) and e (30) are independent of
    everything.  ``selection="all"`` at eps 0.5 measures every pair; the pairs of e, noisy
    and independent, are fitted by their margins (``within_noise_``), a x b is not, and the
    model's c x e table is closer to the real one than the estimate fitted to the same
    released measurements without the rule (the rule is post-processing: the ledger and
    the measurements are the fit's)."""
    rng = np.random.default_rng(3)
    n = 5000
    a = (rng.random(n) < 0.4).astype(int)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)
    c = rng.integers(0, 6, n)
    e = np.minimum(rng.geometric(0.12, n) - 1, 29)
    codes = np.column_stack([a, b, c, e])
    dom = Domain(("a", "b", "c", "e"), (range(2), range(2), range(6), range(30)))
    syn = OracleQueryPGM(0.5, 1e-6, k=2, selection="all", random_state=0).fit(codes, dom)
    assert (2, 3) in syn.within_noise_ and (0, 1) not in syn.within_noise_
    real = np.zeros((6, 30))
    np.add.at(real, (c, e), 1.0)
    raw = estimate_model(dom.shape, syn.measurements_, n, iterations=syn.final_iterations
                         + syn.rounds_ * syn.iterations)
    ours = 0.5 * np.abs(syn.model_.marginal((2, 3)) * n - real).sum() / n
    plain = 0.5 * np.abs(raw.marginal((2, 3)) * n - real).sum() / n
    assert ours < 0.7 * plain


@pytest.mark.parametrize("cells", [[2], [2, 15], [7, 15, 3, 2, 10, 7], [1, 1000, 4],
                                   [1, 3, 4, 2]])
def test_one_way_split_spends_rho_and_minimises_the_l1_noise(cells: list[int]) -> None:
    """The split's rho adds up to the budget, grows as cells^(2/3), and no other split of
    the same budget has a smaller summed expected L1 noise sum_a c_a sigma_a (random
    splits and the equal one; a mutant power 1 or 0 is worse wherever the cells differ)."""
    rho = 0.0123
    s = one_way_sigmas(cells, rho)
    r = 1.0 / s**2
    assert r.sum() == pytest.approx(rho, rel=1e-12)
    c = np.asarray(cells, dtype=float)
    # a one-cell table is the public n: no budget, the others share all of rho
    assert (np.isinf(s) == (c == 1)).all()
    s, r, c = s[c > 1], r[c > 1], c[c > 1]
    assert r / r.sum() == pytest.approx(c ** (2 / 3) / (c ** (2 / 3)).sum())
    best = float(c @ s)
    rng = np.random.default_rng(0)
    for w in [np.ones(len(c)), c, *rng.dirichlet(np.ones(len(c)), 200)]:
        other = 1.0 / np.sqrt(rho * w / w.sum())
        assert float(c @ other) >= best * (1 - 1e-12)
        if len(set(c)) > 1 and (np.allclose(w, 1) or np.allclose(w, c)):
            assert float(c @ other) > best * (1 + 1e-6)
    assert one_way_sigmas([1, 1], rho) == pytest.approx([1 / np.sqrt(rho / 2)] * 2)
    with pytest.raises(ValueError):
        one_way_sigmas([], rho)
    with pytest.raises(ValueError):
        one_way_sigmas([2, 0], rho)


def test_last_round_measures_the_attributes_no_pair_holds() -> None:
    """A 15-level attribute independent of the rest is in no selected pair at a small budget:
    the last round spends its whole budget on its 1-way table (no selection), split among
    the attributes alone as the 1-way tables are; the total is the target.  Without the
    rule (last_round="select") the last round selects as the others do."""
    rng = np.random.default_rng(3)
    n = 2000
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)
    c = np.where(rng.random(n) < 0.9, b, 1 - b)
    z = rng.integers(0, 15, n)
    codes = np.stack([a, b, c, z], axis=1).astype(np.int64)
    dom = Domain(("a", "b", "c", "z"), ((0, 1), (0, 1), (0, 1), tuple(range(15))))
    kw = dict(k=2, rounds=3, selection="table", iterations=2, final_iterations=5)
    seen = 0
    for seed in range(5):
        syn = OracleQueryPGM(0.5, 1e-6, random_state=seed, **kw).fit(codes, dom)
        T = syn.rounds_
        assert math.fsum(s.rho for s in syn.ledger_) == pytest.approx(zcdp_rho(0.5, 1e-6))
        before = [s.released for s in syn.ledger_ if s.released and s.round < T]
        alone = alone_attributes(4, before)
        last = [s for s in syn.ledger_ if s.round == T]
        round_rho = (1 - syn.one_way_fraction_) * syn.rho_ / T
        assert math.fsum(s.rho for s in last) == pytest.approx(round_rho)
        assert syn.last_round_attributes_ == tuple(alone)
        if alone:
            seen += 1
            assert "the last round measured the 1-way tables of" in syn.guarantee_.notes
            assert [s.released for s in last] == [(x,) for x in alone]
            want = one_way_sigmas([dom.shape[x] for x in alone], round_rho)
            assert [s.rho for s in last] == pytest.approx(list(1 / want**2))
        else:
            assert [bool(s.released) for s in last] == [False, True]
    assert seen >= 3  # z is alone in most seeds
    syn = OracleQueryPGM(0.5, 1e-6, random_state=0, last_round="select", **kw).fit(codes, dom)
    last = [s for s in syn.ledger_ if s.round == syn.rounds_]
    assert [bool(s.released) for s in last] == [False, True]


def test_an_attribute_of_one_level_gets_no_budget() -> None:
    """An attribute of one level: its 1-way table is the public n, so it is not measured
    (no ledger entry, sigma inf), the other 1-way tables share the whole 1-way budget, the
    last round's cover never lists it, and every sampled record holds its level.  A mutant
    that measures it (weight 1, as before) spends part of the share on n."""
    rng = np.random.default_rng(11)
    n = 1500
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n))
    c = rng.integers(0, 4, n)
    z = np.zeros(n, dtype=np.int64)
    codes = np.stack([a, z, b, c], axis=1).astype(np.int64)
    dom = Domain(("a", "z", "b", "c"), ((0, 1, 2), (0,), (0, 1, 2), (0, 1, 2, 3)))
    for kw in (dict(selection="table", rounds=3), dict(selection="all"), dict()):
        syn = OracleQueryPGM(0.5, 1e-6, random_state=0, iterations=2, final_iterations=5,
                             **kw).fit(codes, dom)
        assert math.fsum(s.rho for s in syn.ledger_) == pytest.approx(syn.rho_, rel=1e-12)
        ones = [s for s in syn.ledger_ if s.released and len(s.released) == 1]
        assert (1,) not in [s.released for s in ones] and math.isinf(syn.sigma_one_way_[1])
        first = [s.rho for s in ones if s.round == 0]
        assert len(first) == 3
        assert math.fsum(first) == pytest.approx(syn.one_way_fraction_ * syn.rho_)
        assert 1 not in syn.last_round_attributes_
        assert (syn.sample_codes(200)[:, 1] == 0).all()


def test_a_domain_of_one_level_attributes_still_fits() -> None:
    """Every attribute of one level: the 1-way tables share the 1-way budget equally (the
    model needs a measurement; skipping them all had crashed the estimate), the ledger sums
    to the plan, and the samples are the one record there is."""
    codes = np.zeros((50, 3), dtype=np.int64)
    dom = Domain(("a", "b", "c"), ((0,), (0,), (0,)))
    syn = OracleQueryPGM(1.0, 1e-6, random_state=0, iterations=2, final_iterations=5).fit(
        codes, dom)
    assert math.fsum(s.rho for s in syn.ledger_) == pytest.approx(syn.rho_, rel=1e-12)
    assert all(math.isfinite(x) for x in syn.sigma_one_way_)
    assert (syn.sample_codes(20) == 0).all()


def _lone_table(n: int = 1500, seed: int = 7) -> tuple[np.ndarray, Domain]:
    """A strongly dependent pair and three attributes of 15, 3 and 2 levels independent of
    everything: the rounds pick the pair, and the last round covers the others."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.95, a, 1 - a)
    z15, z3, z2 = rng.integers(0, 15, n), rng.integers(0, 3, n), rng.integers(0, 2, n)
    dom = Domain(("a", "b", "z15", "z3", "z2"),
                 ((0, 1), (0, 1), tuple(range(15)), (0, 1, 2), (0, 1)))
    return np.stack([a, b, z15, z3, z2], axis=1).astype(np.int64), dom


def test_every_one_way_noise_has_the_variance_its_ledger_charges() -> None:
    """Each 1-way measurement's noise, scaled by the sqrt of the rho its ledger entry charges
    (rho = 1 / sigma^2), is N(0, 1): per attribute, at the start and in the last round's cover
    (several lone attributes of different sizes), the sum of squares is chi-square and the
    pooled draws pass a KS test; 10 tests, family false-alarm rate 1e-3 (Bonferroni).  A
    noise drawn at 0.9 of the charged sigma, or with the equal split's sigma while the
    ledger charges the cells^(2/3) split, fails."""
    codes, dom = _lone_table()
    d = len(dom.shape)
    true = [np.bincount(codes[:, a], minlength=dom.shape[a]).astype(float) for a in range(d)]
    z: dict[tuple[str, int], list[float]] = {}
    covered = 0
    for seed in range(300):
        syn = OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, selection="table", iterations=1,
                             final_iterations=1, random_state=seed).fit(codes, dom)
        one = [s for s in syn.ledger_ if s.released and len(s.released) == 1]
        ms = [m for m in syn.measurements_ if len(m.axes) == 1]
        assert [s.released for s in one] == [m.axes for m in ms]
        covered += any(s.round == syn.rounds_ for s in one)
        for s, m in zip(one, ms, strict=True):
            a = m.axes[0]
            key = ("last" if s.round else "start", a)
            z.setdefault(key, []).extend((m.values - true[a]) * math.sqrt(s.rho))
    assert covered >= 250 and {a for k, a in z if k == "last"} >= {2, 3, 4}
    tests = [k for k in z if len(z[k]) >= 100]
    alpha = 1e-3 / (len(tests) + 2)

    def passes(draws: np.ndarray) -> bool:
        ss, dof = float(draws @ draws), len(draws)
        p = 2 * min(stats.chi2.cdf(ss, dof), stats.chi2.sf(ss, dof))
        return p > alpha

    assert all(passes(np.asarray(z[k])) for k in tests)
    for group in ("start", "last"):
        pooled = np.concatenate([z[k] for k in z if k[0] == group])
        assert stats.kstest(pooled, "norm").pvalue > alpha
        assert not passes(0.9 * pooled)  # a 0.9-sigma mutant is caught
    # the equal split's noise charged as the cells^(2/3) split: the 2-level attributes' noise
    # is 0.75 of what is charged, the 15-level one's 1.5 times
    w = np.array(dom.shape, dtype=float) ** (2 / 3)
    scale = np.sqrt((w / w.sum()) / (1 / d))
    assert not all(passes(scale[a] * np.asarray(z[("start", a)])) for a in range(d))


def test_one_way_noise_is_gaussian_with_the_stated_sigma() -> None:
    """KS test of (measured - true) / sigma1 against N(0, 1); false alarm rate 1e-3."""
    codes, dom = _tiny(n=500)
    true = np.bincount(codes[:, 3], minlength=4).astype(float)
    z = []
    for seed in range(150):
        syn = OracleQueryPGM(1.0, 1e-6, k=2, rounds=1, iterations=1, final_iterations=1,
                             random_state=seed).fit(codes, dom)
        m = syn.measurements_[3]
        assert m.axes == (3,)
        z.extend((m.values - true) / syn.sigma_one_way_[3])
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # a half-sigma mutant would be caught: its z-scores have std 0.5
    assert stats.kstest(np.asarray(z) * 0.5, "norm").pvalue < 1e-3


def test_accurate_at_large_epsilon_and_reproducible() -> None:
    codes, dom = _tiny()
    wl = kway_marginal_workload(dom, 2)
    true = answer(wl, codes)
    a = OracleQueryPGM(1e3, 1e-6, k=2, rounds=6, random_state=5).fit(codes, dom)
    b = OracleQueryPGM(1e3, 1e-6, k=2, rounds=6, random_state=5).fit(codes, dom)
    c = OracleQueryPGM(1e3, 1e-6, k=2, rounds=6, random_state=6).fit(codes, dom)
    assert not np.array_equal(a.model_.dense(), c.model_.dense())
    np.testing.assert_array_equal(a.model_.dense(), b.model_.dense())
    assert errors(true, a.answer(wl))["max"] < 0.01
    sizes = np.diff(wl.offsets)
    uniform = errors(true, np.repeat(1.0 / sizes, sizes))["max"]
    assert uniform > 0.1
    s = a.sample(200, random_state=1)
    assert list(s.columns) == list(dom.attributes) and len(s) == 200


def test_pickle_drops_generator_and_keeps_release() -> None:
    codes, dom = _tiny()
    syn = OracleQueryPGM(1.0, 1e-6, k=2, rounds=3, random_state=3).fit(codes, dom)
    back = pickle.loads(pickle.dumps(syn))
    np.testing.assert_array_equal(back.model_.dense(), syn.model_.dense())
    assert back.random_state is None
    with pytest.raises(ValueError, match="random_state"):
        back.sample(5)
    assert len(back.sample(5, random_state=0)) == 5


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": 1.0, "delta": 0.0}, ValueError, "delta"),
    ({"epsilon": 1.0, "rounds": 0}, ValueError, "rounds"),
    ({"epsilon": 1.0, "one_way_fraction": 1.0}, ValueError, "one_way_fraction"),
    ({"epsilon": 1.0, "one_way_fraction": 0}, ValueError, "None or in"),
    ({"epsilon": 1.0, "one_way_fraction": True}, ValueError, "one_way_fraction"),
    ({"epsilon": 1.0, "one_way_fraction": False}, ValueError, "one_way_fraction"),
    ({"epsilon": 1.0, "one_way_fraction": "0.2"}, ValueError, "one_way_fraction"),
    ({"epsilon": 1.0, "selection_fraction": None}, ValueError, "selection_fraction"),
    ({"epsilon": 1.0, "selection_fraction": 0}, ValueError, "selection_fraction"),
    ({"epsilon": 1.0, "selection": "cell"}, ValueError, "selection"),
    ({"epsilon": 1.0, "k": 2, "orders": (3,)}, ValueError, "orders"),
    ({"epsilon": 1.0, "orders": ()}, ValueError, "orders"),
    ({"epsilon": 1.0, "max_model_cells": 0}, ValueError, "max_model_cells"),
    ({"epsilon": 1.0, "max_model_cells": 1.5e5}, ValueError, "max_model_cells"),
])
def test_bad_parameters_refused(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        OracleQueryPGM(**kwargs)


def test_bad_data_refused_before_randomness() -> None:
    codes, dom = _tiny()
    with pytest.raises(ValueError, match="k=5"):
        OracleQueryPGM(1.0, k=5).fit(codes, dom)
    bad = codes.copy()
    bad[0, 1] = 7
    with pytest.raises(ValueError):
        OracleQueryPGM(1.0).fit(bad, dom)
    with pytest.raises(TypeError, match="Domain"):
        OracleQueryPGM(1.0).fit(codes, "domain")
