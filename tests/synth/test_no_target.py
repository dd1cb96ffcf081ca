"""A table without a two-label target: a schema with ``"target": null`` serves synthesis, and
only synthesis (sweep 11A: a table without one, or with a 3-class outcome, could not be
synthesized at all)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from oracledp._cli import app
from oracledp._registry import make_estimator
from oracledp.synth import TableDomain, TableSynthesizer, evaluate_synthetic
from oracledp.tabular import TableSchema, read_aggregated
from oracledp.tabular._columns import Column

ENV = {"COLUMNS": "200"}
COLUMNS = (
    Column("age", "numeric", lower=18, upper=90, step=1),
    Column("region", "categorical", levels=("north", "south", "west"), missing="level"),
    Column("outcome", "categorical", levels=("low", "mid", "high")),  # 3 classes
)


def _table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, n)
    old = age > 50
    return pd.DataFrame({
        "age": age,
        "region": rng.choice(["north", "south", "west", ""], n, p=[.4, .3, .2, .1]),
        "outcome": np.where(old, rng.choice(["low", "mid", "high"], n, p=[.1, .3, .6]),
                            rng.choice(["low", "mid", "high"], n, p=[.6, .3, .1]))})


def test_json_without_a_target_round_trips():
    plain = {"columns": [c.to_dict() for c in COLUMNS]}
    for d in (plain, {**plain, "target": None}):
        s = TableSchema.from_dict(d)
        assert not s.has_target and s.target is None and s.labels == ()
        assert s.to_dict()["target"] is None
        assert TableSchema.from_json(s.to_json()) == s
    with pytest.raises(ValueError, match="labels without a target"):
        TableSchema(COLUMNS, None, ("a", "b"))
    with pytest.raises(ValueError, match="'target' must be an object"):
        TableSchema.from_dict({**plain, "target": "outcome"})
    assert TableSchema(COLUMNS[:2], "outcome", ("low", "high")).has_target


def test_infer_without_a_target_proposes_every_column():
    schema, _ = TableSchema.infer(_table())
    assert not schema.has_target
    assert [c.name for c in schema.columns] == ["age", "region", "outcome"]
    assert schema.columns[2].kind == "categorical" and len(schema.columns[2].levels) == 3
    assert schema.unconfirmed() == ["age", "region", "outcome"]
    with pytest.raises(Exception, match="needs no target") as err:  # 3 labels: refused
        TableSchema.infer(_table(), target="outcome")
    assert "mid" not in str(err.value)


def test_the_classifiers_refuse_it_in_one_message():
    schema = TableSchema(COLUMNS)
    df = _table()
    with pytest.raises(ValueError, match="declares no target: the model 'rspm' needs one"):
        make_estimator("rspm", schema, 1.0, random_state=0)
    with pytest.raises(ValueError, match="declares no target"):
        schema.labels_of(df)
    table = read_aggregated(df, schema)  # counting serves synthesis: one count per row
    assert table.counts.shape[1] == 1 and table.n == len(df)
    for call in (table.weighted_rows, table.counted_rows):
        with pytest.raises(ValueError, match="declares no target"):
            call()


def test_counts_are_the_records_per_distinct_row():
    schema = TableSchema(COLUMNS)
    df = _table()
    tdom = TableDomain(schema, bins={"age": [30, 50, 70]})
    assert tdom.columns == ["age", "region", "outcome"]
    rows, counts = tdom.count(df)
    codes = tdom.encode(df)  # record by record
    want = pd.Series(1, index=pd.MultiIndex.from_arrays(codes.T)).groupby(level=[0, 1, 2]).sum()
    got = pd.Series(counts, index=pd.MultiIndex.from_arrays(rows.T))
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), check_names=False)
    assert counts.sum() == len(df)


@pytest.mark.parametrize("method", ["oracle-query-pgm", "independent", "mst"])
def test_a_two_level_column_gives_the_target_s_release(method, short_peer_estimation):
    """The same table, its 2-level column declared as the target or as the last feature
    column: one domain, one count, so one release for one seed (bit for bit)."""
    df = _table()
    df["old"] = np.where(df["age"] > 50, "yes", "no")
    with_target = TableSchema(COLUMNS, "old", ("no", "yes"))
    without = TableSchema((*COLUMNS, Column("old", "categorical", levels=("no", "yes"))))
    opts = {"final_iterations": 30} if method == "oracle-query-pgm" else None
    a = TableSynthesizer(method, epsilon=1.0, random_state=3, options=opts).fit(df, with_target)
    b = TableSynthesizer(method, epsilon=1.0, random_state=3, options=opts).fit(df, without)
    assert a.table_domain_.domain == b.table_domain_.domain
    np.testing.assert_array_equal(a.sample_codes(300, random_state=1),
                                  b.sample_codes(300, random_state=1))
    pd.testing.assert_frame_equal(a.sample(300, random_state=2), b.sample(300, random_state=2))


@pytest.mark.parametrize("method", ["oracle-query-pgm", "aim", "mwem", "independent"])
def test_every_method_fits_saves_and_samples(method, tmp_path, short_peer_estimation):
    schema = TableSchema(COLUMNS)
    opts = {"rounds": 5} if method == "mwem" else None
    syn = TableSynthesizer(method, epsilon=1.0, random_state=0, options=opts).fit(
        _table(), schema)
    out = syn.sample(200, random_state=4)
    assert list(out.columns) == ["age", "region", "outcome"]
    schema.check(out.fillna(""), with_target=True)
    syn.save(tmp_path / "m")
    back = TableSynthesizer.load(tmp_path / "m")
    assert not back.table_domain_.schema.has_target
    pd.testing.assert_frame_equal(back.sample(200, random_state=4), out)


def test_evaluation_has_no_classifier():
    schema = TableSchema(COLUMNS)
    real = _table()
    res = evaluate_synthetic(_table(seed=1), real, schema)
    assert "classification" not in res
    assert [c["column"] for c in res["data_resolution"]["columns"]] == [
        "age", "region", "outcome"]
    assert evaluate_synthetic(real, real, schema)["marginals"][2]["max_tv"] == 0.0


def test_the_command_line(runner, tmp_path):
    data = tmp_path / "t.csv"
    _table().to_csv(data, index=False)
    res = runner.invoke(app, ["schema", "infer", str(data)], env=ENV)
    assert res.exit_code == 0, res.output
    proposed = json.loads(res.stdout)
    assert proposed["target"] is None
    assert "no --target: every column is a feature column" in res.stderr
    assert "`oracledp synth fit` refuses the schema until then" in res.stderr
    schema = tmp_path / "s.json"
    schema.write_text(TableSchema(COLUMNS).to_json())

    res = runner.invoke(app, ["schema", "check", str(data), "--schema", str(schema)], env=ENV)
    assert res.exit_code == 0 and "the schema has no target" in res.stdout, res.output
    missing = tmp_path / "absent.csv"  # refused before the data are read
    for args in (["fit", str(missing), "--schema", str(schema), "--model", "rspm",
                  "--epsilon", "1", "--out", str(tmp_path / "f")],
                 ["models", "--schema", str(schema), "--epsilon", "1"]):
        res = runner.invoke(app, args, env=ENV)
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: the schema declares no target")

    model = tmp_path / "m"
    res = runner.invoke(app, ["synth", "fit", str(data), "--schema", str(schema), "--epsilon",
                              "1", "--seed", "0", "--out", str(model)], env=ENV)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["synth", "sample", str(model), "--rows", "300", "--seed", "1"],
                        env=ENV)
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout), dtype=str, keep_default_na=False)
    assert list(df.columns) == ["age", "region", "outcome"] and len(df) == 300
    synthetic = tmp_path / "syn.csv"
    synthetic.write_text(res.stdout)
    res = runner.invoke(app, ["synth", "evaluate", str(synthetic), str(data), "--schema",
                              str(schema)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "2-way TV, mean" in res.stdout and "train on synthetic" not in res.stdout
