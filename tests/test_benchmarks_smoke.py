"""The benchmark scripts run end to end on a tiny configuration (they are not part of the
library's API, so nothing else would notice a call that no longer matches it).

The oracle, DP-SGD and advice scripts run in this process (:func:`_run_here`: ``runpy`` with
the script's own ``sys.argv`` and ``sys.path``, restored afterwards, warnings shown as a plain
``python script.py`` shows them): the libraries are already loaded, which saves a second or
two of start-up per script.  The synthetic-data scripts, which start process pools and set
process-wide warning filters, run in a fresh interpreter (:func:`_run`)."""

from __future__ import annotations

import contextlib
import io
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(script: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _run_here(script: str, *args: str) -> str:
    """``python benchmarks/SCRIPT ARGS`` in this process: the script runs as ``__main__`` with
    that ``sys.argv`` and its folder first on ``sys.path`` (both restored afterwards); warnings
    are shown, not raised, as in a plain interpreter; a non-zero exit fails.  Returns stdout."""
    path = BENCH / script
    out = io.StringIO()
    saved_argv, saved_path = sys.argv, sys.path[:]
    try:
        sys.argv = [str(path), *args]
        sys.path.insert(0, str(BENCH))
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("default")
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as exc:
                assert exc.code in (None, 0), (exc.code, out.getvalue()[-2000:])
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return out.getvalue()


def test_oracle_adult_smoke(tmp_path: Path) -> None:
    # the first 2,000 records: the whole path at a fifth of the solve time
    out = _run_here("oracle_adult.py", "--eps", "0.1", "--draws", "1", "--mono-draws", "0",
               "--rows", "2000", "--out", str(tmp_path))
    assert "median_certified_s=" in out and (tmp_path / "oracle_adult.json").exists()
    assert "Adult: n=2000," in out and "certified=True" in out


def test_oracle_suite_smoke(tmp_path: Path) -> None:
    out = _run_here("oracle_suite.py", "--tables", "wine-13", "--draws", "1", "--mono-draws", "0",
               "--time-limit", "20", "--eps", "0.1,1", "--out", str(tmp_path))
    assert "sigma/paper_sigma" in out and "certified_fraction=1.00" in out
    for name in ("oracle_suite.json", "oracle_suite.csv", "oracle_suite.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_oracle_suite_compact_spaces_and_today_smoke(tmp_path: Path) -> None:
    """A compact W for both methods, the previous default oracle beside the new one, and a
    work limit: every run certified, the ratio column filled."""
    out = _run_here("oracle_suite.py", "--tables", "wine-13", "--draws", "1", "--mono-draws", "0",
               "--eps", "1", "--opdisc-ball", "2,2", "--rspm-radius", "2", "--compare-today",
               "--work-limit", "1000000", "--out", str(tmp_path))
    assert "certified_fraction=1.00" in out and "W=B2,R2" in out and "W=B1,R2" in out
    rows = [line for line in out.splitlines() if line.startswith("wine-13") and " highs " in line]
    assert len(rows) == 2 and all(line.rstrip().endswith("x") for line in rows)


def test_oracle_suite_draws_do_not_depend_on_where_they_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same jobs in this process and in two joblib worker processes (workers 1 and 2):
    the same certified releases, record by record."""
    import importlib

    from joblib import Parallel, delayed
    from joblib.externals.loky import get_reusable_executor

    monkeypatch.syspath_prepend(str(BENCH))  # the workers import the script as a module
    suite = importlib.import_module("oracle_suite")
    # worker processes started by earlier tests have the old sys.path: start fresh ones
    get_reusable_executor().shutdown(wait=True)
    base = {"table": "wine-13", "intercept": True, "time_limit": 30.0}
    jobs = [base | {"kind": k, "eps": e, "oracle": "highs", "seed": s, "workers": 1}
            for k, e in (("opdisc", 1.0), ("rspm", 1.0)) for s in range(2)]
    here = [suite.run_job(j | {"workers": 2}) for j in jobs]
    there = Parallel(n_jobs=2)(delayed(suite.run_job)(j) for j in jobs)
    for a, b in zip(here, there, strict=True):
        assert a["certified"] and b["certified"]
        assert a["w"] == b["w"] and a["accuracy"] == b["accuracy"]


@pytest.mark.parametrize("extra", [[], ["--rspm"]])
def test_oracle_branch_smoke(extra: list[str]) -> None:
    out = _run_here("oracle_branch.py", "--table", "wine-13", "--draws", "1", "--rules", "product",
               "--time-limit", "20", *extra)
    assert "median_s=" in out


def test_bound_gap_smoke() -> None:
    # half a second of branch-and-bound for the incumbent (k = 0 and the perturbation-only
    # minimizer are incumbents before any time check), then every step on one leaf
    out = _run_here("bound_gap.py", "adult-paper", "1", "0", "0.5", "1")
    assert "numeric leaves with bound <= U:" in out and "inner on 1 leaves" in out


def test_dpsgd_scaling_smoke(tmp_path: Path) -> None:
    out = _run_here("dpsgd_scaling.py", "--n", "2000,5000", "--old-steps", "3", "--out",
               str(tmp_path))
    assert "n=5000 new_epoch_s=" in out and "ratio=" in out
    assert (tmp_path / "dpsgd_scaling.json").stat().st_size > 0


def test_synth_sampler_scores_both_samplers_of_one_fit(tmp_path: Path) -> None:
    import json

    out = _run("synth_sampler.py", "--quick", "--out", str(tmp_path))
    (run,) = json.loads((tmp_path / "runs.json").read_text())["runs"]
    assert all(0 < run[s]["native_2way_tv"] < 1 for s in ("rounded", "iid"))
    assert run["rounded"] != run["iid"] and "titanic" in out
    assert (tmp_path / "summary.csv").read_text().startswith("table,eps,seeds,rounded_")


def test_synth_tables_two_resolutions_references_merge_and_rewrite(tmp_path: Path) -> None:
    """The table-layer grid on titanic (one seed): both resolutions and both references per
    run, MWEM fitted (titanic fits its cell cap), AIM's run merged from another record, and
    --rewrite rebuilding the outputs from runs.json alone."""
    import json

    other = tmp_path / "other.json"
    aim = {"table": "titanic", "method": "aim", "eps": 1.0, "seed": 0, "rows": 1316,
           "fit_seconds": 2.0, "fit_cpu_seconds": 2.0, "native_2way_tv": 0.05,
           "native_max_numeric_1way_tv": float("nan"), "bins_2way_tv": 0.05}
    other.write_text(json.dumps({"meta": {"versions": {"oracledp_commit": "abc1234"}},
                                 "runs": [aim, {**aim, "eps": 2.0}]}))
    out = tmp_path / "out"
    _run("synth_tables.py", "--quick", "--methods", "oracle-query-pgm", "independent", "mwem",
         "--merge", str(other), "--out", str(out))
    saved = json.loads((out / "runs.json").read_text())
    assert [r["method"] for r in saved["runs"]] == ["aim", "oracle-query-pgm", "independent",
                                                    "mwem"]
    assert saved["runs"][0]["source"].startswith(str(other))
    assert all(0 < r["bins_2way_tv"] < 1 and 0 < r["native_2way_tv"] < 1
               for r in saved["runs"])
    assert all(0 < r["tstr_accuracy"] <= 1 for r in saved["runs"][1:])
    (ref,) = saved["references"]
    for key in ("independent_marginals", "resample_of_real_rows"):
        assert 0 < ref[key]["native_2way_tv"] < 1 and 0 < ref[key]["bins_2way_tv"] < 1
    methods = (out / "methods.md").read_text()
    assert "| titanic | 1 | " in methods and "Runs merged from other records" in methods
    (out / "methods.md").unlink()
    (out / "errors.png").unlink()
    _run("synth_tables.py", "--rewrite", "--out", str(out))
    assert (out / "methods.md").read_text() == methods and (out / "errors.png").exists()
    assert "| titanic | 1 | 1/1 |" in (out / "verdict.md").read_text()
    rows = (out / "summary.csv").read_text().splitlines()
    assert len(rows) == 1 + 4 + 2 and rows[-1].startswith("titanic,resample of real rows")


def test_synth_selection_smoke() -> None:
    """The tuning script runs the default without its "all" switch and with it (titanic's
    6 pairs: 3 adaptive rounds against 6 measured tables)."""
    import json

    out = _run("synth_selection.py", "--tables", "titanic", "--epsilons", "1", "--seeds", "1",
               "--rules", "adaptive", "all")
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(r["rule"], r["T"], r["seeds"]) for r in rows] == [("adaptive", 3, 1), ("all", 6, 1)]
    assert all(0 < r["mean_tv_2way"] < 1 for r in rows)


def test_advice_check_reads_the_records(tmp_path: Path) -> None:
    """Every bundled table at every epsilon, from the recorded runs (nothing is fitted)."""
    out = _run_here("advice_check.py", "--out", str(tmp_path / "advice.md"))
    rows = [line for line in out.splitlines() if line.startswith("| ") and " | 0.1 | " in line]
    assert len(rows) == 6 and "advice = measured best in" in out
    assert (tmp_path / "advice.md").read_text().strip() == out.strip()
