"""``--out`` is checked (can it be created and written?) with the other options, before the
data are read and before a ``--budget`` is charged, by ``fit`` and ``synth fit``; a table too
small for the default delta (or for rspm) is refused before any noise, saying so."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

from oracledp._cli import app

ENV = {"COLUMNS": "200"}
LEDGER = '{"total_epsilon": 3}'


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    (tmp_path / "budget.json").write_text(LEDGER)
    (tmp_path / "afile").write_text("")
    return {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
            "budget": tmp_path / "budget.json", "dir": tmp_path}


def _args(command: str, files: dict[str, Path], out: Path, data: Path | None = None
          ) -> list[str]:
    head = ["fit"] if command == "fit" else ["synth", "fit"]
    model = ["--model", "rspm"] if command == "fit" else []
    return [*head, str(data or files["data"]), "--schema", str(files["schema"]), *model,
            "--epsilon", "1", "--out", str(out), "--seed", "0", "--budget",
            str(files["budget"])]


def _one_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["fit", "synth fit"])
def test_an_out_under_a_file_is_refused_before_reading_and_charges_nothing(files, command):
    missing = files["dir"] / "not-read.csv"  # never opened: the refusal comes first
    res = CliRunner().invoke(app, _args(command, files, files["dir"] / "afile" / "model",
                                        data=missing), env=ENV)
    line = _one_error(res)
    assert "afile" in line and "not a directory" in line and "not-read" not in line
    assert files["budget"].read_text() == LEDGER


@pytest.mark.parametrize("command", ["fit", "synth fit"])
def test_an_out_that_cannot_be_written_is_refused_and_charges_nothing(files, command,
                                                                      monkeypatch):
    def refuse(*args, **kwargs):  # a read-only directory (the tests may run as root)
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    res = CliRunner().invoke(app, _args(command, files, files["dir"] / "new" / "model"),
                             env=ENV)
    line = _one_error(res)
    assert "cannot create it in" in line and "Permission denied" in line
    assert files["budget"].read_text() == LEDGER
    assert not (files["dir"] / "new").exists()


def test_the_out_check_leaves_nothing_behind(files):
    out = files["dir"] / "fresh"
    res = CliRunner().invoke(app, _args("fit", files, out, data=files["dir"] / "none.csv"),
                             env=ENV)
    assert res.exit_code == 2
    assert not out.exists()
    assert sorted(p.name for p in files["dir"].iterdir()) == [
        "afile", "budget.json", "schema.json", "train.csv"]


def test_a_writable_out_still_fits(files):
    res = CliRunner().invoke(app, _args("fit", files, files["dir"] / "a" / "b"), env=ENV)
    assert res.exit_code == 0, res.output
    assert (files["dir"] / "a" / "b" / "model.json").exists()


@pytest.mark.parametrize("model, says", [
    ("rspm", "--model rspm (which takes no delta) needs at least 2 records"),
    ("dpsgd", "the default --delta 1/n^2 is then not below 1"),
])
def test_a_one_record_table_is_refused_saying_why(files, model, says):
    one = files["dir"] / "one.csv"
    one.write_text("x,c,y\n1,a,no\n")
    res = CliRunner().invoke(app, ["fit", str(one), "--schema", str(files["schema"]),
                                   "--model", model, "--epsilon", "1", "--seed", "0",
                                   "--out", str(files["dir"] / "m")], env=ENV)
    line = _one_error(res)
    assert says in line and "fewer than 2 records" in line and "open interval" not in line
    rest = line.replace(str(one), "")
    for public in ("1/n^2", "below 1", "2 records"):  # the rule's own numbers, not a count
        rest = rest.replace(public, "")
    assert not any(ch.isdigit() for ch in rest), rest
    assert not (files["dir"] / "m").exists()


@pytest.mark.parametrize("epsilon", [700.0, 1e6])
def test_plain_words_at_a_huge_epsilon_name_no_infinite_factor(epsilon):
    from oracledp.privacy import PrivacyGuarantee

    text = PrivacyGuarantee.pure(epsilon, source="s").in_plain_words()
    assert "inf" not in text and "astronomically large" in text
    assert f"epsilon = {epsilon:.3g}" in text
    assert "10^434,294" in text if epsilon == 1e6 else "10^304" in text
    assert "factor of 2.72 (e^epsilon, epsilon = 1)" in PrivacyGuarantee.pure(
        1.0, source="s").in_plain_words()


def test_fit_at_a_huge_epsilon_prints_a_true_sentence(files):
    res = CliRunner().invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                                   "--model", "rspm", "--epsilon", "1e6",
                                   "--allow-large-epsilon", "--seed", "0", "--out",
                                   str(files["dir"] / "m")], env=ENV)
    assert res.exit_code == 0, res.output
    words = " ".join(res.stdout.split())
    assert "a factor of inf" not in words and "astronomically large" in words
