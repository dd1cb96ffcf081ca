"""``oracledp synth fit | sample | evaluate`` end to end on a bundled table, and its refusals."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

import oracledp.privacy._noise as noise_mod
from oracledp._cli import app
from oracledp.datasets import table_csv, table_schema
from oracledp.tabular import TableSchema

ENV = {"COLUMNS": "200"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth-cli")
    data = table_csv("titanic", d / "titanic.csv", split="all")
    schema = d / "titanic.schema.json"
    schema.write_text(json.dumps(table_schema("titanic")))
    return {"dir": d, "data": data, "schema": schema}


def test_fit_sample_evaluate(runner, files, tmp_path):
    out = tmp_path / "model"
    res = runner.invoke(app, ["synth", "fit", str(files["data"]), "--schema",
                              str(files["schema"]), "--epsilon", "1", "--seed", "0",
                              "--out", str(out)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "(1, 5.77e-07)-DP, replace-one neighbours" in res.stdout
    assert "in plain words: " in res.stdout and "post-processing" in res.stdout
    saved = json.loads((out / "synth-model.json").read_text())
    assert "post-processing" in saved["guarantee_in_plain_words"]

    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "500", "--seed", "3"],
                        env=ENV)
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout), dtype=str, keep_default_na=False)
    assert list(df.columns) == ["class", "age", "sex", "survived"] and len(df) == 500
    TableSchema.from_dict(table_schema("titanic")).check(df, with_target=True)
    again = runner.invoke(app, ["synth", "sample", str(out), "--rows", "500", "--seed", "3"])
    assert again.stdout == res.stdout  # the seed fixes the sample

    synth_csv = tmp_path / "synth.csv"
    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "1316", "--seed", "4",
                              "--out", str(synth_csv)], env=ENV)
    assert res.exit_code == 0 and synth_csv.exists(), res.output
    res = runner.invoke(app, ["synth", "evaluate", str(synth_csv), str(files["data"]),
                              "--schema", str(files["schema"])], env=ENV)
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("NOT private")
    for j in (1, 2, 3):
        assert f"  {j}-way: mean " in res.stdout
    assert "train on synthetic, test on real: 0." in res.stdout
    assert "train on real (5-fold cross-validation): 0." in res.stdout


def _fail_noise(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("noise drawn before the input was refused")

    for name in ("gaussian", "laplace", "exponential_mechanism"):
        monkeypatch.setattr(noise_mod, name, boom)


@pytest.mark.parametrize("edit, args, secret", [
    (lambda t: t.replace("3rd class", "4th class", 1), [], "4th class"),   # unknown level
    (lambda t: t.replace(",", "\t"), [], None),                             # wrong delimiter
    (lambda t: "", [], None),                                               # empty file
    (lambda t: t.replace("adults", "", 1), [], None),                       # undeclared missing
    (lambda t: t, ["--method", "gan"], None),                               # unknown method
    (lambda t: t, ["--epsilon", "50"], None),                               # above the cap
    (lambda t: t, ["--bins", "x=y"], None),                                 # bad bins
    (lambda t: t, ["--method", "mwem", "--delta", "1e-6"], None),           # pure: no delta
])
def test_refusals_are_one_line_exit_2_before_noise(runner, files, tmp_path, monkeypatch,
                                                    edit, args, secret):
    _fail_noise(monkeypatch)
    data = tmp_path / "data.csv"
    data.write_text(edit(files["data"].read_text()))
    base = ["synth", "fit", str(data), "--schema", str(files["schema"]), "--epsilon", "1",
            "--out", str(tmp_path / "m")]
    res = runner.invoke(app, base + args, env=ENV)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert res.stdout == "" and not (tmp_path / "m" / "synth-model.json").exists()
    if secret:
        assert secret not in res.stderr


def test_unconfirmed_schema_and_existing_out(runner, files, tmp_path):
    d = table_schema("titanic")
    d["columns"][0]["from_data"] = True
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(d))
    res = runner.invoke(app, ["synth", "fit", str(files["data"]), "--schema", str(schema),
                              "--epsilon", "1", "--out", str(tmp_path / "m")])
    assert res.exit_code == 2 and "from_data" in res.stderr
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "synth-model.json").write_text("{}")
    res = runner.invoke(app, ["synth", "fit", str(files["data"]), "--schema",
                              str(files["schema"]), "--epsilon", "1", "--out",
                              str(tmp_path / "m")])
    assert res.exit_code == 2 and "--force" in res.stderr
    res = runner.invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "3"])
    assert res.exit_code == 2 and res.stderr.startswith("error: ")
