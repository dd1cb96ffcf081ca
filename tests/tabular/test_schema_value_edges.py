"""Schema and value edge cases: levels that are not a list, spaces around values and header
names (refused by every reading path, never stripped), and numbers as large as 1e308 (one
error, no numpy warning)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp._errors import BoundsViolation, ClippedValuesWarning
from oracledp.tabular import (
    Column,
    TableInputError,
    TableSchema,
    check_table,
    read_aggregated,
    read_csv,
)

ENV = {"COLUMNS": "200"}

#: step 0.5: (1e308 - 0) / 0.5 overflows a float.
SCHEMA = {
    "target": {"name": "y", "labels": ["0", "1"]},
    "columns": [
        {"name": "uria", "type": "numeric", "lower": 0, "upper": 10, "step": 0.5},
        {"name": "answer", "type": "categorical", "levels": ["no", "yes"]},
    ],
}
GOOD = "uria,answer,y\n1,yes,0\n2.5,no,1\n3,yes,1\n"
BOUNDS = "column 'uria': values must lie in [0, 10]"


@pytest.fixture
def schema() -> TableSchema:
    return TableSchema.from_dict(SCHEMA)


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args), env=ENV)


def _write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- levels, bins and labels are lists ---------------------------------------------------------


def _with_column(col: dict) -> dict:
    return {**SCHEMA, "columns": [c if c["name"] != col["name"] else col
                                  for c in SCHEMA["columns"]]}


NOT_LISTS = {
    "levels as an object": (_with_column({"name": "answer", "type": "categorical",
                                          "levels": {"no": 0, "yes": 1}}),
                            r"column 'answer': 'levels' must be a list"),
    "levels as a string": (_with_column({"name": "answer", "type": "categorical",
                                         "levels": "yes"}),
                           r"column 'answer': 'levels' must be a list"),
    "bins as an object": (_with_column({"name": "uria", "type": "numeric", "lower": 0,
                                        "upper": 10, "bins": {"5": 1}}),
                          r"column 'uria': 'bins' must be a list"),
    "labels as an object": ({**SCHEMA, "target": {"name": "y", "labels": {"0": 0, "1": 1}}},
                            r"target 'y': 'labels' must be a list"),
}


@pytest.mark.parametrize("case", list(NOT_LISTS))
def test_levels_bins_and_labels_that_are_not_lists_are_refused(case, tmp_path):
    d, pattern = NOT_LISTS[case]
    with pytest.raises(ValueError, match=pattern):
        TableSchema.from_dict(d)
    (tmp_path / "s.json").write_text(json.dumps(d))
    res = _invoke("schema", "check", str(_write(tmp_path, GOOD)), "--schema",
                  str(tmp_path / "s.json"))
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "must be a list" in lines[0]


@pytest.mark.parametrize("levels", [{"no": 0, "yes": 1}, "yes", {"no", "yes"}])
def test_the_column_constructor_refuses_levels_that_are_not_a_sequence(levels):
    with pytest.raises(ValueError, match="'levels' must be a list"):
        Column("answer", "categorical", levels=levels)


# --- spaces around values and header names -----------------------------------------------------


#: Each file has one cell (or header name) with a space before or after it.
SPACED_VALUES = {
    "answer": "uria,answer,y\n1, yes,0\n2.5,no,1\n3,yes,1\n",
    "uria": "uria,answer,y\n1 ,yes,0\n2.5,no,1\n3,yes,1\n",
    "y": "uria,answer,y\n1,yes,0\n2.5,no, 1\n3,yes,1\n",
}
SPACES = "leading or trailing spaces"


def _refusals(path: Path, schema: TableSchema) -> list[str]:
    """The message of every reading path for ``path`` (each must refuse it)."""
    out = []
    for read in (lambda: read_csv(path, schema, with_target=True),
                 lambda: read_aggregated(path, schema),
                 lambda: read_aggregated(path, schema)):
        with pytest.raises(BoundsViolation) as exc:
            read()
        out.append(str(exc.value))
    out.append("; ".join(check_table(path, schema)))
    df = read_csv(path)
    for encode in (schema.encode, lambda f: schema.encode_for_prediction(f, warn=False)):
        try:
            encode(df.drop(columns=[c for c in df.columns if c.strip() == "y"]))
        except BoundsViolation as exc:
            out.append(str(exc))
    return out


@pytest.mark.parametrize("column", list(SPACED_VALUES))
def test_a_value_with_spaces_is_refused_by_every_path_naming_the_column(column, schema,
                                                                         tmp_path):
    path = _write(tmp_path, SPACED_VALUES[column])
    messages = _refusals(path, schema)
    # the three readers and check_table; encode and the prediction policy for a feature column
    assert len(messages) == (4 if column == "y" else 6)
    for msg in messages:
        assert f"{'target' if column == 'y' else 'column'} {column!r}" in msg, msg
        assert SPACES in msg, msg
        assert "' yes'" not in msg and "'1 '" not in msg and "' 1'" not in msg
        assert "declared levels" not in msg  # not reported as an unknown level too
    res = _invoke("schema", "check", str(path), "--schema", _schema_file(tmp_path))
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and SPACES in lines[0]


def _schema_file(tmp_path: Path, d: dict | None = None) -> str:
    p = tmp_path / "s.json"
    p.write_text(json.dumps(d or SCHEMA))
    return str(p)


def test_a_blank_cell_of_spaces_is_not_read_as_missing(tmp_path):
    d = _with_column({"name": "answer", "type": "categorical", "levels": ["no", "yes"],
                      "missing": "level"})
    schema = TableSchema.from_dict(d)
    assert check_table(_write(tmp_path, "uria,answer,y\n1,,0\n2.5,no,1\n"), schema) == []
    problems = check_table(_write(tmp_path, "uria,answer,y\n1, ,0\n2.5,no,1\n"), schema)
    assert len(problems) == 1 and "column 'answer'" in problems[0] and SPACES in problems[0]


@pytest.mark.parametrize("header", ["uria ,answer,y", " uria,answer,y", "uria,answer,y "])
def test_a_header_name_with_spaces_is_refused_by_every_path(header, schema, tmp_path):
    path = _write(tmp_path, GOOD.replace("uria,answer,y", header, 1))
    spaced = next(n for n in header.split(",") if n != n.strip())
    for msg in _refusals(path, schema):
        assert f"{spaced!r}" in msg and SPACES in msg, msg
        assert "missing column" not in msg, msg  # one problem, said once
    with pytest.raises(TableInputError, match=f"{spaced!r}.*{SPACES}"):
        TableSchema.infer(path, target="y")


@pytest.mark.parametrize("column", list(SPACED_VALUES))
def test_schema_infer_refuses_values_with_spaces(column, tmp_path):
    path = _write(tmp_path, SPACED_VALUES[column])
    with pytest.raises(TableInputError, match=f"column {column!r}.*{SPACES}"):
        TableSchema.infer(path, target="y")
    res = _invoke("schema", "infer", str(path), "--target", "y")
    assert res.exit_code == 2 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and SPACES in lines[0]
    assert "' yes'" not in res.stderr


def test_a_crlf_file_reads_its_names_and_values_exactly(schema, tmp_path):
    path = tmp_path / "crlf.csv"
    path.write_bytes(GOOD.replace("\n", "\r\n").encode())
    df = read_csv(path, schema, with_target=True)
    assert list(df.columns) == ["uria", "answer", "y"]
    assert read_aggregated(path, schema).n == 3 and check_table(path, schema) == []


@pytest.mark.parametrize("make", [
    lambda: Column("answer", "categorical", levels=("no", " yes")),
    lambda: Column("uria ", "numeric", lower=0, upper=1, step=1),
    lambda: TableSchema((Column("a", "numeric", lower=0, upper=1, step=1),), "y",
                        ("0", "1 ")),
    lambda: TableSchema((Column("a", "numeric", lower=0, upper=1, step=1),), " y",
                        ("0", "1")),
    lambda: TableSchema((Column("a", "numeric", lower=0, upper=1, step=1),), "y",
                        ("0", "1"), missing_values=(" NA",)),
])
def test_a_schema_cannot_declare_names_levels_or_labels_with_spaces(make):
    with pytest.raises(ValueError, match=SPACES):
        make()


# --- numbers as large as 1e308 -----------------------------------------------------------------

HUGE = "uria,answer,y\n1e308,yes,0\n-1e308,no,1\n3,yes,1\n"


def test_a_huge_number_gives_the_bounds_error_and_no_numpy_warning(schema, tmp_path):
    path = _write(tmp_path, HUGE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (overflow) would raise here
        for read in (lambda: read_csv(path, schema, with_target=True),
                     lambda: read_aggregated(path, schema),
                     lambda: schema.encode(read_csv(path)[["uria", "answer"]])):
            with pytest.raises(BoundsViolation, match=BOUNDS.replace("[", r"\[")):
                read()
        assert [p.split(" (")[0] for p in check_table(path, schema)] == [BOUNDS]
        X, adjusted = schema.encode_for_prediction(read_csv(path)[["uria", "answer"]],
                                                   warn=False)
        assert adjusted == {"uria": {"clipped": 2}} and X[:2, 0].tolist() == [1.0, 0.0]
        clipped = TableSchema.from_dict(_with_column({**SCHEMA["columns"][0],
                                                      "out_of_bounds": "clip"}))
        with pytest.warns(ClippedValuesWarning, match="'uria'"):
            X = clipped.encode(read_csv(path)[["uria", "answer"]])
        assert X[:2, 0].tolist() == [1.0, 0.0]


#: Runs ``oracledp`` (what ``python -m oracledp`` runs) once per argument list given as JSON, in
#: this one fresh interpreter, each command's stderr followed by its exit code as ``<<exit N>>``.
_CLI_COMMANDS = """
import json, sys
from oracledp.__main__ import main
for args in json.loads(sys.argv[1]):
    sys.argv = ["oracledp", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code
    print("<<exit %s>>" % code, file=sys.stderr, flush=True)
"""


def test_a_huge_number_and_the_cli_print_exactly_one_error_line(tmp_path):
    """In a fresh interpreter with Python's default warning filters (a numpy warning would be
    printed on stderr): each command prints one ``error:`` line and exits 2.  The three commands
    run in one interpreter (one start-up instead of three); a warning is printed at its first
    occurrence, so whichever command first emits it fails its check."""
    import json

    path = _write(tmp_path, HUGE)
    s = _schema_file(tmp_path)
    env = {**os.environ, **ENV, "PYTHONWARNINGS": "default"}
    commands = [["schema", "check", str(path), "--schema", s],
                ["fit", str(path), "--schema", s, "--model", "dpsgd", "--epsilon", "1",
                 "--out", str(tmp_path / "m1")],
                ["fit", str(path), "--schema", s, "--model", "rspm", "--epsilon", "1",
                 "--out", str(tmp_path / "m2")]]
    proc = subprocess.run([sys.executable, "-c", _CLI_COMMANDS, json.dumps(commands)],
                          capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    # [stderr of command 1, its exit code, stderr of command 2, ..., ""]
    parts = re.split(r"<<exit (\S*)>>\n", proc.stderr)
    assert len(parts) == 2 * len(commands) + 1 and parts[-1] == "", proc.stderr
    for args, err, code in zip(commands, parts[0:-1:2], parts[1::2], strict=True):
        assert code == "2", (args, proc.stderr)
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and BOUNDS in lines[0], \
            (args, proc.stderr)


def test_bounds_whose_span_overflows_are_refused_with_a_value_error():
    for lower, upper, step in ((-1e308, 1e308, 1), (0, 1e308, 1e-10)):
        with pytest.raises(ValueError, match="column 'uria'"):
            Column("uria", "numeric", lower=lower, upper=upper, step=step)


def test_schema_infer_on_huge_numbers_warns_nothing_from_numpy(tmp_path):
    path = _write(tmp_path, HUGE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        schema, warns = TableSchema.infer(path, target="y")
    uria = schema.columns[0]
    assert uria.kind == "unresolved" and "too large" in uria.note
    assert any("'uria'" in w and "too large" in w for w in warns)
    assert not any("e+30" in w for w in warns)


@pytest.mark.timeout(60)
def test_the_cli_passes_on_a_warning_that_is_not_its_own_once():
    """``schema check`` and ``fit`` print ClippedValuesWarning as a ``warning:`` line and pass
    any other warning on, once: re-issued while still recording, it was recorded again and
    again (the command never ended and its memory grew without bound)."""
    from oracledp._cli_table import _clipping_on_stderr

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with _clipping_on_stderr():
            warnings.warn("not the CLI's own", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["not the CLI's own"]


@pytest.mark.parametrize(("columns", "said"), [
    ([{"name": "a", "type": "categorical", "levels": ["b=c", "x"]},
      {"name": "a=b", "type": "categorical", "levels": ["c", "d"]}],
     "columns 'a' and 'a=b' both encode a feature named 'a=b=c'"),
    ([{"name": "a", "type": "categorical", "levels": ["(missing)", "x"], "missing": "level"}],
     "column 'a' encodes two features named 'a=(missing)'"),
])
def test_encoded_feature_names_that_collide_are_refused(columns, said):
    """Two encoded features of one name (fit's summary, model.json and
    get_feature_names_out() showed the name twice) are refused by the schema."""
    with pytest.raises(ValueError, match=re.escape(said)):
        TableSchema.from_dict({"target": {"name": "y", "labels": ["n", "p"]},
                               "columns": columns})
