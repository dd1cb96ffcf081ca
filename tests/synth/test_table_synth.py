"""Synthetic data for your own table: schema -> domain -> counts -> values, and the model file."""

from __future__ import annotations

import hashlib
import io
import itertools
import json

import numpy as np
import pandas as pd
import pytest

import oracledp.privacy._noise as noise_mod
from oracledp._errors import BoundsViolation, ModelFileError, TableInputError
from oracledp.datasets import table_csv, table_schema
from oracledp.privacy import zcdp_rho
from oracledp.privacy._group import group_loss
from oracledp.synth import (
    Domain,
    TableDomain,
    TableSynthesizer,
    evaluate_synthetic,
)
from oracledp.synth._table_synthesizer import (
    JSON_SHA256,
    METHODS,
    MODEL_FILE,
    RELEASE_FILE,
    RELEASE_SHA256,
)
from oracledp.tabular import TableSchema
from oracledp.tabular._columns import Column


def _schema(**kw) -> TableSchema:
    cols = (
        Column("grade", "categorical", levels=("1", "2", "3")),  # numbers: come back as ints
        Column("city", "categorical", levels=("north", "south"), missing="level"),
        Column("age", "numeric", lower=18, upper=40, step=1),  # 23 grid points
        Column("score", "numeric", lower=0, upper=1, step=0.1, missing="level"),
        Column("income", "numeric", lower=0, upper=100, bins=(10.0, 50.0)),  # thermometer
        Column("odd", "numeric", lower=-3, upper=3, step=1.5),
    )
    return TableSchema(cols, "y", ("no", "yes"), **kw)


def _all_codes(dom: Domain, repeat: int = 1) -> np.ndarray:
    codes = np.array(list(itertools.product(*(range(s) for s in dom.shape))), dtype=np.int64)
    return np.tile(codes, (repeat, 1))


def _noise_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a, **k):
        raise AssertionError("noise drawn before the input was refused")

    for name in ("gaussian", "laplace", "exponential_mechanism"):
        monkeypatch.setattr(noise_mod, name, boom)


# --- schema -> domain ---------------------------------------------------------------------------


def test_domain_from_the_schema_alone():
    td = TableDomain(_schema(), bins={"age": 4})
    assert td.columns == ["grade", "city", "age", "score", "income", "odd", "y"]
    lv = dict(zip(td.domain.attributes, td.domain.levels, strict=True))
    assert lv["grade"] == ("1", "2", "3")
    assert lv["city"] == ("north", "south", "(missing)")
    # 23 grid points in 4 equal shares: floor(k * 4 / 23)
    assert lv["age"] == ("[18, 23]", "[24, 29]", "[30, 35]", "[36, 40]")
    assert lv["score"][:3] == ("[0, 0.1]", "0.2", "0.3") and len(lv["score"]) == 11
    assert lv["income"] == ("[0, 10)", "[10, 50)", "[50, 100]")
    assert lv["odd"] == ("-3", "-1.5", "0", "1.5", "3")  # 5 points <= 10 bins: one each
    assert lv["y"] == ("no", "yes")


def test_cut_points_and_default_bins():
    td = TableDomain(_schema(), bins={"age": [20, 20.5, 30]})  # (20, 20.5) holds no point
    assert td.domain.levels[2] == ("[18, 19]", "20", "[21, 29]", "[30, 40]")
    assert len(TableDomain(_schema()).domain.levels[2]) == 10
    for bad in ({"city": 3}, {"income": 3}, {"nope": 3}, {"age": [50]}, {"age": [30, 20]},
                0, 2.5, {"age": 0}):
        with pytest.raises(ValueError):
            TableDomain(_schema(), bins=bad)


def test_round_trip_codes_values_codes_is_exact():
    """Every code of the domain decodes to a value that encodes back to that code (200 random
    draws inside each bin), every declared level appears, numbers stay inside their declared
    bounds and on their step, in the declared types."""
    schema = _schema()
    td = TableDomain(schema, bins={"age": 4, "score": 3})
    codes = _all_codes(td.domain)
    reps = np.tile(codes, (3, 1))
    df = td.decode(reps, random_state=0)
    np.testing.assert_array_equal(td.encode(df), reps)
    assert set(df["grade"]) == {1, 2, 3} and df["grade"].dtype == np.int64
    assert set(df["city"].dropna()) == {"north", "south"} and df["city"].isna().any()
    assert set(df["y"]) == {"no", "yes"}
    assert str(df["age"].dtype) == "int64" and df["age"].between(18, 40).all()
    assert set(df["age"]) == set(range(18, 41))  # every grid point is reached
    s = df["score"].dropna()
    assert s.between(0, 1).all() and np.allclose(s * 10, np.round(s * 10), atol=0, rtol=0)
    assert df["score"].isna().any() and df["score"].dtype == np.float64
    assert set(df["odd"]) == {-3.0, -1.5, 0.0, 1.5, 3.0}
    assert df["income"].between(0, 100).all() and df["income"].dtype == np.float64
    # written as CSV and read back as strings, the records still encode to the same codes
    again = pd.read_csv(pd.io.common.StringIO(df.to_csv(index=False)), dtype=str,
                        keep_default_na=False)
    np.testing.assert_array_equal(td.encode(again), reps)


def test_grid_values_are_uniform_on_the_bin_points():
    schema = TableSchema((Column("a", "numeric", lower=0, upper=9, step=1),), "y", ("0", "1"))
    td = TableDomain(schema, bins=2)  # [0, 4], [5, 9]
    df = td.decode(np.zeros((20_000, 2), dtype=np.int64), random_state=1)
    freq = df["a"].value_counts(normalize=True).sort_index()
    assert list(freq.index) == [0, 1, 2, 3, 4]
    assert np.abs(freq.to_numpy() - 0.2).max() < 0.015  # 5 sigma of a binomial at n = 20,000


# --- counting -----------------------------------------------------------------------------------


def _random_table(n: int, seed: int) -> tuple[TableDomain, pd.DataFrame]:
    td = TableDomain(_schema(), bins={"age": 4})
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, n) for s in td.domain.shape], axis=1)
    return td, td.decode(codes, random_state=seed)


def test_chunked_counting_equals_in_memory_counting(tmp_path):
    td, df = _random_table(500, 3)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    rows_csv, counts_csv = td.count(path)
    rows_df, counts_df = td.count(df)
    u, c = np.unique(td.encode(df), axis=0, return_counts=True)
    np.testing.assert_array_equal(rows_csv, u)
    np.testing.assert_array_equal(counts_csv, c)
    np.testing.assert_array_equal(rows_df, u)
    np.testing.assert_array_equal(counts_df, c)
    assert counts_csv.sum() == 500


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_gets_distinct_rows_with_their_counts(titanic, method, monkeypatch,
                                                           short_peer_estimation):
    """The fit reads the chunked counts: distinct rows and record counts, never repeated rows."""
    import importlib

    path, schema = titanic
    module, name = METHODS[method][0].split(":")
    cls = getattr(importlib.import_module(module), name)
    original, seen = cls.fit, {}

    def spy(self, data, domain, sample_weight=None):
        seen["rows"], seen["counts"] = np.array(data), np.array(sample_weight)
        return original(self, data, domain, sample_weight=sample_weight)

    monkeypatch.setattr(cls, "fit", spy)
    TableSynthesizer(method, epsilon=1.0, random_state=0).fit(path, schema)
    rows, counts = seen["rows"], seen["counts"]
    assert len(np.unique(rows, axis=0)) == len(rows) < 1316  # distinct rows only
    assert counts.sum() == 1316 and (counts >= 1).all()  # every record counted once


# --- the synthesizer ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def titanic(tmp_path_factory):
    d = tmp_path_factory.mktemp("titanic")
    path = table_csv("titanic", d / "titanic.csv", split="all")
    return path, TableSchema.from_dict(table_schema("titanic"))


def test_fit_from_csv_equals_fit_from_frame(titanic):
    path, schema = titanic
    a = TableSynthesizer(epsilon=1.0, random_state=0).fit(path, schema)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    b = TableSynthesizer(epsilon=1.0, random_state=0).fit(df, schema)
    np.testing.assert_array_equal(a.synthesizer_.model_.dense(), b.synthesizer_.model_.dense())
    assert a.guarantee_ == b.guarantee_
    g = a.guarantee_
    assert (g.epsilon, g.neighbouring, str(g.kind)) == (1.0, "replace-one", "approximate")
    assert g.delta == pytest.approx(1 / 1316**2)
    out = a.sample(400, random_state=2)
    assert list(out.columns) == ["class", "age", "sex", "survived"]
    schema.check(out, with_target=True)  # every value is a declared level
    assert "post-processing" in a.guarantee_in_plain_words()


@pytest.mark.parametrize("method", ["independent", "mwem"])
def test_pure_methods_and_their_saved_models(titanic, method, tmp_path):
    path, schema = titanic
    syn = TableSynthesizer(method, epsilon=0.5, random_state=0).fit(path, schema)
    assert syn.guarantee_.delta == 0.0 and syn.guarantee_.epsilon == 0.5
    syn.save(tmp_path / "m")
    back = TableSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(back.sample(300, random_state=5),
                                  syn.sample(300, random_state=5))
    with pytest.raises(ValueError, match="no delta"):
        TableSynthesizer(method, epsilon=0.5, delta=1e-6).fit(path, schema)


def test_saved_model_holds_the_release_only(titanic, tmp_path):
    path, schema = titanic
    syn = TableSynthesizer(epsilon=1.0, random_state=123456789).fit(path, schema)
    syn.save(tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [RELEASE_FILE, MODEL_FILE]
    d = json.loads((tmp_path / "m" / MODEL_FILE).read_text())
    assert set(d) == {"format", "format_version", "method", "params", "schema", "domain",
                      "guarantee", "guarantee_in_plain_words", "n", "release", "zcdp_rho",
                      "numeric", "plan", JSON_SHA256}
    assert d["zcdp_rho"] == pytest.approx(zcdp_rho(1.0, 1 / 1316**2), rel=1e-9)
    assert "123456789" not in (tmp_path / "m" / MODEL_FILE).read_text()  # no seed
    shape = syn.table_domain_.domain.shape
    with np.load(tmp_path / "m" / RELEASE_FILE, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    model = syn.synthesizer_.model_  # 32 cells: one clique over every attribute
    assert d["release"]["tree"] == [list(range(len(shape)))]
    assert list(arrays) == [f"factor_{i}" for i in range(len(model.potentials))]
    for (c, phi), key, saved in zip(model.potentials.items(), arrays, d["release"]["cliques"],
                                    strict=True):  # the log-potentials of the measured sets
        assert saved == list(c) and arrays[key].shape == tuple(shape[a] for a in c)
        np.testing.assert_array_equal(arrays[key], phi)
    back = TableSynthesizer.load(tmp_path / "m")
    assert back.guarantee_ == syn.guarantee_
    pd.testing.assert_frame_equal(back.sample(200, random_state=9),
                                  syn.sample(200, random_state=9))
    with pytest.raises(ValueError, match="random_state"):
        back.sample(3)
    (tmp_path / "m" / MODEL_FILE).write_text("{}")
    with pytest.raises(ModelFileError):
        TableSynthesizer.load(tmp_path / "m")


# --- bad input: one error, before any noise -----------------------------------------------------

_GOOD = "grade,city,age,score,income,odd,y\n1,north,20,0.5,12.5,0,no\n3,,33,,99,1.5,yes\n"


@pytest.mark.parametrize("text, error, secret", [
    (_GOOD.replace("north", "eastwest"), BoundsViolation, "eastwest"),      # unknown level
    (_GOOD.replace(",33,", ",77,"), BoundsViolation, "77"),                 # outside bounds
    (_GOOD.replace("0.5,12.5", "0.5,123.25"), BoundsViolation, "123.25"),   # outside bounds
    (_GOOD.replace(",", ";"), TableInputError, None),                       # wrong delimiter
    ("", TableInputError, None),                                            # empty file
    (_GOOD.split("\n")[0] + "\n", TableInputError, None),                   # header only
    (_GOOD.replace("1,north", ",north"), BoundsViolation, None),            # undeclared NaN
    (_GOOD.replace(",no\n", ",maybe\n"), BoundsViolation, "maybe"),         # unknown label
])
def test_bad_input_is_one_error_before_noise(tmp_path, monkeypatch, text, error, secret):
    _noise_forbidden(monkeypatch)
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(error) as exc:
        TableSynthesizer(epsilon=1.0, random_state=0).fit(path, _schema())
    if secret is not None:
        assert secret not in str(exc.value)
    assert "row" not in str(exc.value).replace("rows", "")


def test_unconfirmed_schema_and_bad_parameters_before_reading(tmp_path, monkeypatch):
    _noise_forbidden(monkeypatch)
    path = tmp_path / "ok.csv"
    path.write_text(_GOOD)
    from dataclasses import replace

    unconfirmed = replace(_schema(), target_from_data=True)
    with pytest.raises(ValueError, match="from_data"):
        TableSynthesizer(epsilon=1.0).fit(path, unconfirmed)
    for kw in ({"method": "gan"}, {"epsilon": -1.0}, {"delta": 2.0}, {"bins": 0}):
        with pytest.raises((ValueError, TypeError)):
            TableSynthesizer(**{"epsilon": 1.0, **kw}).fit(path, _schema())
    with pytest.raises(TypeError):
        TableSynthesizer(epsilon=1.0).fit([[1, 2]], _schema())
    with pytest.raises(ValueError, match="no rows"):
        TableSynthesizer(epsilon=1.0).fit(pd.DataFrame(columns=_GOOD.split("\n")[0].split(",")),
                                          _schema())


# --- evaluation ---------------------------------------------------------------------------------


def test_evaluation_tv_is_exact_on_hand_built_tables():
    schema = TableSchema((Column("a", "categorical", levels=("x", "z")),
                          Column("b", "categorical", levels=("p", "q"))), "y", ("0", "1"))
    real = pd.DataFrame({"a": ["x"] * 4, "b": ["p", "q", "p", "q"], "y": ["0", "1", "0", "1"]})
    syn = pd.DataFrame({"a": ["x", "z", "x", "z"], "b": ["p", "q", "p", "q"],
                        "y": ["0", "1", "0", "1"]})
    res = evaluate_synthetic(syn, real, schema, classifier=False)
    m1 = res["marginals"][1]
    # a: TV 0.5, b: 0, y: 0 -> mean 1/6, max 1/2
    assert m1["mean_tv"] == pytest.approx(1 / 6) and m1["max_tv"] == pytest.approx(0.5)
    assert res["marginals"][3]["max_tv"] == pytest.approx(0.5)
    same = evaluate_synthetic(real, real, schema, classifier=False)
    assert all(m["max_tv"] == 0 for m in same["marginals"].values())
    assert "NOT private" in res["non_private"]


def test_evaluation_caps_the_column_sets(titanic):
    path, schema = titanic
    res = evaluate_synthetic(path, path, schema, max_sets=3, random_state=1)
    assert res["marginals"][2] == {"mean_tv": 0.0, "max_tv": 0.0, "sets": 3, "of": 6,
                                   "sampled": True}
    c = res["classification"]
    assert c["train_synthetic_test_real"] >= c["majority_label_rate"]


def test_the_classifier_encodes_a_bounded_subset_of_a_large_table(titanic, monkeypatch):
    """Evaluation memory is bounded: past CLASSIFIER_CELLS encoded cells the classifier uses
    a seeded random subset of the rows (at least 1,000), and says how many; below it, every
    row (the default's figures are those of the whole tables)."""
    import oracledp.synth._table_evaluate as te

    path, schema = titanic
    n = len(pd.read_csv(path))
    whole = evaluate_synthetic(path, path, schema, max_sets=3, random_state=1)
    assert whole["classification"]["classifier_rows"] == {"synthetic": n, "real": n}
    monkeypatch.setattr(te, "CLASSIFIER_CELLS", 1000 * schema.n_features)
    cut = evaluate_synthetic(path, path, schema, max_sets=3, random_state=1)
    c = cut["classification"]
    assert c["classifier_rows"] == {"synthetic": 1000, "real": 1000} and n > 1000
    assert c["train_synthetic_test_real"] >= c["majority_label_rate"] - 0.05
    assert cut["marginals"] == whole["marginals"]  # only the classifier is subsampled
    assert cut == evaluate_synthetic(path, path, schema, max_sets=3, random_state=1)


def test_the_noise_guard_is_live(tmp_path, monkeypatch):
    """The guard of the bad-input tests: the good file does reach the noise."""
    _noise_forbidden(monkeypatch)
    path = tmp_path / "ok.csv"
    path.write_text(_GOOD)
    with pytest.raises(AssertionError, match="noise drawn"):
        TableSynthesizer(epsilon=1.0, random_state=0, bins=2).fit(path, _schema())


def test_saved_json_is_the_same_for_neighbouring_tables(titanic, tmp_path):
    """One record replaced, same seed: synth-model.json is byte-identical (it holds public
    parameters, the schema and the guarantee only) but for the SHA-256 of release.npz, which
    may differ (a function of the release), and the JSON's own SHA-256, which covers it."""
    path, schema = titanic
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    other = df.copy()
    other.iloc[0] = ["crew", "child", "women", "yes"]  # a record no one in the table has
    texts = []
    for name, table in (("a", df), ("b", other)):
        TableSynthesizer(epsilon=1.0, random_state=0).fit(table, schema).save(tmp_path / name)
        text = (tmp_path / name / MODEL_FILE).read_text()
        digest = hashlib.sha256((tmp_path / name / RELEASE_FILE).read_bytes()).hexdigest()
        assert text.count(f'"{RELEASE_SHA256}": "{digest}"') == 1
        own = json.loads(text)[JSON_SHA256]  # the JSON's digest covers the npz digest
        texts.append(text.replace(digest, "<sha256>").replace(own, "<json sha256>"))
    assert texts[0] == texts[1]


@pytest.mark.slow
def test_mst_release_is_saved_as_a_graphical_model(titanic, tmp_path):
    path, schema = titanic
    syn = TableSynthesizer("mst", epsilon=1.0, random_state=0).fit(path, schema)
    syn.save(tmp_path / "m")
    d = json.loads((tmp_path / "m" / MODEL_FILE).read_text())
    assert d["release"]["kind"] == "graphical-model"
    back = TableSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(back.sample(300, random_state=4),
                                  syn.sample(300, random_state=4))
    # the sampler follows the model: 1-way frequencies of 20,000 draws vs the model's marginals
    codes = back.sample_codes(20_000, random_state=5)
    for a in range(codes.shape[1]):
        p = syn.synthesizer_.result_.marginal([a])
        freq = np.bincount(codes[:, a], minlength=len(p)) / len(codes)
        assert np.abs(freq - p).max() < 0.02


def test_junction_tree_release_is_saved_as_a_graphical_model(titanic, tmp_path):
    """OracleQueryPGM on the junction tree (wide tables' estimator) releases a graphical
    model (log-potentials and junction tree): saved, reloaded and sampled like the model
    itself."""
    path, schema = titanic
    syn = TableSynthesizer(epsilon=1.0, random_state=0,
                           options={"estimator": "graphical"}).fit(path, schema)
    assert syn.synthesizer_.max_model_cells_ is not None  # the capped tree, not one clique
    syn.save(tmp_path / "m")
    d = json.loads((tmp_path / "m" / MODEL_FILE).read_text())
    assert d["release"]["kind"] == "graphical-model"
    assert d["release"]["tree"] == [list(c) for c in syn.synthesizer_.model_.tree.cliques]
    back = TableSynthesizer.load(tmp_path / "m")
    pd.testing.assert_frame_equal(back.sample(300, random_state=4),
                                  syn.sample(300, random_state=4))
    codes = back.sample_codes(20_000, random_state=5)
    for a in range(codes.shape[1]):  # the saved sampler follows the estimate's marginals
        p = syn.synthesizer_.marginal([a])
        freq = np.bincount(codes[:, a], minlength=len(p)) / len(codes)
        assert np.abs(freq - p).max() < 0.02


# --- the schema's own synthesis bins ("synth_bins") ---------------------------------------------


def test_schema_synth_bins_count_and_cut_points():
    cols = (Column("age", "numeric", lower=18, upper=40, step=1, synth_bins=4),
            Column("score", "numeric", lower=0, upper=1, step=0.1, synth_bins=(0.25, 0.75)),
            Column("odd", "numeric", lower=-3, upper=3, step=1.5))
    schema = TableSchema(cols, "y", ("no", "yes"))
    lv = dict(zip(TableDomain(schema).domain.attributes, TableDomain(schema).domain.levels,
                  strict=True))
    assert lv["age"] == ("[18, 23]", "[24, 29]", "[30, 35]", "[36, 40]")  # as bins={"age": 4}
    assert lv["score"] == ("[0, 0.2]", "[0.3, 0.7]", "[0.8, 1]")
    # a bins count applies to the columns without synth_bins; a mapping entry overrides them
    td = TableDomain(schema, bins=2)
    assert [len(x) for x in td.domain.levels[:3]] == [4, 3, 2]
    td = TableDomain(schema, bins={"age": 2})
    assert td.domain.levels[0] == ("[18, 29]", "[30, 40]")
    # JSON round trip, and the model file rebuilds the same domain
    back = TableSchema.from_dict(json.loads(json.dumps(schema.to_dict())))
    assert back.columns == schema.columns
    assert back.to_dict()["columns"][1]["synth_bins"] == [0.25, 0.75]
    assert back.to_dict()["columns"][0]["synth_bins"] == 4


@pytest.mark.parametrize("kw", [
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": 0},
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": True},
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": 2.5},
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": ()},
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": (0,)},   # not > lower
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": (5, 11)},  # > upper
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": (5, 5)},
    {"kind": "numeric", "lower": 0, "upper": 10, "step": 1, "synth_bins": (float("nan"),)},
    {"kind": "numeric", "lower": 0, "upper": 10, "bins": (5,), "synth_bins": 3},  # thermometer
    {"kind": "categorical", "levels": ("a", "b"), "synth_bins": 2},
])
def test_schema_synth_bins_are_validated(kw):
    with pytest.raises(ValueError, match="synth_bins"):
        Column("x", **kw)


def test_schema_synth_bins_json_is_validated():
    base = {"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1}
    for bad in ("4", {"n": 4}, 4.0, [1, "a"]):
        with pytest.raises(ValueError, match="synth_bins"):
            Column.from_dict({**base, "synth_bins": bad})
    assert Column.from_dict({**base, "synth_bins": [2, 6]}).synth_bins == (2.0, 6.0)


# --- types written back, extra columns, group privacy -------------------------------------------


def test_levels_come_back_as_declared():
    schema = TableSchema((Column("zip", "categorical", levels=("01", "02")),
                          Column("mix", "categorical", levels=("1.5", "2")),
                          Column("f", "categorical", levels=("1.0", "2.5")),
                          Column("i", "categorical", levels=("-1", "7"))), "y", ("0", "1"))
    td = TableDomain(schema)
    df = td.decode(_all_codes(td.domain), random_state=0)
    assert set(df["zip"]) == {"01", "02"} and set(df["mix"]) == {"1.5", "2"}
    assert df["f"].dtype == np.float64 and df["i"].dtype == np.int64
    text = df.to_csv(index=False)
    assert "01" in text and ",2," in text.replace("\n", ",")
    again = pd.read_csv(pd.io.common.StringIO(text), dtype=str, keep_default_na=False)
    np.testing.assert_array_equal(td.encode(again), _all_codes(td.domain))


def test_extra_columns_refused_unless_ignored(titanic, tmp_path, monkeypatch):
    path, schema = titanic
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.insert(0, "passenger_id", [str(i) for i in range(len(df))])
    extra = tmp_path / "extra.csv"
    df.to_csv(extra, index=False)
    a = TableSynthesizer(epsilon=1.0, random_state=0).fit(extra, schema)  # default: ignored
    b = TableSynthesizer(epsilon=1.0, random_state=0).fit(path, schema)
    np.testing.assert_array_equal(a.synthesizer_.model_.dense(), b.synthesizer_.model_.dense())
    _noise_forbidden(monkeypatch)
    with pytest.raises(BoundsViolation, match="passenger_id") as exc:
        TableSynthesizer(epsilon=1.0, random_state=0, ignore_extra=False).fit(extra, schema)
    assert "17" not in str(exc.value)
    with pytest.raises(TypeError, match="ignore_extra"):
        TableSynthesizer(epsilon=1.0, ignore_extra="no").fit(path, schema)


def test_records_per_person_guarantee_lines(titanic):
    path, schema = titanic
    from dataclasses import replace

    panel = replace(schema, records_per_person=3)
    syn = TableSynthesizer(epsilon=1.0, delta=1e-7, random_state=0).fit(path, panel)
    rho = zcdp_rho(1.0, 1e-7)
    assert syn.rho_ == pytest.approx(rho, rel=1e-9)
    eps3, delta3 = group_loss(1.0, 1e-7, 3)
    assert (syn.guarantee_per_person_.epsilon, syn.guarantee_per_person_.delta) == (
        pytest.approx(eps3), pytest.approx(delta3))
    lines = "\n".join(syn.guarantee_lines())
    assert "each person (up to 3 records" in lines and "one record replaced" in lines
    assert f"{rho:.6g}-zCDP" in lines and f"{9 * rho:.6g}-zCDP (k^2 rho" in lines
    assert f"epsilon {eps3:.4g}, delta {delta3:.3g}" in lines
    assert "NOT private" in lines
    assert "up to 3 of them" in syn.guarantee_in_plain_words()
    one = TableSynthesizer("mwem", epsilon=0.5, random_state=0).fit(path, schema)
    assert one.rho_ is None and "zCDP" not in one.guarantee_lines()[1]
    assert one.guarantee_lines()[0].startswith("protects: each record;")
    assert one.guarantee_lines()[0].endswith("declare the schema's records_per_person to "
                                             "protect each person")
    assert "protected per record only" not in lines  # the panel declared it


def test_vacuous_per_person_guarantee_is_refused_before_noise(titanic, monkeypatch):
    path, schema = titanic
    from dataclasses import replace

    _noise_forbidden(monkeypatch)
    panel = replace(schema, records_per_person=30)  # delta 1/n^2 grows by e^(29 eps)
    with pytest.raises(ValueError, match="vacuous"):
        TableSynthesizer(epsilon=1.0, random_state=0).fit(path, panel)


@pytest.mark.parametrize(("method", "options"), [
    ("oracle-query-pgm", {"estimator": "graphical", "final_iterations": 30}),
    ("oracle-query-pgm", {"final_iterations": 30}),  # one clique over every attribute
    ("mst", None), ("aim", None), ("mwem", {"rounds": 5}), ("independent", None)])
def test_one_model_same_rows_everywhere(titanic, tmp_path, method, options,
                                        short_peer_estimation):
    """Issue 38.1: the fitted synthesizer, TableSynthesizer, the saved and reloaded model and
    `oracledp synth sample` sample one GraphicalModel, for every method (a released
    distribution and independent marginals too): same seed, same rows."""
    from typer.testing import CliRunner

    from oracledp._cli import app

    path, schema = titanic
    syn = TableSynthesizer(method, epsilon=1.0, random_state=0, options=options).fit(
        path, schema)
    inner = syn.synthesizer_
    model = syn._release.model
    syn.save(tmp_path / "m")
    back = TableSynthesizer.load(tmp_path / "m")
    want = inner.sample_codes(400, random_state=7)
    np.testing.assert_array_equal(model.sample(400, np.random.default_rng(7)), want)
    np.testing.assert_array_equal(syn.sample_codes(400, random_state=7), want)
    np.testing.assert_array_equal(back.sample_codes(400, random_state=7), want)
    for a in range(len(model.shape)):  # the reloaded model is the model, bit for bit
        np.testing.assert_array_equal(back._release.model.marginal([a]), model.marginal([a]))
    res = CliRunner().invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "400",
                                   "--seed", "7"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    cli = pd.read_csv(io.StringIO(res.stdout), dtype=str, keep_default_na=False)
    mine = back.sample(400, random_state=7).astype(str)
    pd.testing.assert_frame_equal(cli, mine.reset_index(drop=True), check_dtype=False)
    rng = np.random.default_rng(7)  # the CLI's generator: codes, then decoding
    codes = inner.sample_codes(400, random_state=rng)
    pd.testing.assert_frame_equal(cli, syn.table_domain_.decode(codes, rng).astype(str),
                                  check_dtype=False)


def test_mst_samples_on_86_attributes():
    """Issue 38.1: MST's sampler contracted one einsum with a letter per attribute (52 at
    most); through the junction tree 86 attributes sample."""
    import functools

    from oracledp.synth import Domain, MSTSynthesizer, _peers

    d = 86
    rng = np.random.default_rng(0)
    dom = Domain(tuple(f"a{i}" for i in range(d)), tuple((0, 1) for _ in range(d)))
    codes = rng.integers(0, 2, size=(300, d))
    codes[:, 1::2] = codes[:, ::2]  # pairs of equal columns
    syn = MSTSynthesizer(1.0, 1e-6, random_state=0)
    orig = _peers.mst
    _peers.mst = functools.partial(orig, iters=20)
    try:
        syn.fit(codes, dom)
    finally:
        _peers.mst = orig
    out = syn.sample_codes(50, random_state=1)
    assert out.shape == (50, d) and np.isfinite(syn.result_.marginal([0, 40, 85])).all()


def test_a_method_that_refuses_the_domain_refuses_before_any_noise():
    """The method's own limits (check_domain) are checked on an upper bound of the model's
    domain before the numeric histograms draw noise: refused, nothing charged (issue 38.4)."""
    from oracledp.privacy import BudgetAccountant
    from oracledp.tabular import TableSchema

    cols = [{"name": f"c{i}", "type": "categorical", "levels": [str(v) for v in range(10)]}
            for i in range(8)]
    cols.append({"name": "x", "type": "numeric", "lower": 0, "upper": 365, "step": 1})
    schema = TableSchema.from_dict({"target": {"name": "y", "labels": ["no", "yes"]},
                                    "columns": cols})
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{i}": rng.integers(0, 10, 300).astype(str) for i in range(8)})
    df["x"] = rng.integers(0, 366, 300)
    df["y"] = rng.choice(["no", "yes"], 300)
    syn = TableSynthesizer("mwem", epsilon=1.0, random_state=0)  # 10^8 x 2 x bins cells
    with BudgetAccountant(5.0) as acct:
        with pytest.raises(ValueError, match="MWEM"):
            syn.fit(df, schema)
        assert not acct.spends and acct.spent == (0.0, 0.0)


def test_a_refitted_distribution_release_samples_its_new_model():
    """The sampler's model is built once per fit: refitting a released distribution
    (OracleQuery's) on other data samples the new release, not the first one's."""
    from oracledp.synth import Domain, OracleQuerySynthesizer

    dom = Domain(("a", "b"), (("0", "1", "2"), ("0", "1")))
    syn = OracleQuerySynthesizer(50.0, 1e-6, k=2, rounds=20, random_state=0)
    syn.fit(np.array([[0, 0]] * 400), dom)
    first = syn.sample_codes(200, random_state=1)
    syn.fit(np.array([[2, 1]] * 400), dom)
    second = syn.sample_codes(200, random_state=1)
    assert np.mean(first[:, 0] == 0) > 0.8 and np.mean(second[:, 0] == 2) > 0.8
