"""Tables measured on public coarser codes (OracleQueryPGM's ``pair_resolution="select"``).

The estimator fits a measurement of a projection exactly as the dense reference does; the
projection and its adjoint are adjoint; a projected table's scores keep the sensitivities of the
proof (``docs/proofs/oracle-query-pgm-selection.md``, Lemma A⁗); its noise has the stated law;
and :class:`~oracledp.synth.TableSynthesizer` hands the default method nested, public bins.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from _dense_reference import estimate_distribution
from scipy import stats

from oracledp.privacy import zcdp_epsilon
from oracledp.synth import Domain, TableSynthesizer
from oracledp.synth._estimation import MarginalMeasurement, expand, loss_terms, project
from oracledp.synth._graphical import estimate_model
from oracledp.synth._junction_tree import JunctionTree
from oracledp.synth._oracle_query_pgm import OracleQueryPGM, _candidates, table_scores
from oracledp.tabular import TableSchema

_MAP4 = (0, 0, 1, 1)  # attribute 0's four codes onto two
_MAP5 = (0, 0, 1, 2, 2)


def test_project_sums_cells_and_expand_is_its_adjoint() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((4, 5, 3))
    maps = (_MAP4, _MAP5, None)
    got = project(x, maps)
    want = np.zeros((2, 3, 3))
    for i, j in itertools.product(range(4), range(5)):
        want[_MAP4[i], _MAP5[j]] += x[i, j]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    y = rng.random(got.shape)
    assert float(np.vdot(got, y)) == pytest.approx(float(np.vdot(x, expand(y, maps))), rel=1e-13)
    assert project(x, None) is x and expand(x, None) is x


@pytest.mark.parametrize("tree", ["one clique", "junction tree"])
def test_a_projected_measurement_is_fitted_as_the_dense_reference_fits_it(tree: str) -> None:
    """Iterates equal to mirror descent on the dense distribution (same start, same steps):
    the projection enters the loss and its adjoint the gradient (a mutant that fitted the
    coarse table as if it were the fine one could not even be built: shapes differ)."""
    shape = (4, 5, 3, 2)
    rng = np.random.default_rng(3)
    n = 500
    truth = rng.dirichlet(np.ones(math.prod(shape))).reshape(shape) * n
    meas = []
    for axes, maps in (((0,), None), ((1,), None), ((2,), None), ((3,), None),
                       ((0, 1), (_MAP4, _MAP5)), ((1, 2), (_MAP5, None)), ((0, 3), None),
                       ((0, 1), None)):
        marg = truth.sum(axis=tuple(a for a in range(4) if a not in axes))
        table = project(marg, maps)
        meas.append(MarginalMeasurement(axes, table + rng.normal(0, 3.0, table.shape), 3.0,
                                        maps))
    jt = (JunctionTree(shape, [tuple(range(4))], nodes=True) if tree == "one clique"
          else None)
    model = estimate_model(shape, meas, n, iterations=40, tree=jt)
    dense = estimate_distribution(shape, meas, n, iterations=40)
    np.testing.assert_allclose(model.dense(), dense, atol=1e-12)
    # the two measurements of (0, 1), on two resolutions, are two terms of the loss
    assert sum(m.axes == (0, 1) for m in loss_terms(shape, meas, n)) == 2


def test_measurements_on_a_projection_are_checked_against_the_domain() -> None:
    good = MarginalMeasurement((0, 1), np.zeros((2, 3)), 1.0, (_MAP4, _MAP5))
    assert good.shape_on((4, 5)) == (2, 3)
    with pytest.raises(ValueError, match="does not match the domain"):
        loss_terms((4, 6), [good], 10)  # the map has 5 codes, the attribute 6
    with pytest.raises(ValueError, match="does not match the domain"):
        loss_terms((4, 5), [MarginalMeasurement((0, 1), np.zeros((4, 5)), 1.0,
                                                (_MAP4, _MAP5))], 10)
    assert MarginalMeasurement((0,), np.zeros(4), 1.0, (None,)).maps is None


@pytest.mark.parametrize("selection, stated", [("table", 1.0), ("l1", 2.0)])
def test_projected_scores_keep_the_stated_sensitivity(selection: str, stated: float) -> None:
    """Brute force over every replace-one neighbour of a small dataset: a candidate counted on
    coarser codes moves its score by at most the stated sensitivity, attained."""
    shape = (4, 3)
    maps = (_MAP4, None)
    rng = np.random.default_rng(11)
    codes = np.stack([rng.integers(0, s, 9) for s in shape], axis=1)

    def coarse(c: np.ndarray) -> np.ndarray:
        table = np.zeros(shape)
        np.add.at(table, (c[:, 0], c[:, 1]), 1.0)
        return project(table, maps)

    est = coarse(codes) / 9  # D_t's coarse table, fixed by earlier releases: here exact

    def score(c: np.ndarray) -> float:
        diff = (coarse(c) - len(c) * est).ravel()
        return float(table_scores(diff, np.zeros(6, dtype=int), np.array([6.0]), selection,
                                  2.0)[0][0])

    base = score(codes)
    worst = max(abs(score(np.where(np.arange(9)[:, None] == i, np.array(x), codes)) - base)
                for i in range(9) for x in itertools.product(range(4), range(3)))
    assert worst == pytest.approx(stated)


def test_candidates_are_public_and_twice_where_coarser_codes_exist() -> None:
    blocks = [(0,), (0, 1), (1, 2), (0, 2)]
    got = _candidates(blocks, {0: _MAP4})
    assert got == [(0, None), (1, None), (1, (_MAP4, None)), (2, None), (3, None),
                   (3, (_MAP4, None))]  # 1-way tables and tables without attribute 0: once
    assert _candidates(blocks, {}) == [(b, None) for b in range(4)]


def _numeric(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 8, n)
    y = np.clip(x + rng.integers(-1, 2, n), 0, 7)
    z = (x > 3).astype(int) ^ (rng.random(n) < 0.1)
    w = rng.integers(0, 3, n)
    dom = Domain(("x", "y", "z", "w"), (tuple(range(8)), tuple(range(8)), (0, 1), (0, 1, 2)))
    return np.stack([x, y, z, w], axis=1).astype(np.int64), dom


_COARSE = {0: (0, 0, 1, 1, 2, 2, 3, 3), 1: (0, 0, 0, 0, 1, 1, 1, 1)}


def test_select_measures_on_either_resolution_within_the_budget() -> None:
    codes, dom = _numeric()
    syn = OracleQueryPGM(1.0, 1e-6, k=2, rounds=8, selection="l1", random_state=0).fit(
        codes, dom, coarse=_COARSE)
    coarse = [m for m in syn.measurements_ if m.maps is not None]
    assert 0 < len(coarse) < 8  # the selection chose both resolutions here
    for m in coarse:
        assert m.values.shape == m.shape_on(dom.shape)
    rho = math.fsum(s.rho for s in syn.ledger_)
    assert zcdp_epsilon(rho, 1e-6) <= 1.0 * (1 + 1e-9) and syn.guarantee_.epsilon == 1.0
    # "model" ignores the coarser codes: the release of a fit without them, draw for draw
    a = OracleQueryPGM(1.0, 1e-6, k=2, rounds=8, selection="l1", pair_resolution="model",
                       random_state=0).fit(codes, dom, coarse=_COARSE)
    b = OracleQueryPGM(1.0, 1e-6, k=2, rounds=8, selection="l1", random_state=0).fit(codes, dom)
    np.testing.assert_array_equal(a.model_.dense(), b.model_.dense())
    assert all(m.maps is None for m in a.measurements_)


def test_measuring_every_table_uses_the_coarser_codes() -> None:
    """Without selection each table is measured once, on the coarser codes where it has them
    (before: on the model's, every cell of a skewed column's sparse tail measured with the
    whole table's noise; the skewed-column benchmark's 2-way TV rose by a quarter)."""
    codes, dom = _numeric()
    syn = OracleQueryPGM(1.0, 1e-6, k=2, selection="all", random_state=0).fit(codes, dom,
                                                                             coarse=_COARSE)
    pairs = [m for m in syn.measurements_ if len(m.axes) == 2]
    assert [m.axes for m in pairs] == list(itertools.combinations(range(4), 2))
    for m in pairs:
        want = tuple(_COARSE.get(a) for a in m.axes)
        assert m.maps == (None if all(w is None for w in want) else want)
    rho = math.fsum(s.rho for s in syn.ledger_)
    assert zcdp_epsilon(rho, 1e-6) <= 1.0 * (1 + 1e-9)


def test_a_projected_table_has_the_stated_noise() -> None:
    """KS test of (measured - true coarse counts) / sigma against N(0, 1), false-alarm rate
    1e-3; a mutant projecting noise drawn on the fine cells (variance x2 on these cells)
    fails it."""
    codes, dom = _numeric(n=400)
    z: list[float] = []
    for seed in range(200):
        syn = OracleQueryPGM(1.0, 1e-6, k=2, rounds=4, selection="l1", iterations=1,
                             final_iterations=1, random_state=seed).fit(codes, dom,
                                                                       coarse=_COARSE)
        for m in syn.measurements_:
            if m.maps is not None:
                full = np.zeros(tuple(dom.shape[a] for a in m.axes))
                np.add.at(full, tuple(codes[:, a] for a in m.axes), 1.0)
                z.extend(((m.values - project(full, m.maps)) / syn.sigma_).ravel())
    assert len(z) >= 500
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert stats.kstest(np.asarray(z) * math.sqrt(2.0), "norm").pvalue < 1e-3


@pytest.mark.parametrize("coarse, match", [
    ({0: (0, 0, 1, 1, 2, 2, 3, 3.5)}, "integer codes"),
    ({7: (0, 1)}, "not an attribute position"),
    ({0: (0, 1)}, "must send its 8 codes"),
    ({0: tuple(range(8))}, "onto fewer codes"),
    ({0: (0, 0, 2, 2, 2, 2, 2, 2)}, "each used"),
])
def test_bad_coarse_codes_refused_before_randomness(coarse: dict, match: str) -> None:
    codes, dom = _numeric(n=50)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=match):
        OracleQueryPGM(1.0, 1e-6, k=2, random_state=rng).fit(codes, dom, coarse=coarse)
    assert rng.bit_generator.state == state


def test_table_synthesizer_holds_model_bins_and_counts_on_nested_budget_bins() -> None:
    """A numeric column whose bins are the budget's choice (2-6 here) is held on MODEL_BINS
    bins; the budget's bins are unions of consecutive ones (a nondecreasing map onto fewer
    codes), and the model file says so; the plan is judged on the budget's bins."""
    rng = np.random.default_rng(5)
    n = 2000
    age = rng.integers(18, 90, n)
    income = np.clip(age * 300 + rng.normal(0, 4000, n), 0, 60000).round(-2)
    sex = rng.choice(["f", "m"], n)
    df = pd.DataFrame({"age": age, "income": income, "sex": sex})
    schema = TableSchema.from_dict({
        "format": "oracledp.table_schema", "version": 1,
        "target": {"name": "sex", "labels": ["f", "m"]},
        "columns": [{"name": "age", "type": "numeric", "lower": 0, "upper": 120, "step": 1},
                    {"name": "income", "type": "numeric", "lower": 0, "upper": 60000,
                     "step": 100},
                    ]})
    syn = TableSynthesizer(epsilon=1.0, random_state=0).fit(df, schema)
    assert syn.numeric_["auto_bins"] < syn.numeric_["model_bins"] == 10
    assert max(syn.table_domain_.domain.shape[:2]) <= 10
    coarse = [m for m in syn.synthesizer_.measurements_ if m.maps is not None]
    assert coarse  # some tables were measured on the budget's bins
    # the fine histograms summed onto the model's bins reached the fit (no ledger entry)
    one_way = [m for m in syn.synthesizer_.measurements_ if m.axes == (0,)]
    assert len(one_way) == 2 and one_way[1].values.sum() == pytest.approx(n, rel=1e-9)
    assert sum(s.released == (0,) for s in syn.synthesizer_.ledger_) == 1
    for m in coarse:
        for mp in m.maps:
            if mp is not None:
                assert list(mp) == sorted(mp) and max(mp) + 1 <= syn.numeric_["auto_bins"]
    plain = TableSynthesizer(epsilon=1.0, random_state=0,
                             options={"pair_resolution": "model"}).fit(df, schema)
    assert "model_bins" not in plain.numeric_
    assert all(m.maps is None for m in plain.synthesizer_.measurements_)
    assert max(plain.table_domain_.domain.shape[:2]) == syn.numeric_["auto_bins"]
    # equal-width bins are not cut from the histogram: held and measured as the budget chose
    equal = TableSynthesizer(epsilon=1.0, random_state=0, bin_edges="equal-width").fit(df, schema)
    assert "model_bins" not in equal.numeric_
    assert max(equal.table_domain_.domain.shape[:2]) == syn.numeric_["auto_bins"]


def test_released_tables_are_fitted_at_no_cost_and_checked_first() -> None:
    codes, dom = _numeric()
    x_counts = np.bincount(codes[:, 0], minlength=8).astype(float)
    known = [MarginalMeasurement((0,), x_counts + 0.5, 2.0)]
    a = OracleQueryPGM(1.0, 1e-6, k=2, rounds=6, selection="l1", random_state=0).fit(
        codes, dom, coarse=_COARSE, released=known)
    b = OracleQueryPGM(1.0, 1e-6, k=2, rounds=6, selection="l1", random_state=0).fit(
        codes, dom, coarse=_COARSE)
    assert known[0] in a.measurements_ and known[0] not in b.measurements_
    assert [s.rho for s in a.ledger_] == [s.rho for s in b.ledger_]  # nothing charged
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    wrong_map = MarginalMeasurement((0, 1), np.zeros((2, 3)), 1.0,
                                    ((0, 0, 1, 1, 1, 1, 1, 1), (0, 1, 2, 2, 2, 2, 2)))
    for bad in ([MarginalMeasurement((0,), np.zeros(7), 1.0)], [np.zeros(8)], [wrong_map]):
        with pytest.raises(ValueError, match="released"):
            OracleQueryPGM(1.0, 1e-6, k=2, random_state=rng).fit(codes, dom, released=bad)
    assert rng.bit_generator.state == state


def test_a_range_of_the_tree_histogram_has_at_most_the_stated_noise() -> None:
    """The sigma TableSynthesizer gives the fine histogram summed onto the model's bins,
    sigma_level sqrt(range_nodes), bounds the spread of those sums (600 draws; counts far from
    0, so the nonnegativity step does not act): the empirical sd is below it, with the slack
    of an F-test at false-alarm rate 1e-3."""
    from oracledp.synth._numeric import range_nodes, tree_histogram

    rng = np.random.default_rng(2)
    counts = rng.integers(200, 400, 37).astype(float)
    sigma = 3.0
    cuts = [0, 5, 11, 12, 30, 37]
    sums = np.array([np.add.reduceat(tree_histogram(counts, rng, sigma=sigma), cuts[:-1])
                     for _ in range(600)])
    for i, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        stated = sigma * math.sqrt(range_nodes(lo, hi, 37))
        var = float(np.var(sums[:, i] - counts[lo:hi].sum(), ddof=0))
        assert var <= stated**2 * stats.chi2.ppf(1 - 1e-3, 600) / 600
    # a mutant using one node's sigma for every range is caught on the widest ranges
    widest = float(np.var(sums[:, 3] - counts[12:30].sum()))
    assert widest > sigma**2 * stats.chi2.ppf(1 - 1e-3, 600) / 600


def test_project_index_sends_each_cell_where_project_adds_it() -> None:
    from oracledp.synth._estimation import project_index

    rng = np.random.default_rng(4)
    x = rng.random((4, 5, 3))
    for maps in ((_MAP4, _MAP5, None), (None, _MAP5, None), (_MAP4, None, (0, 1, 1))):
        # the coarse table summed cell by cell (project itself sums by this index)
        size = tuple(s if m is None else max(m) + 1 for s, m in zip(x.shape, maps, strict=True))
        want = np.zeros(size)
        for cell in itertools.product(*(range(s) for s in x.shape)):
            want[tuple(c if m is None else m[c] for c, m in zip(cell, maps, strict=True))] += x[cell]
        got = np.bincount(project_index(x.shape, maps), weights=x.ravel(),
                          minlength=want.size)
        np.testing.assert_allclose(got, want.ravel(), rtol=1e-13)


def test_fit_scores_every_candidate_on_its_own_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through fit's own bookkeeping (the candidates' cell sums): with the model's answers
    set to 0, the differences the selection scores are, candidate by candidate, the true
    table on its cells, projected where it has coarser codes (a wrong index would mix cells
    of different tables or codes)."""
    import oracledp.synth._oracle_query_pgm as oq

    seen: list[np.ndarray] = []
    real = oq.table_scores

    def spy(diff, block_of, cells, step, sigma):  # type: ignore[no-untyped-def]
        seen.append(np.array(diff))
        return real(diff, block_of, cells, step, sigma)

    monkeypatch.setattr(oq, "table_scores", spy)
    monkeypatch.setattr(oq, "_model_answers",
                        lambda model, wl: np.zeros(len(wl)))
    codes, dom = _numeric()
    OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, selection="l1", random_state=0).fit(
        codes, dom, coarse=_COARSE)
    blocks = list(itertools.combinations(range(4), 2))
    want = []
    for b, mp in _candidates(blocks, _COARSE):
        table = np.zeros(tuple(dom.shape[a] for a in blocks[b]))
        np.add.at(table, tuple(codes[:, a] for a in blocks[b]), 1.0)
        want.append(project(table, mp).ravel())
    np.testing.assert_allclose(seen[0], np.concatenate(want), atol=1e-9)
