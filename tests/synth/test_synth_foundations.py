"""Foundations of the contingency-table synthesizers: domain, workload, baselines."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from oracledp._errors import BoundsViolation
from oracledp.privacy._guarantees import GuaranteeKind
from oracledp.synth import (
    Domain,
    adult_categorical_domain,
    answer,
    answer_distribution,
    errors,
    independent_marginals,
    kway_marginal_workload,
    load_adult_categorical,
    mwem,
)

ALPHA = 1e-6


def tiny_domain() -> Domain:
    return Domain.from_levels(
        {"a": ("x", "y"), "b": (0, 1, 2), "c": ("u", "v"), "d": (True, False)}
    )


def tiny_codes(n: int, seed: int = 0) -> np.ndarray:
    """Correlated records on the tiny domain (so marginals are not a product)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.7, a, 1 - a)
    d = (rng.random(n) < 0.3).astype(np.int64)
    return np.stack([a, b, c, d], axis=1)


@pytest.fixture(scope="module")
def adult():
    return load_adult_categorical()


@pytest.fixture(scope="module")
def adult_w3(adult):
    return kway_marginal_workload(adult.domain, 3)


@pytest.fixture(scope="module")
def adult_true(adult, adult_w3):
    return answer(adult_w3, adult.codes)


# ---------------------------------------------------------------- Domain


def test_domain_construction_refusals():
    with pytest.raises(ValueError, match="at least one"):
        Domain((), ())
    with pytest.raises(ValueError, match="twice"):
        Domain(("a", "a"), (("x",), ("y",)))
    with pytest.raises(ValueError, match="level twice"):
        Domain.from_levels({"a": ("x", "x")})
    with pytest.raises(ValueError, match="no levels"):
        Domain.from_levels({"a": ()})
    with pytest.raises(TypeError, match="continuous"):
        Domain.from_levels({"a": (0.5, 1.5)})
    with pytest.raises(TypeError, match="single string"):
        Domain.from_levels({"a": "xy"})
    with pytest.raises(ValueError, match="level lists"):
        Domain(("a", "b"), (("x",),))


def test_domain_is_frozen_and_shaped():
    dom = tiny_domain()
    assert dom.shape == (2, 3, 2, 2) and dom.size == 24 and len(dom) == 4
    assert dom.index("c") == 2
    with pytest.raises(KeyError):
        dom.index("zz")
    with pytest.raises(AttributeError):
        dom.attributes = ("q",)  # type: ignore[misc]


def test_encode_decode_roundtrip_any_column_order():
    dom = tiny_domain()
    codes = tiny_codes(50)
    df = dom.decode(codes)
    assert list(df.columns) == list(dom.attributes)
    np.testing.assert_array_equal(dom.encode(df), codes)
    np.testing.assert_array_equal(dom.encode(df[["d", "c", "b", "a"]]), codes)


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"a": ["x", "y"], "b": [0, 2], "c": ["u", "v"], "d": [True, False]})


def test_encode_refusals():
    dom = tiny_domain()
    with pytest.raises(TypeError, match="DataFrame"):
        dom.encode(np.zeros((2, 4)))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no rows"):
        dom.encode(_frame().iloc[:0])
    with pytest.raises(ValueError, match="unknown columns"):
        dom.encode(_frame().assign(extra=1))
    with pytest.raises(ValueError, match="missing"):
        dom.encode(_frame().drop(columns="c"))
    with pytest.raises(TypeError, match="continuous"):
        dom.encode(_frame().assign(b=[0.0, 2.0]))
    with pytest.raises(BoundsViolation, match=r"'a'") as exc:
        dom.encode(_frame().assign(a=["x", "z"]))
    assert "'z'" not in str(exc.value) and "row" not in str(exc.value)  # the rule, no value
    with pytest.raises(BoundsViolation, match="'b'"):
        dom.encode(_frame().assign(b=[0, 7]))
    with pytest.raises(BoundsViolation, match="'c'"):
        dom.encode(_frame().assign(c=["u", None]))


def test_code_checks_and_refusals_before_randomness():
    dom = tiny_domain()
    w = kway_marginal_workload(dom, 2)
    bad = tiny_codes(10)
    bad[3, 1] = 3
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BoundsViolation, match=r"attribute 'b' \(column 1\) takes codes 0\.\.2") as exc:
        independent_marginals(bad, dom, 1.0, rng)
    assert "[3" not in str(exc.value)  # no row index, no code value
    with pytest.raises(BoundsViolation):
        mwem(bad, dom, w, 1.0, 3, rng)
    with pytest.raises(ValueError, match="epsilon"):
        independent_marginals(tiny_codes(10), dom, math.inf, rng)
    with pytest.raises(ValueError, match="T must"):
        mwem(tiny_codes(10), dom, w, 1.0, 0, rng)
    with pytest.raises(ValueError, match="different domain"):
        mwem(
            tiny_codes(10),
            dom,
            kway_marginal_workload(Domain.from_levels({"a": (1,)}), 1),
            1.0,
            2,
            rng,
        )
    with pytest.raises(ValueError, match="no rows"):
        independent_marginals(np.zeros((0, 4), dtype=int), dom, 1.0, rng)
    with pytest.raises(TypeError, match="integer"):
        independent_marginals(np.zeros((2, 4)), dom, 1.0, rng)
    assert rng.bit_generator.state == state


# ---------------------------------------------------------------- Adult


def test_adult_counts(adult, adult_w3):
    assert adult.codes.shape == (30_718, 8)
    assert len(adult_w3) == 18_597
    assert adult.domain.shape == (7, 16, 7, 14, 6, 5, 2, 2)
    assert "Never-worked" not in adult.domain.levels[0]
    # With the codebook level kept, the workload would have 19,664 queries.
    assert (
        sum(math.prod(c) for c in itertools.combinations((8, 16, 7, 14, 6, 5, 2, 2), 3)) == 19_664
    )


def test_adult_never_worked_is_a_structural_zero():
    full = load_adult_categorical(complete_rows=False)
    assert full.codes.shape == (32_561, 8)
    assert full.domain.size == 9 * 16 * 7 * 15 * 6 * 5 * 2 * 2 == 1_814_400
    df = full.domain.decode(full.codes)
    nw = df[df["workclass"] == "Never-worked"]
    assert len(nw) == 7 and (nw["occupation"] == "?").all()
    complete = ~(df == "?").any(axis=1)
    assert int(complete.sum()) == 30_718
    dom = adult_categorical_domain()
    np.testing.assert_array_equal(
        dom.encode(df[complete].reset_index(drop=True)), load_adult_categorical().codes
    )


# ---------------------------------------------------------------- workload


def test_answer_matches_naive_loop():
    dom = tiny_domain()
    codes = tiny_codes(300)
    for k in (1, 2, 3, 4):
        w = kway_marginal_workload(dom, k)
        naive = []
        for attrs in itertools.combinations(range(4), k):
            for levels in itertools.product(*(range(dom.shape[a]) for a in attrs)):
                hit = np.all([codes[:, a] == v for a, v in zip(attrs, levels, strict=True)], axis=0)
                naive.append(hit.mean())
        assert len(w) == len(naive)
        np.testing.assert_allclose(answer(w, codes), naive, rtol=0, atol=1e-15)
        for j in (0, len(w) // 2, len(w) - 1):
            lits = w.literals(j)
            hit = np.all([codes[:, a] == c for a, c in lits], axis=0)
            assert answer(w, codes)[j] == pytest.approx(hit.mean())
        # On the empirical distribution the two evaluations agree.
        emp = np.zeros(dom.shape)
        np.add.at(emp, tuple(codes.T), 1.0 / len(codes))
        np.testing.assert_allclose(answer_distribution(w, emp), answer(w, codes), atol=1e-12)
    assert "AND" in kway_marginal_workload(dom, 2).describe(0)
    with pytest.raises(ValueError):
        kway_marginal_workload(dom, 5)


def test_errors():
    assert errors([0.1, 0.5], [0.2, 0.5]) == {
        "max": pytest.approx(0.1),
        "mean": pytest.approx(0.05),
    }
    with pytest.raises(ValueError):
        errors([0.1], [0.1, 0.2])


# ---------------------------------------------------------------- independent marginals


def test_independent_exact_reproduces_one_way_and_reference(adult, adult_w3, adult_true):
    res = independent_marginals(adult.codes, adult.domain, 1.0, 0, noiseless=True)
    assert not res.guarantee.holds
    w1 = kway_marginal_workload(adult.domain, 1)
    np.testing.assert_allclose(res.answer(w1), answer(w1, adult.codes), atol=1e-15)
    err = errors(adult_true, res.answer(adult_w3))
    # Reference 0.284; the exact product distribution gives 0.2826, a sample of n rows 0.2838.
    assert 0.27 < err["max"] < 0.29
    err_s = errors(adult_true, answer(adult_w3, res.sample(random_state=0)))
    assert abs(err_s["max"] - 0.284) < 0.01


def test_half_subsample_reference(adult, adult_w3, adult_true):
    rng = np.random.default_rng(0)
    sub = adult.codes[rng.choice(len(adult.codes), len(adult.codes) // 2, replace=False)]
    assert errors(adult_true, answer(adult_w3, sub))["max"] < 0.012  # reference 0.0057


def test_independent_laplace_scale():
    dom = Domain.from_levels({"a": tuple(range(40)), "b": tuple(range(30)), "c": tuple(range(30))})
    rng = np.random.default_rng(5)
    codes = np.stack([rng.integers(0, s, 200) for s in dom.shape], axis=1)
    exact = [np.bincount(codes[:, j], minlength=s) for j, s in enumerate(dom.shape)]
    eps = 0.7
    res = None
    devs = []
    for seed in range(50):
        res = independent_marginals(codes, dom, eps, seed)
        devs.extend(np.concatenate([res.noisy_counts[j] - exact[j] for j in range(3)]))
    assert res is not None and res.noise_scale == pytest.approx(2 * 3 / eps)
    assert res.guarantee.epsilon == eps and res.guarantee.kind is GuaranteeKind.PURE
    devs_arr = np.asarray(devs)
    ks = stats.kstest(np.abs(devs_arr), stats.gamma(a=1.0, scale=6 / eps).cdf)
    assert ks.pvalue > ALPHA
    ks_signed = stats.kstest(devs_arr, stats.laplace(scale=6 / eps).cdf)
    assert ks_signed.pvalue > ALPHA
    # A scale off by 2 (e.g. sensitivity 1 instead of 2) is rejected.
    assert stats.kstest(np.abs(devs_arr), stats.gamma(a=1.0, scale=3 / eps).cdf).pvalue < ALPHA
    for m in res.marginals:
        assert (m >= 0).all() and m.sum() == pytest.approx(1.0)


# ---------------------------------------------------------------- MWEM


def test_mwem_error_decreases_with_T():
    dom = tiny_domain()
    codes = tiny_codes(2000)
    w = kway_marginal_workload(dom, 2)
    true = answer(w, codes)
    errs = {}
    for T in (1, 10, 200):
        runs = [
            errors(true, mwem(codes, dom, w, 200.0, T, seed, output="last").answer(w))["max"]
            for seed in range(3)
        ]
        errs[T] = float(np.mean(runs))
    assert errs[200] < errs[10] < errs[1]
    assert errs[200] < 0.05
    avg = mwem(codes, dom, w, 200.0, 200, 0)
    assert errors(true, avg.answer(w))["max"] < errs[1]


def test_mwem_guarantee_sampler_and_reproducibility():
    dom = tiny_domain()
    codes = tiny_codes(500)
    w = kway_marginal_workload(dom, 2)
    r1 = mwem(codes, dom, w, 1.0, 10, 7)
    r2 = mwem(codes, dom, w, 1.0, 10, 7)
    r3 = mwem(codes, dom, w, 1.0, 10, 8)
    np.testing.assert_array_equal(r1.distribution, r2.distribution)
    assert r1.selected == r2.selected and r1.measurements == r2.measurements
    assert not np.array_equal(r1.distribution, r3.distribution)
    assert r1.guarantee.epsilon == 1.0 and r1.guarantee.is_pure and r1.guarantee.holds
    assert r1.epsilon_per_step == pytest.approx(1.0 / 20)
    assert r1.distribution.shape == dom.shape and r1.distribution.sum() == pytest.approx(1.0)
    s = r1.sample(1000, 0)
    assert s.shape == (1000, 4)
    np.testing.assert_array_equal(s, r1.sample(1000, 0))
    dom.check_codes(s)
    i1 = independent_marginals(codes, dom, 1.0, 3)
    i2 = independent_marginals(codes, dom, 1.0, 3)
    np.testing.assert_array_equal(i1.sample(random_state=1), i2.sample(random_state=1))
    assert i1.sample().shape == (500, 4)
    assert not all(
        np.array_equal(a, b)
        for a, b in zip(
            i1.noisy_counts, independent_marginals(codes, dom, 1.0, 4).noisy_counts, strict=True
        )
    )
