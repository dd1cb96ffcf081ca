"""``oracledp synth fit | sample | evaluate`` end to end on a bundled table, and its refusals."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import typer
from _heartbeat import beats, slow_fit_with_fast_beats

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


def test_evaluate_says_when_the_classifier_used_a_subset(runner, files, monkeypatch):
    """Past CLASSIFIER_CELLS the classifier uses a random subset of the rows, and the command
    says so (below it, nothing is said)."""
    import oracledp.synth._table_evaluate as te

    args = ["synth", "evaluate", str(files["data"]), str(files["data"]), "--schema",
            str(files["schema"])]
    res = runner.invoke(app, args, env=ENV)
    assert res.exit_code == 0 and "the classifier used a random" not in res.stdout
    monkeypatch.setattr(te, "CLASSIFIER_CELLS", 1)
    res = runner.invoke(app, args, env=ENV)
    assert res.exit_code == 0, res.output
    assert "(the classifier used a random 1,000 synthetic and 1,000 real rows" in res.stdout


def test_a_column_given_twice_in_bins_is_refused():
    """`--bins a=3,a=4` was resolved silently to the last entry; one cut point is `c=0.5:`
    (there was no way to write it)."""
    from oracledp._cli_synth import _bins_option

    assert _bins_option("a=3,b=0:5") == {"a": 3, "b": [0.0, 5.0]}
    with pytest.raises(typer.BadParameter, match="'a' is given twice"):
        _bins_option("a=3,a=4")
    assert _bins_option("c=0.5:") == {"c": [0.5]}  # one cut point
    for bad in ("c=:", "c=0.5::", "c=:0.5", "c=1::2", "a=3,b", "a=3,", "=3"):
        with pytest.raises(typer.BadParameter, match="one cut point: column=c1:"):
            _bins_option(bad)


def test_bins_can_name_a_column_with_a_comma_or_an_equals_sign():
    """A piece with no "=" belongs to the next entry's name (a spec holds no comma), and a
    name may hold "=" (a spec holds none)."""
    from oracledp._cli_synth import _bins_option

    assert _bins_option("income, net=4,age=0:18:65") == {"income, net": 4,
                                                         "age": [0.0, 18.0, 65.0]}
    assert _bins_option("a,b,c=2,x=y=3") == {"a,b,c": 2, "x=y": 3}


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


# --- a demanding new user: extra columns, budget, records per person, sampling ----------------


def _fit_args(files, tmp_path, *more, data=None, schema=None, out="m"):
    return ["synth", "fit", str(data or files["data"]), "--schema",
            str(schema or files["schema"]), "--epsilon", "1", "--seed", "0",
            "--out", str(tmp_path / out), *more]


def test_extra_columns_are_refused_as_by_fit_unless_ignore_extra(runner, files, tmp_path,
                                                                 monkeypatch):
    df = pd.read_csv(files["data"], dtype=str, keep_default_na=False)
    df.insert(0, "passenger_id", [f"P{i:05d}" for i in range(len(df))])
    extra = tmp_path / "extra.csv"
    df.to_csv(extra, index=False)
    with monkeypatch.context() as m:
        _fail_noise(m)
        res = runner.invoke(app, _fit_args(files, tmp_path, data=extra), env=ENV)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "passenger_id" in res.stderr and "--ignore-extra" in res.stderr
    assert "P0" not in res.stderr and not (tmp_path / "m").exists()
    res = runner.invoke(app, _fit_args(files, tmp_path, "--ignore-extra", data=extra), env=ENV)
    assert res.exit_code == 0, res.output


def test_budget_ledger_is_shared_with_fit(runner, files, tmp_path, monkeypatch):
    budget = tmp_path / "budget.json"
    budget.write_text('{"total_epsilon": 1.5, "total_delta": 1e-5}')
    res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-6", "--budget",
                                       str(budget), out="m1"), env=ENV)
    assert res.exit_code == 0, res.output
    assert "remaining epsilon 0.5" in res.stdout
    ledger = json.loads(budget.read_text())
    assert [(s["model"], s["epsilon"], s["delta"], s["status"]) for s in ledger["spends"]] == [
        ("synth oracle-query-pgm", 1.0, 1e-6, "released")]
    with monkeypatch.context() as m:  # over the budget: refused before reading or noise
        _fail_noise(m)
        res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-6", "--budget",
                                           str(budget), out="m2"), env=ENV)
        assert res.exit_code == 2 and "budget exceeded" in res.stderr, res.output
        res = runner.invoke(app, _fit_args(files, tmp_path, "--budget", str(budget),
                                           out="m2"), env=ENV)  # delta 1/n^2 unknown yet
        assert res.exit_code == 2 and "--budget needs --delta" in res.stderr, res.output
    assert not (tmp_path / "m2").exists()
    res = runner.invoke(app, _fit_args(files, tmp_path, "--method", "mwem", "--epsilon", "0.5",
                                       "--budget", str(budget), out="m3"), env=ENV)
    assert res.exit_code == 0, res.output
    assert "note: mwem is a baseline for comparison" in res.stdout  # said where it is chosen
    spends = json.loads(budget.read_text())["spends"]
    assert [(s["model"], s["epsilon"], s["delta"]) for s in spends][1] == ("synth mwem", 0.5,
                                                                          0.0)


def test_records_per_person_in_the_guarantee_and_the_budget(runner, files, tmp_path,
                                                            monkeypatch):
    d = table_schema("titanic")
    d["records_per_person"] = 3
    schema = tmp_path / "panel.json"
    schema.write_text(json.dumps(d))
    budget = tmp_path / "budget.json"
    budget.write_text('{"total_epsilon": 5, "total_delta": 1e-4}')
    res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-7", "--budget",
                                       str(budget), schema=schema), env=ENV)
    assert res.exit_code == 0, res.output
    assert "protects: each person (up to 3 records" in res.stdout
    assert "per person (3 records, group privacy): epsilon 3," in res.stdout
    assert "-zCDP (k^2 rho" in res.stdout and "NOT private" in res.stdout
    spend = json.loads(budget.read_text())["spends"][0]
    assert spend["epsilon"] == pytest.approx(3.0) and spend["records_per_person"] == 3
    # sampling states the per-person guarantee first, not the per-record one alone
    csv = tmp_path / "panel-sample.csv"
    res = runner.invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "5", "--seed",
                              "1", "--out", str(csv)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "guarantee of the model: per person (up to 3 records, group privacy): (3," in (
        res.stderr), res.stderr
    assert "; per record: (1, 1e-07)-DP" in res.stderr
    with monkeypatch.context() as m:  # vacuous per person: refused before reading
        _fail_noise(m)
        res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-3", "--epsilon",
                                           "5", "--allow-large-epsilon", schema=schema,
                                           out="m2"), env=ENV)
    assert res.exit_code == 2 and "vacuous" in res.stderr, res.output
    with monkeypatch.context() as m:  # 4 per record is 12 per person: above the cap of 10
        _fail_noise(m)
        res = runner.invoke(app, _fit_args(files, tmp_path, "--epsilon", "4", schema=schema,
                                           out="m3"), env=ENV)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert "--epsilon 4 per record is epsilon 12 per person" in " ".join(res.stderr.split())
    assert not (tmp_path / "m3").exists()


def test_sample_without_seed_in_chunks_and_row_limits(runner, files, tmp_path, monkeypatch):
    import oracledp.synth._sampling as sampling

    out = tmp_path / "m"
    res = runner.invoke(app, _fit_args(files, tmp_path), env=ENV)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "5"], env=ENV)
    assert res.exit_code == 0, res.output  # no --seed: fresh randomness, no traceback
    assert len(pd.read_csv(io.StringIO(res.stdout))) == 5
    monkeypatch.setattr(sampling, "SAMPLE_CHUNK", 7)
    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "20", "--seed", "1"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout), dtype=str, keep_default_na=False)
    assert len(df) == 20 and res.stdout.count("class,age,sex,survived") == 1
    TableSchema.from_dict(table_schema("titanic")).check(df, with_target=True)
    # the rows Python's sample gives, in blocks or not (above 100,000 rows they differed)
    from oracledp.synth import TableSynthesizer

    model = TableSynthesizer.load(out)
    py = model.sample(20, random_state=1)
    assert py.to_csv(index=False, lineterminator="\n") == res.stdout
    blocks = list(model.iter_sample(20, random_state=1))
    assert [len(b) for b in blocks] == [7, 7, 6]
    pd.testing.assert_frame_equal(pd.concat(blocks, ignore_index=True), py)
    for rows in ("0", "-3", str(10**10), "many"):
        res = runner.invoke(app, ["synth", "sample", str(out), "--rows", rows, "--seed", "1"])
        assert res.exit_code == 2 and "--rows" in res.stderr, (rows, res.output)
        assert "Traceback" not in res.output


def test_synthetic_csv_reads_back_with_the_same_schema(runner, files, tmp_path):
    """A schema with missing levels, a float grid, a thermometer column and codes with leading
    zeros: the sampled CSV is refitted with the same schema."""
    schema = {"format": "oracledp.table_schema", "version": 1,
              "target": {"name": "y", "labels": ["0", "1"]},
              "columns": [
                  {"name": "zip", "type": "categorical", "levels": ["01", "02", "10"],
                   "missing": "level"},
                  {"name": "w", "type": "numeric", "lower": 0.5, "upper": 2.5, "step": 0.25,
                   "missing": "level", "synth_bins": [1, 2]},
                  {"name": "inc", "type": "numeric", "lower": 0, "upper": 100,
                   "bins": [10, 50]}]}
    sp = tmp_path / "s.json"
    sp.write_text(json.dumps(schema))
    rows = ["zip,w,inc,y"] + [f"{z},{w},{i},{y}" for z, w, i, y in zip(
        ["01", "02", "", "10"] * 30, ["0.5", "", "1.75", "2.5"] * 30,
        ["3", "99.5", "50", "0"] * 30, ["0", "1", "1", "0"] * 30, strict=True)]
    data = tmp_path / "d.csv"
    data.write_text("\r\n".join(rows) + "\r\n", encoding="utf-8-sig")  # BOM and CRLF
    res = runner.invoke(app, _fit_args(files, tmp_path, data=data, schema=sp), env=ENV)
    assert res.exit_code == 0, res.output
    assert "(zip 4, w 4, inc 3, y 2 levels/bins)" in res.stdout  # w: 3 synth_bins + missing
    syn = tmp_path / "syn.csv"
    res = runner.invoke(app, ["synth", "sample", str(tmp_path / "m"), "--rows", "400",
                              "--seed", "2", "--out", str(syn)])
    assert res.exit_code == 0, res.output
    text = syn.read_text()
    assert "\n01," in text or "\n02," in text
    res = runner.invoke(app, _fit_args(files, tmp_path, data=syn, schema=sp, out="m2"),
                        env=ENV)
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--schema", str(sp)],
                        env=ENV)
    assert res.exit_code == 0 and res.stdout.startswith("NOT private"), res.output


def test_evaluate_reads_a_semicolon_real_table_beside_the_comma_synthetic(runner, files,
                                                                          tmp_path):
    out = tmp_path / "m"
    assert runner.invoke(app, _fit_args(files, tmp_path)).exit_code == 0
    syn = tmp_path / "syn.csv"
    res = runner.invoke(app, ["synth", "sample", str(out), "--rows", "300", "--seed", "1",
                              "--out", str(syn)])
    assert res.exit_code == 0, res.output
    real = tmp_path / "real.csv"
    real.write_text(files["data"].read_text().replace(",", ";"))
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(real), "--schema",
                              str(files["schema"]), "--sep", ";"], env=ENV)
    assert res.exit_code == 0 and res.stdout.startswith("NOT private"), res.output
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(real), "--schema",
                              str(files["schema"]), "--sep", ";", "--synthetic-sep", ";"],
                        env=ENV)
    # the synthetic table failed: the hint names its own option, not the real table's
    assert res.exit_code == 2 and "try --synthetic-sep ','" in res.stderr, res.output
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(real), "--schema",
                              str(files["schema"])], env=ENV)
    assert res.exit_code == 2 and "try --sep ';'" in res.stderr, res.output


def test_interrupted_fit_exits_130_and_releases_its_budget(runner, files, tmp_path,
                                                          monkeypatch):
    from oracledp.synth import TableSynthesizer

    def stop(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(TableSynthesizer, "fit", stop)
    budget = tmp_path / "budget.json"
    budget.write_text('{"total_epsilon": 2, "total_delta": 1e-5}')
    res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-6", "--budget",
                                       str(budget)), env=ENV)
    assert res.exit_code == 130 and res.stderr.startswith("interrupted:"), res.output
    assert json.loads(budget.read_text())["spends"] == []  # nothing was drawn
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("args, named", [(["--epsilon", "nan"], "--epsilon must"),
                                         (["--epsilon", "-1"], "--epsilon must"),
                                         (["--delta", "1"], "--delta must")])
def test_bad_budget_options_name_the_option(runner, files, tmp_path, args, named):
    res = runner.invoke(app, _fit_args(files, tmp_path, *args))
    assert res.exit_code == 2 and res.stderr.startswith(f"error: {named}"), res.output


def test_a_missing_target_is_named_as_missing_by_synth_fit_and_fit(runner, files, tmp_path,
                                                                   monkeypatch):
    _fail_noise(monkeypatch)
    text = files["data"].read_text().splitlines()
    text[5] = text[5].rsplit(",", 1)[0] + ","  # one record without its label
    data = tmp_path / "d.csv"
    data.write_text("\n".join(text) + "\n")
    for cmd in (["synth", "fit"], ["fit", "--model", "dpsgd", "--delta", "1e-6"]):
        res = runner.invoke(app, [*cmd, str(data), "--schema", str(files["schema"]),
                                  "--epsilon", "1", "--out", str(tmp_path / "m")], env=ENV)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
        assert "target 'survived'" in res.stderr and "some are missing" in res.stderr
        assert "check how they are coded" not in res.stderr  # no undeclared label


def test_evaluate_takes_schema_and_bins_from_the_model(runner, files, tmp_path):
    """With --model, the marginals are those of the fit's bins (--bins age=... or the schema's
    synth_bins, or the private quantiles the fit cut), with no chance of evaluating on other
    bins by mistake."""
    d = {"format": "oracledp.table_schema", "version": 1,
         "target": {"name": "y", "labels": ["0", "1"]},
         "columns": [{"name": "a", "type": "numeric", "lower": 0, "upper": 99, "step": 1}]}
    sp = tmp_path / "s.json"
    sp.write_text(json.dumps(d))
    data = tmp_path / "d.csv"
    data.write_text("a,y\n" + "".join(f"{i % 100},{i % 2}\n" for i in range(400)))
    res = runner.invoke(app, _fit_args(files, tmp_path, "--bins", "a=50:75", data=data,
                                       schema=sp))
    assert res.exit_code == 0, res.output
    syn = tmp_path / "syn.csv"
    syn.write_text("a,y\n" + "".join(f"{i % 25},{i % 2}\n" for i in range(400)))
    by_model = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--model",
                                   str(tmp_path / "m")], env=ENV)
    by_flags = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--schema",
                                   str(sp), "--bins", "a=50:75"], env=ENV)
    default = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), "--schema",
                                  str(sp)], env=ENV)
    assert by_model.exit_code == by_flags.exit_code == default.exit_code == 0
    def figures(out: str) -> list[str]:  # (--bins is not said to be the fit's: review 18)
        return [line for line in out.splitlines() if "bins" not in line]

    assert figures(by_model.stdout) == figures(by_flags.stdout)  # bins [0, 49], [50, 74],
    # [75, 99]: TV 0.5 on a
    assert "1-way: mean 0.2500, max 0.5000" in by_model.stdout  # (a: 0.5, y: 0) / 2
    assert "1-way: mean 0.3500, max 0.7000" in default.stdout  # 10 bins: TV 0.7 on a
    for args in ([], ["--schema", str(sp), "--model", str(tmp_path / "m")],
                 ["--model", str(tmp_path / "m"), "--bins", "4"]):
        res = runner.invoke(app, ["synth", "evaluate", str(syn), str(data), *args])
        assert res.exit_code == 2 and res.stderr.startswith("error: "), res.output


# --- progress lines off a terminal, and --time-limit --------------------------------------------


def test_progress_lines_when_stderr_is_not_a_terminal(runner, files, tmp_path, monkeypatch):
    import oracledp._cli_synth as cli_synth
    from oracledp.synth import TableSynthesizer

    slow_fit_with_fast_beats(monkeypatch, cli_synth, TableSynthesizer)
    res = runner.invoke(app, _fit_args(files, tmp_path), env=ENV)
    assert res.exit_code == 0, res.output
    assert len(beats(res.stderr, "synth fit --method oracle-query-pgm: reading titanic.csv "
                                 "and fitting: ")) >= 3


def test_time_limit_stops_the_fit_and_keeps_a_started_fit_charged(runner, files, tmp_path,
                                                                    monkeypatch):
    import time

    import numpy as np

    from oracledp.privacy._accountant import begin_release
    from oracledp.synth import TableSynthesizer

    def started(self, *a, **k):  # the mechanism starts, draws, then runs long
        rng = np.random.default_rng(0)
        begin_release(self, 1.0, 1e-6, rng=rng, zcdp=True)
        rng.random()
        time.sleep(30)

    from oracledp.privacy._accountant import accounted_fit

    # reporting to the accountant as the real fit does
    monkeypatch.setattr(TableSynthesizer, "fit", accounted_fit(started))
    budget = tmp_path / "budget.json"
    budget.write_text('{"total_epsilon": 2, "total_delta": 1e-5}')
    t0 = time.monotonic()
    res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-6", "--budget",
                                       str(budget), "--time-limit", "0.5"), env=ENV)
    assert time.monotonic() - t0 < 20  # stopped, not slept out (generous: load)
    assert res.exit_code == 2, res.output
    assert res.stderr.splitlines()[0].startswith(
        "error: synth fit stopped at --time-limit 0.5 s; nothing was released or written; its "
        "mechanism had started, so it stays charged")
    (spend,) = json.loads(budget.read_text())["spends"]
    assert spend["epsilon"] == 1.0 and spend["status"].startswith(
        "failed after its mechanism started (TimeLimitExpired)")
    assert not (tmp_path / "m").exists()


def test_time_limit_before_the_mechanism_charges_nothing(runner, files, tmp_path, monkeypatch):
    import time

    from oracledp.synth import TableSynthesizer

    monkeypatch.setattr(TableSynthesizer, "fit", lambda self, *a, **k: time.sleep(30))
    budget = tmp_path / "budget.json"
    budget.write_text('{"total_epsilon": 2, "total_delta": 1e-5}')
    res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-6", "--budget",
                                       str(budget), "--time-limit", "0.3"), env=ENV)
    assert res.exit_code == 2 and "stopped at --time-limit 0.3 s" in res.stderr, res.output
    assert "so it is charged" not in res.stderr and "nothing was charged" in res.stderr
    assert json.loads(budget.read_text())["spends"] == []


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf"])
def test_a_bad_time_limit_is_one_error_before_reading(runner, files, tmp_path, bad):
    res = runner.invoke(app, _fit_args(files, tmp_path, "--time-limit", bad), env=ENV)
    assert res.exit_code == 2 and res.stderr == ("error: --time-limit must be a finite number "
                                                 "of seconds > 0\n"), res.output


def test_evaluate_says_when_the_table_is_worse_than_independent_marginals(runner, files,
                                                                           tmp_path):
    real = pd.read_csv(files["data"], dtype=str, keep_default_na=False)
    said = "has learned nothing about how the columns go together"
    for name, fake, worse in (("copy", real, False),
                              ("one-row", real.iloc[[0] * len(real)], True)):
        path = tmp_path / f"{name}.csv"
        fake.to_csv(path, index=False)
        res = runner.invoke(app, ["synth", "evaluate", str(path), str(files["data"]),
                                  "--schema", str(files["schema"])], env=ENV)
        assert res.exit_code == 0, res.output
        assert (said in res.stdout) is worse, (name, res.stdout)
        # how much worse is said too, not only that it learned nothing
        above = "its mean 2-way TV is even above that of exact independent marginals"
        assert (above in res.stdout) is worse, (name, res.stdout)


def test_evaluate_says_learned_nothing_even_below_independent_marginals(runner, tmp_path):
    """A table that copies 35 pairs of independent columns exactly and gets the one
    dependent pair (a, b) backwards is closer on no dependent pair, yet its mean 2-way TV is
    below the independent marginals' (the copies score 0): it learned nothing about how the
    columns go together, and the output does not say it is above them."""
    from oracledp.synth import evaluate_synthetic

    rng = np.random.default_rng(0)
    n = 400
    a = rng.integers(0, 2, n)
    cols = {"a": a, "b": np.where(rng.random(n) < 0.75, a, 1 - a)}
    for c in "cdefgh":
        cols[c] = rng.integers(0, 3, n)
    real = pd.DataFrame({k: [f"v{x}" for x in v] for k, v in cols.items()})
    real["y"] = rng.choice(["no", "yes"], n)
    fake = real.copy()
    fake["b"] = [f"v{x}" for x in np.where(rng.random(n) < 0.45, a, 1 - a)]
    schema = {"target": {"name": "y", "labels": ["no", "yes"]},
              "columns": [{"name": k, "type": "categorical",
                           "levels": [f"v{i}" for i in range(2 if k in "ab" else 3)]}
                          for k in "abcdefgh"]}
    real.to_csv(tmp_path / "real.csv", index=False)
    fake.to_csv(tmp_path / "fake.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(schema))
    r = evaluate_synthetic(fake, real, TableSchema.from_dict(schema), classifier=False)[
        "data_resolution"]
    two = r["two_way"]
    assert two["dependent_pairs"] == 1 and two["dependent_closer_than_independent"] == 0
    assert two["mean_tv"] < r["references"]["independent_marginals"]["two_way"]["mean_tv"]
    res = runner.invoke(app, ["synth", "evaluate", str(tmp_path / "fake.csv"),
                              str(tmp_path / "real.csv"), "--schema", str(tmp_path / "s.json")],
                        env=ENV)
    assert res.exit_code == 0, res.output
    assert "has learned nothing about how the columns go together" in res.stdout
    assert "above that of exact independent marginals" not in res.stdout
    assert "is above theirs" not in res.stdout


def test_evaluate_names_the_synthetic_file_that_does_not_fit(runner, files, tmp_path):
    real = pd.read_csv(files["data"], dtype=str, keep_default_na=False)
    bad = tmp_path / "made-up.csv"
    real.drop(columns=["sex"]).to_csv(bad, index=False)
    res = runner.invoke(app, ["synth", "evaluate", str(bad), str(files["data"]),
                              "--schema", str(files["schema"])], env=ENV)
    assert res.exit_code == 2 and f"the synthetic table {bad}: " in res.stderr, res.output
    assert res.stderr.count("error:") == 1


def test_a_delta_not_below_one_over_n_gets_a_note(runner, files, tmp_path):
    """titanic has 1,316 records: delta 0.01 is above 1/n and gets the caution, 1e-4 is below
    it and does not; per person the count of people (n / k) is what delta is compared with."""
    from oracledp._cli_budget import _delta_note

    said = "is not below 1 / the number of"
    for delta, noted in (("0.01", True), ("1e-4", False)):
        res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", delta,
                                           out=f"m-{delta}"), env=ENV)
        assert res.exit_code == 0, res.output
        assert (said in res.stdout) is noted, res.stdout
    res = runner.invoke(app, ["fit", str(files["data"]), "--schema", str(files["schema"]),
                              "--model", "dpsgd", "--epsilon", "1", "--delta", "0.01",
                              "--seed", "0", "--out", str(tmp_path / "c")], env=ENV)
    assert res.exit_code == 0 and said in res.stdout, res.output
    assert _delta_note(0.01, 1000, 1) is not None and _delta_note(0.0009, 1000, 1) is None
    assert _delta_note(0.0009, 1000, 4) is None and _delta_note(0.004, 1000, 4) is not None
    assert "per person" in _delta_note(0.004, 1000, 4)
    assert _delta_note(0.5, None, 1) is None and _delta_note(0.0, 10, 1) is None


def test_evaluate_says_which_columns_it_ignored_and_bins_name_the_target(runner, files,
                                                                         tmp_path):
    """A synthetic file with a column the schema does not name: read, not compared, and said
    on stderr (it was silent); --bins naming the target says it is the target."""
    real = pd.read_csv(files["data"], dtype=str, keep_default_na=False)
    extra = tmp_path / "extra.csv"
    real.assign(renamed_col="1").to_csv(extra, index=False)
    res = runner.invoke(app, ["synth", "evaluate", str(extra), str(files["data"]),
                              "--schema", str(files["schema"])], env=ENV)
    assert res.exit_code == 0, res.output
    assert ("note: the synthetic table's column(s) 'renamed_col' are not in the schema"
            in res.stderr) and "real table's" not in res.stderr
    res = runner.invoke(app, _fit_args(files, tmp_path, "--bins", "survived=3"), env=ENV)
    assert res.exit_code == 2 and "'survived' is the schema's target" in res.stderr, res.output


def test_the_budget_files_records_per_person_is_the_one_printed_and_saved(runner, files,
                                                                        tmp_path):
    """The file's records_per_person (3, above the schema's 1) had raised the charge while
    the printed and saved guarantee protected each record only."""
    budget = tmp_path / "budget.json"
    budget.write_text('{"total_epsilon": 5, "total_delta": 1e-4, "records_per_person": 3}')
    res = runner.invoke(app, _fit_args(files, tmp_path, "--delta", "1e-7", "--budget",
                                       str(budget)), env=ENV)
    assert res.exit_code == 0, res.output
    assert "protects: each person (up to 3 records" in res.stdout
    assert "the budget file's records_per_person" in res.stderr
    spend = json.loads(budget.read_text())["spends"][0]
    assert spend["records_per_person"] == 3 and spend["epsilon"] == pytest.approx(3.0)
    saved = json.loads((tmp_path / "m" / "synth-model.json").read_text())
    assert saved["schema"]["records_per_person"] == 3


def test_evaluate_prints_the_range_and_the_share_past_the_real_one(runner, tmp_path):
    """A numeric column's synthetic min..max beside the real one, and the share of synthetic
    values outside the real range: W1 over a generous declared range (0-365 here) can hide a
    quarter of the values at 300 where the real ones stop at 20."""
    sp = tmp_path / "s.json"
    sp.write_text(json.dumps({
        "format": "oracledp.table_schema", "version": 1,
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "days", "type": "numeric", "lower": 0, "upper": 365, "step": 1},
                    {"name": "sex", "type": "categorical", "levels": ["f", "m"]}]}))
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    real.write_text("days,sex,y\n" + "".join(f"{d},{s},no\n" for d, s in zip(
        [0, 5, 10, 20] * 25, ["f", "m"] * 50, strict=True)))
    syn.write_text("days,sex,y\n" + "".join(f"{d},{s},no\n" for d, s in zip(
        [0, 5, 10, 300] * 25, ["f", "m"] * 50, strict=True)))
    res = runner.invoke(app, ["synth", "evaluate", str(syn), str(real), "--schema", str(sp)],
                        env=ENV)
    assert res.exit_code == 0, res.output
    assert "range 0 to 300 (real 0 to 20; 25.00 % of the values outside it)" in res.stdout
