"""ClassRSPMBase (PRSMA base over query classes); the PRSMA run on Adult is in lab/prsma_adult."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from oracledp._errors import DiagnosticsWarning
from oracledp.learners._prsma import FAIL, prsma
from oracledp.learners._prsma_bases import ClassRSPMBase
from oracledp.oracles._base import OracleStatus
from oracledp.query_classes._base import ClassOracleResult
from oracledp.query_classes._boolean import MonotoneConjunctions
from oracledp.query_classes._decision_lists import MonotoneDecisionLists
from oracledp.query_classes._mip import make_class_oracle


class FakeOracle:
    """Certifiable-looking oracle that answers uncertified from call ``fail_at`` on."""

    name = "fake"
    certifiable = True

    def __init__(self, query_class, fail_at: int = 0) -> None:
        self.query_class = query_class
        self.fail_at = fail_at
        self.calls = 0
        self._exact = make_class_oracle(query_class, "brute")

    def solve(self, points, weights) -> ClassOracleResult:
        self.calls += 1
        res = self._exact.solve(points, weights)
        if self.calls > self.fail_at:
            return ClassOracleResult(res.params, res.objective, -np.inf, False,
                                     OracleStatus.TIME_LIMIT, 0.0, self.name)
        return res


def _data(d: int = 4, n: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, size=(n, d)).astype(float)
    y = (Z[:, 0] * Z[:, 1]).astype(int)
    return Z, y


@pytest.mark.parametrize("fail_at", [0, 3])
def test_base_fails_on_uncertified_answer(fail_at: int) -> None:
    cls = MonotoneConjunctions(4)
    orc = FakeOracle(cls.zero_one_loss(), fail_at=fail_at)
    base = ClassRSPMBase(cls, oracle=orc)
    out = base(_data(), 0.5, np.random.default_rng(0), 10)
    assert out is FAIL
    assert orc.calls == fail_at + 1  # stops at the first uncertified answer


def test_base_passes_with_certified_fake() -> None:
    cls = MonotoneConjunctions(4)
    base = ClassRSPMBase(cls, oracle=FakeOracle(cls.zero_one_loss(), fail_at=100))
    out = base(_data(), 0.5, np.random.default_rng(0), 10)
    assert out is not FAIL and out.shape == (10, 4)


@pytest.mark.parametrize("cls", [MonotoneConjunctions(4), MonotoneDecisionLists(3)])
def test_brute_equals_perturbed_argmin_with_fixed_noise(cls) -> None:
    Z, y = _data(d=cls.d)
    loss = cls.zero_one_loss()
    eps, size = 0.7, 25
    got = ClassRSPMBase(cls, oracle="brute")((Z, y), eps, np.random.default_rng(5), size)
    # same noise, drawn as documented, then one exact oracle call per run
    U = loss.separator()
    m = U.shape[0]
    etas = np.random.default_rng(5).laplace(0.0, 2 * m / eps, size=(size, m))
    orc = make_class_oracle(loss, "brute")
    pts = np.vstack([loss.encode(Z, y), U])
    want = np.array([orc.solve(pts, np.concatenate([np.ones(len(y)), e])).params
                     for e in etas])
    np.testing.assert_array_equal(got, want)
    # the oracle-instance path (loop) gives the same outputs from the same seed
    loop = ClassRSPMBase(cls, oracle=orc)((Z, y), eps, np.random.default_rng(5), size)
    np.testing.assert_array_equal(loop, got)
    # loss points array input == (Z, y) input
    arr = ClassRSPMBase(cls, oracle="brute")(loss.encode(Z, y), eps,
                                             np.random.default_rng(5), size)
    np.testing.assert_array_equal(arr, got)


def test_highs_path_matches_brute_and_pickles() -> None:
    cls = MonotoneConjunctions(3)
    Z, y = _data(d=3, n=20)
    hb = ClassRSPMBase(cls, oracle="highs")
    a = hb((Z, y), 1.0, np.random.default_rng(3), 3)
    b = ClassRSPMBase(cls, oracle="brute")((Z, y), 1.0, np.random.default_rng(3), 3)
    np.testing.assert_array_equal(a, b)
    hb2 = pickle.loads(pickle.dumps(hb))
    assert hb2._oracle is None  # HiGHS oracle rebuilt lazily in a worker
    np.testing.assert_array_equal(hb2((Z, y), 1.0, np.random.default_rng(3), 3), a)
    bb = pickle.loads(pickle.dumps(ClassRSPMBase(cls, oracle="brute")))
    np.testing.assert_array_equal(bb((Z, y), 1.0, np.random.default_rng(3), 3), a)


def test_base_validation() -> None:
    cls = MonotoneConjunctions(3)
    with pytest.raises(ValueError, match="oracle must be"):
        ClassRSPMBase(cls, oracle="local-search")
    with pytest.raises(ValueError, match="built for"):
        ClassRSPMBase(cls, oracle=make_class_oracle(MonotoneConjunctions(3), "brute"))
    with pytest.raises(TypeError):
        ClassRSPMBase("conjunctions")  # type: ignore[arg-type]
    base = ClassRSPMBase(cls, oracle="brute")
    with pytest.raises(ValueError):
        base(np.zeros((5, 3)), 1.0, np.random.default_rng(0), 2)  # no label column


def test_prsma_with_failing_oracle_returns_fail() -> None:
    cls = MonotoneConjunctions(3)
    loss = cls.zero_one_loss()
    Z, y = _data(d=3, n=400)
    base = ClassRSPMBase(cls, oracle=FakeOracle(loss, fail_at=0))
    with pytest.warns(DiagnosticsWarning):
        res = prsma(loss.encode(Z, y), base, 1.0, 0.1, random_state=0, return_diagnostics=True)
    assert res.failed and res.output is FAIL and res.diagnostics["n_passing"] == 0
