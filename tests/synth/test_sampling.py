"""The samplers of a released model (oracledp.synth._sampling).

``"rounded"`` (the default): every record alone has the model's law (an exact-law test over
many draws), and in every group of records that share a clique's separator value the new
attributes' counts are within one of their expected counts (a property of each draw).
``"iid"``: independent records (a test of the joint law of two records).  A planted mutant of
the rounded sampler (values dealt in record order, no random order inside a group) must be
caught.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from oracledp.synth import _sampling
from oracledp.synth._graphical import GraphicalModel
from oracledp.synth._junction_tree import JunctionTree
from oracledp.synth._sampling import SAMPLERS, forward_sample

#: each exact-law test's false-alarm rate (the p-value threshold of one chi-square test)
ALPHA = 1e-4


def _model(seed: int = 0) -> GraphicalModel:
    """A 4-attribute model on a chain of cliques (0,1) - (1,2) - (2,3), random potentials."""
    rng = np.random.default_rng(seed)
    shape = (3, 2, 4, 3)
    cliques = [(0, 1), (1, 2), (2, 3)]
    pots = {c: rng.normal(scale=1.5, size=tuple(shape[a] for a in c)) for c in cliques}
    return GraphicalModel(shape, pots, JunctionTree(shape, cliques))


def _joint(model: GraphicalModel) -> np.ndarray:
    return model.marginal(list(range(len(model.shape))))


def test_rounded_counts_within_one_of_expected_in_every_group() -> None:
    model = _model(1)
    for seed, n in itertools.product(range(5), (1, 7, 100, 1000)):
        x = model.sample(n, random_state=seed)
        for i in model.tree.order:
            c, s = model.tree.cliques[i], model.tree.sep[i]
            new = [a for a in c if a not in s]
            mu = model.marginal(list(c))  # axes in clique order
            for sv in itertools.product(*[range(model.shape[a]) for a in s]):
                in_group = np.all(x[:, list(s)] == np.array(sv, dtype=np.int64), axis=1) \
                    if s else np.ones(n, dtype=bool)
                m = int(in_group.sum())
                if m == 0:
                    continue
                idx = tuple(sv[s.index(a)] if a in s else slice(None) for a in c)
                cond = mu[idx] / mu[idx].sum()
                for nv in itertools.product(*[range(model.shape[a]) for a in new]):
                    got = int(np.all(x[in_group][:, new] == np.array(nv), axis=1).sum())
                    assert abs(got - m * cond[nv]) < 1.0 + 1e-9, (seed, n, c, sv, nv)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_every_record_has_the_model_law(sampler: str) -> None:
    """Record 0 and record 4 of a 5-record draw, over 3,000 draws, against the model's joint
    (chi-square, false alarm ALPHA each)."""
    model = _model(2)
    p = _joint(model).ravel()
    reps = 3000
    for pos in (0, 4):
        cells = np.empty(reps, dtype=np.int64)
        for r in range(reps):
            x = model.sample(5, random_state=10_000 + r, sampler=sampler)
            cells[r] = np.ravel_multi_index(tuple(x[pos]), model.shape)
        obs = np.bincount(cells, minlength=p.size)
        keep = p * reps >= 5
        exp = np.append(p[keep] * reps, p[~keep].sum() * reps)
        got = np.append(obs[keep], obs[~keep].sum())
        assert stats.chisquare(got, exp).pvalue > ALPHA, (sampler, pos)


def test_iid_records_are_independent_and_rounded_are_not() -> None:
    """The joint law of (record 0, record 1) of a 2-record draw at the root clique's first
    attribute: the product of the marginals under "iid"; under "rounded" two records never
    share a value of probability below 1/2 (its count is at most ceil(2 p) = 1)."""
    model = _model(3)
    a0 = model.tree.cliques[model.tree.order[0]][0]
    k = model.shape[a0]
    p0 = model.marginal([a0])
    reps = 4000
    pairs = {s: np.zeros((k, k)) for s in SAMPLERS}
    for s in SAMPLERS:
        for r in range(reps):
            x = model.sample(2, random_state=50_000 + r, sampler=s)
            pairs[s][x[0, a0], x[1, a0]] += 1
    exp = np.outer(p0, p0).ravel() * reps
    assert stats.chisquare(pairs["iid"].ravel(), exp).pvalue > ALPHA
    assert stats.chisquare(pairs["rounded"].ravel(), exp).pvalue < ALPHA
    assert (p0 < 0.5).any()
    for v in np.flatnonzero(p0 < 0.5):
        assert pairs["rounded"][v, v] == 0


def test_planted_mutants_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rounded sampler that deals values in record order (no random order inside a group)
    breaks record 0's law; the law test above catches it."""
    model = _model(2)
    p = _joint(model).ravel()
    real_lexsort = np.lexsort

    def no_shuffle(keys: tuple) -> np.ndarray:  # ignore the random key: record order
        return real_lexsort((np.arange(len(keys[1])), keys[1]))

    monkeypatch.setattr(_sampling.np, "lexsort", no_shuffle)
    reps = 3000
    cells = np.empty(reps, dtype=np.int64)
    for r in range(reps):
        x = forward_sample(model, 5, np.random.default_rng(10_000 + r))
        cells[r] = np.ravel_multi_index(tuple(x[0]), model.shape)
    obs = np.bincount(cells, minlength=p.size)
    keep = p * reps >= 5
    exp = np.append(p[keep] * reps, p[~keep].sum() * reps)
    got = np.append(obs[keep], obs[~keep].sum())
    assert stats.chisquare(got, exp).pvalue < ALPHA


def test_iid_is_the_former_inverse_cdf_draw() -> None:
    """The iid sampler draws each record's cell of a clique at one uniform per record, in
    the tree's order, block by block: the same records as drawing them from the dense joint's
    conditionals with the same uniforms (here a one-clique model: the uniforms are the
    generator's first n numbers)."""
    rng = np.random.default_rng(0)
    shape = (3, 4)
    pot = {(0, 1): rng.normal(size=shape)}
    model = GraphicalModel(shape, pot, JunctionTree(shape, [(0, 1)]))
    x = model.sample(1000, random_state=7, sampler="iid")
    u = np.random.default_rng(7).random(1000)
    cum = np.cumsum(model.marginal([0, 1]).ravel())
    want = np.clip(np.searchsorted(cum, u * cum[-1], side="right"), 0, 11)
    assert np.array_equal(np.ravel_multi_index(tuple(x.T), shape), want)


def test_rounded_blocks_and_sizes() -> None:
    model = _model(4)
    assert forward_sample(model, 0, np.random.default_rng(0)).shape == (0, 4)
    big = _sampling.SAMPLE_CHUNK + 17
    x = model.sample(big, random_state=1)
    assert x.shape == (big, 4)
    root = model.marginal([0, 1]).ravel()  # the first clique, rounded block by block
    got = np.bincount(np.ravel_multi_index((x[:, 0], x[:, 1]), (3, 2)), minlength=6)
    assert np.all(np.abs(got - big * root) < 2.0 + 1e-9)


def test_unknown_sampler_is_refused_before_any_draw() -> None:
    model = _model(5)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="sampler must be one of 'rounded', 'iid'"):
        model.sample(3, random_state=rng, sampler="systematic")
    assert rng.bit_generator.state == state
