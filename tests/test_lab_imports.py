"""The lab (``lab/``, the papers' reproductions) uses oracledp's public surface only.

Public means: a package whose path has no component with a leading underscore (``oracledp``,
``oracledp.learners``, ``oracledp.synth``, ...) and a name that package exports in its
``__all__``.  Every ``lab/**/*.py`` is parsed with :mod:`ast` (nothing of the lab is imported)
and these are refused: ``import oracledp._x`` / ``oracledp.pkg._y``; ``from`` such a module;
``from oracledp.pkg import _name`` or any name outside the package's ``__all__``; an attribute
``_name`` read on an imported oracledp module (``oracledp._provenance``); and
``importlib.import_module("oracledp._x")`` / ``__import__`` with such a literal.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

LAB = Path(__file__).resolve().parents[1] / "lab"


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _private_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == "oracledp" and any(_private(p) for p in parts[1:])


def _exported(module: str, name: str) -> bool:
    """``name`` is in ``module.__all__`` or is a public sub-package of it."""
    mod = importlib.import_module(module)
    if name in getattr(mod, "__all__", ()):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError:
        return False
    return not _private(name)


def violations(source: str, filename: str = "<lab>") -> list[str]:
    """Where ``source`` reaches past oracledp's public surface (``file:line what``)."""
    tree = ast.parse(source, filename)
    out: list[str] = []
    modules: set[str] = set()  # local names bound to an oracledp module by an import

    def bad(node: ast.AST, what: str) -> None:
        out.append(f"{filename}:{getattr(node, 'lineno', 0)} {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "oracledp":
                    continue
                if _private_module(alias.name):
                    bad(node, f"import {alias.name}")
                modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "oracledp":
                continue
            if _private_module(node.module):
                bad(node, f"from {node.module} import ...")
                continue
            for alias in node.names:
                if alias.name == "*" or _private(alias.name) \
                        or not _exported(node.module, alias.name):
                    bad(node, f"from {node.module} import {alias.name} (not in its __all__)")
                elif importlib.util.find_spec(f"{node.module}.{alias.name}") is not None:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
            if name in ("import_module", "__import__") and node.args \
                    and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str) \
                    and _private_module(node.args[0].value):
                bad(node, f"{name}({node.args[0].value!r})")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules:
                bad(node, f"{ast.unparse(node)} (a private attribute of oracledp)")
    return out


def _lab_files() -> list[Path]:
    return sorted(LAB.rglob("*.py"))


def test_the_lab_is_there() -> None:
    names = {p.relative_to(LAB).as_posix() for p in _lab_files()}
    assert {"__main__.py", "icml2020/__init__.py", "accuracy_first/__init__.py",
            "ftpl/__init__.py", "synth_adult/__init__.py", "prsma_adult/__init__.py"} <= names


@pytest.mark.parametrize("path", _lab_files(), ids=lambda p: p.relative_to(LAB).as_posix())
def test_lab_imports_only_public_oracledp(path: Path) -> None:
    found = violations(path.read_text(encoding="utf-8"), path.relative_to(LAB).as_posix())
    assert not found, "the lab must use oracledp's public names only:\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    "import oracledp._provenance",
    "import oracledp.erm._theory as theory",
    "from oracledp._diagnostics import research_diagnostics",
    "from oracledp.learners._ftpl import ftpl",
    "from oracledp.erm import _theory",
    "from oracledp.synth import _peers as peers",
    "from oracledp.learners import build_something_unexported",
    "from oracledp import *",
    "import oracledp\noracledp._provenance.environment()",
    "from oracledp import erm\nerm._theory.DEFAULT_T",
    "import importlib\nimportlib.import_module('oracledp.learners._rspm')",
    "def f():\n    from oracledp.estimators._opsamp import OPSampClassifier",
])
def test_planted_private_imports_are_caught(source: str) -> None:
    assert violations(source), source


@pytest.mark.parametrize("source", [
    "import oracledp\noracledp.__version__",
    "from oracledp import OracleFailure, research_diagnostics, environment",
    "from oracledp.learners import ClassRSPMBase, ftpl, prsma_cost",
    "from oracledp.erm import default_eps_grid, outpert_ridge_epsilon",
    "import oracledp.learners\noracledp.learners.rspm",
    "from oracledp import erm\nerm.covnr",
    "from lab._outputs import read_jsonl",  # the lab's own private modules are fine
    "import numpy as np\nnp.random._generator",  # other packages are not checked
])
def test_public_imports_pass(source: str) -> None:
    assert violations(source) == [], source
