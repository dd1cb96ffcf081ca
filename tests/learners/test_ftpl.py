"""Follow the Private Leader (FOCS 2019 Section V): FTL limit, exact regret, privacy goldens.

The regret experiment and its command are in lab/ (lab/tests/test_reproduce_ftpl.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracledp._errors import DiagnosticsWarning
from oracledp.learners._ftpl import follow_the_leader, ftpl, ftpl_privacy, ftpl_regret_bound
from oracledp.privacy._guarantees import GuaranteeKind
from oracledp.query_classes import LocalSearchClassOracle, MonotoneConjunctions, make_class_oracle

# (z1, z2, y); losses h(z) xor y of the 4 conjunctions [], [1], [2], [1,2] (enumeration order):
#   x1 = (1,1,1): 0 0 0 0   x2 = (0,1,0): 1 0 1 0   x3 = (1,0,0): 1 1 0 0   x4 = x1
HAND = np.array([[1, 1, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1]], dtype=float)


def _stream(d: int, T: int, seed: int) -> np.ndarray:
    """A noisy-conjunction stream: x_j ~ Bernoulli(0.7), y = AND of the first ceil(d/2)
    attributes, each label flipped with probability 0.1 (as the lab's FTPL experiment)."""
    cls = MonotoneConjunctions(d).zero_one_loss()
    rng = np.random.default_rng(seed)
    X = (rng.random((T, d)) < 0.7).astype(np.int64)
    y = X[:, :math.ceil(d / 2)].all(axis=1).astype(np.int64) ^ (rng.random(T) < 0.1)
    return cls.encode(X, y.astype(np.int64))


def test_follow_the_leader_regret_on_hand_built_stream() -> None:
    cls = MonotoneConjunctions(2).zero_one_loss()
    res = follow_the_leader(cls, HAND)
    # FTL (ties -> first enumerated row): [] , [] (tie at 0), [1] (tie [1]/[1,2]), [1,2]
    np.testing.assert_array_equal(res.plays, [[0, 0], [0, 0], [1, 0], [1, 1]])
    assert res.privacy is None and res.bound is None and res.epsilon is None
    res = res.diagnostics  # FTL is non-private: its losses and regret always come with it
    np.testing.assert_array_equal(res.losses, [0, 1, 1, 0])
    np.testing.assert_array_equal(res.cumulative_losses, [0, 1, 2, 2])
    np.testing.assert_array_equal(res.best_params, [1, 1])
    assert res.best_cumulative_loss == 0.0
    assert res.regret_total == 2.0 and res.regret == 0.5
    assert res.regret_curve is not None
    np.testing.assert_allclose(res.regret_curve, [0.0, 0.5, 2 / 3, 0.5])


def test_ftpl_regret_is_computed_exactly_from_its_plays() -> None:
    cls = MonotoneConjunctions(2).zero_one_loss()
    assert ftpl(cls, HAND, 0.5, random_state=3).diagnostics is None  # regret only on request
    with pytest.warns(DiagnosticsWarning):
        res = ftpl(cls, HAND, 0.5, random_state=3, return_diagnostics=True)
    assert res.privacy is not None and res.privacy.reported.diagnostics_released
    table = {(0, 0): [0, 1, 1, 0], (1, 0): [0, 0, 1, 0], (0, 1): [0, 1, 0, 0],
             (1, 1): [0, 0, 0, 0]}
    want = [table[tuple(int(v) for v in p)][t] for t, p in enumerate(res.plays)]
    diag = res.diagnostics
    np.testing.assert_array_equal(diag.losses, want)
    assert diag.best_cumulative_loss == 0.0
    assert diag.regret_total == sum(want) and diag.regret == sum(want) / 4
    assert diag.regret_curve is not None
    np.testing.assert_allclose(diag.regret_curve, np.cumsum(want) / np.arange(1, 5))
    assert res.bound == pytest.approx(math.expm1(0.5) + 2 * 2**2 / (0.5 * 4))
    assert res.m == 2 and res.T == 4


@pytest.mark.parametrize("d", [3, 4])
def test_huge_epsilon_plays_follow_the_leader(d: int) -> None:
    """eps = 1e7: noise l1 << 1, so every play is an exact ERM of its history (ties by noise)."""
    cls = MonotoneConjunctions(d).zero_one_loss()
    Z = _stream(d, 60, seed=d)
    with pytest.warns(DiagnosticsWarning):
        res = ftpl(cls, Z, 1e7, random_state=0, return_diagnostics=True)
    ftl = follow_the_leader(cls, Z)
    P = cls.enumerate()
    L = cls.evaluate(P, Z).astype(float)
    for t in range(1, 60):
        hist = L[:, :t].sum(axis=1)
        own = cls.evaluate(res.plays[t], Z[:t]).sum()
        assert own == hist.min()
        assert cls.evaluate(ftl.plays[t], Z[:t]).sum() == hist.min()
        if (hist == hist.min()).sum() == 1:  # unique leader: identical plays
            np.testing.assert_array_equal(res.plays[t], ftl.plays[t])
    assert res.diagnostics.best_cumulative_loss == L.sum(axis=1).min() \
        == ftl.diagnostics.best_cumulative_loss


def test_privacy_accounting_goldens() -> None:
    p = ftpl_privacy(0.1, 101, 1e-6)
    assert p.rounds_using_data == 100
    assert p.per_round.epsilon == 0.1 and p.per_round.is_pure
    assert p.reported.epsilon == pytest.approx(10.0) and p.reported.delta == 0.0
    assert p.reported.kind is GuaranteeKind.PURE and p.reported.requires_exact_oracle
    assert "Theorem 2" in p.reported.source and "Theorem 6" in p.reported.source
    assert p.advanced is not None
    assert p.advanced.epsilon == pytest.approx(6.308230950513408, rel=1e-12)
    assert p.advanced.delta == 1e-6 and "advanced composition" in p.advanced.source
    q = ftpl_privacy(1.0, 10, 1e-5)
    assert q.reported.epsilon == pytest.approx(9.0)
    assert q.advanced is not None and q.advanced.epsilon == pytest.approx(29.860114192695647)
    assert ftpl_privacy(0.5, 2, None).advanced is None
    assert ftpl_privacy(0.5, 2, None).reported.epsilon == 0.5
    assert "no privacy statement" in p.paper_statement
    assert ftpl_regret_bound(1.0, 100, 4) == pytest.approx(math.e - 1 + 0.32)
    assert ftpl_regret_bound(0.1, 1000, 6) == pytest.approx(math.expm1(0.1) + 72 / 100)
    res = ftpl(MonotoneConjunctions(2).zero_one_loss(), HAND, 0.2, random_state=0)
    assert res.privacy is not None and res.privacy.reported.epsilon == pytest.approx(0.6)


def test_reproducible_by_seed() -> None:
    cls = MonotoneConjunctions(4).zero_one_loss()
    Z = _stream(4, 80, seed=9)
    a, b = ftpl(cls, Z, 0.3, random_state=5), ftpl(cls, Z, 0.3, random_state=5)
    np.testing.assert_array_equal(a.plays, b.plays)
    c = ftpl(cls, Z, 0.3, random_state=np.random.default_rng(5))
    np.testing.assert_array_equal(a.plays, c.plays)
    assert any(not np.array_equal(a.plays, ftpl(cls, Z, 0.3, random_state=s).plays) for s in (6, 7))


def test_validation_before_noise() -> None:
    cls = MonotoneConjunctions(2).zero_one_loss()
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    bad = [
        ({"cls": MonotoneConjunctions(2), "stream": HAND}, ValueError),  # unlabelled class
        ({"stream": HAND[:1]}, ValueError),  # T < 2
        ({"stream": np.array([[1, 1, 2], [0, 1, 0]], float)}, ValueError),  # label 2
        ({"epsilon": 0.0}, ValueError),
        ({"epsilon": float("nan")}, ValueError),
        ({"epsilon": True}, TypeError),
        ({"cls": "conj"}, TypeError),
        ({"oracle": "nope"}, ValueError),
        ({"oracle": LocalSearchClassOracle(MonotoneConjunctions(2))}, ValueError),
        ({"oracle": make_class_oracle(MonotoneConjunctions(3).zero_one_loss(), "brute")},
         ValueError),
        ({"delta_prime": 1.0}, ValueError),
    ]
    for kw, err in bad:
        args = {"cls": cls, "stream": HAND, "epsilon": 0.5, **kw}
        with pytest.raises(err):
            ftpl(args.pop("cls"), args.pop("stream"), args.pop("epsilon"), random_state=gen, **args)
    assert gen.bit_generator.state == state
    with pytest.raises(ValueError):
        ftpl_privacy(0.1, 1)
    with pytest.raises(ValueError):
        ftpl_regret_bound(0.1, 0, 3)


def test_huge_epsilon_accounting_does_not_overflow() -> None:
    p = ftpl_privacy(1e7, 5)
    assert p.reported.epsilon == pytest.approx(4e7) and p.advanced is None
    assert ftpl_regret_bound(1e7, 5, 3) == math.inf


