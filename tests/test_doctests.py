"""The examples in oracledp's docstrings run with the default test suite.

Every module of the package whose source holds a ``>>>`` example is imported and its
docstrings are run through :mod:`doctest` (option ELLIPSIS, as pytest's ``--doctest-modules``;
only the objects defined in that module, so a re-export does not run twice).  A module whose
import needs an optional extra that is not installed (ortools, scip, gurobi, dask, peers) is
skipped; any other import error fails.  The modules are found by reading the source files, not
by importing them, so collecting this file imports nothing beyond ``oracledp`` itself.
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

import oracledp

PACKAGE = Path(oracledp.__file__).resolve().parent
# the top-level modules of pyproject's optional extras (ortools, scip, gurobi, dask, peers)
OPTIONAL = {"ortools", "pyscipopt", "gurobipy", "dask", "distributed", "mbi", "jax", "jaxlib"}


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_package_has_doctests() -> None:
    assert "oracledp.privacy._composition" in _modules_with_examples()


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the optional extra providing {exc.name!r}")
        raise
    tests = [t for t in doctest.DocTestFinder().find(module, name) if t.examples]
    assert tests, f"{name} holds '>>>' but no docstring example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    failed = sum(runner.run(t, out=report.write).failed for t in sorted(tests, key=lambda t: t.name))
    assert failed == 0, report.getvalue()
