"""The ``oracledp`` command line and the demo experiment behind it."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import oracledp.datasets
import oracledp.estimators._exact as exact_mod
import oracledp.estimators._opdisc as est_mod
from oracledp._cli import app
from oracledp._demo import CHANCE_LABEL, NON_PRIVATE_LABEL, Config, run_demo, run_seed
from oracledp.datasets import TabularDataset
from oracledp.oracles import FeatureSchema

ENV = {"COLUMNS": "200"}  # wide enough that rich never wraps a cell


def _tiny(split: str = "train", *, balanced: bool = True, random_state: int = 0) -> TabularDataset:
    """A stand-in for load_adult: d = 3 rational features, labels from a fixed halfspace."""
    rng = np.random.default_rng([7, 0 if split == "train" else 1])
    n = 80 if split == "train" else 60
    X = rng.integers(-4, 5, size=(n, 3)) / 4.0
    score = X @ np.array([1.0, 1.0, -1.0])
    y = np.where(score > 0, 1, -1).astype(np.int8)
    flip = rng.random(n) < 0.05
    y[flip] = -y[flip]
    return TabularDataset(
        X=X, y=y, feature_names=["a", "b", "c"], numeric_columns=[0, 1, 2],
        categorical_blocks={}, bounds={}, name=f"tiny-{split}", description="test data",
        feature_schema=FeatureSchema.grid(3, 0.25, 1.0),
    )


@pytest.fixture
def tiny_adult(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oracledp.datasets, "load_adult", _tiny)


# --- datasets / solvers ------------------------------------------------------------------------


def test_datasets_lists_the_three_files(runner):
    res = runner.invoke(app, ["datasets"], env=ENV)
    assert res.exit_code == 0, res.output
    for f in ("adult.data.gz", "adult.test.gz", "kddcup.data_10_percent.gz"):
        assert f in res.output
    assert "32,561" in res.output and "494,021" in res.output
    assert "NO" not in res.output  # every file verified


def test_solvers_lists_names(runner):
    res = runner.invoke(app, ["solvers"], env=ENV)
    assert res.exit_code == 0, res.output
    for name in ("highs (default)", "highs-monolithic", "cpsat", "brute"):
        assert name in res.output


def test_version_and_help(runner):
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and "oracledp" in res.output
    res = runner.invoke(app, ["demo", "--help"], env=ENV)
    assert res.exit_code == 0 and "--epsilon" in res.output
    assert "--n-train" not in res.output  # hidden test option


# --- demo: bad options --------------------------------------------------------------------------


@pytest.mark.parametrize("eps", ["abc", "0", "-1", "nan", "inf", "1,,2", "", "0.1,0.1"])
def test_bad_eps_is_a_clean_usage_error(runner, eps):
    res = runner.invoke(app, ["demo", "--epsilon", eps], env=ENV)
    assert res.exit_code == 2
    assert "Invalid value for '--epsilon'" in res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


@pytest.mark.parametrize(
    ("args", "hint"),
    [(["--solver", "gurobi9"], "--solver"), (["--time-limit", "0"], "--time-limit"),
     (["--runs", "0"], "--runs"), (["--seed", "-3"], "--seed")],
)
def test_other_bad_options(runner, args, hint):
    res = runner.invoke(app, ["demo", *args], env=ENV)
    assert res.exit_code == 2
    assert hint in res.output and "Traceback" not in res.output


def test_config_validation():
    with pytest.raises(ValueError):
        Config(epsilons=())
    with pytest.raises(ValueError):
        Config(epsilons=(1.0, -1.0))
    with pytest.raises(ValueError, match="unknown solver"):
        Config(solver="nope")
    with pytest.raises(ValueError):
        Config(runs=0)
    with pytest.raises(ValueError):
        Config(n_train=1)


# --- demo: end to end on tiny data (brute-force oracle) -----------------------------------------


def test_demo_end_to_end(runner, tiny_adult, tmp_path):
    out = tmp_path / "demo-out"
    res = runner.invoke(
        app,
        ["demo", "--epsilon", "0.5,8", "--runs", "2", "--seed", "3", "--solver", "brute",
         "--out", str(out)],
        env=ENV,
    )
    assert res.exit_code == 0, res.output
    assert NON_PRIVATE_LABEL in res.output
    assert "2/2" in res.output and "failed" not in res.output
    assert "(0.5, 0.000156)-DP" in res.output  # delta = 1/80^2

    data = json.loads((out / "demo.json").read_text())
    assert data["config"]["epsilons"] == [0.5, 8.0]
    assert data["data"]["n_train"] == 80 and data["data"]["delta"] == pytest.approx(1 / 80**2)
    runs = data["runs"]
    assert len(runs) == 4
    assert [r["seed"] for r in runs] == [run_seed(3, i, j) for i in range(2) for j in range(2)]
    for r in runs:
        assert r["ok"] and r["certified"] and r["status"] == "optimal"
        g = r["guarantee"]
        assert g["epsilon"] == r["epsilon"] and g["delta"] == pytest.approx(1 / 80**2)
        assert g["requires_exact_oracle"] is True and g["holds"] is True
    npv = data["non_private"]
    assert npv["label"] == NON_PRIVATE_LABEL and npv["private"] is False and npv["certified"]
    hi = data["summary"][1]
    assert hi["certified"] == 2
    assert (out / "demo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    y_test = _tiny("test").y  # the chance level: the test set's majority-label share
    assert data["chance"] == {"label": CHANCE_LABEL, "private": False,
                              "test_acc": max(np.mean(y_test == 1), np.mean(y_test == -1))}
    assert CHANCE_LABEL in res.output


def _result(chance: float | None) -> dict:
    """A demo record as the plot reads it: two epsilons, the non-private lines, chance."""
    row = lambda e, m: {"epsilon": e, "runs": 3, "certified": 3, "failed": 0,  # noqa: E731
                        "test_acc": {"mean": m, "std": 0.01},
                        "train_acc": {"mean": m + 0.01, "std": 0.01}}
    out = {"summary": [row(0.1, 0.74), row(1.0, 0.78)],
           "non_private": {"test_acc": 0.79, "train_acc": 0.8},
           "data": {"n_train": 15682, "d": 23}}
    if chance is not None:
        out["chance"] = {"label": CHANCE_LABEL, "private": False, "test_acc": chance}
    return out


def test_demo_plot_has_a_chance_line_and_a_deliberate_y_axis():
    from oracledp._demo import _figure

    ax = _figure(_result(0.5)).axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert f"{CHANCE_LABEL}: 0.500" in labels
    assert ax.get_ylim() == (0.45, 0.85)  # chance and the bars, a margin, to 0.05
    ax = _figure(_result(None)).axes[0]  # a record written before the chance level
    assert ax.get_ylim() == (0.7, 0.85)
    assert not any(CHANCE_LABEL in label for label in ax.get_legend_handles_labels()[1])


def test_run_demo_is_reproducible_and_reports_progress(tiny_adult):
    calls: list[tuple[int, int, str]] = []
    cfg = Config(epsilons=(1.0,), runs=2, seed=5, solver="brute")
    a = run_demo(cfg, progress=lambda d, t, s: calls.append((d, t, s)))
    b = run_demo(cfg)
    strip = lambda rs: [(r["seed"], r["w"], r["test_acc"]) for r in rs]  # noqa: E731
    assert strip(a["runs"]) == strip(b["runs"])
    assert calls[0][0] == 0 and calls[-1] == (3, 3, "done")
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls)


def test_uncertified_runs_are_failures(runner, tiny_adult, monkeypatch, tmp_path,
                                       uncertified_oracle):
    for mod in (est_mod, exact_mod):  # the demo's non-private row and the estimators' fit
        monkeypatch.setattr(mod, "build_oracle",
                            lambda oracle, time_limit, work_limit=None: uncertified_oracle)
    result = run_demo(Config(epsilons=(1.0,), runs=2, solver="brute"))
    row = result["summary"][0]
    assert row["certified"] == 0 and row["failed"] == 2
    assert row["test_acc"] == {"mean": None, "std": None}  # never counted in accuracy
    assert all(not r["ok"] and r["status"] == "time_limit" and r["guarantee"] is None
               and "objective" not in r["error"]
               for r in result["runs"])
    assert result["non_private"]["certified"] is False

    res = runner.invoke(app, ["demo", "--epsilon", "1", "--runs", "2", "--solver", "brute",
                              "--out", str(tmp_path)], env=ENV)
    assert res.exit_code == 0, res.output
    assert "0/2" in res.output and res.output.count("failed:") == 2
    assert "nothing released" in res.output
    assert json.loads((tmp_path / "demo.json").read_text())["summary"][0]["certified"] == 0


# --- demo on the real data (default solver, small subsample) -----------------------------------


def test_run_demo_on_adult_subsample():
    result = run_demo(Config(epsilons=(1.0,), runs=1, n_train=100, n_test=500, time_limit=30))
    assert result["data"]["d"] == 23 and result["data"]["n_train"] == 100
    npv = result["non_private"]
    assert npv["certified"] and npv["train_acc"] is not None
    (run,) = result["runs"]
    assert run["certified"], run
    assert 0.0 <= run["test_acc"] <= 1.0
    assert run["guarantee"]["delta"] == pytest.approx(1e-4)
    assert "opdisc-calibration.md" in run["guarantee"]["source"]
    (cal,) = result["calibration"]
    assert cal["delta_bound"] <= 1e-4 and cal["sigma"] == pytest.approx(run["sigma"])
    assert math.isfinite(result["elapsed_s"])


def test_demo_refuses_bad_eps_before_any_fit(runner, tiny_adult, tmp_path):
    """A non-positive eps is refused before any fit (exit 2, nothing written)."""
    res = runner.invoke(app, ["demo", "--epsilon", "0.5,0", "--solver", "brute",
                              "--out", str(tmp_path / "o")], env=ENV)
    assert res.exit_code == 2
    assert "eps" in res.output.lower()
    assert not (tmp_path / "o").exists()


# --- without the cli extra (typer, rich, matplotlib) ------------------------------------------
# A fresh interpreter in which those packages cannot be imported (sys.modules[name] = None makes
# both `import name` and importlib.util.find_spec(name) fail, as when they are not installed).
_WITHOUT_CLI = ("import sys\n"
                "for name in ('typer', 'rich', 'matplotlib', 'click'):\n"
                "    sys.modules[name] = None\n")


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _WITHOUT_CLI + code], capture_output=True,
                          text=True, timeout=240, check=False)


def test_the_library_works_without_the_cli_extra():
    proc = _python(
        "import numpy as np\n"
        "import oracledp\n"
        "from oracledp.estimators import RSPMClassifier\n"
        "from oracledp.synth import Domain, MWEMSynthesizer\n"
        "from oracledp.learners import ftpl, prsma\n"
        "X = np.array([[1., 0.], [0., 1.], [1., 1.], [0., 0.]] * 5)\n"
        "y = np.array([1, -1, 1, -1] * 5)\n"
        "clf = RSPMClassifier(epsilon=1.0, feature_grid=0.5, random_state=0).fit(X, y)\n"
        "dom = Domain(('a', 'b'), ((0, 1), (0, 1, 2)))\n"
        "MWEMSynthesizer(1.0, k=2, rounds=2, random_state=0).fit(np.array([[0, 1], [1, 2]]), dom)\n"
        "print(clf.guarantee_.epsilon, oracledp.environment()['python'] is not None)\n"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1.0", "True"]


def test_the_command_without_the_cli_extra_says_how_to_install_it():
    proc = _python("from oracledp.__main__ import main\nmain()\n")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'oracledp[cli]'" in lines[0], proc.stderr
    assert "typer" in lines[0] and "Traceback" not in proc.stderr


def test_synth_fit_and_schema_check_do_not_load_scikit_learn(tmp_path):
    """scikit-learn (about 100 MB of memory, a second to import) serves the classifiers; the
    data path of `synth fit` and `schema check` does not load it (a module-level import in
    the tabular package had put every synth command at 260 MB)."""
    code = (
        "import json, sys\n"
        "from oracledp.datasets import table_csv, table_schema\n"
        f"d = {str(tmp_path)!r}\n"
        "table_csv('titanic', d + '/t.csv', split='all')\n"
        "json.dump(table_schema('titanic'), open(d + '/s.json', 'w'))\n"
        "from oracledp.__main__ import main\n"
        "for argv in (['schema', 'check', d + '/t.csv', '--schema', d + '/s.json'],\n"
        "             ['synth', 'fit', d + '/t.csv', '--schema', d + '/s.json', '--epsilon',\n"
        "              '1', '--seed', '0', '--out', d + '/m']):\n"
        "    sys.argv = ['oracledp', *argv]\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit as e:\n"
        "        assert not e.code, e.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn')[:3])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout[-500:]


def test_a_closed_stdout_pipe_ends_every_command_quietly_with_exit_0(tmp_path):
    """`oracledp predict ... | head` exited 0, `evaluate ... | head -1` 1 (rich's rule) and
    `synth sample ... | head` 0: now every command ends with 0 and says nothing. The pipe's
    reading end is closed before the command writes, so each write fails (no race)."""
    from _small_table import ROWS, SCHEMA
    from typer.testing import CliRunner

    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    data = tmp_path / "t.csv"
    data.write_text("x,c,y\n" + "\n".join(ROWS * 50) + "\n")
    for args in (["fit", str(data), "--schema", str(tmp_path / "s.json"), "--model", "rspm",
                  "--epsilon", "1", "--seed", "0", "--solver", "brute", "--out",
                  str(tmp_path / "m")],
                 ["synth", "fit", str(data), "--schema", str(tmp_path / "s.json"),
                  "--epsilon", "1", "--seed", "0", "--out", str(tmp_path / "sm")]):
        res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert res.exit_code == 0, res.output
    cli = [sys.executable, "-m", "oracledp"]
    for args in (["predict", str(tmp_path / "m"), str(data), "--scores"],
                 ["evaluate", str(tmp_path / "m"), str(data)],
                 ["synth", "sample", str(tmp_path / "sm"), "--rows", "5000", "--seed", "1"]):
        proc = subprocess.Popen([*cli, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        said = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.wait(timeout=240) == 0, (args[0], said)
        assert "Traceback" not in said and "error" not in said, said


def test_a_broken_pipe_ends_quietly_only_when_it_is_stdouts(monkeypatch):
    """The quiet exit 0 is for stdout's reader having closed the pipe; stdout still read
    (the broken pipe was another stream's) is not taken for it."""
    import os

    from oracledp._cli import _stdout_closed

    r, w = os.pipe()
    with os.fdopen(w, "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert _stdout_closed() is False  # the reader is there
        os.close(r)
        assert _stdout_closed() is True  # the reader has gone
        monkeypatch.undo()
        try:
            out.close()
        except BrokenPipeError:
            pass
