"""`schema infer` on a coded survey table: integer codes are numeric on their integer grid
(not categoricals of the values seen), a column named categorical gets every integer of its
range as a level, and the warnings are one line per rule."""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.tabular import TableSchema, check_table

ENV = {"COLUMNS": "200"}
BANDS = [f"band_{c}" for c in string.ascii_lowercase[:20]]  # 20 ordinal codes 0-9
SUBTYPES = np.arange(4711, 4752)  # a nominal code: 41 subtypes (values never printed)


def _survey(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({b: rng.integers(0, 10, n) for b in BANDS})
    df["rare"] = rng.choice([0, 6], n)  # an ordinal code of which only 0 and 6 were seen
    df["subtype"] = rng.choice(SUBTYPES[SUBTYPES != 4720], n)  # one subtype never seen
    df["region"] = rng.choice(["north", "south", "east"], n)
    df["age"] = rng.integers(18, 91, n)  # a measurement: more than 50 distinct values
    df["y"] = rng.choice(["no", "yes"], n)
    df = df.astype(object)
    df.loc[3, "band_c"] = ""  # a missing cell
    return df


def _write(tmp_path: Path, df: pd.DataFrame, name: str = "survey.csv") -> Path:
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def _infer(tmp_path: Path, *args: str):
    res = CliRunner().invoke(app, ["schema", "infer", str(_write(tmp_path, _survey())),
                                   "--target", "y", *args], env=ENV)
    assert res.exit_code == 0, res.output
    return {c["name"]: c for c in json.loads(res.stdout)["columns"]}, res.stderr


def test_integer_codes_are_numeric_on_their_integer_grid(tmp_path):
    cols, _ = _infer(tmp_path)
    df = _survey()
    for name in [*BANDS, "rare", "subtype", "age"]:
        seen = pd.to_numeric(df[name].replace("", np.nan)).dropna()
        assert cols[name]["type"] == "numeric" and cols[name]["step"] == 1, name
        assert (cols[name]["lower"], cols[name]["upper"]) == (seen.min(), seen.max()), name
        assert cols[name]["from_data"] is True, name  # read from the data: fit refuses it
    assert cols["band_c"]["missing"] == "level"
    assert cols["rare"]["lower"] == 0 and cols["rare"]["upper"] == 6
    assert cols["region"] == {"name": "region", "type": "categorical",
                              "levels": ["east", "north", "south"], "from_data": True}
    encoded = TableSchema.infer(_write(tmp_path, _survey()), "y")[0].confirmed()
    # one feature per code column (and band_c's missing level), region's 3 levels, intercept
    assert encoded.n_features == 20 + 1 + 1 + 1 + 1 + 3 + 1


def test_a_code_the_training_data_did_not_show_is_accepted(tmp_path):
    """The proposal (confirmed) accepts a test file whose codes lie in the range seen but
    were not all seen: 3 in 'rare', the subtype 4720."""
    schema = TableSchema.infer(_write(tmp_path, _survey()), "y")[0].confirmed()
    test = _survey(n=50, seed=1)
    test.loc[0, "rare"] = 3
    test.loc[1, "subtype"] = 4720
    assert check_table(_write(tmp_path, test, "test.csv"), schema) == []


def test_warnings_are_one_line_per_rule_naming_columns_not_values(tmp_path):
    _, err = _infer(tmp_path)
    lines = err.splitlines()
    assert all(line.startswith("warning: ") for line in lines)
    codes = [line for line in lines if "integer codes" in line]
    assert len(codes) == 1
    assert codes[0].startswith("warning: 22 columns ('band_a', 'band_b', ")  # 20 + rare + subtype
    assert "'rare', 'subtype')" in codes[0] and "'age'" not in codes[0]
    assert "--categorical NAME" in codes[0]
    missing = [line for line in lines if "missing cells" in line]
    assert len(missing) == 1 and missing[0].startswith("warning: column 'band_c': ")
    assert len(lines) == 4  # from the data, codes, missing cells, the intercept
    for value in ("4711", "4751", "4720"):
        assert value not in err


def test_a_column_named_categorical_gets_every_integer_of_its_range(tmp_path):
    cols, err = _infer(tmp_path, "--categorical", "subtype", "--categorical", "rare")
    assert cols["subtype"]["type"] == "categorical" and cols["subtype"]["from_data"] is True
    assert cols["subtype"]["levels"] == [str(v) for v in SUBTYPES]  # 4720 too, never seen
    assert cols["rare"]["levels"] == [str(v) for v in range(7)]
    assert cols["band_a"]["type"] == "numeric"
    named = [line for line in err.splitlines() if "named categorical" in line]
    assert len(named) == 1 and named[0].startswith("warning: 2 columns ('rare', 'subtype'): ")
    codes = next(line for line in err.splitlines() if "integer codes" in line)
    assert codes.startswith("warning: 20 columns (")


def test_a_named_categorical_wider_than_max_levels_is_unresolved(tmp_path):
    cols, err = _infer(tmp_path, "--categorical", "subtype", "--max-levels", "40")
    assert cols["subtype"]["type"] == "unresolved"
    assert "column 'subtype': named categorical, but more than 40 integers" in err


@pytest.mark.parametrize("name", ["nonesuch", "y"])
def test_categorical_must_name_a_feature_column(tmp_path, name):
    data = _write(tmp_path, _survey())
    res = CliRunner().invoke(app, ["schema", "infer", str(data), "--target", "y",
                                   "--categorical", name], env=ENV)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [res.stderr.splitlines()[0]]
    assert res.stderr.startswith(f"error: {data}: categorical= (--categorical) names {name!r}")


def test_float_noise_in_a_computed_export_is_not_taken_for_the_resolution(tmp_path):
    """A column on a 0.05 grid written by a computation (0.15000000000000002 for 0.15, as
    Python writes k * 0.05) gets the grid of the same column written plainly (two decimals:
    step 0.01), not twelve decimals rounded to a step past the grid's cap; a column really
    recorded to nine decimals keeps them; the table checks."""
    rng = np.random.default_rng(3)
    k = rng.integers(0, 101, 300)  # more distinct values than max_levels: numeric
    df = pd.DataFrame({"share": [repr(float(v)) for v in k * 0.05],
                       "fine": [f"{v:.9f}" for v in rng.uniform(0, 1, 300)],
                       "y": rng.choice(["a", "b"], 300)})
    assert any(len(t) > 15 for t in df["share"])  # the noise is in the file
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    schema, warned = TableSchema.infer(path, target="y")
    share = {c.name: c for c in schema.columns}["share"]
    assert (share.lower, share.upper, share.step) == (k.min() / 20, k.max() / 20, 0.01)
    plain = df.assign(share=[f"{v / 20:g}" for v in k])
    plain.to_csv(tmp_path / "plain.csv", index=False)
    assert TableSchema.infer(tmp_path / "plain.csv", target="y")[0].columns[0] == share
    fine = {c.name: c for c in schema.columns}["fine"]
    assert fine.step == 0.001  # nine decimals, rounded to a step within the proposal's cap
    assert any("recorded to 1e-09" in w for w in warned)
    check_table(path, schema.confirmed())


@pytest.mark.parametrize(("cells", "said"), [
    ([f"{v // 10},{v % 10}" for v in range(400, 700, 3)], "a DECIMAL COMMA"),
    ([f"{v:,}" for v in range(10_000, 900_000, 7_919)], "THOUSANDS SEPARATORS"),
    ([f"{v}%" for v in range(100)], "a PERCENT SIGN"),
    ([f"${v}.50" for v in range(100)], "a CURRENCY SYMBOL"),
    ([f"2024-{1 + v % 12:02d}-{1 + v % 28:02d}" for v in range(100)], "DATES written as text"),
    ([f"{40 + v} kg" for v in range(100)], "a UNIT"),  # sweep 12: told to declare levels
    ([f"{140 + v / 2}cm" for v in range(100)], "a UNIT"),
])
def test_a_spreadsheets_number_format_is_named_with_its_conversion(tmp_path, cells, said):
    """Decimal commas, thousands separators, percents, currency and text dates were told to
    "declare the public levels" (or "numbers mixed with text"): advice that loses every
    value. The warning now names the format and the conversion; the column is unresolved."""
    n = len(cells)
    df = pd.DataFrame({"v": cells, "y": ["a", "b"] * (n // 2) + ["a"] * (n % 2)})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    schema, warned = TableSchema.infer(path, target="y")
    assert schema.columns[0].kind == "unresolved"
    (line,) = [w for w in warned if w.startswith("column 'v':")]
    assert said in line and "convert the column first" in line, line
    few = pd.DataFrame({"v": ["10%", "20%", "30%"] * 20, "y": ["a", "b"] * 30})
    few.to_csv(path, index=False)  # three such texts: levels of a categorical, as before
    assert TableSchema.infer(path, target="y")[0].columns[0].kind == "categorical"


def test_codes_that_end_in_a_letter_are_not_units(tmp_path):
    """An identifier written 1001A, 1002B, ... keeps the identifier rule (its warning says to
    delete it), not the advice to convert units."""
    df = pd.DataFrame({"v": [f"{1000 + v}{'ABC'[v % 3]}" for v in range(100)],
                       "y": ["a", "b"] * 50})
    schema, warned = TableSchema.infer(df, target="y")
    assert schema.columns[0].kind == "unresolved"
    (line,) = [w for w in warned if w.startswith("column 'v':")]
    assert "IDENTIFIER" in line and "UNIT" not in line


@pytest.mark.parametrize("token", ["unknown", "n.d.", "below LOD"])
def test_plain_decimals_beside_a_text_are_not_a_spreadsheet_format(tmp_path, token):
    """2.417 is a number, not 2,417 with a thousands separator: a column of numbers with three
    decimals and one text token is "numbers mixed with other text", as before, never told to
    drop its decimal points."""
    rng = np.random.default_rng(2)
    cells = [f"{v:.3f}" for v in rng.uniform(0, 10, 200)] + [token]
    df = pd.DataFrame({"v": cells, "y": ["a", "b"] * 100 + ["a"]})
    df.to_csv(tmp_path / "t.csv", index=False)
    _, warned = TableSchema.infer(tmp_path / "t.csv", target="y")
    (line,) = [w for w in warned if w.startswith("column 'v':")]
    assert "numbers mixed with text" in line and "SEPARATORS" not in line, line


def test_trailing_zeros_written_are_the_resolution(tmp_path):
    """Prices written 12.30, 1.50, 3.00 are recorded to two decimals (step 0.01): only a float
    written in full (16+ significant digits) has its noise set aside."""
    rng = np.random.default_rng(4)
    cells = [f"{v:.2f}" for v in rng.integers(0, 90, 300) / 10 + 0.5]  # x.x0 only
    df = pd.DataFrame({"price": cells, "y": ["a", "b"] * 150})
    df.to_csv(tmp_path / "t.csv", index=False, quoting=1)  # quoted: written as they are
    col = TableSchema.infer(tmp_path / "t.csv", target="y")[0].columns[0]
    assert col.step == 0.01


def test_whole_numbers_rounded_to_hundreds_are_recorded_to_hundreds(tmp_path):
    """Incomes written 26600, 31200 (every value a multiple of 100, 40 distinct values) get
    step 100, not 1; fewer than 20 distinct values could be multiples by chance: step 1."""
    rng = np.random.default_rng(5)
    income = rng.integers(100, 140, 300) * 100  # 10,000-13,900 in hundreds
    decades = rng.choice([20, 30, 40, 50, 60], 300)  # five values: codes on step 1
    df = pd.DataFrame({"income": income, "decade": decades,
                       "y": rng.choice(["a", "b"], 300)})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    cols = {c.name: c for c in TableSchema.infer(path, target="y")[0].columns}
    assert (cols["income"].step, cols["income"].lower, cols["income"].upper) == (
        100, income.min(), income.max())
    assert cols["decade"].step == 1
