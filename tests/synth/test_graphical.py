"""The junction-tree estimator (oracledp.synth._graphical) and ``sample_weight``.

Exact comparisons on small domains: the junction-tree mirror descent has the iterates of
mirror descent on the dense table (``_dense_reference``: same start, same step rule), so both
agree to rounding, on a triangulated tree and on one clique over every attribute; marginals
of the model agree with sums of its dense table; forward sampling follows the model's law.
Every synthesizer fitted on distinct rows with their counts gives the release of the
expanded rows (same random_state).
"""

from __future__ import annotations

import importlib.util
import itertools
import math

import numpy as np
import pytest
from _dense_reference import estimate_distribution

from oracledp.synth import (
    Domain,
    IndependentMarginalsSynthesizer,
    MWEMSynthesizer,
    OracleQueryPGM,
)
from oracledp.synth._estimation import MarginalMeasurement
from oracledp.synth._graphical import GraphicalModel, estimate_model
from oracledp.synth._junction_tree import JunctionTree, junction_tree_cells

SHAPE = (3, 4, 2, 3, 5, 2)


def _codes(n: int = 800, seed: int = 0, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, n) for s in shape], axis=1)
    for j in range(1, len(shape)):  # a chain of dependences
        copy = rng.random(n) < 0.5
        codes[copy, j] = codes[copy, j - 1] % shape[j]
    return codes.astype(np.int64)


def _table(codes: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    sub = tuple(shape[a] for a in axes)
    joint = np.ravel_multi_index(tuple(codes[:, a] for a in axes), sub)
    return np.bincount(joint, minlength=int(np.prod(sub))).reshape(sub).astype(float)


def _measure(codes: np.ndarray, cliques: list[tuple[int, ...]], seed: int = 1,
             shape: tuple[int, ...] = SHAPE) -> list[MarginalMeasurement]:
    rng = np.random.default_rng(seed)
    out = []
    for c in cliques:
        t = _table(codes, shape, c)
        sigma = 4.0 if len(c) == 1 else 2.5
        out.append(MarginalMeasurement(c, t + rng.normal(0, sigma, t.shape), sigma))
    return out


STRUCTURES = {
    "chain": [(a,) for a in range(6)] + [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)],
    "cycle+triple": [(a,) for a in range(6)] + [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4, 5)],
    "disconnected+repeat": [(0, 1), (1, 2), (0, 1), (4, 5), (3,)],
}


def _marginal_of(p: np.ndarray, attrs: list[int]) -> np.ndarray:
    keep = sorted(attrs)
    drop = tuple(a for a in range(p.ndim) if a not in keep)
    return p.sum(axis=drop).transpose([keep.index(a) for a in attrs])


@pytest.mark.parametrize("one_clique", [False, True])
@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_junction_tree_estimate_equals_the_dense_reference(name: str, one_clique: bool) -> None:
    """Before convergence (60 + 15 iterations) the iterates agree within 1e-12 per cell.  Once
    the loss is flat to rounding, the step rule's test compares two equal numbers and may
    take another step size: the estimates then differ by up to ~1e-9 (OracleQueryPGM at
    eps 3 with 150 final iterations), both minimizers to machine precision."""
    codes = _codes()
    ms = _measure(codes, STRUCTURES[name])
    n = len(codes)
    tree = JunctionTree(SHAPE, [tuple(range(len(SHAPE)))], nodes=True) if one_clique else None
    p = estimate_distribution(SHAPE, ms, n, iterations=60)
    model = estimate_model(SHAPE, ms, n, iterations=60, tree=tree)
    np.testing.assert_allclose(model.dense(), p, atol=1e-12, rtol=0)
    assert (model.tree.cliques == (tuple(range(len(SHAPE))),)) == one_clique
    assert model.cells < int(np.prod(SHAPE)) or one_clique
    # warm start: continuing from a model equals continuing from its dense table
    more = _measure(codes, [(1, 4), (0, 5)], seed=7)
    p2 = estimate_distribution(SHAPE, [*ms, *more], n, iterations=15, p0=p)
    m2 = estimate_model(SHAPE, [*ms, *more], n, iterations=15, warm=model)
    np.testing.assert_allclose(m2.dense(), p2, atol=1e-12, rtol=0)


def test_marginals_of_every_pair_and_triple_match_the_dense_table() -> None:
    codes = _codes()
    model = estimate_model(SHAPE, _measure(codes, STRUCTURES["chain"]), len(codes),
                           iterations=30)
    p = model.dense()
    assert len(model.tree.cliques) == 5  # the chain's pairs: paths up to 5 cliques long
    # the calibrated log-factors, read back as a model (as a saved model is): the same p
    np.testing.assert_allclose(GraphicalModel.from_factors(SHAPE, model.factors).dense(), p,
                               atol=1e-15)
    for k in (1, 2, 3):
        for attrs in itertools.permutations(range(6), k):
            np.testing.assert_allclose(model.marginal(list(attrs)),
                                       _marginal_of(p, list(attrs)), atol=1e-14)


def test_a_wrong_message_is_caught() -> None:
    """Planted mutant: dropping the separator division breaks cross-clique marginals."""
    codes = _codes()
    model = estimate_model(SHAPE, _measure(codes, STRUCTURES["chain"]), len(codes),
                           iterations=30)
    good = model.marginal([0, 5])
    broken = GraphicalModel(SHAPE, model.potentials, model.tree, model.n)
    broken.marginals_ = [m.copy() for m in model.marginals_]
    broken.marginals_[2] = np.full_like(broken.marginals_[2], 1.0 / broken.marginals_[2].size)
    assert np.abs(broken.marginal([0, 5]) - good).max() > 1e-3


def test_forward_sampling_follows_the_model() -> None:
    codes = _codes()
    model = estimate_model(SHAPE, _measure(codes, STRUCTURES["cycle+triple"]), len(codes),
                           iterations=40)
    p = model.dense()
    m = 200_000
    s = model.sample(m, 3)
    assert s.shape == (m, 6) and s.min() >= 0 and (s.max(axis=0) < np.array(SHAPE)).all()
    emp = np.bincount(np.ravel_multi_index(s.T, SHAPE), minlength=p.size).reshape(SHAPE) / m
    # E[TV] <= 1/2 sum sqrt(p/m) ~ 0.018 here; a sampler off by one conditional is far above
    assert 0.5 * np.abs(emp - p).sum() < 0.03
    np.testing.assert_array_equal(model.sample(50, 5), model.sample(50, 5))


def test_junction_tree_of_twenty_columns_stays_small() -> None:
    shape = tuple(int(v) for v in np.random.default_rng(0).integers(2, 31, 20))
    codes = _codes(2000, 1, shape)
    cliques = [(a,) for a in range(20)] + [(a, a + 1) for a in range(19)] + [(0, 19)]
    model = estimate_model(shape, _measure(codes, cliques, shape=shape), 2000, iterations=10)
    assert model.cells == junction_tree_cells(shape, cliques) < 200_000  # a cycle: triangles
    assert np.isclose(model.marginal([0, 10]).sum(), 1.0)
    assert model.sample(10, 0).shape == (10, 20)
    tree = JunctionTree(shape, cliques)
    for i in tree.order[1:]:  # running intersection: a separator lies in both cliques
        assert set(tree.sep[i]) <= set(tree.cliques[tree.parent[i]]) & set(tree.cliques[i])


DOM = Domain(tuple("abcdef"), tuple(tuple(range(s)) for s in SHAPE))


@pytest.mark.parametrize("selection", ["table", "query"])
def test_oracle_query_pgm_one_clique_release_equals_the_junction_tree_release(
        selection: str) -> None:
    codes = _codes(3000)
    kw = dict(k=2, rounds=6, selection=selection, random_state=4)
    a = OracleQueryPGM(1.0, 1e-6, **kw).fit(codes, DOM)  # small domain: one clique
    b = OracleQueryPGM(1.0, 1e-6, estimator="graphical", **kw).fit(codes, DOM)
    assert len(a.model_.tree.cliques) == 1 < len(b.model_.tree.cliques)
    assert a.measured_axes_ == b.measured_axes_
    np.testing.assert_allclose(b.answer(), a.answer(), atol=1e-12)
    np.testing.assert_allclose(b.marginal([2, 0]), a.marginal([2, 0]), atol=1e-12)
    assert a.guarantee_ == b.guarantee_


def test_oracle_query_pgm_default_is_the_dense_estimators_release(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: the default on a small domain holds its model on one clique and releases what
    the dense estimator released before it left the package: the selections of the code
    before (pinned, seed 4; with that code's cover rule, min(d - 1, ceil(T / 2)) L1 rounds),
    and the estimate of the dense reference replayed on the released measurements with the
    same warm-started schedule (within 1e-12 per cell)."""
    import oracledp.synth._oracle_query_pgm as mod

    monkeypatch.setattr(mod, "cover_rounds", lambda T, d, eps_sel=0.0: min(d - 1, -(-T // 2)))
    codes = _codes(3000)
    # that code's equal 1-way split, every round selecting
    syn = OracleQueryPGM(1.0, 1e-6, k=2, iterations=2, final_iterations=20,
                         one_way_split="equal", last_round="select",
                         random_state=4).fit(codes, DOM)
    d = len(SHAPE)
    assert syn.rounds_ == 5 and syn.max_model_cells_ is None
    assert syn.measured_axes_[d:] == ((0, 1), (3, 4), (3, 4), (2, 3), (4, 5))
    assert syn.model_.tree.cliques == (tuple(range(d)),)
    ms = list(syn.measurements_)
    p = estimate_distribution(SHAPE, ms[:d], len(codes), iterations=6)
    for t in range(1, syn.rounds_ + 1):
        p = estimate_distribution(SHAPE, ms[:d + t], len(codes), iterations=2, p0=p)
    p = estimate_distribution(SHAPE, ms, len(codes), iterations=20, p0=p)
    np.testing.assert_allclose(syn.model_.dense(), p, atol=1e-12, rtol=0)
    # the code before, same seed: its answers and first sampled rows (independent draws, the
    # sampler the code before had)
    np.testing.assert_allclose(syn.answer()[:4], [0.20928342, 0.04108425, 0.04427318,
                                                  0.02712764], atol=1e-8)
    assert syn.sample_codes(3, random_state=0, sampler="iid").tolist() == [
        [1, 3, 1, 0, 0, 1], [0, 2, 0, 1, 3, 1], [0, 0, 0, 0, 0, 1]]
    # today's default (every round L1 here: eps_sel >= 0.01, T <= 3(d-1); one clique, so no
    # floor_rounds)
    monkeypatch.undo()
    default = OracleQueryPGM(1.0, 1e-6, k=2, random_state=4).fit(codes, DOM)
    assert default.rounds_ == 5
    # four L1 selections; attribute 5 is in none of them, so the last round measures its
    # 1-way table with the round's whole budget (last_round="cover")
    assert default.measured_axes_[d:] == ((0, 1), (3, 4), (2, 3), (1, 2), (5,))
    sel = [s.mechanism for s in default.ledger_ if not s.released]
    assert len(sel) == 4 and all("L1" in m for m in sel)
    last = [s for s in default.ledger_ if s.round == 5]
    assert len(last) == 1 and last[0].released == (5,)


def test_model_cap_restricts_the_candidates() -> None:
    codes = _codes(3000)
    syn = OracleQueryPGM(2.0, 1e-6, k=2, rounds=12, estimator="graphical",
                         max_model_cells=60, random_state=0).fit(codes, DOM)
    assert syn.model_.cells <= 60


def test_default_model_cap_is_public_and_grows_with_the_rounds_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import oracledp.synth._oracle_query_pgm as mod
    from oracledp.privacy import zcdp_rho

    # the switch: round(n sqrt(rho) / 50) > 50 (half of T's cap of 100), from public n,
    # epsilon, delta only; 50 exactly stays at 100,000
    s = math.sqrt(zcdp_rho(2.0, 1e-6))
    below, above = math.floor(50.5 * 50 / s) - 1, math.ceil(50.5 * 50 / s) + 1
    assert mod._wanted_rounds(below, 2.0, 1e-6, 50.0) == 50
    assert mod._wanted_rounds(above, 2.0, 1e-6, 50.0) == 51
    assert mod.default_model_cells(below, 2.0, 1e-6) == 100_000
    assert mod.default_model_cells(above, 2.0, 1e-6) == 500_000
    caps: list[int] = []
    real = mod._allowed_blocks

    def spy(shape, blocks, measured, cap):  # type: ignore[no-untyped-def]
        caps.append(cap)
        return real(shape, blocks, measured, cap)

    monkeypatch.setattr(mod, "_allowed_blocks", spy)
    codes = _codes(600)
    rows, counts = np.unique(codes, axis=0, return_counts=True)
    for n in (below, above):  # the same rows, weighted to n records: only n sets the cap
        w = np.maximum(1, np.round(counts * n / counts.sum())).astype(np.int64)
        w[0] += n - w.sum()
        for data in (rows, rows[:, ::-1] % np.array(SHAPE)):  # two datasets of n records
            caps.clear()
            syn = OracleQueryPGM(2.0, 1e-6, k=2, rounds=3, estimator="graphical",
                                 last_round="select",  # each of the 3 rounds selects
                                 random_state=0).fit(data, DOM, sample_weight=w)
            want = mod.default_model_cells(n, 2.0, 1e-6)
            assert syn.n_ == n and caps == [want] * 3 and syn.max_model_cells_ == want
    caps.clear()
    given = OracleQueryPGM(2.0, 1e-6, k=2, rounds=2, estimator="graphical", last_round="select",
                           max_model_cells=70, random_state=0).fit(rows, DOM, sample_weight=w)
    assert caps == [70, 70] and given.max_model_cells_ == 70
    whole = OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, random_state=0).fit(codes, DOM)
    assert whole.max_model_cells_ is None and caps == [70, 70]  # one clique: no cap


def test_selection_all_beyond_the_cap_is_refused_before_any_noise() -> None:
    codes = _codes(300)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"selection='all'.*max_model_cells=100"):
        OracleQueryPGM(1.0, 1e-6, k=2, selection="all", estimator="graphical",
                       max_model_cells=100, random_state=rng).fit(codes, DOM)
    assert rng.bit_generator.state == state
    fits = OracleQueryPGM(1.0, 1e-6, k=2, selection="all", estimator="graphical",
                          max_model_cells=10**6, iterations=2, final_iterations=5,
                          random_state=0).fit(codes, DOM)
    assert fits.measured_axes_[len(SHAPE):] == tuple(itertools.combinations(range(6), 2))


def _weighted(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows, counts = np.unique(codes, axis=0, return_counts=True)
    order = np.random.default_rng(0).permutation(len(rows))  # row order does not matter
    return rows[order], counts[order]


FACTORIES = {
    "pgm-one-clique": lambda: OracleQueryPGM(1.0, 1e-6, k=2, rounds=4, random_state=11),
    "pgm-graphical": lambda: OracleQueryPGM(1.0, 1e-6, k=2, rounds=4, random_state=11,
                                            estimator="graphical"),
    "independent": lambda: IndependentMarginalsSynthesizer(1.0, random_state=11),
    "mwem": lambda: MWEMSynthesizer(1.0, k=2, rounds=5, random_state=11),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_weighted_distinct_rows_give_the_expanded_release(name: str) -> None:
    codes = _codes(600)
    rows, counts = _weighted(codes)
    assert len(rows) < len(codes)
    a = FACTORIES[name]().fit(codes, DOM)
    b = FACTORIES[name]().fit(rows, DOM, sample_weight=counts)
    assert a.n_ == b.n_ == len(codes)
    np.testing.assert_array_equal(a.answer(), b.answer())
    np.testing.assert_array_equal(a.sample_codes(40), b.sample_codes(40))
    assert a.guarantee_ == b.guarantee_
    # planted mutant: unweighted distinct rows are a different dataset
    c = FACTORIES[name]().fit(rows, DOM)
    assert not np.array_equal(a.answer(), c.answer())


def test_weighted_rows_mst_and_aim_numpy_backend() -> None:
    from oracledp.synth._peers import aim, mst

    codes = _codes(600)
    rows, counts = _weighted(codes)
    for fit in (lambda c, **kw: mst(c, DOM, 1.0, 1e-6, 2, iters=40, **kw),
                lambda c, **kw: aim(c, DOM, 1.0, 1e-6, 2, rounds=8, round_iters=20,
                                    final_iters=40, **kw)):
        a, b = fit(codes), fit(rows, sample_weight=counts)
        assert a.selected == b.selected and a.n == b.n == len(codes)
        for ma, mb in zip(a.measurements, b.measurements, strict=True):
            np.testing.assert_array_equal(ma.values, mb.values)
        np.testing.assert_allclose(a.marginal([0, 3]), b.marginal([0, 3]), atol=1e-12)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mbi") is None, reason="needs the peers extra")
def test_numpy_estimate_reaches_mbi_loss() -> None:
    """On MST's measurements the junction-tree estimate's loss is at most mbi's (+1e-3)."""
    from oracledp.synth._peers import mst

    codes = _codes(3000)
    res = mst(codes, DOM, 1.0, 1e-6, 0, backend="mbi")
    n = len(codes)

    def loss(marg) -> float:
        from oracledp.synth._estimation import combine_measurements

        out = 0.0
        for m in combine_measurements(res.measurements):
            r = marg(m.axes) - m.values / n
            out += 0.5 * (n / m.sigma) ** 2 * float(np.vdot(r, r))
        return out

    ours = estimate_model(SHAPE, res.measurements, n, iterations=3000)
    theirs = loss(lambda ax: res.marginal(list(ax)))
    assert loss(lambda ax: ours.marginal(list(ax))) <= theirs * (1 + 1e-3)


@pytest.mark.parametrize(("weight", "err"), [
    (np.ones(5), ValueError),  # wrong length
    (-np.ones(600), ValueError),
    (np.full(600, 0.5), ValueError),
    (np.zeros(600), ValueError),
    (np.ones(600, dtype=bool), TypeError),
])
def test_bad_sample_weight_is_refused_before_any_randomness(weight: np.ndarray,
                                                            err: type) -> None:
    codes = _codes(600)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for syn in (OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, random_state=gen),
                MWEMSynthesizer(1.0, k=2, rounds=2, random_state=gen)):
        with pytest.raises(err, match="sample_weight"):
            syn.fit(codes, DOM, sample_weight=weight)
    assert gen.bit_generator.state == state


def test_a_tree_rebuilt_from_its_cliques_is_the_same_tree() -> None:
    """A saved model keeps its junction tree's cliques: rebuilt, the model is the same bit
    for bit (same potentials, same tree, same marginals and samples)."""
    codes = _codes()
    model = estimate_model(SHAPE, _measure(codes, STRUCTURES["chain"]), len(codes),
                           iterations=20)
    tree = JunctionTree(SHAPE, model.tree.cliques, nodes=True)
    assert (tree.cliques, tree.parent, tree.sep) == (model.tree.cliques, model.tree.parent,
                                                     model.tree.sep)
    again = GraphicalModel(SHAPE, model.potentials, tree)
    for a, b in zip(again.marginals_, model.marginals_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(again.sample(500, 3), model.sample(500, 3))
    for bad in ([(0, 1)], [(0, 1, 2, 3, 4, 5), (0, 1)], [(0, 0, 1, 2, 3, 4, 5)]):
        with pytest.raises(ValueError, match="tree's cliques"):
            JunctionTree(SHAPE, bad, nodes=True)


def test_from_factors_reads_any_attribute_order_and_log_zero() -> None:
    codes = _codes()
    model = estimate_model(SHAPE, _measure(codes, STRUCTURES["chain"]), len(codes),
                           iterations=20)
    flipped = [(c[::-1], t.T.copy()) for c, t in model.factors]  # attributes reversed
    np.testing.assert_allclose(GraphicalModel.from_factors(SHAPE, flipped).dense(),
                               model.dense(), atol=1e-15)
    c, t = flipped[0]
    t[0] = -np.inf  # no mass where the clique's last attribute is 0
    back = GraphicalModel.from_factors(SHAPE, flipped)
    p = back.dense()
    assert np.isfinite(p).all() and abs(p.sum() - 1) < 1e-12
    assert back.marginal([c[0]])[0] == 0.0 and back.sample(300, 1)[:, c[0]].min() == 1


def test_a_big_clique_sums_by_matrix_products_and_equals_the_dense_reference() -> None:
    """A clique above 2^18 cells sums its sets' potentials in and their marginals out by
    matrix products (``_MarginalOperator``): the same iterates as the dense reference within
    1e-12 per cell; a pickled model drops the operators and rebuilds the same marginals."""
    import pickle

    shape = (8, 8, 8, 8, 8, 9)  # 294,912 cells
    codes = _codes(2000, shape=shape)
    sets = [(a,) for a in range(6)] + [(0, 1), (1, 2), (3, 5), (2, 4)]
    ms = _measure(codes, sets, shape=shape)
    tree = JunctionTree(shape, [tuple(range(6))], nodes=True)
    model = estimate_model(shape, ms, len(codes), iterations=8, tree=tree)
    assert "_operators" in model.tree.__dict__
    p = estimate_distribution(shape, ms, len(codes), iterations=8)
    np.testing.assert_allclose(model.dense(), p, atol=1e-12, rtol=0)
    back = pickle.loads(pickle.dumps(model))
    assert "_operators" not in back.tree.__dict__
    np.testing.assert_array_equal(back.dense(), model.dense())
    again = GraphicalModel(shape, model.potentials, back.tree)  # rebuilt from its potentials
    np.testing.assert_array_equal(again.dense(), model.dense())


@pytest.mark.parametrize("total", [None, 57.3])  # replace-one: n; add-remove: estimated
def test_mst_one_way_model_is_the_estimators_minimizer(total: float | None) -> None:
    """MST's selection scores pairs against the model of its 1-way tables, computed in closed
    form (each noisy table projected onto the counts of the total): the mirror descent reaches
    those pair tables, negative noisy cells included; clipping and rescaling would not."""
    from oracledp.synth._peers_mst import one_way_counts

    n, rng = 60, np.random.default_rng(3)  # small counts, sigma 8: some cells negative
    meas = [MarginalMeasurement((a,), t + rng.normal(0, 8.0, t.shape), 8.0)
            for a in range(len(SHAPE)) for t in [_table(_codes(n), SHAPE, (a,))]]
    assert min(float(m.values.min()) for m in meas) < 0
    tot = float(n) if total is None else total
    model = estimate_model(SHAPE, meas, tot, iterations=3000)
    ones = one_way_counts(meas, tot)
    clipped = [np.maximum(m.values, 0.0) for m in meas]
    apart = 0.0
    for u, v in [(0, 1), (2, 4), (3, 5)]:
        got = np.multiply.outer(ones[u], ones[v]) / tot
        np.testing.assert_allclose(tot * model.marginal([u, v]), got, atol=1e-3)
        alt = np.multiply.outer(clipped[u], clipped[v]) * tot / (
            clipped[u].sum() * clipped[v].sum())
        apart = max(apart, float(np.abs(alt - got).max()))
    assert apart > 0.1  # clipping and rescaling (another point) would have failed above


def test_all_releases_the_estimate_of_its_measurements_margined_and_shrunk() -> None:
    """``selection="all"`` (every pair measured once): the released model is post-processing
    of ``measurements_`` alone: the dense reference replayed on them, with each pair
    ``margins_within_noise`` judges within noise fitted by its margins and every other pair
    shrunk by ``shrink_interaction``, on the fit's schedule (1-way tables, then the final
    iterations), gives the same distribution within 1e-12 per cell.  A fit that skipped the
    shrinkage, shrank to the independence fit, or read a true count would not."""
    from oracledp.synth._estimation import margins_within_noise, shrink_interaction

    codes = _codes(3000)
    syn = OracleQueryPGM(1.0, 1e-6, k=2, selection="all", iterations=2, final_iterations=20,
                         random_state=5).fit(codes, DOM)
    d = len(SHAPE)
    ms = list(syn.measurements_)
    assert len(ms) == d + d * (d - 1) // 2 and syn.rounds_ == d * (d - 1) // 2
    fitted = []
    for m in ms:
        mg = margins_within_noise(m) if len(m.axes) == 2 else None
        fitted.extend(mg if mg else ((shrink_interaction(m) if len(m.axes) == 2 else m),))
    shrunk = [m for m in ms if len(m.axes) == 2 and margins_within_noise(m) is None]
    assert shrunk and any(not np.array_equal(shrink_interaction(m).values, m.values)
                          for m in shrunk)
    p = estimate_distribution(SHAPE, ms[:d], len(codes), iterations=6)
    p = estimate_distribution(SHAPE, fitted, len(codes),
                              iterations=20 + syn.rounds_ * 2, p0=p)
    np.testing.assert_allclose(syn.model_.dense(), p, atol=1e-12, rtol=0)
