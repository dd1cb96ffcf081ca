"""MST and AIM baselines (oracledp.synth._peers) on a tiny domain.

The fits are shared (module fixtures): mbi compiles one JAX program per model
structure, which dominates the run time on tiny data.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys

import numpy as np
import pytest

# (find_spec, not importorskip: importing mbi imports JAX, about 1.5 s per test process,
# and the fits here run on the numpy backend)
if importlib.util.find_spec("mbi") is None:
    pytest.skip("MST and AIM need the peers extra (mbi)", allow_module_level=True)

from oracledp._errors import BoundsViolation, DiagnosticsWarning
from oracledp.privacy import zcdp_rho
from oracledp.privacy._guarantees import GuaranteeKind
from oracledp.synth import Domain, answer, answer_distribution, kway_marginal_workload
from oracledp.synth._peers import aim, mst, require_mbi

DELTA = 1e-6
BIG_EPS = 1e5


def _data(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, Domain]:
    """4 attributes with a star dependence on attribute 0, plus sampling noise."""
    rng = np.random.default_rng(seed)
    dom = Domain.from_levels({"a": range(3), "b": range(2), "c": range(4), "d": range(2)})
    a = rng.integers(0, 3, n)
    b = (a > 0).astype(np.int64) ^ (rng.random(n) < 0.1)
    c = (a + rng.integers(0, 2, n)) % 4
    d = np.where(rng.random(n) < 0.8, a % 2, 1 - a % 2)
    return np.stack([a, b, c, d], axis=1).astype(np.int64), dom


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, Domain]:
    return _data()


@pytest.fixture(scope="module")
def mst_fit(data):
    codes, dom = data
    return mst(codes, dom, BIG_EPS, DELTA, 7)


@pytest.fixture(scope="module")
def aim_fit(data):
    codes, dom = data
    W = kway_marginal_workload(dom, 2)
    return aim(codes, dom, BIG_EPS, DELTA, 7, W, rounds=6)


def test_zcdp_conversion_is_bun_steinke_and_tight() -> None:
    for eps in (0.1, 1.0, 10.0):
        rho = zcdp_rho(eps, DELTA)
        back = rho + 2 * math.sqrt(rho * math.log(1 / DELTA))
        assert back <= eps
        assert back == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("which", ["mst", "aim"])
def test_guarantee_fields_and_budget(which, mst_fit, aim_fit) -> None:
    res = mst_fit if which == "mst" else aim_fit
    g = res.guarantee
    assert g.kind is GuaranteeKind.APPROXIMATE
    assert (g.epsilon, g.delta) == (BIG_EPS, DELTA)
    assert g.neighbouring == "replace-one"
    assert g.holds and not g.diagnostics_released and res.diagnostics is None
    assert "Delta_2 = 1.41421" in g.notes and "sensitivity 2" in g.notes
    assert "Prop 1.3" in g.source
    # the ledger spends the whole zCDP budget, never more
    rho = zcdp_rho(BIG_EPS, DELTA)
    assert res.rho <= rho * (1 + 1e-9)
    assert res.rho == pytest.approx(rho, rel=1e-6)


def test_mst_and_aim_compose_a_core_ledger(data, monkeypatch) -> None:
    """The guarantee is ledger_guarantee of Spend entries whose running sum is the released rho."""
    from oracledp.synth import _peers_accounting

    seen: list[list] = []
    real = _peers_accounting.ledger_guarantee

    def spy(ledger, *args, **kwargs):
        seen.append(list(ledger))
        return real(ledger, *args, **kwargs)

    monkeypatch.setattr(_peers_accounting, "ledger_guarantee", spy)
    codes, dom = data
    fits = [mst(codes, dom, 1.0, DELTA, 3, iters=50),
            aim(codes, dom, 1.0, DELTA, 3, kway_marginal_workload(dom, 2), rounds=6,
                round_iters=20, final_iters=40)]
    for res, ledger in zip(fits, seen, strict=True):
        spent = ledger[0].rho
        for step in ledger[1:]:
            spent += step.rho
        assert spent == res.rho  # the released rho, to the last bit
        assert all(step.zcdp is not None and step.delta == 0.0 for step in ledger)
        assert [step.released for step in ledger if step.released] == list(res.selected)
        assert [step.round for step in ledger if step.released] == list(
            range(1, len(res.selected) + 1))


def test_replace_one_noise_is_sqrt2_times_add_remove(data) -> None:
    codes, dom = data
    # the noise scales and the public n do not depend on the estimation's iterations
    r1 = mst(codes, dom, 1.0, DELTA, 3, iters=300)
    r2 = mst(codes, dom, 1.0, DELTA, 3, neighbouring="add-remove", iters=300)
    assert r2.guarantee.neighbouring == "add-remove"
    s1 = [m.sigma for m in r1.measurements]
    s2 = [m.sigma for m in r2.measurements]
    assert np.allclose(np.array(s1) / np.array(s2), math.sqrt(2))
    # MST: 1-way sigma = Delta_2 sqrt(3 d / (2 rho)) (rho/3 on d measurements)
    rho = zcdp_rho(1.0, DELTA)
    assert s2[0] == pytest.approx(math.sqrt(3 * 4 / (2 * rho)))
    assert r1.n == r1.total == codes.shape[0]  # n public under replace-one
    assert r2.n is None  # add-remove: n is private, the model's total is estimated
    assert r2.total == pytest.approx(codes.shape[0], rel=0.05)
    assert r2.sample(random_state=0).shape[0] == round(r2.total)
    assert r1.rounds == len(r1.selected) == 3


def test_mst_selects_a_spanning_tree(mst_fit, data) -> None:
    _, dom = data
    d = len(dom)
    edges = mst_fit.selected
    assert len(edges) == d - 1
    assert all(len(e) == 2 and e[0] < e[1] for e in edges)
    parent = list(range(d))

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for u, v in edges:  # acyclic: each edge joins two components
        ru, rv = root(u), root(v)
        assert ru != rv
        parent[ru] = rv
    assert len({root(x) for x in range(d)}) == 1
    # with a huge epsilon the tree is the true star around attribute 0
    assert set(edges) == {(0, 1), (0, 2), (0, 3)}
    cliques = [m.axes for m in mst_fit.measurements]
    assert cliques == [(0,), (1,), (2,), (3,), *edges]


def test_huge_epsilon_recovers_measured_marginals(mst_fit, aim_fit, data) -> None:
    codes, dom = data
    W2 = kway_marginal_workload(dom, 2)
    true2 = answer(W2, codes)
    # MST: the measured tree marginals are fitted exactly (up to tiny noise)
    for e in mst_fit.selected:
        b = W2.blocks.index(e)
        got = mst_fit.answer(W2)[W2.offsets[b] : W2.offsets[b + 1]]
        assert np.abs(got - true2[W2.offsets[b] : W2.offsets[b + 1]]).max() < 2e-3
    # AIM: every selected (measured) clique is fitted closely
    assert aim_fit.selected
    for r in aim_fit.selected:
        got = aim_fit.marginal(r).ravel()
        want = answer(kway_marginal_workload(dom, len(r)), codes)
        Wr = kway_marginal_workload(dom, len(r))
        b = Wr.blocks.index(r)
        assert np.abs(got - want[Wr.offsets[b] : Wr.offsets[b + 1]]).max() < 2e-3
    # and the 1-way marginals of both
    W1 = kway_marginal_workload(dom, 1)
    for res in (mst_fit, aim_fit):
        assert np.abs(res.answer(W1) - answer(W1, codes)).max() < 2e-3


def test_answer_is_the_models_exact_marginals(aim_fit, data) -> None:
    _, dom = data
    joint = aim_fit.marginal(range(len(dom)))
    assert joint.shape == dom.shape and joint.sum() == pytest.approx(1.0)
    for k in (1, 2, 3):
        W = kway_marginal_workload(dom, k)
        assert np.allclose(aim_fit.answer(W), answer_distribution(W, joint), atol=1e-12)
    # marginal axes follow the requested order
    assert np.allclose(aim_fit.marginal([2, 0]), aim_fit.marginal([0, 2]).T)


def test_sampler_draws_from_the_model(mst_fit, data) -> None:
    _, dom = data
    m = 200_000
    s = mst_fit.sample(m, random_state=11)
    assert s.shape == (m, len(dom)) and s.dtype == np.int64
    dom.check_codes(s)
    W = kway_marginal_workload(dom, 3)
    p = mst_fit.answer(W)
    emp = answer(W, s)
    # every cell within 5 standard errors of the model probability
    assert np.all(np.abs(emp - p) <= 5 * np.sqrt(p * (1 - p) / m) + 1e-4)
    assert np.array_equal(s[:100], mst_fit.sample(m, random_state=11)[:100])
    assert mst_fit.sample(random_state=0).shape[0] == mst_fit.n


def test_same_seed_same_release(data) -> None:
    """Determinism does not depend on the iteration counts: short estimations keep it fast."""
    codes, dom = data
    W = kway_marginal_workload(dom, 2)
    a1 = mst(codes, dom, 1.0, DELTA, 5, iters=100)
    a2 = mst(codes, dom, 1.0, DELTA, 5, iters=100)
    assert a1.selected == a2.selected
    for x, y in zip(a1.measurements, a2.measurements, strict=True):
        assert np.array_equal(x.values, y.values)
    assert np.array_equal(a1.answer(W), a2.answer(W))
    b1, b2 = (aim(codes, dom, 1.0, DELTA, 7, W, rounds=6, round_iters=20, final_iters=40)
              for _ in range(2))
    assert b1.selected == b2.selected and len(b1.selected) >= 2
    for x, y in zip(b1.measurements, b2.measurements, strict=True):
        assert np.array_equal(x.values, y.values)
    assert np.array_equal(b1.answer(W), b2.answer(W))
    c = mst(codes, dom, 1.0, DELTA, 6, iters=100)
    assert not np.array_equal(c.measurements[0].values, a1.measurements[0].values)


def test_silent_and_diagnostics_opt_in(data, capfd) -> None:
    codes, dom = data
    with pytest.warns(DiagnosticsWarning):
        r = mst(codes, dom, 1.0, DELTA, 1, return_diagnostics=True, iters=100)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert r.guarantee.diagnostics_released
    assert r.diagnostics["seconds"] > 0


def test_bad_input_refused(data) -> None:
    codes, dom = data
    with pytest.raises(ValueError, match="epsilon"):
        mst(codes, dom, 0.0, DELTA, 0)
    with pytest.raises(ValueError, match="delta"):
        aim(codes, dom, 1.0, 0.0, 0)
    with pytest.raises(ValueError, match="delta"):
        mst(codes, dom, 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="shape"):
        mst(codes[:, :3], dom, 1.0, DELTA, 0)
    bad = codes.copy()
    bad[0, 2] = 4
    with pytest.raises(BoundsViolation):
        aim(bad, dom, 1.0, DELTA, 0)
    with pytest.raises(TypeError, match="integer"):
        mst(codes.astype(float), dom, 1.0, DELTA, 0)
    with pytest.raises(ValueError, match="neighbouring"):
        mst(codes, dom, 1.0, DELTA, 0, neighbouring="add-one")
    with pytest.raises(ValueError, match="rounds"):
        aim(codes, dom, 1.0, DELTA, 0, rounds=2)
    with pytest.raises(ValueError, match="max_model_size"):
        aim(codes, dom, 1.0, DELTA, 0, max_model_size=-1)
    other = Domain.from_levels({"x": range(2), "y": range(2)})
    with pytest.raises(ValueError, match="different domain"):
        aim(codes, dom, 1.0, DELTA, 0, kway_marginal_workload(other, 2))
    with pytest.raises(ValueError, match="at least 2"):
        mst(codes[:, :1], Domain.from_levels({"a": range(3)}), 1.0, DELTA, 0)


def test_missing_extra_gives_install_hint(data, monkeypatch) -> None:
    codes, dom = data
    require_mbi()  # installed here: no error
    monkeypatch.setitem(sys.modules, "mbi", None)
    with pytest.raises(ImportError, match=r"oracledp\[peers\]"):
        require_mbi()
    with pytest.raises(ImportError, match=r"oracledp\[peers\]"):
        mst(codes, dom, 1.0, DELTA, 0, backend="mbi")


def test_result_answers_only_its_domain(mst_fit) -> None:
    other = Domain.from_levels({"x": range(2), "y": range(2)})
    with pytest.raises(ValueError, match="different domain"):
        mst_fit.answer(kway_marginal_workload(other, 1))
    with pytest.raises(ValueError, match="attribute positions"):
        mst_fit.marginal([0, 0])
    with pytest.raises(ValueError, match="integer >= 1"):
        mst_fit.sample(0)
    assert list(itertools.chain(*mst_fit.selected))  # released tree is non-empty


def test_aim_respects_the_model_size_cap(data) -> None:
    codes, dom = data
    # 1e-4 MB is about 13 float64 cells, and the 1-way model has 11: only candidates
    # that do not enlarge the model fit (1-way marginals, and the pair b x d whose
    # 4 cells replace the 2 + 2 of b and d).
    # (the cap filters the candidates; the estimation's iterations do not matter to it)
    res = aim(codes, dom, 1.0, DELTA, 2, kway_marginal_workload(dom, 2), rounds=6,
              max_model_size=1e-4, round_iters=50, final_iters=50)
    assert res.selected
    for r in res.selected:
        assert math.prod(dom.shape[a] for a in r) <= sum(dom.shape[a] for a in r)
    assert res.rho == pytest.approx(zcdp_rho(1.0, DELTA), rel=1e-6)


