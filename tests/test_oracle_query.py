"""OracleQuerySynthesizer (spec oracle-query.md §6, tractable Hedge + exponential-mechanism variant)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp.cli import app
from oracledp.guarantees import GuaranteeKind
from oracledp.synth import Domain, answer, errors, kway_marginal_workload
from oracledp.synth.oracle_query import (
    OracleQuerySynthesizer,
    _calibrate,
    compose_ledger,
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
    tot_eps, tot_delta = compose_ledger(syn.ledger_, syn.composition_, delta)
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
        from oracledp.synth.oracle_query import RoundSpend

        ledger = [RoundSpend(t, "", eps0, 0, False) for t in range(T)]
        assert compose_ledger(ledger, comp, delta)[0] <= eps
    # zCDP beats basic composition for many rounds
    assert _calibrate(1.0, 1e-6, 300)[1] == "zcdp"
    assert _calibrate(1.0, 1e-6, 300)[0] > 1.0 / 300


def test_reproducible_by_seed() -> None:
    codes, dom = _tiny(500)
    a = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=40, random_state=7).fit(codes, dom)
    b = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=40, random_state=7).fit(codes, dom)
    c = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=40, random_state=8).fit(codes, dom)
    assert np.array_equal(a.distribution_, b.distribution_)
    assert [r.query for r in a.ledger_] == [r.query for r in b.ledger_]
    assert np.array_equal(a.sample(100), b.sample(100))
    assert not np.array_equal(a.distribution_, c.distribution_)
    s = a.sample(50)
    assert s.shape == (50, 4) and s.min() >= 0 and s.max() <= 1
    assert a.sample().shape == (500, 4)
    assert list(a.sample_frame(5).columns) == ["a", "b", "c", "d"]


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
    with pytest.raises(NotImplementedError, match="noisy-min"):
        OracleQuerySynthesizer(1.0, 1e-6, query_player="rspm")
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


def test_cli_quick_end_to_end(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "sa"
    res = CliRunner().invoke(app, ["reproduce", "synth-adult", "--quick", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "oracle_query" in res.output and "mwem" in res.output
    for name in ("runs.jsonl", "runs.csv", "summary.json", "error_vs_eps.png", "config.json"):
        assert (out / name).exists(), name
    rows = json.loads((out / "summary.json").read_text())
    assert {r["method"] for r in rows} == {"oracle_query", "mwem", "independent"}
    recs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    oq = next(r for r in recs if r["method"] == "oracle_query")
    assert oq["guarantee_eps"] <= 1.0 and 0 < oq["max_error"] < 1


def test_cli_bad_eps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    res = CliRunner().invoke(app, ["reproduce", "synth-adult", "--eps", "0,1",
                                   "--out", str(tmp_path)])
    assert res.exit_code != 0
