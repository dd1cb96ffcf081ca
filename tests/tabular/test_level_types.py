"""A categorical column's declared levels are strings or finite numbers: null, true/false,
objects, lists and non-finite numbers are refused with one error naming the column (their
text would be Python's rendering, e.g. 'None', a default missing value, or "{'a': 1}")."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.tabular import Column, TableSchema


def _schema(levels) -> dict:
    return {"target": {"name": "y", "labels": ["no", "yes"]},
            "columns": [{"name": "c", "type": "categorical", "levels": levels}]}


@pytest.mark.parametrize("levels", [[None, "7"], [{"a": 1}, "7"], [["7"], "8"], [True, "7"],
                                    ["7", False], [float("nan"), "7"], [float("inf"), "7"],
                                    [10**400, "7"]])
def test_a_level_that_is_not_a_string_or_a_number_is_refused(levels):
    with pytest.raises(ValueError, match=r"column 'c': each level must be a string or a "
                                         r"finite number"):
        TableSchema.from_dict(_schema(levels))
    with pytest.raises(ValueError, match="column 'c'"):
        Column("c", "categorical", levels=tuple(levels))


@pytest.mark.parametrize("levels, want", [(["no", "yes"], ("no", "yes")),
                                          ([0, 1], ("0", "1")), ([1, 2.5, "x"], ("1", "2.5", "x")),
                                          (["None", "7"], ("None", "7"))])
def test_strings_and_numbers_are_levels(levels, want):
    assert TableSchema.from_dict(_schema(levels)).columns[0].levels == want


def test_fit_refuses_the_schema_in_one_line(tmp_path):
    (tmp_path / "t.csv").write_text("c,y\n7,no\n7,yes\n" * 20)
    (tmp_path / "s.json").write_text(json.dumps(_schema([None, "7"])))
    r = CliRunner().invoke(app, ["fit", str(tmp_path / "t.csv"), "--schema",
                                 str(tmp_path / "s.json"), "--out", str(tmp_path / "m"),
                                 "--epsilon", "1"])
    assert r.exit_code != 0
    assert "column 'c': each level must be a string or a finite number" in r.output
    assert not (tmp_path / "m" / "model.json").exists()


@pytest.mark.parametrize("label", [None, ["a"], {"a": 1}, float("nan"), float("inf")])
def test_a_target_label_that_is_not_a_string_or_a_finite_number_is_refused(label):
    """The target's labels went through str() like the levels did: null became the label
    'None' (a default missing value), a list "['a']"."""
    from oracledp.tabular import TableSchema

    with pytest.raises(ValueError, match="each label must be a string, a finite number or "
                                         "true/false"):
        TableSchema.from_dict({"target": {"name": "y", "labels": [label, "x"]}, "columns": [
            {"name": "a", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]})


def test_true_false_target_labels_are_accepted_as_the_message_says():
    """The refusal names true/false among the accepted label types: they are (a boolean
    target column's cells write them)."""
    from oracledp.tabular import TableSchema

    s = TableSchema.from_dict({"target": {"name": "y", "labels": [False, True]}, "columns": [
        {"name": "a", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]})
    assert s.labels == ("False", "True")
