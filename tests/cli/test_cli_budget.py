"""`oracledp fit --budget FILE`: a privacy ledger that adds up, and records per person.

* releases are appended to the ledger and add up; a fit that would exceed the total is refused
  with one ``error:`` line and exit 2 before DATA is read and before any noise;
* a malformed ledger is one clear error;
* a fit that fails after its mechanism drew noise (an oracle that did not certify, Accuracy
  First's refusal) stays charged; a fit refused before any noise (data outside the schema)
  leaves no entry;
* accuracy-first is checked with its cap --max-epsilon and charged its realised ex-post loss;
* a schema's records_per_person scales the charge and the printed and saved guarantee by group
  privacy; the saved per-person guarantee is checked when the model is loaded;
* concurrent reservations never take more than the total.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _small_table import ROWS, SCHEMA
from typer.testing import CliRunner

from oracledp._cli import app
from oracledp.oracles import _registry as oracle_registry
from oracledp.privacy import PrivacyGuarantee, _budget_file, group_privacy
from oracledp.privacy._group import group_loss
from oracledp.tabular import ModelFileError, load_model

ENV = {"COLUMNS": "200"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "train.csv").write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    (tmp_path / "budget.json").write_text('{"total_epsilon": 2.5, "total_delta": 1e-5}')
    return {"schema": tmp_path / "schema.json", "data": tmp_path / "train.csv",
            "budget": tmp_path / "budget.json", "dir": tmp_path}


def _fit(files: dict[str, Path], out: str, *extra: str, model: str = "rspm",
         data: Path | None = None) -> Any:
    return CliRunner().invoke(app, [
        "fit", str(data or files["data"]), "--schema", str(files["schema"]), "--model", model,
        "--seed", "0", "--out", str(files["dir"] / out), "--budget", str(files["budget"]),
        *extra], env=ENV)


def _ledger(files: dict[str, Path]) -> dict[str, Any]:
    return json.loads(files["budget"].read_text())


def test_releases_add_up_and_the_last_is_refused_before_reading(files, monkeypatch) -> None:
    for i in (1, 2):
        res = _fit(files, f"m{i}", "--epsilon", "1")
        assert res.exit_code == 0, res.output
        assert f"spent epsilon {i} of 2.5" in res.stdout
    doc = _ledger(files)
    assert [s["epsilon"] for s in doc["spends"]] == [1.0, 1.0]
    first = doc["spends"][0]
    assert (first["model"], first["kind"], first["delta"], first["status"]) == (
        "rspm", "pure", 0.0, "released")
    assert first["out"] == str(files["dir"] / "m1") and first["date"].endswith("+00:00")

    from oracledp.estimators import RSPMClassifier

    def no_fit(*a: Any, **k: Any) -> None:  # pragma: no cover - must not run
        raise AssertionError("fit reached although the budget is spent")

    monkeypatch.setattr(RSPMClassifier, "fit", no_fit)
    before = files["budget"].read_text()
    missing = files["dir"] / "nowhere.csv"  # never read: the refusal comes first
    res = _fit(files, "m3", "--epsilon", "1", data=missing)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: --budget") and res.stderr.count("\n") == 1
    assert "only epsilon 0.5" in res.stderr and "nothing was read, fitted or charged" in (
        res.stderr)
    assert files["budget"].read_text() == before and not (files["dir"] / "m3").exists()
    assert res.stdout == ""


@pytest.mark.parametrize(("text", "says"), [
    ("not json", "not valid JSON"),
    ("[1]", "JSON object"),
    ("{}", "no \"total_epsilon\""),
    ('{"total_epsilon": 0}', "total_epsilon must be a finite number in (0, inf)"),
    ('{"total_epsilon": true}', "total_epsilon must be a number"),
    ('{"total_epsilon": 1, "total_delta": 1}', "total_delta must be"),
    ('{"total_epsilon": 1, "spends": {}}', "\"spends\" must be a list"),
    ('{"total_epsilon": 1, "spends": [{"epsilon": 1}]}', "spends[0] must be an object"),
    ('{"total_epsilon": 1, "spends": [{"epsilon": -1, "delta": 0}]}', "spends[0].epsilon"),
    ('{"total_epsilon": 1, "totl_delta": 0}', "unknown keys ['totl_delta']"),
])
def test_a_malformed_ledger_is_one_clear_error(files, text: str, says: str) -> None:
    files["budget"].write_text(text)
    res = _fit(files, "m", "--epsilon", "1")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith(f"error: --budget {files['budget']}: ") and says in res.stderr
    assert files["budget"].read_text() == text and not (files["dir"] / "m").exists()


def test_a_missing_ledger_says_how_to_start_one(files) -> None:
    files["budget"].unlink()
    res = _fit(files, "m", "--epsilon", "1")
    assert res.exit_code == 2 and '{"total_epsilon": 1.0}' in res.stderr
    assert not files["budget"].exists()


def test_approximate_models_need_an_explicit_delta_within_the_total(files) -> None:
    res = _fit(files, "m", "--epsilon", "1", model="dpsgd")
    assert res.exit_code == 2 and "--budget needs --delta for --model dpsgd" in res.stderr
    res = _fit(files, "m", "--epsilon", "1", "--delta", "1e-4", model="dpsgd")
    assert res.exit_code == 2 and "delta 0.0001 but only epsilon 2.5, delta 1e-05" in res.stderr
    res = _fit(files, "m", "--epsilon", "1", "--delta", "1e-6", model="dpsgd")
    assert res.exit_code == 0, res.output
    (spend,) = _ledger(files)["spends"]
    assert (spend["kind"], spend["epsilon"], spend["delta"]) == ("approximate", 1.0, 1e-6)


def test_a_failure_after_the_noise_stays_charged(files, monkeypatch, uncertified_oracle) -> None:
    monkeypatch.setitem(oracle_registry._REGISTRY, "uncertified",
                        (lambda **options: uncertified_oracle, "test: never certifies"))
    res = _fit(files, "m", "--epsilon", "0.7", "--solver", "uncertified")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: the rspm fit stopped")
    assert "warning: --budget" in res.stderr and "charged epsilon 0.7" in res.stderr
    (spend,) = _ledger(files)["spends"]
    assert spend["epsilon"] == 0.7 and "failed after its mechanism started (OracleFailure)" in \
        spend["status"]
    assert not (files["dir"] / "m" / "model.json").exists()


def test_a_refusal_before_any_noise_leaves_no_entry(files) -> None:
    bad = files["dir"] / "bad.csv"
    bad.write_text("x,c,y\n1,a,no\n99,b,yes\n")  # 99 is outside the public bounds
    res = _fit(files, "m", "--epsilon", "1", data=bad)
    assert res.exit_code == 2 and "[0, 10]" in res.stderr
    assert _ledger(files)["spends"] == []


def _threshold_files(files: dict[str, Path], n: int = 3000) -> Path:
    rows = [f"{i % 11},{'yes' if i % 11 >= 6 else 'no'}" for i in range(n)]
    (files["dir"] / "t.csv").write_text("x,y\n" + "\n".join(rows) + "\n")
    files["schema"].write_text(json.dumps({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1}]}))
    return files["dir"] / "t.csv"


def test_accuracy_first_is_capped_then_charged_its_ex_post_loss(files) -> None:
    data = _threshold_files(files)
    files["budget"].write_text('{"total_epsilon": 20}')
    res = _fit(files, "m", "--alpha", "0.2", "--max-epsilon", "21", "--allow-large-epsilon",
               model="accuracy-first", data=data)
    assert res.exit_code == 2 and "would spend epsilon 21" in res.stderr  # the cap: refused
    res = _fit(files, "m", "--alpha", "0.2", "--max-epsilon", "10", model="accuracy-first",
               data=data)
    assert res.exit_code == 0, res.output
    (spend,) = _ledger(files)["spends"]
    saved = load_model(files["dir"] / "m")
    assert spend["kind"] == "ex-post" and spend["max_epsilon"] == 10.0
    assert spend["epsilon"] == saved.guarantee.epsilon < 10.0
    # nothing passes at alpha 0.1: the refusal's own ex-post loss is charged
    res = _fit(files, "m2", "--alpha", "0.1", "--max-epsilon", "10", model="accuracy-first",
               data=data)
    assert res.exit_code == 2 and "did not halt" in res.stderr, res.stderr
    said = " ".join(res.stderr.split())
    assert "Use a larger --max-epsilon or --alpha" in said, said  # fit's options
    assert not re.search(r"eps_max|allow_no_halt|outputnr|\bmax_epsilon", said), said
    refusal = _ledger(files)["spends"][1]
    assert 0 < refusal["epsilon"] <= 10.0 and "NoHaltError" in refusal["status"]
    # a cap below the search's smallest loss is refused by its own public check: not charged
    res = _fit(files, "m3", "--alpha", "0.1", "--max-epsilon", "1", model="accuracy-first",
               data=data)
    assert res.exit_code == 2 and "is below the smallest ex-post loss" in res.stderr
    # in fit's option names, not the Python parameters'
    assert "--max-epsilon 1 is below" in res.stderr and "max_epsilon" not in res.stderr
    assert len(_ledger(files)["spends"]) == 2


def test_records_per_person_scale_the_charge_and_the_saved_guarantee(files) -> None:
    files["schema"].write_text(json.dumps({**SCHEMA, "records_per_person": 3}))
    res = _fit(files, "m", "--epsilon", "0.5")
    assert res.exit_code == 0, res.output
    assert "records per person" in res.stdout and "privacy per person" in res.stdout
    assert "guarantee per person: 1.5-DP (pure), groups of 3 records (replace-one)" in res.stdout
    assert "per person (3 records)" in res.stdout
    (spend,) = _ledger(files)["spends"]
    assert (spend["epsilon"], spend["guarantee"]["epsilon"], spend["records_per_person"]) == (
        1.5, 0.5, 3)
    saved = load_model(files["dir"] / "m")
    assert saved.schema.records_per_person == 3
    assert saved.guarantee_per_person == group_privacy(saved.guarantee, 3)
    assert saved.guarantee_per_person.epsilon == 1.5 and saved.guarantee.epsilon == 0.5
    res = CliRunner().invoke(app, ["evaluate", str(files["dir"] / "m"), str(files["data"])],
                             env=ENV)
    assert res.exit_code == 0 and "per person (3 records): 1.5-DP" in res.stdout
    # the per-person guarantee is checked on load
    doc = json.loads((files["dir"] / "m" / "model.json").read_text())
    doc["guarantee_per_person"]["epsilon"] = 0.5
    (files["dir"] / "m" / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="not the group privacy"):
        load_model(files["dir"] / "m")
    del doc["guarantee_per_person"]
    (files["dir"] / "m" / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFileError, match="records_per_person = 3"):
        load_model(files["dir"] / "m")


def test_the_epsilon_cap_holds_per_person(files) -> None:
    """--epsilon 4 with 3 records per person is 12 per person: refused before reading,
    unless --allow-large-epsilon; accuracy-first's default cap becomes 10 / 3 per record."""
    files["schema"].write_text(json.dumps({**SCHEMA, "records_per_person": 3}))
    files["data"].unlink()  # refused before the data are read
    res = _fit(files, "m", "--epsilon", "4")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    said = " ".join(res.stderr.split())
    assert "--epsilon 4 per record is epsilon 12 per person" in said
    assert "records_per_person 3" in said and "--allow-large-epsilon" in said
    assert not (files["dir"] / "m").exists() and _ledger(files).get("spends", []) == []
    files["budget"].write_text('{"total_epsilon": 20, "total_delta": 1e-5}')
    res = _fit(files, "m", "--max-epsilon", "4", model="accuracy-first")
    assert res.exit_code == 2 and "--max-epsilon 4 per record is epsilon 12" in res.stderr
    files["data"].write_text("x,c,y\n" + "\n".join(ROWS * 4) + "\n")
    res = _fit(files, "m", model="accuracy-first")  # the default cap: 10 / 3 per record
    said = " ".join(res.stderr.splitlines()[0].split())  # (24 records: its own check refuses)
    assert res.exit_code == 2 and "--max-epsilon 3.33333 is below" in said, said
    assert "(--max-epsilon was not given: it is the cap of 10 per person, 3.33333 per record" in (
        said) and said.endswith("with --allow-large-epsilon too)")


def test_approximate_per_person_guarantee_and_its_vacuous_limit(files) -> None:
    files["schema"].write_text(json.dumps({**SCHEMA, "records_per_person": 2}))
    res = _fit(files, "m", "--epsilon", "1", "--delta", "1e-6", model="dpsgd")
    assert res.exit_code == 0, res.output
    (spend,) = _ledger(files)["spends"]
    assert (spend["epsilon"], spend["delta"]) == group_loss(1.0, 1e-6, 2)
    files["schema"].write_text(json.dumps({**SCHEMA, "records_per_person": 40}))
    res = CliRunner().invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                                   "--model", "dpsgd", "--epsilon", "1", "--out",
                                   str(files["dir"] / "m2"), "--allow-large-epsilon"], env=ENV)
    assert res.exit_code == 2 and "would be vacuous" in res.stderr  # no --budget needed
    assert not (files["dir"] / "m2").exists()


def test_fit_prints_one_record_per_person_by_default(files) -> None:
    res = CliRunner().invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                                   "--model", "rspm", "--epsilon", "1", "--seed", "0", "--out",
                                   str(files["dir"] / "m")], env=ENV)
    assert res.exit_code == 0, res.output
    assert "1 (schema's records_per_person)" in res.stdout
    assert "guarantee per person" not in res.stdout
    assert "guarantee_per_person" not in (files["dir"] / "m" / "model.json").read_text()


def test_concurrent_reservations_never_exceed_the_total(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"total_epsilon": 1.0}')
    outcomes: list[str] = []

    def reserve() -> None:
        try:
            _budget_file.book(path, 0.3, 0.0, None, label="t", details={},
                              declared=PrivacyGuarantee.pure(0.3, source="t"))
            outcomes.append("ok")
        except _budget_file.BudgetFileError:
            outcomes.append("refused")

    threads = [threading.Thread(target=reserve) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok"] * 3 + ["refused"] * 5
    ledger = _budget_file.read_budget_file(path)
    assert len(ledger.spends) == 3 and ledger.spent == (pytest.approx(0.9), 0.0)
    assert not list(tmp_path.glob(".b.json.*.tmp"))  # atomic writes leave no temporary file


def test_schema_records_per_person_round_trips() -> None:
    from oracledp.tabular import TableSchema

    schema = TableSchema.from_dict({**SCHEMA, "records_per_person": 4})
    assert schema.records_per_person == 4 and schema.to_dict()["records_per_person"] == 4
    assert TableSchema.from_dict(schema.to_dict()) == schema
    assert "records_per_person" not in TableSchema.from_dict(SCHEMA).to_dict()
    assert TableSchema.from_dict(SCHEMA).records_per_person == 1
    for bad in (0, 2.5, True, "2"):
        with pytest.raises(ValueError, match="records_per_person' must be an integer >= 1") as e:
            TableSchema.from_dict({**SCHEMA, "records_per_person": bad})
        assert str(e.value).endswith(f"got {bad!r}")  # a text "2" shown as text, not as 2
    g = PrivacyGuarantee.pure(0.5, source="x")
    assert group_privacy(g, schema.records_per_person).epsilon == 2.0


_SLOW_FIT = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from oracledp.estimators import RSPMClassifier
def slow(est, X, y, sample_weight=None):
    print("FITTING", flush=True)
    time.sleep(60)
RSPMClassifier.fit = slow
from oracledp._cli import app
sys.argv = ["oracledp", *sys.argv[1:]]
app()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_after_the_fit_started_keeps_the_declared_budget(files) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_FIT, "fit", str(files["data"]), "--schema",
         str(files["schema"]), "--model", "rspm", "--epsilon", "1", "--out",
         str(files["dir"] / "m"), "--budget", str(files["budget"])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "200"})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "FITTING"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "declared budget stays charged" in err and "Traceback" not in err
    (spend,) = _ledger(files)["spends"]
    assert spend["epsilon"] == 1.0 and spend["status"].startswith("interrupted after the fit")


# --- one ledger whatever path reaches it; hostile files are one error ------------------------
def test_a_symbolic_link_reaches_the_same_ledger(files) -> None:
    files["budget"].write_text('{"total_epsilon": 1.0}')
    link = files["dir"] / "link.json"
    link.symlink_to(files["budget"])
    res = _fit({**files, "budget": link}, "m1", "--epsilon", "0.6")
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and len(_ledger(files)["spends"]) == 1  # written through the link
    res = _fit(files, "m2", "--epsilon", "0.6")  # the real file: the same budget
    assert res.exit_code == 2 and "only epsilon 0.4" in res.stderr, res.output
    res = _fit({**files, "budget": link}, "m3", "--epsilon", "0.4")
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and [s["epsilon"] for s in _ledger(files)["spends"]] == [0.6, 0.4]
    assert not list(files["dir"].glob("link.json.lock"))  # one lock, the real file's


def test_a_ledger_with_several_names_is_refused(files) -> None:
    files["budget"].write_text('{"total_epsilon": 1.0}')
    other = files["dir"] / "hard.json"
    os.link(files["budget"], other)
    for path in (files["budget"], other):
        res = _fit({**files, "budget": path}, "m", "--epsilon", "0.6")
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
        assert "other names (hard links)" in res.stderr and "symbolic link" in res.stderr
    assert _ledger(files) == {"total_epsilon": 1.0} and not (files["dir"] / "m").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX named pipes")
def test_a_pipe_or_a_directory_is_refused_without_reading(files) -> None:
    fifo = files["dir"] / "fifo.json"
    os.mkfifo(fifo)
    for path in (fifo, files["dir"]):
        res = _fit({**files, "budget": path}, "m", "--epsilon", "0.6")
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output


@pytest.mark.parametrize(("text", "says"), [
    ('{"total_epsilon": 1, "spends": [{"epsilon": ' + "9" * 401 + ', "delta": 0}]}',
     "more than 300 digits"),
    ('{"total_epsilon": ' + "1" * 401 + "}", "more than 300 digits"),
    ('{"total_epsilon": 1e400}', "total_epsilon must be a finite number"),
    ('{"total_epsilon": 1, "note": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than"),
    ('{"total_epsilon": NaN}', "NaN is not a JSON number"),
    ('{"total_epsilon": 1, "total_epsilon": 9}', "keys listed twice"),
    ('{"total_epsilon": 1, "spends": [{"epsilon": 0.1, "delta": 0, "guarantee": {}}]}',
     "spends[0].guarantee must have exactly the fields"),
])
def test_a_hostile_ledger_is_one_clear_error(files, text: str, says: str) -> None:
    files["budget"].write_text(text)
    res = _fit(files, "m", "--epsilon", "1")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith(f"error: --budget {files['budget']}: ") and says in res.stderr
    assert "Traceback" not in res.output and not (files["dir"] / "m").exists()


# --- found in review: the file's records per person, zCDP files, a deleted lock ----------------
def test_the_files_records_per_person_is_applied_once(files) -> None:
    """Before: the charge was booked with the file's k applied again and settled without it,
    so two fits of 0.3 were recorded as 0.3 each (0.6 spent of 1) while each cost 0.6 per
    person: 1.2 released against a total of 1."""
    files["budget"].write_text('{"total_epsilon": 1.0, "records_per_person": 2}')
    res = _fit(files, "k1", "--epsilon", "0.3")
    assert res.exit_code == 0, res.output
    assert [s["epsilon"] for s in _ledger(files)["spends"]] == [0.6]
    assert "per person (2 records)" in res.stdout
    # what is printed and saved is what is charged: per person for the file's 2 records
    said = " ".join(res.stdout.split())
    assert "guarantee per person: 0.6-DP" in said, said
    assert "the budget file's records_per_person" in res.stderr
    assert "2 (the --budget file's records_per_person)" in res.stdout
    assert load_model(files["dir"] / "k1").guarantee_per_person.epsilon == pytest.approx(0.6)
    res = _fit(files, "k2", "--epsilon", "0.3")
    assert res.exit_code == 2 and "only epsilon 0.4" in res.stderr, res.output
    # the schema's and the file's records per person: the larger, once
    files["schema"].write_text(json.dumps({**SCHEMA, "records_per_person": 3}))
    files["budget"].write_text('{"total_epsilon": 1.0, "records_per_person": 2}')
    res = _fit(files, "k3", "--epsilon", "0.3")
    assert res.exit_code == 0, res.output
    assert [s["epsilon"] for s in _ledger(files)["spends"]] == [pytest.approx(0.9)]
    assert "budget file's records_per_person" not in res.stderr  # the schema's 3 is larger
    # the cap of 10 holds per person for the file's records_per_person too
    files["budget"].write_text('{"total_epsilon": 100.0, "records_per_person": 20}')
    res = _fit(files, "k4", "--epsilon", "1")
    assert res.exit_code == 2 and "epsilon 20 per person" in " ".join(res.stderr.split())


def test_a_zcdp_ledger_refuses_an_ex_post_release_and_takes_a_pure_one(files) -> None:
    data = _threshold_files(files)
    files["budget"].write_text('{"total_epsilon": 40, "total_delta": 1e-5, '
                               '"composition": "zcdp"}')
    res = _fit(files, "af", "--alpha", "0.3", "--max-epsilon", "5", model="accuracy-first",
               data=data)
    assert res.exit_code == 2 and "not a pure or zCDP release" in res.stderr, res.output
    assert _ledger(files).get("spends", []) == []
    res = _fit(files, "r", "--epsilon", "2", data=data)
    assert res.exit_code == 0, res.output
    (spend,) = _ledger(files)["spends"]
    assert spend["rho"] == pytest.approx(2.0)  # pure: eps^2 / 2
    # the budget line speaks the ledger's unit: rho (it had said "charged epsilon 2 ... spent
    # epsilon 2.65 of 40 ... delta 1e-05 of 1e-05 ... remaining epsilon ..., delta 0")
    said = " ".join(res.stdout.split())
    assert "(zCDP): charged rho 2 (epsilon 2, delta 0); spent rho 2 of" in said, said
    assert "one more pure release of epsilon up to" in said and "remaining" not in said


def test_a_deleted_lock_file_cannot_fork_the_ledger(files) -> None:
    """The lock is on the ledger's directory: deleting any file next to it changes nothing.
    Before: the lock was FILE.lock, and deleting it while one holder had the ledger open let
    a second one in (both spent 0.6 of 1.0; the later save dropped the other's charge)."""
    from oracledp.privacy import open_budget_file

    files["budget"].write_text('{"total_epsilon": 1.0}')
    opened, release = threading.Event(), threading.Event()
    outcome: list[str] = []

    def hold() -> None:
        with open_budget_file(files["budget"], activate=False) as acct:
            acct.charge(PrivacyGuarantee.pure(0.6, source="t"), label="held")
            opened.set()
            release.wait(30)

    def second() -> None:  # another thread: it waits for the lock, as another process does
        try:
            _budget_file.book(files["budget"], 0.6, 0.0, None, label="second", details={},
                              declared=PrivacyGuarantee.pure(0.6, source="t"))
            outcome.append("booked")
        except _budget_file.BudgetFileError as exc:
            outcome.append(str(exc))

    holder = threading.Thread(target=hold)
    holder.start()
    assert opened.wait(30)
    for stale in files["dir"].glob("*.lock"):
        stale.unlink()
    other = threading.Thread(target=second)
    other.start()
    other.join(1.0)
    assert outcome == []  # still waiting for the holder
    release.set()
    holder.join()
    other.join(30)
    assert len(outcome) == 1 and "only epsilon 0.4" in outcome[0], outcome
    assert [s["epsilon"] for s in _ledger(files)["spends"]] == [0.6]


def test_opening_a_ledger_twice_in_one_thread_is_refused_not_a_hang(files) -> None:
    from oracledp.privacy import BudgetFileError, open_budget_file

    files["budget"].write_text('{"total_epsilon": 1.0}')
    with open_budget_file(files["budget"]), pytest.raises(BudgetFileError, match="already open"):
        with open_budget_file(files["budget"]):
            pass  # pragma: no cover


def test_a_huge_records_per_person_is_one_error(files) -> None:
    files["budget"].write_text('{"total_epsilon": 1.0, "records_per_person": 1' + "0" * 299
                               + "}")
    res = _fit(files, "m", "--epsilon", "0.3")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "records_per_person must be at most 1,000,000" in res.stderr
    files["budget"].write_text('{"total_epsilon": 1e300}')
    files["schema"].write_text(json.dumps({**SCHEMA, "records_per_person": 10**200}))
    res = _fit(files, "m", "--epsilon", "0.3")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "at most 1,000,000" in res.stderr
