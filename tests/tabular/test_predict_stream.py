"""``oracledp predict`` streams (issue 39): the same bytes as reading the whole table, nothing
written on refusal, the whole table's rules (not one chunk's).

The reference is the former implementation: ``read_csv`` of the whole table, then
``encode`` (``--strict``) or ``encode_for_prediction`` and one ``to_csv``.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import oracledp.tabular as tabular
import oracledp.tabular._chunks as chunks
from oracledp._cli import app
from oracledp._cli_predict import _score_column
from oracledp.tabular import describe_adjusted, load_model, read_csv

DATA = Path(__file__).resolve().parents[2] / "src/oracledp/datasets/_data"
ENV = {"COLUMNS": "120"}


def _reference(model_dir: Path, data: Path, strict: bool, scores: bool) -> tuple[str, str]:
    """(stdout, the error or warning text) of the former whole-table predict."""
    saved = load_model(model_dir)
    df = read_csv(data, saved.schema, with_target=False, check=False)
    note = ""
    try:
        if strict:
            X = saved.schema.encode(df)
        else:
            X, adjusted = saved.schema.encode_for_prediction(df, warn=False)
            if adjusted:
                note = describe_adjusted(adjusted, len(df), strict_hint="pass --strict")
    except ValueError as exc:
        return "", f"{data}: {exc}"
    decision = X @ saved.coef + saved.intercept
    columns = {"prediction": saved.labels_of_scores(decision)}
    if scores:
        columns["score"] = _score_column(saved, decision)
    return pd.DataFrame(columns).to_csv(index=False), note


def _one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 64 rows, and the whole-table reader refused (the stream never calls it)."""
    seen: list[int] = []
    original = chunks.read_chunks

    def spy(*args, **kwargs):
        for chunk in original(*args, **{**kwargs, "rows": 64}):
            seen.append(len(chunk))
            yield chunk

    def refuse(*a, **k):  # pragma: no cover - must not run
        raise AssertionError("predict read the whole table")

    monkeypatch.setattr(chunks, "read_chunks", spy)
    monkeypatch.setattr(tabular, "read_csv", refuse)
    return seen


def _fit(runner, data: Path, schema: Path, out: Path, model: str) -> None:
    res = runner.invoke(app, ["fit", str(data), "--schema", str(schema), "--model", model,
                              "--epsilon", "1", "--seed", "0", "--out", str(out)], env=ENV)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(("name", "model"), [("biopsy", "rspm"), ("titanic", "dpsgd")])
def test_predict_streams_the_same_bytes(tmp_path, runner, small_chunks, name, model):
    data = tmp_path / f"{name}.csv"
    with gzip.open(DATA / f"{name}.csv.gz", "rb") as src, open(data, "wb") as dst:
        shutil.copyfileobj(src, dst)
    _fit(runner, data, DATA / f"{name}.schema.json", tmp_path / "m", model)
    for strict in (False, True):
        for scores in (False, True):
            want, note = _reference(tmp_path / "m", data, strict, scores)
            small_chunks.clear()
            args = ["predict", str(tmp_path / "m"), str(data)]
            res = runner.invoke(app, args + ["--strict"] * strict + ["--scores"] * scores,
                                    env=ENV)
            if not want:  # the whole table is refused: so is the stream, with the same line
                assert res.exit_code == 2 and res.stdout == ""
                assert res.stderr.strip() == f"error: {_one_line(note)}"
                continue
            assert res.exit_code == 0, res.output
            assert res.stdout == want  # byte for byte
            assert len(small_chunks) > 2 and max(small_chunks) <= 64
            assert (_one_line(note) in _one_line(res.stderr)) if note else res.stderr == ""


SCHEMA = {
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
                {"name": "c", "type": "categorical", "levels": ["a", "b", "c"]}],
}


def _table(tmp_path: Path, rows: list[tuple[object, str]], name: str = "t.csv") -> Path:
    path = tmp_path / name
    pd.DataFrame({"x": [r[0] for r in rows], "c": [r[1] for r in rows]}).to_csv(path,
                                                                              index=False)
    return path


@pytest.fixture
def model_dir(tmp_path, runner):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 11, 300)
    c = rng.choice(["a", "b", "c"], 300)
    y = np.where(x + (c == "a") * 3 + rng.normal(0, 2, 300) > 6, "yes", "no")
    train = tmp_path / "train.csv"
    pd.DataFrame({"x": x, "c": c, "y": y}).to_csv(train, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    _fit(runner, train, schema, tmp_path / "m", "dpsgd")
    return tmp_path / "m"


@pytest.mark.parametrize("strict", [True, False])
def test_a_bad_row_after_the_first_chunk_writes_nothing(tmp_path, runner, small_chunks,
                                                        model_dir, strict):
    rows = [(i % 11, "abc"[i % 3]) for i in range(300)]
    rows[250] = ("12345.5x", "b")  # text in a numeric column: refused in both modes
    data = _table(tmp_path, rows)
    want, note = _reference(model_dir, data, strict, True)
    assert want == "" and "finite numbers" in note
    out = tmp_path / "out.csv"
    res = runner.invoke(app, ["predict", str(model_dir), str(data), "--scores"]
                            + ["--strict"] * strict, env=ENV)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip() == f"error: {_one_line(note)}"
    clean = res.stderr.replace(str(tmp_path), "")  # a path such as pytest-250 is no record
    assert "12345" not in clean and "250" not in clean
    assert sum(small_chunks) == 300 and len(small_chunks) == 5  # every row read, once
    assert not out.exists()


def test_the_majority_rule_reads_the_whole_table(tmp_path, runner, small_chunks,
                                                 model_dir):
    # the first chunk is mostly unknown levels, the whole table is not: predicted, as before
    rows = [(i % 11, "zz" if i < 50 else "abc"[i % 3]) for i in range(300)]
    data = _table(tmp_path, rows)
    want, note = _reference(model_dir, data, False, True)
    assert want and "unknown level" in note
    res = runner.invoke(app, ["predict", str(model_dir), str(data), "--scores"], env=ENV)
    assert res.exit_code == 0 and res.stdout == want
    assert _one_line(note) in _one_line(res.stderr)
    # most of the table unknown, though the first chunks are not: refused, as before
    rows = [(i % 11, "abc"[i % 3] if i < 100 else "zz") for i in range(300)]
    data = _table(tmp_path, rows, "u.csv")
    want, note = _reference(model_dir, data, False, True)
    assert want == "" and "most values" in note
    res = runner.invoke(app, ["predict", str(model_dir), str(data)], env=ENV)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip() == f"error: {_one_line(note)}"


def test_parquet_streams_the_same_bytes_as_the_csv(tmp_path, runner, small_chunks,
                                                   model_dir):
    pytest.importorskip("pyarrow")
    rows = [(i % 11, "abc"[i % 3] if i % 7 else "q") for i in range(5000)]
    data = _table(tmp_path, rows)
    pq = tmp_path / "t.parquet"
    pd.read_csv(data, dtype=str).to_parquet(pq, row_group_size=700)
    want, _ = _reference(model_dir, data, False, True)
    res = runner.invoke(app, ["predict", str(model_dir), str(pq), "--scores"], env=ENV)
    assert res.exit_code == 0 and res.stdout == want
    assert len(small_chunks) > 2


def test_parquet_is_read_in_the_files_row_order(tmp_path):
    """read_csv (and so evaluate and the whole-table fits) of a Parquet file of many row groups
    gives its rows in the file's order, as the streamed predict does (DuckDB's reading with
    insertion order off gave them in any order)."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"x": rng.integers(0, 1000, 1_000_000).astype(str),
                       "c": rng.choice(["a", "b", "c"], 1_000_000)})
    pq = tmp_path / "t.parquet"
    df.to_parquet(pq, row_group_size=100_000)
    got = read_csv(pq)
    assert (got.to_numpy() == df.to_numpy()).all()
    streamed = pd.concat(list(chunks.read_chunks(pq, None, rows=100_000)), ignore_index=True)
    assert (streamed.to_numpy() == df.to_numpy()).all()
