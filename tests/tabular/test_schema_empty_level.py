"""The empty text cannot be a declared level or label: an empty cell always reads as missing,
so such a level could never match (it was accepted, then every empty cell was refused as
missing, or with "missing": "level" the model held two levels written the same)."""

from __future__ import annotations

import pytest

from oracledp.tabular import TableSchema


def _schema(levels: list[str], labels: list[str]) -> dict:
    return {"target": {"name": "y", "labels": labels},
            "columns": [{"name": "c", "type": "categorical", "levels": levels}]}


@pytest.mark.parametrize(("levels", "labels", "match"), [
    (["", "a"], ["no", "yes"], "column 'c': a level cannot be the empty text"),
    (["a", "b"], ["", "yes"], "target 'y': a label cannot be the empty text"),
])
def test_the_empty_text_is_refused(levels: list[str], labels: list[str], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TableSchema.from_dict(_schema(levels, labels))


def test_a_missing_level_is_still_fine() -> None:
    schema = _schema(["a", "b"], ["no", "yes"])
    schema["columns"][0]["missing"] = "level"
    assert TableSchema.from_dict(schema).columns[0].levels == ("a", "b")
