"""The schema's ``missing_values`` read one way by every path: a cell whose text is one of
them is missing, whatever number it writes and whatever the bounds.  Training (the data
engine's pass, ``fit``, ``schema check``) and prediction (pandas chunks, ``predict``,
``evaluate``) refuse the same file, or give the same cell the same code."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._errors import BoundsViolation
from oracledp.tabular import TableSchema, check_table
from oracledp.tabular._chunks import ChunkedEncoder, read_chunks
from oracledp.tabular._csv import read_csv
from oracledp.tabular._engine import _scan_frame, merge_rows, scan_table

BASE = {"target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "a", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]}
REFUSED = "'a': missing values"


def _schema(token: str, missing: str | None) -> TableSchema:
    d = json.loads(json.dumps(BASE))
    d["missing_values"] = [token]
    if missing is not None:
        d["columns"][0]["missing"] = missing
    return TableSchema.from_dict(d)


def _table(tmp_path, token: str = "5"):
    rng = np.random.default_rng(0)
    n = 1000
    a = rng.integers(0, 10, n).astype(str)
    a[::17] = token  # the token (inside or outside the bounds) in any case
    y = np.where(rng.random(n) < 0.5, "yes", "no")
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": a, "y": y}).to_csv(path, index=False)
    return path


def _predict_codes(path, schema: TableSchema):
    """The prediction path's codes (pandas chunks, as ``predict`` streams them), merged into
    distinct rows; a refusal raises as in ``predict``."""
    enc = ChunkedEncoder(schema, strict=True)
    chunks = list(read_chunks(path, schema, rows=100))
    for chunk in chunks:
        enc.add(chunk)
    enc.finish()
    codes = np.concatenate([enc.codes(c) for c in chunks])
    return merge_rows(codes, np.ones((len(codes), 1), dtype=np.int64))


@pytest.mark.parametrize("token", ["5", "-1", "5.0", "007"])
def test_a_refused_token_is_refused_by_every_path(tmp_path, token):
    """No 'missing' policy: training, the checker and prediction all refuse the file."""
    schema = _schema(token, None)
    path = _table(tmp_path, token)
    scan = scan_table(path, schema, with_target=True)
    assert any(REFUSED in m for m in scan.found.values())
    assert any(REFUSED in p for p in check_table(path, schema, ignore_extra=True))
    frame = _scan_frame(read_csv(path, check=False), schema, True, True, True)
    assert sorted(scan.found.items()) == sorted(frame.found.items())
    with pytest.raises(BoundsViolation, match=REFUSED):
        _predict_codes(path, schema)


@pytest.mark.parametrize("token", ["5", "-1", "5.0", "007"])
def test_a_token_is_the_missing_level_in_fit_and_predict(tmp_path, token):
    """``"missing": "level"``: the token's cells get the missing code in the training pass
    and in the prediction chunks alike (the same distinct rows and counts)."""
    schema = _schema(token, "level")
    path = _table(tmp_path, token)
    scan = scan_table(path, schema, with_target=False)
    assert not scan.found
    rows, counts = _predict_codes(path, schema)
    np.testing.assert_array_equal(scan.codes, rows)
    np.testing.assert_array_equal(scan.counts, counts)
    miss = schema.columns[0].n_values
    written = int((pd.read_csv(path, dtype=str)["a"] == token).sum())
    assert scan.counts[scan.codes[:, 0] == miss].sum() == written


def _cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_the_cli_reads_the_token_one_way(tmp_path):
    """The report's case: token "5" inside the bounds 0..9."""
    path = _table(tmp_path)
    refuse = tmp_path / "mvr.schema.json"
    refuse.write_text(_schema("5", None).to_json())
    level = tmp_path / "mv.schema.json"
    level.write_text(_schema("5", "level").to_json())

    r = _cli("schema", "check", path, "--schema", refuse)
    assert r.exit_code != 0 and REFUSED in r.output
    r = _cli("fit", path, "--schema", refuse, "--out", tmp_path / "m0", "--epsilon", 1)
    assert r.exit_code != 0 and REFUSED in r.output

    r = _cli("schema", "check", path, "--schema", level)
    assert r.exit_code == 0, r.output
    r = _cli("fit", path, "--schema", level, "--out", tmp_path / "m", "--epsilon", 1)
    assert r.exit_code == 0, r.output
    r = _cli("predict", tmp_path / "m", path)
    assert r.exit_code == 0, r.output
    r = _cli("evaluate", tmp_path / "m", path)
    assert r.exit_code == 0, r.output


CELLS = ["0", "1", "5", "5.0", "05", "007", "7", "9", "-1", "10", "", "NA", "?", "x", " 5"]


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_engine_reads_numeric_tokens_as_the_schema_does(tmp_path, data):
    """Random cells, tokens that write numbers inside and outside the bounds: the engine's
    problems, codes and counts are the schema's pandas scan's."""
    tokens = data.draw(st.lists(st.sampled_from(["5", "5.0", "007", "-1", "NA", "10"]),
                                min_size=1, max_size=3, unique=True))
    policy = data.draw(st.sampled_from([None, "level"]))
    d = json.loads(json.dumps(BASE))
    d["missing_values"] = tokens
    if policy:
        d["columns"][0]["missing"] = policy
    schema = TableSchema.from_dict(d)
    n = data.draw(st.integers(1, 30))
    a = data.draw(st.lists(st.sampled_from(CELLS), min_size=n, max_size=n))
    path = tmp_path / "r.csv"
    pd.DataFrame({"a": a, "y": ["no", "yes"] * (n // 2) + ["no"] * (n % 2)}).to_csv(
        path, index=False)
    got = scan_table(path, schema)
    want = _scan_frame(read_csv(path, check=False), schema, True, True, True)
    assert sorted(got.found.items()) == sorted(want.found.items())
    if got.codes is None or want.codes is None:
        assert got.codes is None and want.codes is None
    else:
        np.testing.assert_array_equal(got.codes, want.codes)
        np.testing.assert_array_equal(got.counts, want.counts)
