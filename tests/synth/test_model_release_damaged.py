"""A truncated or corrupt ``release.npz`` in a saved synthesizer is a damaged model.

``TableSynthesizer.load`` reported a missing ``release.npz`` or a broken
``synth-model.json`` as a damaged model (:class:`~oracledp._errors.ModelFileError`), but a
truncated or corrupt archive escaped as a traceback (``zipfile.BadZipFile``, ``EOFError``,
``NotImplementedError`` from a mangled zip header).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from oracledp._cli import app
from oracledp._errors import ModelFileError
from oracledp.datasets import table_schema
from oracledp.synth import TableSynthesizer
from oracledp.synth._table_synthesizer import MODEL_FILE, RELEASE_FILE

ROWS = [("1st class", "adults", "man", "yes"), ("2nd class", "adults", "women", "no"),
        ("3rd class", "child", "man", "no"), ("1st class", "child", "women", "yes")] * 10


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("saved") / "m"
    frame = pd.DataFrame(ROWS, columns=["class", "age", "sex", "survived"])
    TableSynthesizer("independent", epsilon=1.0, random_state=0).fit(
        frame, table_schema("titanic")).save(out)
    return out


def _copy_with(saved: Path, tmp_path: Path, release: bytes) -> Path:
    out = tmp_path / "m2"
    out.mkdir()
    shutil.copy(saved / MODEL_FILE, out / MODEL_FILE)
    (out / RELEASE_FILE).write_bytes(release)
    return out


def _damaged(saved: Path) -> list[bytes]:
    data = (saved / RELEASE_FILE).read_bytes()
    cases = [data[:k] for k in (0, 1, 30, 100, len(data) // 2, len(data) - 1)]
    rng = random.Random(0)
    for _ in range(40):  # one flipped bit in a zip header or a CRC
        b = bytearray(data)
        i = rng.choice([j for j in range(len(b)) if data[j:j + 2] == b"PK"]) + rng.randrange(30)
        b[min(i, len(b) - 1)] ^= 1 << rng.randrange(8)
        cases.append(bytes(b))
    return cases


def test_a_truncated_or_corrupt_release_is_a_damaged_model(saved: Path, tmp_path: Path
                                                           ) -> None:
    assert len(TableSynthesizer.load(saved).sample(5, random_state=0)) == 5
    for k, release in enumerate(_damaged(saved)):
        where = tmp_path / str(k)
        where.mkdir()
        out = _copy_with(saved, where, release)
        try:  # some flipped bits leave a readable archive: then it loads
            TableSynthesizer.load(out)
        except ModelFileError as exc:
            assert "the saved model is damaged" in str(exc)


@pytest.mark.parametrize("cut", [0, 100])
def test_the_reported_truncation(saved: Path, tmp_path: Path, cut: int) -> None:
    out = _copy_with(saved, tmp_path, (saved / RELEASE_FILE).read_bytes()[:cut])
    with pytest.raises(ModelFileError, match=r"damaged.*release\.npz is truncated or corrupt"):
        TableSynthesizer.load(out)


def test_a_missing_array_is_a_damaged_model(saved: Path, tmp_path: Path) -> None:
    out = _copy_with(saved, tmp_path, b"")
    with np.load(saved / RELEASE_FILE) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays.pop(sorted(arrays)[-1])
    np.savez(out / RELEASE_FILE, **arrays)
    with pytest.raises(ModelFileError, match="the saved model is damaged"):
        TableSynthesizer.load(out)


def test_the_command_line_says_one_error_line(runner, saved: Path, tmp_path: Path) -> None:
    out = _copy_with(saved, tmp_path, (saved / RELEASE_FILE).read_bytes()[:100])
    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "5"],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert "the saved model is damaged" in res.stderr and "Traceback" not in res.output
    assert json.loads((out / MODEL_FILE).read_text())  # the JSON itself is intact
