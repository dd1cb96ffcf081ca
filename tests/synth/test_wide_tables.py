"""Wide tables (issue 38, item 4): every method fits or refuses before any noise, sampling
and saved models work past einsum's 52 index letters, and ``synth sample`` never leaves an
empty or partial CSV behind.  ``benchmarks/synth_wide.py`` runs the reported 86-column
table through the command line."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

import oracledp.privacy._noise as noise_mod
from oracledp._cli import app
from oracledp.synth import (
    AIMSynthesizer,
    Domain,
    MSTSynthesizer,
    MWEMSynthesizer,
    OracleQueryPGM,
    TableSynthesizer,
)
from oracledp.synth._graphical import GraphicalModel


@contextlib.contextmanager
def memory_cap(extra_mb: int) -> Iterator[None]:
    """At most ``extra_mb`` more address space in the block: a runaway allocation raises
    MemoryError instead of exhausting the machine."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status", encoding="ascii") as fh:
        vm = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:")) * 1024
    cap = vm + extra_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY
                                            else min(cap, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def chain_codes(d: int, n: int, levels: int = 4, seed: int = 0) -> np.ndarray:
    """n records over d attributes, each a noisy copy of its left neighbour."""
    rng = np.random.default_rng(seed)
    codes = np.zeros((n, d), dtype=np.int64)
    codes[:, 0] = rng.integers(0, levels, n)
    for i in range(1, d):
        codes[:, i] = np.where(rng.random(n) < 0.7, codes[:, i - 1], rng.integers(0, levels, n))
    return codes


def domain_of(d: int, levels: int = 4) -> Domain:
    return Domain(tuple(f"a{i}" for i in range(d)), tuple(tuple(range(levels)) for _ in range(d)))


def chain_model(d: int, seed: int = 0) -> GraphicalModel:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(2, 4, d))
    factors = [((i, i + 1), rng.normal(size=(shape[i], shape[i + 1]))) for i in range(d - 1)]
    return GraphicalModel.from_factors(shape, factors)


def no_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):  # pragma: no cover - must not run
        raise AssertionError("noise was drawn before the refusal")

    for name in ("gaussian", "laplace", "exponential_mechanism"):
        monkeypatch.setattr(noise_mod, name, refuse)


def test_pair_marginals_of_a_60_attribute_model_match_marginal():
    model = chain_model(60)
    pairs = [(0, 59), (59, 0), (3, 40), (10, 11), (11, 10), (25, 57), (58, 1)]
    got = model.pair_marginals(pairs)
    for (u, v), table in zip(pairs, got, strict=True):
        want = model.marginal([u, v])
        assert table.shape == want.shape == (model.shape[u], model.shape[v])
        np.testing.assert_allclose(table, want, atol=1e-12)
    with pytest.raises(ValueError, match="two distinct attribute positions"):
        model.pair_marginals([(3, 3)])


def test_dense_and_huge_marginals_are_refused_with_their_size():
    model = chain_model(60)
    with memory_cap(64), pytest.raises(
            ValueError, match=r"the full distribution has about 10\^\d+ cells"):
        model.dense()
    with memory_cap(64), pytest.raises(
            ValueError, match=r"a marginal over 40 attributes has .* cells"):
        model.marginal(list(range(0, 60, 3)) + list(range(1, 60, 3)))
    assert model.marginal([0, 30, 59]).shape == (model.shape[0], model.shape[30],
                                                 model.shape[59])
    codes = model.sample(50, np.random.default_rng(0))
    assert codes.shape == (50, 60)


def test_oracle_query_pgm_tests_few_junction_trees_on_a_wide_table(monkeypatch):
    """780 candidate pairs: the selection tests the model size of the tables it reaches,
    not of all 780 in every round (each was a triangulation of the whole model)."""
    import oracledp.synth._oracle_query_pgm as oqp

    calls = []
    real = oqp.junction_tree_cells
    monkeypatch.setattr(oqp, "junction_tree_cells",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    dom = domain_of(40)
    fit = OracleQueryPGM(1.0, 1e-6, k=2, rounds=8, iterations=2, final_iterations=5,
                         estimator="graphical", random_state=0).fit(chain_codes(40, 300), dom)
    assert fit.rounds_ == 8 and len(calls) <= 8 * 5, len(calls)
    assert fit.sample_codes(20).shape == (20, 40)
    assert fit.guarantee_.epsilon == 1.0


def test_check_domain_refuses_before_any_noise(monkeypatch):
    wide = (10,) * 83 + (41, 10, 2)
    with pytest.raises(ValueError, match=r"106,081 candidate marginals .* oracle-query-pgm "
                                         r"or mst"):
        AIMSynthesizer(1.0, 1e-6).check_domain(wide, 4075)
    with pytest.raises(ValueError, match=r"about 10\^85 cells \(86 columns; at most "
                                         r"50,000,000\): use the method oracle-query-pgm"):
        MWEMSynthesizer(1.0).check_domain(wide, 4075)
    MSTSynthesizer(1.0, 1e-6).check_domain(wide, 4075)  # fits: a tree of pairs
    OracleQueryPGM(1.0, 1e-6).check_domain(wide, 4075)
    AIMSynthesizer(1.0, 1e-6).check_domain((10,) * 20, 4075)  # 1,350 candidates: allowed
    # fit calls the same check first: nothing is drawn, no budget is declared
    no_noise(monkeypatch)
    dom = domain_of(35)
    with pytest.raises(ValueError, match="7,175 candidate marginals"):
        AIMSynthesizer(1.0, 1e-6).fit(chain_codes(35, 50), dom)
    with pytest.raises(ValueError, match="MWEM keeps one probability per cell"):
        MWEMSynthesizer(1.0).fit(chain_codes(35, 50), dom)


def wide_files(tmp_path, d: int = 34, n: int = 60):
    codes = chain_codes(d, n, levels=3)
    df = pd.DataFrame({f"c{i}": [f"l{v}" for v in codes[:, i]] for i in range(d)})
    df["y"] = np.where(codes[:, 0] > 0, "yes", "no")
    schema = {"target": {"name": "y", "labels": ["no", "yes"]},
              "columns": [{"name": f"c{i}", "type": "categorical",
                           "levels": ["l0", "l1", "l2"]} for i in range(d)]}
    (tmp_path / "wide.csv").write_text(df.to_csv(index=False))
    (tmp_path / "wide.schema.json").write_text(json.dumps(schema))
    return tmp_path / "wide.csv", tmp_path / "wide.schema.json"


def test_cli_aim_on_a_wide_table_is_one_error_line(runner, tmp_path, monkeypatch):
    data, schema = wide_files(tmp_path)
    no_noise(monkeypatch)
    res = runner.invoke(app, ["synth", "fit", str(data), "--schema", str(schema),
                              "--epsilon", "1", "--method", "aim", "--seed", "0",
                              "--out", str(tmp_path / "m")])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.output
    assert "candidate marginals" in lines[0] and "oracle-query-pgm or mst" in lines[0]
    assert not (tmp_path / "m" / "synth-model.json").exists()


def test_cli_sample_failure_leaves_no_file(runner, tmp_path, monkeypatch):
    from oracledp.synth import _table_synthesizer as ts

    data, schema = wide_files(tmp_path, d=3, n=40)
    model = tmp_path / "m"
    res = runner.invoke(app, ["synth", "fit", str(data), "--schema", str(schema), "--epsilon",
                              "1", "--method", "independent", "--seed", "0", "--out",
                              str(model)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "synthetic.csv"
    calls = []

    def fail_late(self, n, rng, sampler):  # the second chunk fails: a partial file would be left
        calls.append(n)
        if len(calls) > 1:
            raise ValueError("the model cannot be sampled")
        return real(self, n, rng, sampler)

    real = ts._Release.sample_codes
    monkeypatch.setattr(ts._Release, "sample_codes", fail_late)
    import oracledp.synth._sampling as sampling

    monkeypatch.setattr(sampling, "SAMPLE_CHUNK", 5)
    res = runner.invoke(app, ["synth", "sample", str(model), "--rows", "20", "--seed", "1",
                              "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot sample from "), res.output
    assert "was not written" in lines[0] and "Traceback" not in res.output
    assert not out.exists() and list(tmp_path.glob("*.part")) == []
    out.write_text("kept\n")  # a file already there (overwritten with --force) stays as it was
    calls.clear()
    res = runner.invoke(app, ["synth", "sample", str(model), "--rows", "20", "--seed", "1",
                              "--out", str(out), "--force"])
    assert res.exit_code == 2 and out.read_text() == "kept\n"
    monkeypatch.setattr(ts._Release, "sample_codes", real)
    res = runner.invoke(app, ["synth", "sample", str(model), "--rows", "20", "--seed", "1",
                              "--out", str(out), "--force"])
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(out)) == 20 and list(tmp_path.glob("*.part")) == []


def test_wide_graphical_model_saves_loads_and_samples(tmp_path, monkeypatch):
    """A 60-attribute graphical release: save, load, sample (no einsum over all of them).
    Each of the 6 rounds tests the tree size of the few tables its selection reaches, not
    of all 1,830 (a triangulation each): counted, so the check does not depend on load."""
    import oracledp.synth._oracle_query_pgm as oqp

    calls = []
    real = oqp.junction_tree_cells
    monkeypatch.setattr(oqp, "junction_tree_cells",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    d = 60
    df = pd.DataFrame({f"c{i}": [f"l{v}" for v in col] for i, col in
                       enumerate(chain_codes(d, 80, levels=3).T)})
    df["y"] = np.where(df["c0"] == "l0", "no", "yes")
    schema = {"target": {"name": "y", "labels": ["no", "yes"]},
              "columns": [{"name": f"c{i}", "type": "categorical",
                           "levels": ["l0", "l1", "l2"]} for i in range(d)]}
    syn = TableSynthesizer(epsilon=1.0, random_state=0,
                           options={"rounds": 6, "iterations": 2, "final_iterations": 5}
                           ).fit(df, schema)
    assert syn.synthesizer_.model_ is not None
    assert len(calls) <= 6 * 5, len(calls)
    syn.save(tmp_path / "m")
    back = TableSynthesizer.load(tmp_path / "m")
    a = back.sample(4075, random_state=3)
    b = syn.sample(4075, random_state=3)
    assert a.shape == (4075, d + 1)
    pd.testing.assert_frame_equal(a, b)
