"""Refusals never print a record's value, a row index or a count read from private data.

Sentinel strings and numbers are fed, as feature values, labels, levels, codes, out-of-range
numbers and next to NaN, through every refusal path reachable from the public API: the
estimators (OPDisc, RSPM, OPSamp, DP-SGD, Accuracy First), the table schema and its
transformer, the CLI (``fit``, ``predict``, ``evaluate``, ``schema infer``), the synthesizers
(OracleQuerySynthesizer, OracleQueryPGM, MWEM, independent marginals, MST, AIM, Domain) and
the dataset loaders (fed through their file readers).  No sentinel may appear in the
exception message (nor in the exception it was raised from), in a warning, or in CLI output.
A message names the column or rule and the public declaration only.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.baselines import DPSGDLogisticRegression
from oracledp.datasets import _adult as adult
from oracledp.datasets import _kdd99 as kdd99
from oracledp.estimators import (
    AccuracyFirstLogisticRegression,
    AccuracyFirstRidge,
    OPDiscClassifier,
    OPSampClassifier,
    RSPMClassifier,
)
from oracledp.oracles import FeatureSchema
from oracledp.synth import Domain, independent_marginals, kway_marginal_workload, mwem
from oracledp.synth._oracle_query import OracleQuerySynthesizer
from oracledp.synth._oracle_query_pgm import OracleQueryPGM
from oracledp.synth._peers import aim, mst
from oracledp.tabular import SchemaTransformer, TableSchema, read_csv

S = "SENTINEL-4711"  # a record value that must never be printed
N = 987654.321  # a numeric record value that must never be printed
LABEL = 4711  # an integer label / code that must never be printed
NEEDLES = ("SENTINEL", "4711", "987654", "9.87654", "9.8765", "9.877e", "9.88e+05",
           "9.9e+05", "1e+06")
ENV = {"COLUMNS": "200"}


def _assert_private(text: str, where: str) -> None:
    for needle in NEEDLES:
        assert needle not in text, f"{where}: {needle!r} printed in {text!r}"


def _messages(exc: BaseException) -> str:
    """The message and the messages of the exceptions it was raised from (shown by tracebacks)."""
    parts = []
    seen: BaseException | None = exc
    while seen is not None:
        parts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ if seen.__cause__ is not None else (
            None if seen.__suppress_context__ else seen.__context__)
    return "\n".join(parts)


def _refused(call: Callable[[], Any], where: str) -> BaseException:
    """Run ``call``: it must raise; neither the error nor any warning may show a sentinel."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((ValueError, TypeError)) as info:
            call()
    _assert_private(_messages(info.value), where)
    for w in caught:
        _assert_private(str(w.message), f"{where} (warning)")
    return info.value


# --- estimators ----------------------------------------------------------------------------

X_OK = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]] * 2)
Y_OK = np.array(["no", "yes", "yes", "no"] * 2, dtype=object)
BINARY = FeatureSchema(binary=(True, True), denominators=(1, 1), bounds=(1.0, 1.0))

ESTIMATORS: dict[str, Callable[..., Any]] = {
    "opdisc": lambda **k: OPDiscClassifier(1.0, schema=BINARY, oracle="brute", random_state=0,
                                           **k),
    "rspm": lambda **k: RSPMClassifier(1.0, schema=BINARY, oracle="brute", random_state=0,
                                       **k),
    "opsamp": lambda **k: OPSampClassifier(1.0, 1e-3, feature_bound=1.0, feature_l1_bound=2.0,
                                           random_state=0, **k),
    "dpsgd": lambda **k: DPSGDLogisticRegression(1.0, 1e-3, random_state=0, **k),
    "accuracy-first": lambda **k: AccuracyFirstLogisticRegression(0.1, random_state=0, **k),
}
#: Rows of Accuracy First must have ||x||_1 <= 1: its valid X is scaled by a public 1/2.
SCALE = {"accuracy-first": 0.5}


def _with(arr: np.ndarray, i: int, j: int | None, value: Any) -> np.ndarray:
    out = np.array(arr, dtype=object)
    if j is None:
        out[i] = value
    else:
        out[i, j] = value
    return out


def _estimator_cases(name: str) -> dict[str, tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
    X = X_OK * SCALE.get(name, 1.0)
    cases = {
        "undeclared string label": (X, _with(Y_OK, 5, None, S), {"classes": ["no", "yes"]}),
        "undeclared integer label": (X, np.array([0, 1, 1, 0, 0, LABEL, 1, 0]),
                                     {"classes": [0, 1]}),
        "undeclared float label": (X, np.array([0, 1, 1, 0, 0, N, 1, 0]), {"classes": [0, 1]}),
        "third class": (X, _with(Y_OK, 3, None, S), {}),
        "third integer class": (X, np.array([0, 1, 1, 0, 0, LABEL, 1, 0]), {}),
        "one class": (X, np.array([S] * 8, dtype=object), {}),
        "NaN label next to a sentinel": (X, np.array([0, 1, np.nan, 0, 0, N, 1, 0]),
                                         {"classes": [0, 1]}),
        "text feature": (_with(X, 6, 1, S), Y_OK, {}),
        "text feature in a DataFrame": (pd.DataFrame(_with(X, 6, 1, S), columns=["a", "b"]),
                                        Y_OK, {}),
        "numeric text feature": (_with(X, 6, 1, f"{N}x"), Y_OK, {}),
        "NaN feature": (np.where(np.arange(16).reshape(8, 2) == 13, np.nan, X), Y_OK, {}),
        "1-D X": (np.array([N, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]), Y_OK, {}),
        "complex feature": (np.array(X, dtype=complex) + np.where(
            np.arange(16).reshape(8, 2) == 9, N * 1j, 0), Y_OK, {}),
    }
    if name != "dpsgd":  # DP-SGD clips per-example gradients: it declares no feature bound
        cases["feature above its public bound"] = (_with(X, 2, 0, N).astype(float), Y_OK, {})
        cases["negative feature"] = (_with(X, 2, 0, -N).astype(float), Y_OK, {})
    return cases


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimator_fit_refusals_print_no_value(name):
    for case, (X, y, kw) in _estimator_cases(name).items():
        gen = np.random.default_rng(0)
        state = gen.bit_generator.state
        est = ESTIMATORS[name](**kw)
        est.set_params(random_state=gen)
        _refused(lambda est=est, X=X, y=y: est.fit(X, y), f"{name}: {case}")
        assert gen.bit_generator.state == state, f"{name}: {case}: noise drawn before refusal"


@pytest.mark.parametrize("name", ["opdisc", "rspm"])
def test_record_count_refusals_print_no_value(name):
    """sample_weight holds record counts (data): a refusal shows neither a weight nor a count."""
    ones = np.ones(len(X_OK))
    for case, w in {"fraction": _with(ones, 5, None, N).astype(float),
                    "negative": _with(ones, 5, None, -LABEL).astype(float),
                    "NaN next to a sentinel": np.where(np.arange(8) == 2, np.nan,
                                                       _with(ones, 5, None, N).astype(float)),
                    "text": _with(ones, 5, None, S),
                    "wrong length": np.full(LABEL, 1.0), "all zero": 0 * ones}.items():
        _refused(lambda w=w: ESTIMATORS[name]().fit(X_OK, Y_OK, sample_weight=w),
                 f"{name}: sample_weight {case}")


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimator_predict_refusals_print_no_value(name):
    X = X_OK * SCALE.get(name, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. Accuracy First's ex-post notice
        est = ESTIMATORS[name]().fit(X, Y_OK)
    for case, bad in {"text": _with(X, 1, 0, S), "NaN": _with(X, 1, 0, np.nan).astype(float),
                      "1-D": np.array([N, 0.0]), "3 features": np.full((2, 3), N)}.items():
        for method in ("predict", "decision_function"):
            _refused(lambda bad=bad, m=method: getattr(est, m)(bad), f"{name}.{method}: {case}")


def test_ridge_refusals_print_no_value():
    X = X_OK * 0.5
    y = np.linspace(-0.5, 0.5, 8)
    for case, (Xc, yc) in {
        "target above 1": (X, _with(y, 4, None, N).astype(float)),
        "text target": (X, _with(y, 4, None, S)),
        "text feature": (_with(X, 3, 1, S), y),
        "row l1 above 1": (_with(X, 3, 1, N).astype(float), y),
    }.items():
        est = AccuracyFirstRidge(0.1, random_state=0)
        _refused(lambda est=est, Xc=Xc, yc=yc: est.fit(Xc, yc), f"ridge: {case}")


# --- table schema ------------------------------------------------------------------------

SCHEMA = {
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [
        {"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
        {"name": "c", "type": "categorical", "levels": ["a", "b"]},
        {"name": "t", "type": "numeric", "lower": 0, "upper": 100, "bins": [10, 50]},
    ],
}
GOOD_ROWS = [("1", "a", "5", "no"), ("9", "b", "75", "yes"), ("5", "a", "20", "no"),
             ("3", "b", "60", "yes")]

#: One bad row per case: the sentinel in every column and rule (header x,c,t,y).
BAD_ROWS = {
    "unknown level": ("2", S, "5", "no"),
    "numeric level": ("2", str(LABEL), "5", "no"),
    "number above bound": (str(N), "a", "5", "no"),
    "number below bound": (str(-N), "a", "5", "no"),
    "binned number above bound": ("2", "a", str(N), "yes"),
    "text in numeric": (S, "a", "5", "no"),
    "text in binned": ("2", "a", S, "no"),
    "undeclared label": ("2", "a", "5", S),
    "numeric label": ("2", "a", "5", str(N)),
    "nan next to a sentinel": ("nan", S, "5", "no"),
    "missing next to a sentinel": ("", "a", str(N), "no"),
    "infinite": ("inf", "a", "5", S),
}


#: The cases the prediction policy encodes (clip, all-zero one-hot) instead of refusing.
POLICY_CASES = {"unknown level", "numeric level", "number above bound", "number below bound",
                "binned number above bound"}


def _frame(bad: tuple[str, ...] | None) -> pd.DataFrame:
    rows = [*GOOD_ROWS[:2], *([bad] if bad else []), *GOOD_ROWS[2:]]
    return pd.DataFrame(rows, columns=["x", "c", "t", "y"])


def test_schema_and_transformer_refusals_print_no_value():
    schema = TableSchema.from_dict(SCHEMA)
    for case, bad in BAD_ROWS.items():
        df = _frame(bad)
        feats = df.drop(columns="y")
        target_only = case in ("undeclared label", "numeric label")
        calls: dict[str, Callable[[], Any]] = {
            "check with target": lambda df=df: schema.check(df, with_target=True),
            "read_csv": lambda df=df: read_csv(df.to_csv(index=False).encode(), schema,
                                               with_target=True),
        }
        if target_only:  # labels_of checks the target column only
            calls["labels_of"] = lambda df=df: schema.labels_of(df)
        else:
            calls |= {
                "check": lambda f=feats: schema.check(f),
                "encode": lambda f=feats: schema.encode(f),
                "transformer fit": lambda f=feats: SchemaTransformer(schema).fit(f),
                "transformer transform": lambda f=feats: SchemaTransformer(
                    schema, on_unknown="refuse").fit(_frame(None).drop(columns="y")).transform(f),
            }
        for what, call in calls.items():
            _refused(call, f"{what}: {case}")
        if case in POLICY_CASES:  # the prediction policy encodes the row; its warning counts
            for call in (lambda f=feats: schema.encode_for_prediction(f),
                         lambda f=feats: SchemaTransformer(schema).fit(
                             _frame(None).drop(columns="y")).transform(f)):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    call()
                assert len(caught) == 1 and "1 row(s)" in str(caught[0].message), case
                _assert_private(str(caught[0].message), f"policy warning: {case}")
        elif not target_only:
            _refused(lambda f=feats: schema.encode_for_prediction(f), f"policy: {case}")
    # Raw (non-string) frames too: a float NaN and a sentinel number in an object column.
    raw = pd.DataFrame({"x": [1.0, np.nan, N], "c": ["a", S, None], "t": [5, N, -N]})
    _refused(lambda: schema.encode(raw), "encode raw frame")


def test_schema_propose_refusal_prints_no_label():
    df = _frame(BAD_ROWS["undeclared label"])  # three labels in the target
    _refused(lambda: TableSchema.propose(df, target="y"), "propose: three labels")
    one = pd.DataFrame({"x": ["1", "2"], "y": [S, S]})
    _refused(lambda: TableSchema.propose(one, target="y"), "propose: one label")


# --- CLI -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A public schema, a model fitted through the CLI on clean rows, one CSV per bad row."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "schema.json").write_text(json.dumps(SCHEMA))
    clean = "x,c,t,y\n" + "".join(",".join(r) + "\n" for r in GOOD_ROWS * 5)
    (tmp / "clean.csv").write_text(clean)
    res = CliRunner().invoke(app, ["fit", str(tmp / "clean.csv"), "--schema",
                                   str(tmp / "schema.json"), "--model", "dpsgd",
                                   "--epsilon", "1", "--seed", "0", "--out", str(tmp / "m")],
                             env=ENV)
    assert res.exit_code == 0, res.output
    files = {"schema": tmp / "schema.json", "model": tmp / "m", "clean": tmp / "clean.csv"}
    for i, (case, bad) in enumerate(BAD_ROWS.items()):
        p = tmp / f"bad{i}.csv"
        p.write_text(clean + ",".join(bad) + "\n" + clean.split("\n", 1)[1])
        files[case] = p
    p = tmp / "ragged.csv"
    p.write_text(clean + f"2,a,5,no,{S}\n")
    files["ragged row"] = p
    return files


def _cli_refused(args: list[str], where: str) -> None:
    res = CliRunner().invoke(app, args, env=ENV)
    assert res.exit_code == 2, f"{where}: exit {res.exit_code}: {res.output}"
    assert isinstance(res.exception, SystemExit), where  # a message, no traceback
    assert res.stderr.startswith("error: "), where
    out, err = res.stdout, res.stderr
    for arg in sorted(args, key=len, reverse=True):  # file names may hold any digits
        if "/" in arg:
            out, err = out.replace(arg, "<path>"), err.replace(arg, "<path>")
    _assert_private(out, f"{where} (stdout)")
    _assert_private(err, f"{where} (stderr)")


@pytest.mark.parametrize("case", [*BAD_ROWS, "ragged row"])
def test_cli_refusals_print_no_value(cli_files, tmp_path, case):
    data = str(cli_files[case])
    target_only = case in ("undeclared label", "numeric label")
    for model in ("opdisc", "dpsgd"):
        _cli_refused(["fit", data, "--schema", str(cli_files["schema"]), "--model", model,
                      "--epsilon", "1", "--out", str(tmp_path / model)], f"fit {model}: {case}")
        assert not (tmp_path / model).exists()
    commands = ["evaluate"] + ([] if target_only else ["predict"])
    for cmd in commands:
        _cli_refused([cmd, str(cli_files["model"]), data, "--strict"], f"{cmd} --strict: {case}")
        if case not in POLICY_CASES:
            _cli_refused([cmd, str(cli_files["model"]), data], f"{cmd}: {case}")
            continue
        res = CliRunner().invoke(app, [cmd, str(cli_files["model"]), data], env=ENV)
        assert res.exit_code == 0, f"{cmd}: {case}: {res.output}"
        assert res.stderr.startswith("warning: ") and "1 row(s)" in res.stderr, case
        _assert_private(res.stderr.replace(data, "<path>"), f"{cmd} policy: {case}")


def test_cli_schema_infer_refusal_prints_no_label(cli_files):
    _cli_refused(["schema", "infer", str(cli_files["undeclared label"]), "--target", "y"],
                 "schema infer: three labels")


# --- synthesizers ----------------------------------------------------------------------------

DOMAIN = Domain(("diagnosis", "sex", "n"), (("none", "flu"), ("F", "M"), (0, 1, 2)))
CODES_OK = np.array([[0, 1, 2], [1, 0, 0], [0, 0, 1], [1, 1, 2]] * 3)
FRAME_OK = DOMAIN.decode(CODES_OK)

BAD_DATA: dict[str, Any] = {
    "unknown level": FRAME_OK.assign(diagnosis=[*["none"] * 7, S, *["flu"] * 4]),
    "unknown integer level": FRAME_OK.assign(n=[*[0] * 5, LABEL, *[1] * 6]),
    "missing next to a sentinel": FRAME_OK.assign(
        sex=[None, *["F"] * 10, "M"], diagnosis=[*["none"] * 11, S]),
    "continuous column": FRAME_OK.assign(n=[*[0.0] * 11, N]),
    "code too large": _with(CODES_OK, 7, 2, LABEL).astype(np.int64),
    "negative code": _with(CODES_OK, 3, 0, -LABEL).astype(np.int64),
    "NaN code": _with(CODES_OK, 3, 0, np.nan).astype(float),
}


def test_synthesizer_refusals_print_no_value():
    wl = kway_marginal_workload(DOMAIN, 2)
    synths: dict[str, Callable[[Any], Any]] = {
        "OracleQuerySynthesizer": lambda d: OracleQuerySynthesizer(
            1.0, 1e-6, k=2, rounds=2, random_state=0).fit(d, DOMAIN),
        "OracleQueryPGM": lambda d: OracleQueryPGM(1.0, 1e-6, k=2, rounds=2,
                                                   random_state=0).fit(d, DOMAIN),
    }
    on_codes: dict[str, Callable[[Any], Any]] = {
        "mwem": lambda c: mwem(c, DOMAIN, wl, 1.0, 2, 0),
        "independent_marginals": lambda c: independent_marginals(c, DOMAIN, 1.0, 0),
        "mst": lambda c: mst(c, DOMAIN, 1.0, 1e-6, 0),
        "aim": lambda c: aim(c, DOMAIN, 1.0, 1e-6, 0),
        "Domain.decode": DOMAIN.decode,
        "Domain.check_codes": DOMAIN.check_codes,
    }
    for case, data in BAD_DATA.items():
        codes_case = isinstance(data, np.ndarray)
        for name, fit in synths.items():
            _refused(lambda fit=fit, data=data: fit(data), f"{name}: {case}")
        if codes_case:
            for name, run in on_codes.items():
                _refused(lambda run=run, data=data: run(data), f"{name}: {case}")
        else:
            _refused(lambda data=data: DOMAIN.encode(data), f"Domain.encode: {case}")


# --- dataset loaders --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult_rows() -> pd.DataFrame:
    return adult._read_split("train").head(40).reset_index(drop=True)


@pytest.mark.parametrize("column, value, attributes", [
    ("age", str(N), ["age", "race"]),
    ("age", S, ["age"]),
    ("race", S, ["age", "race"]),
    ("workclass", S, ["workclass"]),
    ("income", S, ["age"]),
    ("income", str(LABEL), ["age"]),
])
def test_adult_loader_refusals_print_no_value(monkeypatch, adult_rows, column, value,
                                              attributes):
    df = adult_rows.copy()
    df.loc[17, column] = value
    monkeypatch.setattr(adult, "_read_split", lambda split: df)
    for missing in ("raise", "category"):
        _refused(lambda m=missing: adult.load_adult(attributes=attributes, balanced=False,
                                                     missing=m),
                 f"load_adult({column}={value!r}, missing={missing})")


def test_adult_categorical_loader_refusal_prints_no_value(monkeypatch, adult_rows):
    from oracledp.synth import load_adult_categorical

    df = adult_rows.copy()
    complete = df.index[~(df == "?").any(axis=1)]  # rows that complete_rows=True keeps
    df.loc[complete[3], "occupation"] = S
    df.loc[complete[4], "sex"] = str(LABEL)
    monkeypatch.setattr(adult, "_read_split", lambda split: df)
    for complete in (True, False):
        _refused(lambda c=complete: load_adult_categorical(complete_rows=c),
                 f"load_adult_categorical(complete_rows={complete})")


def test_kdd99_loader_refusals_print_no_value(monkeypatch):
    total = kdd99.FILES[kdd99.FILE].records
    row = np.zeros(len(kdd99.NUMERIC_COLUMNS))
    names = list(kdd99.NUMERIC_COLUMNS)
    negative = row.copy()
    negative[names.index("count")] = -N
    huge = row.copy()
    huge[names.index("src_bytes")] = N * 1e6
    attack = np.broadcast_to(np.array([True]), (total,))
    for task, values in (("logistic", negative), ("ridge", huge)):
        table = (np.broadcast_to(values, (total, len(values))), attack)
        monkeypatch.setattr(kdd99, "_numeric_table", lambda table=table: table)
        _refused(lambda task=task: kdd99.load_kdd99(n=20, random_state=0, task=task),
                 f"load_kdd99(task={task})")


def test_sentinels_are_detected():
    """The detector itself: each way a sentinel could be formatted is caught."""
    for text in (repr(S), f"{N}", f"{N:g}", f"{N:.3g}", f"{N:.4g}", f"{N:.6g}", f"{N:.2g}",
                 str(LABEL), f"{float(N * 1e6):g}", f"{-N}", repr(np.float64(N))):
        with pytest.raises(AssertionError):
            _assert_private(f"... {text} ...", "detector")
    assert math.isfinite(N)


# --- counts and row indices ------------------------------------------------------------------


def _bad_from_4711(n_bad: int = LABEL) -> np.ndarray:
    """A mask of 2 * 4711 rows whose last 4711 (from row index 4711 on) are bad."""
    return np.arange(2 * LABEL) >= 2 * LABEL - n_bad


def test_counts_and_row_indices_are_not_printed(monkeypatch, tmp_path):
    """4711 bad records, the first at row 4711: neither number may be printed."""
    bad = _bad_from_4711()
    n = bad.size
    # estimators: plain, innocuous undeclared labels
    X = np.tile(X_OK[:2], (n // 2, 1))
    y = np.where(bad, "maybe", np.where(np.arange(n) % 2, "yes", "no")).astype(object)
    for name, make in ESTIMATORS.items():
        Xs = X * SCALE.get(name, 1.0)
        _refused(lambda make=make, Xs=Xs: make(classes=["no", "yes"]).fit(Xs, y),
                 f"{name}: 4711 undeclared labels")
    # Domain.encode / check_codes
    frame = pd.DataFrame({"diagnosis": np.where(bad, "other", "none"), "sex": ["F"] * n,
                          "n": [1] * n})
    _refused(lambda: DOMAIN.encode(frame), "Domain.encode: 4711 unknown levels")
    codes = np.zeros((n, 3), dtype=np.int64)
    codes[bad, 1] = 5
    _refused(lambda: DOMAIN.check_codes(codes), "Domain.check_codes: 4711 bad codes")
    # table schema, and its proposal from data (4711 distinct labels)
    schema = TableSchema.from_dict(SCHEMA)
    df = pd.DataFrame({"x": np.where(bad, "11", "1"), "c": np.where(bad, "z", "a"),
                       "t": ["5"] * n, "y": np.where(bad, "maybe", "no")})
    _refused(lambda: schema.check(df, with_target=True), "TableSchema.check: 4711 bad rows")
    many = pd.DataFrame({"x": ["1"] * LABEL, "y": [f"label{i % 97}-{i}" for i in range(LABEL)]})
    _refused(lambda: TableSchema.propose(many, target="y"), "propose: 4711 labels")
    # CLI
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    df.to_csv(tmp_path / "bad.csv", index=False)
    _cli_refused(["fit", str(tmp_path / "bad.csv"), "--schema", str(tmp_path / "schema.json"),
                  "--epsilon", "1", "--out", str(tmp_path / "m")], "fit: 4711 bad rows")
    # the Adult loader (its file reader fed 2 * 4711 records)
    rows = adult._read_split("train").head(n).reset_index(drop=True)
    rows.loc[bad, "age"] = "200"
    rows.loc[bad, "race"] = "Martian"
    monkeypatch.setattr(adult, "_read_split", lambda split: rows)
    _refused(lambda: adult.load_adult(attributes=["age", "race"], balanced=False),
             "load_adult: 4711 bad records")
